"""Pages of a computed plan: result sections, diff, compare, exports, locale formatting,
and a query count that does not grow with versions or options."""

import csv
import io
import json
from unittest import mock

import openpyxl
import pytest
from django.core.management import call_command
from django.db import connection, transaction
from django.test.utils import CaptureQueriesContext
from django.urls import reverse
from django.utils import translation

from planner import services
from planner.choices import Role, VersionStatus
from planner.templatetags.planner_tags import money
from tests.planner_factories import PlanFactory, PlanVersionFactory, member

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def _run_on_commit_now():
    """Tests run inside a transaction that never commits: run on-commit work (the queued,
    in-process computation) at once, as a committed request would."""
    with mock.patch("django.db.transaction.on_commit", side_effect=lambda fn, *a, **k: fn()):
        yield


@pytest.fixture
def catalog():
    call_command("load_catalog", verbosity=0)
    call_command("load_rate_cards", verbosity=0)


@pytest.fixture
def live_plan(catalog):
    plan = PlanFactory()
    services.plan_version_create(plan=plan, user=None)  # computed in-process (eager Celery)
    return plan


@pytest.fixture
def live_client(client, live_plan):
    client.force_login(member(Role.OWNER, team=live_plan.team))
    return client


@pytest.fixture(scope="module")
def computed(django_db_setup, django_db_blocker):
    """One real computation per module (catalog, sizing, costs), rolled back afterwards; the
    read-only tests below store its result in fresh versions instead of computing again."""
    with django_db_blocker.unblock(), transaction.atomic():
        call_command("load_catalog", verbosity=0)
        call_command("load_rate_cards", verbosity=0)
        # Module fixtures run before the per-test "eager Celery" fixture: compute directly.
        with mock.patch("planner.services.plan_version_enqueue"):
            version = services.plan_version_create(plan=PlanFactory(), user=None)
        version = services.plan_version_compute(version_id=version.id)
        assert version.status == VersionStatus.DONE, version.error
        stored = {k: getattr(version, k) for k in
                  ("inputs", "price_snapshot", "rate_snapshot", "result", "as_of", "engine_version")}
        transaction.set_rollback(True)
    return stored


def stored_plan(computed, **plan_fields):
    version = PlanVersionFactory(number=1, status=VersionStatus.DONE, plan__name=plan_fields.pop("name", "Plan"),
                                 **{f"plan__{k}": v for k, v in plan_fields.items()}, **computed)
    return version.plan


@pytest.fixture
def plan(computed):
    return stored_plan(computed)


@pytest.fixture
def owner_client(client, plan):
    client.force_login(member(Role.OWNER, team=plan.team))
    return client


def test_plan_is_computed_in_process(live_plan):
    plan = live_plan
    version = plan.versions.get()
    assert version.status == VersionStatus.DONE, version.error
    assert version.result["sizing"]["recommendation"]
    assert version.result["costs"]["options"]


def test_plan_page_shows_recommendation_costs_and_charts(owner_client, plan):
    html = owner_client.get(reverse("plan_detail", args=[plan.id])).content.decode()
    for marker in ('id="recommendation"', 'id="costs"', 'class="cost-table"', 'id="tco-data"',
                   'id="uncertainty-data"', 'id="memory-data"', 'id="alternatives"', 'id="operations"',
                   'id="serving-curve-data"', 'id="serving-tpot-chart"', 'id="serving-ttft-chart"'):
        assert marker in html, marker
    for row in ("GPU time", "Infrastructure", "Engineering", "Expected cost of incidents: not in the total"):
        assert row in html
    assert 'id="decision-risk"' in html  # beside the headline total, not in it


def test_serving_curves_carry_the_cost_per_million_output_tokens(owner_client, plan):
    """Issue 22 part 3: the throughput curves with the cost per million output tokens along them, on the
    page (a chart against tokens/s per user and the points' table) and in the stored result."""
    curves = plan.versions.get().result["sizing"]["candidates"]["curves"]
    priced = [c for c in curves if c.get("priced_by")]
    assert priced, "no curve priced"
    gpu_hour = float(priced[0]["priced_by"]["per_running_gpu_hour"])
    for p in priced[0]["points"]:
        # the option's running GPU-hour over the output tokens one GPU serves in that hour at the point
        expected = gpu_hour / (p["output_tokens_per_s_per_gpu"] * 3600) * 1e6
        assert abs(float(p["cost_per_1m_output_tokens"]) - expected) <= 0.0001 + 1e-9 * expected
    html = owner_client.get(reverse("plan_detail", args=[plan.id])).content.decode()
    assert 'id="serving-cost-chart"' in html and 'class="curve-points"' in html
    assert "per 1M output tokens" in html


def test_cost_table_percentiles_are_on_the_totals_basis_and_labelled(owner_client, plan):
    """P10/P50/P90 beside a gross total are gross, and the column header says so (issue 20); the
    table's range column fits a 1366 px page (P10 - P90 in short figures, the three exact in its title)."""
    from planner.templatetags.planner_tags import money_range_short, money_whole

    costs = plan.versions.get().result["costs"]
    html = owner_client.get(reverse("plan_detail", args=[plan.id])).content.decode()
    basis, key = ("with VAT", "p50_gross") if costs.get("include_vat") else ("without VAT", "p50_net")
    assert f'P10 – P90 <span class="muted basis">{basis}</span>' in html
    mc = costs["monte_carlo"]["options"]
    shown = [i for i in mc if f'<tr data-option-id="{i}"' in html[html.index('id="options-summary"'):]]
    assert shown
    # the row of the options table (the card above names options too); figures in whole units there
    table = html[html.index('id="options-summary"'):]
    row = table.split(f'data-option-id="{shown[0]}"', 1)[1].split("</tr>", 1)[0]
    assert f"P50 {money_whole(mc[shown[0]][key])}" in row
    assert str(money_range_short(mc[shown[0]][key.replace("p50", "p10")], mc[shown[0]][key.replace("p50", "p90")])) in row


def test_option_warnings_are_shown(client, computed):
    import copy

    stored = copy.deepcopy(computed)
    for option in stored["result"]["costs"]["options"]:  # whichever options the page shows
        option["warnings"] = ["A spot interruption of a serving fleet is an outage."]
    plan = stored_plan(stored)
    client.force_login(member(Role.OWNER, team=plan.team))
    html = client.get(reverse("plan_detail", args=[plan.id])).content.decode()
    assert "A spot interruption of a serving fleet is an outage." in html


def test_plan_page_says_what_the_model_api_is_compared_with(owner_client, plan):
    url = reverse("plan_detail", args=[plan.id])
    html = owner_client.get(url).content.decode()
    assert 'id="decision-api-comparison"' in html
    assert "is another model than the self-hosted" in html and "not the quality" in html
    ru = owner_client.get(url, HTTP_ACCEPT_LANGUAGE="ru").content.decode()
    assert "сравниваются цены токенов, а не качество" in ru


def test_decision_box_names_the_model_api_beside_the_decision(owner_client, plan):
    """The model API's total stands in the decision box itself, not only in the folded table: a team
    lead sees that the decision (self-hosting) costs more than calling an API, and why it is not
    the decision (another model: quality is not compared)."""
    from planner.templatetags.planner_tags import money_whole

    decision = plan.versions.get().result["costs"]["decision"]
    assert decision["api"]["id"] != decision["recommended"]["id"]
    html = owner_client.get(reverse("plan_detail", args=[plan.id])).content.decode()
    line = html.split('id="decision-api-line"', 1)[1].split("</p>", 1)[0]
    assert decision["api"]["label"] in line
    total = decision["api"]["total_gross"] if plan.versions.get().result["costs"].get("include_vat") \
        else decision["api"]["total_net"]
    assert str(money_whole(total)) in line.replace("&nbsp;", "\xa0")
    assert "not the quality" in line
    assert html.index('id="decision-api-line"') < html.index('id="decision-alternatives"')


def test_plan_page_renders_in_russian(owner_client, plan):
    html = owner_client.get(reverse("plan_detail", args=[plan.id]), HTTP_ACCEPT_LANGUAGE="ru").content.decode()
    assert '<html lang="ru"' in html
    assert "Время GPU" in html  # the "GPU time" row
    assert ">GPU time<" not in html


def test_plan_page_has_no_inline_script(owner_client, plan):
    html = owner_client.get(reverse("plan_detail", args=[plan.id])).content.decode()
    scripts = html.split("<script")[1:]
    assert all(' src="' in s.split(">")[0] or 'type="application/json"' in s.split(">")[0] for s in scripts)


def test_recompute_makes_a_new_version_and_keeps_the_old(live_client, live_plan):
    owner_client, plan = live_client, live_plan
    old = plan.versions.get()
    owner_client.post(reverse("plan_recompute", args=[plan.id]))
    assert plan.versions.count() == 2
    fresh = type(old).objects.get(pk=old.pk)
    assert fresh.result == old.result
    assert fresh.price_snapshot == old.price_snapshot


def test_assumptions_form_makes_a_new_version_in_rub(live_client, live_plan):
    owner_client, plan = live_client, live_plan
    response = owner_client.post(reverse("plan_assumptions", args=[plan.id]),
                                 {"horizon_months": 24, "currency": "RUB", "utilisation": "0.5"})
    assert response.status_code == 302
    new = plan.versions.order_by("-number").first()
    assert new.number == 2
    assert new.inputs["costs"]["currency"] == "RUB"
    assert new.result["costs"]["currency"] == "RUB"


def test_bad_assumption_is_a_field_error_and_makes_no_version(owner_client, plan):
    response = owner_client.post(reverse("plan_assumptions", args=[plan.id]),
                                 {"horizon_months": 0, "currency": "RUB", "utilisation": "0.5"})
    assert response.status_code == 400
    assert "horizon_months" in response.context["assumptions_form"].errors
    assert plan.versions.count() == 1


def test_a_server_quote_entered_on_the_plan_prices_on_prem(live_client, live_plan):
    owner_client, plan = live_client, live_plan
    rec = plan.versions.get().result["sizing"]["recommendation"]
    quote = {"server_prices": [{"accelerator": rec["accelerator_id"], "gpus_per_server": 8, "amount": 30000,
                                "currency": "USD", "source": "vendor quote 2026-11", "date": "2026-11-20"}]}
    response = owner_client.post(reverse("plan_assumptions", args=[plan.id]),
                                 {"horizon_months": 36, "currency": "USD", "more": json.dumps(quote),
                                  "discount_rate": "0.1", "vat_recoverable": "on"})
    assert response.status_code == 302
    new = plan.versions.order_by("-number").first()
    costs = new.result["costs"]
    assert new.inputs["costs"]["server_prices"] == quote["server_prices"]
    assert costs["comparison_basis"]["discounted"] is True and costs["vat_recoverable"] is True
    candidate = f"{rec['accelerator_id']} x{rec['count']}"
    onprem = next(o for o in costs["options"] if o["kind"] == "onprem" and o["candidate"] == candidate)
    server = next(ln for r in onprem["rows"] for ln in r["lines"] if ln["key"] == "gpu_time.useful")
    assert server["breakdown"][0]["basis"] == "quote"
    assert server["breakdown"][0]["date"] == "2026-11-20"
    assert server["breakdown"][0]["source"] == "vendor quote 2026-11"


@pytest.mark.parametrize(("fields", "error_field"), [
    ({"decision_basis": "risk_adjusted"}, "downtime_cost_per_hour"),
    ({"downtime_cost_per_hour": "-1"}, "downtime_cost_per_hour"),
    ({"decision_basis": "cheapest_ever"}, "decision_basis"),
])
def test_a_bad_decision_rule_or_downtime_cost_is_a_form_error(owner_client, plan, fields, error_field):
    response = owner_client.post(reverse("plan_assumptions", args=[plan.id]),
                                 {"horizon_months": 36, "currency": "USD", **fields})
    assert response.status_code == 400
    assert error_field in response.context["assumptions_form"].errors
    assert plan.versions.count() == 1


def test_a_bad_extra_cost_option_is_a_field_error(owner_client, plan):
    response = owner_client.post(reverse("plan_assumptions", args=[plan.id]),
                                 {"horizon_months": 36, "currency": "USD", "more": '{"runs": -1, "nope": 1}'})
    assert response.status_code == 400
    assert "more" in response.context["assumptions_form"].errors
    assert plan.versions.count() == 1


def test_diff_lists_changed_inputs_and_moved_totals(live_client, live_plan):
    owner_client, plan = live_client, live_plan
    owner_client.post(reverse("plan_assumptions", args=[plan.id]),
                      {"horizon_months": 12, "currency": "USD", "utilisation": "0.6"})
    response = owner_client.get(reverse("plan_diff", args=[plan.id]), {"a": 1, "b": 2})
    diff = response.context["diff"]
    assert [row["path"] for row in diff["inputs"]] == ["costs.horizon_months"]
    moved = [row for row in diff["totals"] if row["delta"] is not None]
    assert moved and all(row["delta"] < 0 for row in moved)  # 12 months cost less than 36


def test_compare_shows_two_plans_side_by_side(owner_client, plan):
    other = PlanVersionFactory(number=1, status=VersionStatus.DONE, plan__workload__team=plan.team,
                               plan__name="Second plan", **{k: v for k, v in plan.versions.get().__dict__.items()
                                                            if k in ("inputs", "result", "as_of")}).plan
    response = owner_client.get(reverse("plan_compare"), {"plans": [plan.id, other.id]})
    assert response.status_code == 200
    assert [c["plan"].id for c in response.context["columns"]] == [plan.id, other.id]
    assert all(c["cheapest"] for c in response.context["columns"])


def test_compare_needs_at_least_two_plans(owner_client, plan):
    response = owner_client.get(reverse("plan_compare"), {"plans": [plan.id]})
    assert response.status_code == 400


def test_compare_with_another_teams_plan_is_404(owner_client, plan):
    stranger = PlanFactory()
    response = owner_client.get(reverse("plan_compare"), {"plans": [plan.id, stranger.id]})
    assert response.status_code == 404


def test_csv_export(owner_client, plan):
    response = owner_client.get(reverse("plan_version_export", args=[plan.id, 1, "csv"]))
    assert response.status_code == 200
    assert "attachment" in response["Content-Disposition"]
    text = response.content.decode("utf-8-sig")
    rows = list(csv.DictReader(io.StringIO(text[text.index("\r\n\r\n") + 4:])))
    assert {r["Row"] for r in rows} >= {"GPU time", "Infrastructure", "Engineering", "Total",
                                        "Expected cost of incidents: not in the total"}


def test_xlsx_export_opens_with_numbers(owner_client, plan):
    response = owner_client.get(reverse("plan_version_export", args=[plan.id, 1, "xlsx"]))
    workbook = openpyxl.load_workbook(io.BytesIO(response.content))
    numbers = [c.value for ws in workbook for row in ws.iter_rows() for c in row if isinstance(c.value, int | float)]
    assert numbers


def test_pdf_export_is_a_pdf(owner_client, plan):
    response = owner_client.get(reverse("plan_version_export", args=[plan.id, 1, "pdf"]))
    assert response["Content-Type"] == "application/pdf"
    assert response.content.startswith(b"%PDF")


def test_unknown_export_format_is_404(owner_client, plan):
    assert owner_client.get(reverse("plan_version_export", args=[plan.id, 1, "doc"])).status_code == 404


def test_export_of_another_teams_plan_is_404(client, plan):
    client.force_login(member(Role.OWNER))
    assert client.get(reverse("plan_version_export", args=[plan.id, 1, "xlsx"])).status_code == 404


def test_plan_page_query_count_does_not_grow_with_versions(live_client, live_plan):
    owner_client, plan = live_client, live_plan
    url = reverse("plan_detail", args=[plan.id])
    with CaptureQueriesContext(connection) as one:
        owner_client.get(url)
    for _ in range(4):
        services.plan_recompute(plan=plan, user=None)
    services.share_link_create(plan=plan, user=None)
    services.share_link_create(plan=plan, user=None)
    with CaptureQueriesContext(connection) as many:
        owner_client.get(url)
    assert len(many) == len(one)


@pytest.mark.parametrize(("lang", "expected"), [("en", "1,234,567.89 USD"), ("ru", "1\xa0234\xa0567,89 USD")])
def test_money_is_formatted_per_locale(lang, expected):
    with translation.override(lang):
        assert money("1234567.891", "USD") == expected


def test_unknown_money_is_shown_as_unknown():
    assert "unknown" in money(None, "USD")


@pytest.mark.parametrize(("lang", "value", "expected"), [
    ("en", 8030261248, "8,030,261,248"), ("ru", 8030261248, "8\xa0030\xa0261\xa0248"),
    ("en", 2.1634, "2.16"), ("ru", 2.1634, "2,16"), ("en", 0.01234, "0.012"), ("en", "PCIe", "PCIe"),
])
def test_engine_figures_are_formatted_per_locale(lang, value, expected):
    from planner.templatetags.planner_tags import figure

    with translation.override(lang):
        assert figure(value) == expected


@pytest.mark.parametrize(("lang", "value", "expected"), [
    ("en", 1, "server"), ("en", 2, "servers"), ("en", 1.5, "servers"),
    ("ru", 1, "сервер"), ("ru", 3, "сервера"), ("ru", 5, "серверов"), ("ru", 21, "сервер"), ("ru", 1.5, "сервера"),
])
def test_counted_units_agree_with_their_number(lang, value, expected):
    from planner.presentation import quantity_rows

    with translation.override(lang):
        row, = quantity_rows({"servers": {"value": value, "unit": "servers", "explain": ""}})
    assert row["unit"] == expected


# The examples of docs/WORKLOADSPEC.md, one per kind: each computes and its page renders.
DOC_EXAMPLES = {
    "pretraining": {"kind": "pretraining", "model": {"preset": "llama-2-7b"},
                    "training": {"tokens": 2e12, "sequence_length": 4096, "global_batch_tokens": 4000000,
                                 "deadline_hours": 720}, "hardware": {"accelerator": "A100 80GB"}},
    "finetuning": {"kind": "finetuning", "model": {"preset": "llama-3.1-70b"},
                   "training": {"method": "qlora", "tokens": 200000000, "epochs": 2, "lora_rank": 16}},
    "rag": {"kind": "rag", "model": {"preset": "qwen2.5-7b"},
            "rag": {"documents": 1000000, "tokens_per_document": 800, "index": "hnsw", "queries_per_second": 2},
            "serving": {"input_tokens": 3000, "output_tokens": 300, "requests_per_second": 2}},
    "classic_training": {"kind": "classic_training", "model": {"preset": "resnet-50"},
                         "training": {"dataset_samples": 1281167, "epochs": 90, "global_batch_size": 1024}},
    "external_api": {"kind": "external_api", "rag": {"documents": 100000, "generator": "external_api"},
                     "serving": {"input_tokens": 2000, "output_tokens": 400, "requests_per_second": 1}},
}


@pytest.mark.parametrize("kind", list(DOC_EXAMPLES))
def test_every_kind_computes_and_renders(client, catalog, kind):
    plan = PlanFactory(workload__kind=kind, workload__spec=DOC_EXAMPLES[kind])
    services.plan_version_create(plan=plan, user=None)
    version = plan.versions.get()
    assert version.status == VersionStatus.DONE, version.error
    client.force_login(member(Role.VIEWER, team=plan.team))
    response = client.get(reverse("plan_detail", args=[plan.id]))
    assert response.status_code == 200
    assert 'id="recommendation"' in response.content.decode()


def test_options_of_one_plan_side_by_side(owner_client, plan):
    options = plan.versions.get().result["costs"]["options"][:2]
    response = owner_client.get(reverse("plan_options_compare", args=[plan.id, 1]),
                                {"options": [o["id"] for o in options]})
    assert response.status_code == 200
    table = response.context["table"]
    assert [o["id"] for o in table["options"]] == [o["id"] for o in options]
    # the page's basis for CAPEX/OPEX/P50/chart; the expected cost of incidents beside the total
    # (planner.options_compare; more in tests/functional/test_options_compare.py)
    assert table["basis"] == "net" and table["segments"]
    assert all(o["risk"] is not None for o in table["options"])


def test_unknown_option_is_404(owner_client, plan):
    response = owner_client.get(reverse("plan_options_compare", args=[plan.id, 1]), {"options": ["x", "y"]})
    assert response.status_code == 404


def test_one_option_is_not_enough(owner_client, plan):
    option = plan.versions.get().result["costs"]["options"][0]["id"]
    response = owner_client.get(reverse("plan_options_compare", args=[plan.id, 1]), {"options": [option]})
    assert response.status_code == 302


def test_options_of_another_teams_plan_is_404(client, plan):
    client.force_login(member(Role.OWNER))
    options = [o["id"] for o in plan.versions.get().result["costs"]["options"][:2]]
    assert client.get(reverse("plan_options_compare", args=[plan.id, 1]), {"options": options}).status_code == 404


# --- issue 15: units, layout, currency, pins -------------------------------------------------

def test_sizes_take_the_unit_that_fits_and_layouts_name_data_parallel():
    from planner.presentation import _layout, _unit_from_key
    from planner.templatetags.planner_tags import size

    assert size(163840) == "160.0 KiB" and size(3 * 2**30) == "3.0 GiB" and size(5 * 2**20) == "5.0 MiB"
    assert _layout({"tensor_parallel": 1, "pipeline_parallel": 1, "data_parallel": 48}) == "TP1 × PP1 × DP48"
    assert _layout({"count": 8, "tensor_parallel": 2, "pipeline_parallel": 1}) == "TP2 × PP1 × DP4"
    assert _unit_from_key("inter_node_required_gb_s_per_gpu") == "GB/s"


def test_a_recommendation_missing_the_targets_says_so_in_the_headline():
    from planner.presentation import sizing_view

    sizing = {"recommendation": {"accelerator": "T4", "count": 64, "why": "meets the targets on a priced accelerator"},
              "serving": {"meets_targets": False},
              "warnings": ["no layout meets the latency/throughput targets within 1024 GPUs; the closest is shown"]}
    view = sizing_view(sizing)
    assert view["headline"]["meets"] is False
    assert "does NOT meet the targets" in str(view["headline"]["why"])
    assert "meets the targets on" not in str(view["headline"]["why"])


def test_alternatives_are_priced_in_the_plans_currency():
    from decimal import Decimal

    from planner.presentation import _price_alternatives

    view = {"ranked": [{"cost_usd_per_hour": 2.0}]}
    _price_alternatives(view, {"currency": "RUB", "inputs_used": {"fx": [
        {"base": "RUB", "quote": "USD", "rate": "0.0125", "on": "2026-12-01"}]}})
    assert view["price_currency"] == "RUB" and view["ranked"][0]["cost_per_hour"] == Decimal("160")
    no_rate = {"ranked": [{"cost_usd_per_hour": 2.0}]}
    _price_alternatives(no_rate, {"currency": "EUR", "inputs_used": {"fx": []}})
    assert no_rate["price_currency"] == "" and no_rate["ranked"][0]["cost_per_hour"] is None
