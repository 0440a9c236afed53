"""Issue 14 done-when: a RUB plan a Russian team can act on (Yandex Cloud composed prices, a supplier
quote, VAT on each price's own date, freshness warnings, data residency, unpriced providers).

Hand-checked figures (Yandex Compute Cloud table 'from 23.01.2026', incl. VAT 22 %, shared/data/ru):
  GPU PLATFORM V4 (gpu-standard-v4, 141 GB per GPU -> H200-class by the written inference), 2 GPU /
  44 vCPU / 440 GB: 2 x 1016.90 + 44 x 0.90 + 440 x 0.28 = 2033.80 + 39.60 + 123.20 = 2196.60 RUB/h
      -> net 2196.60 / 1.22 = 1800.4918 RUB/h x 730 h = 1 314 359.02 RUB a month net;
      gross 2196.60 x 730 x 12 = 19 242 216.00 RUB a year.
  Gen2 (gpu-standard-v3i, 80 GB per GPU -> at least A100 80GB-class), 8 GPU / 180 vCPU / 1440 GB:
      8 x 745.21 + 180 x 0.90 + 1440 x 0.28 = 5961.68 + 162.00 + 403.20 = 6526.88 RUB/h.
  The 2022 table (gpu-standard-v3 at 371.70 RUB per GPU-hour) is history: never priced.
GigaChat-2-Lite: 65 RUB per 1M tokens incl. VAT 22 % -> net 65 / 1.22 per 1M, input and output alike.
Supplier quote: HGX H200 8-GPU server, 300 000 USD excl. VAT, dated 2026-06-30 -> at that day's Bank of
Russia rate 77.7539 = 23 326 170.00 RUB (the plan date's rate, 78.2696 of 2026-07-01, is not used).
"""

import datetime as dt
import io
from decimal import Decimal as D

import pytest
from django.core.management import call_command
from django.db import transaction

from catalog.models import Accelerator, SupplierQuote
from planner.services import compute_from_inputs, plan_snapshots
from tests.planner_factories import TeamFactory

pytestmark = pytest.mark.django_db
AS_OF = dt.date(2026, 12, 1)
SPEC = {
    "kind": "inference",
    "name": "Llama 3.1 70B serving",
    "model": {"preset": "llama-3.1-70b"},
    "serving": {"context_length": 8192, "concurrency": 16, "requests_per_second": 2, "ttft_p95_ms": 2000},
}
RUB = {"currency": "RUB", "horizon_months": 12}
ONPREM = {**RUB, "options": ["onprem"]}  # on-prem options only, so each keeps its cost lines


def _quote(team, acc, **kw):
    base = dict(supplier="ООО «Пример»", item_kind="server", quantity=1, currency="RUB", includes_vat=False,
                quote_date=dt.date(2026, 11, 20), valid_until=dt.date(2026, 12, 31), document_name="КП-1.pdf")
    return SupplierQuote.objects.create(team=team, accelerator=Accelerator.objects.get(slug=acc), **{**base, **kw})


@pytest.fixture(scope="module")
def snaps(django_db_setup, django_db_blocker):
    with django_db_blocker.unblock(), transaction.atomic():
        for command in ("load_catalog", "load_rate_cards", "load_ru_prices"):
            call_command(command, stdout=io.StringIO())
        team, other = TeamFactory(), TeamFactory()
        quotes = {
            "a100_2025": _quote(team, "nvidia-a100-sxm4-80gb", gpus_per_server=4, unit_price=D("12000000"),
                                includes_vat=True, quote_date=dt.date(2025, 12, 15)),
            "l40s_2026": _quote(team, "nvidia-l40s-48gb", gpus_per_server=8, unit_price=D("12200000"),
                                includes_vat=True, quote_date=dt.date(2026, 11, 20)),
            "h100_expired": _quote(team, "nvidia-h100-sxm5-80gb", gpus_per_server=8, unit_price=D("1000"),
                                   quote_date=dt.date(2026, 9, 1), valid_until=dt.date(2026, 11, 1)),
            "other_usd": _quote(other, "nvidia-a100-sxm4-80gb", gpus_per_server=4, unit_price=D("130000"),
                                currency="USD", quote_date=dt.date(2026, 6, 30), supplier="Other team's supplier"),
        }
        ids = {k: q.pk for k, q in quotes.items()}
        out = {"team": plan_snapshots(as_of=AS_OF, team=team), "other": plan_snapshots(as_of=AS_OF, team=other),
               "none": plan_snapshots(as_of=AS_OF), "ids": ids}
        transaction.set_rollback(True)
    return out


def plan(snaps, costs, who="team"):
    prices, rates = snaps[who]
    outcome = compute_from_inputs(inputs={"spec": SPEC, "costs": costs}, price_snapshot=prices, rate_snapshot=rates)
    assert outcome.status == "done", outcome.error
    return outcome.result["costs"]


def by_label(c, *parts, kind=None):
    return [o for o in c["options"] if all(p in o["label"] for p in parts) and (kind is None or o["kind"] == kind)]


def row(o, name):
    return next(r for r in o["rows"] if r["row"] == name)


def gpu_time_lines(o):
    return [ln for ln in row(o, "gpu_time")["lines"] if ln["key"].startswith("gpu_time")]


V4_2GPU = "Yandex Cloud gpu-standard-v4 2 GPU, 44 vCPU, 440 GB"


def test_rub_plan_has_yandex_options_with_hand_checked_component_sums(snaps):
    c = plan(snaps, RUB)
    assert c["currency"] == "RUB"
    od = by_label(c, V4_2GPU, kind="cloud_on_demand")
    assert od and od[0]["detail"]["accelerator"] == "H200 SXM 141GB"
    gpu = row(od[0], "gpu_time")
    # 2196.60 / 1.22 x 730 h x 12 = 19 242 216.00 / 1.22 = 15 772 308.20 net (lines rounded to the kopeck)
    assert abs(D(gpu["total_net"]) - D("15772308.20")) <= D("0.10")
    # VAT of the price's own date (22 % in 2026) added back: gross = 2196.60 x 730 x 12 = 19 242 216.00
    # (the useful and idle lines are each rounded to the kopeck: up to 0.01 a month apart)
    assert abs(D(gpu["total_gross"]) - D("19242216.00")) <= D("0.01") * 12
    assert by_label(c, "Yandex Cloud gpu-standard-v4", kind="cloud_spot")
    v4 = next(o for o in snaps["team"][0]["composed_cloud_offers"]
              if o["instance_type"] == "gpu-standard-v4 2 GPU, 44 vCPU, 440 GB" and o["billing"] == "on_demand")
    assert v4["price_per_hour"]["amount"] == "2196.60" and v4["includes_vat"] is True
    assert [c_["amount"] for c_ in v4["components"]] == ["2033.80", "39.60", "123.20"]
    assert v4["valid_from"] == "2026-01-23" and not v4["stale"] and not v4["history"]
    assert v4["accelerator"] == "nvidia-h200-sxm-141gb"
    assert v4["accelerator_inference"].startswith("inferred: 141 GB per GPU is H200-class. Rule:")
    gen2 = next(o for o in snaps["team"][0]["composed_cloud_offers"]
                if o["instance_type"] == "gpu-standard-v3i 8 GPU, 180 vCPU, 1440 GB" and o["billing"] == "on_demand")
    assert gen2["price_per_hour"]["amount"] == "6526.88" and gen2["includes_vat"] is True
    assert [c_["amount"] for c_ in gen2["components"]] == ["5961.68", "162.00", "403.20"]
    assert gen2["valid_from"] == "2026-01-23" and not gen2["stale"]
    assert gen2["accelerator_inference"].startswith("inferred: 80 GB per GPU is at least A100 80GB-class")


def test_yandex_2022_list_is_history_never_priced_and_named(snaps):
    c = plan(snaps, {**RUB, "data_residency": ["RU"]})
    assert not by_label(c, "gpu-standard-v3 "), "the 2022 list is superseded by the list of 2026-01-23"
    assert not by_label(c, "standard-v3-t4 ")
    old = [o for o in snaps["team"][0]["composed_cloud_offers"] if o["instance_type"].startswith("gpu-standard-v3 ")]
    assert old and all(o["history"] and o["stale"] and o["superseded_by_list_of"] == "2026-01-23" for o in old)
    reasons = {s.get("platform"): str(s["reason"]) for s in c["skipped"] if s.get("platform")}
    assert reasons["gpu-standard-v3"] == (
        "Yandex Cloud gpu-standard-v3: only a stale price list of 2022-04-13 prices it, and Yandex Cloud has "
        "published a newer list (2026-01-23) without it; kept as history, not priced; ask Yandex Cloud for a "
        "quote and enter it as a supplier quote")
    assert not any(p.get("stale") for p in c["freshness"]["prices"]), "no stale price is used"


def test_yandex_cost_lines_show_components_net_and_vat_and_the_inference(snaps):
    c = plan(snaps, {**RUB, "data_residency": ["RU"]})
    od = by_label(c, V4_2GPU, kind="cloud_on_demand")[0]
    lines = gpu_time_lines(od)
    assert abs(sum(D(ln["monthly_net"]) for ln in lines) - D("1314359.02")) <= D("0.02")
    shown = lines[0]["breakdown"][0]  # the unit price of the line, with its source, date and basis
    assert shown["price"] == "2196.60 RUB per VM-hour incl. VAT" and shown["date"] == "2026-01-23"
    assert D(shown["unit_price"]).quantize(D("0.0001")) == D("1800.4918")  # net of the 2026 VAT (22 %)
    assert "GPU 2 x 1016.90 + vCPU 44 x 0.90 + RAM, GB 440 x 0.28 = 2196.60 RUB per VM-hour" in shown["source"]
    assert "[STALE]" not in shown["source"]
    assert lines[0]["vat_applies"] and D(lines[0]["vat"]) > 0
    spot = by_label(c, "Yandex Cloud gpu-standard-v4 2 GPU", kind="cloud_spot")[0]
    spot_rate = gpu_time_lines(spot)[0]["breakdown"][0]
    assert spot_rate["price"].startswith("2196.6")  # the preemptible prices are published equal
    # the inference is on every option priced on V4, shortlisted or not, and in prices_used
    for o in by_label(c, "gpu-standard-v4"):
        assert o["accelerator_inference"].startswith("inferred: 141 GB per GPU is H200-class")
        assert any("the provider does not name the GPU; inferred: 141 GB per GPU is H200-class" in w
                   for w in o["warnings"])
    used = od["prices_used"][0]
    assert used["date"] == "2026-01-23" and used["age_days"] == (AS_OF - dt.date(2026, 1, 23)).days
    assert not used.get("stale") and used["inference"].startswith("inferred: 141 GB")
    assert not any("STALE price" in w for w in od["warnings"])


def test_agent_plan_with_russian_residency_compares_gigachat_and_yandexgpt(snaps):
    prices, rates = snaps["team"]
    spec = {"kind": "external_api", "name": "agent", "serving": {"requests_per_second": 1}}
    outcome = compute_from_inputs(inputs={"spec": spec, "costs": {**RUB, "data_residency": ["RU"]}},
                                  price_snapshot=prices, rate_snapshot=rates)
    assert outcome.status == "done", outcome.error
    c = outcome.result["costs"]
    apis = {o["label"]: o for o in c["options"] if o["kind"] == "api"}
    for label in ("API: Sber GigaChat-2-Lite", "API: Sber GigaChat-2-Pro", "API: Sber GigaChat-2-Max",
                  "API: Yandex Cloud yandexgpt-pro-5.1", "API: Yandex Cloud yandexgpt-lite"):
        assert label in apis, label
    assert not [o for o in c["options"] if o["kind"] == "api" and
                o["detail"]["provider"] not in ("Sber", "Yandex Cloud")]
    lite = apis["API: Sber GigaChat-2-Lite"]
    line = row(lite, "gpu_time")["lines"][0]
    t_in, t_out = D(line["inputs"]["tokens_in_per_month"]), D(line["inputs"]["tokens_out_per_month"])
    # 65 RUB per 1M tokens incl. VAT 22 % (2026-02-01), input and output alike: net 65 / 1.22 per 1M
    monthly = (t_in + t_out) / 1_000_000 * D(65) / D("1.22")
    assert abs(D(line["monthly_net"]) - monthly) <= D("0.02")
    bd = line["breakdown"][0]
    assert bd["price"] == "65 RUB per 1M input tokens incl. VAT" and bd["date"] == "2026-02-01"
    assert "developers.sber.ru/docs/ru/gigachat/tariffs/legal-tariffs" in bd["source"]
    # YandexGPT Pro 5.1: 0.80 RUB per 1000 tokens incl. VAT = 800 per 1M, input and output alike, 12 months
    pro51 = row(apis["API: Yandex Cloud yandexgpt-pro-5.1"], "gpu_time")
    assert abs(D(pro51["total_net"]) - 12 * (t_in + t_out) / 1_000_000 * D(800) / D("1.22")) <= D("0.10")
    assert c["decision"]["api"]["label"] == "API: Sber GigaChat-2-Lite"  # the cheapest of them
    left = {x["provider"] for x in c["data_residency"]["left_out"]}
    assert {"OpenAI", "Anthropic", "Google", "DeepSeek"} <= left


def test_warnings_name_every_rate_older_than_its_threshold(snaps):
    c = plan(snaps, RUB)
    warnings = c["freshness"]["warnings"]
    assert c["freshness"]["thresholds_days"] == {"fx": 7, "cloud": 90, "hardware": 180, "quote": 180}
    assert "USD/RUB 78.2696: price of 2026-07-01 is 153 days old at the plan date (threshold 7 days)" in warnings
    assert any(w.startswith("Yandex Cloud gpu-standard-v4") and "312 days old" in w for w in warnings)
    assert ("refresh the rouble rates from the Bank of Russia: python manage.py import_cbr_rates (online), or python "
            "manage.py import_cbr_rates --file XML_daily.xml (a saved copy of https://www.cbr.ru/scripts/XML_daily.asp, "
            "offline)") in warnings
    assert any("of 2025-12-15: price of 2025-12-15 is 351 days old" in w for w in warnings)  # quote > 180 days
    fx = c["inputs_used"]["fx"][0]
    assert (fx["base"], fx["rate_date"], fx["age_days"]) == ("USD", "2026-07-01", 153)  # its own date, not the plan's
    fresh = [p for p in c["freshness"]["prices"] if p["age_days"] is not None and not p.get("too_old")]
    assert fresh and not any(p["row"] in w for p in fresh for w in warnings if "days old" in w)


def test_onprem_priced_from_the_quote_with_vat_of_its_own_date(snaps):
    ids = snaps["ids"]
    c = plan(snaps, ONPREM)
    a100 = by_label(c, "A100 SXM4 80GB", kind="onprem")[0]
    # 12 000 000 RUB incl. VAT, quoted 2025-12-15 -> 20 %: 10 000 000 net (22 % would give 9 836 065.57)
    assert sum(D(ln["upfront_net"]) for ln in gpu_time_lines(a100)) == D("10000000.00")
    assert all(f"(supplier quote #{ids['a100_2025']})" in ln["label"] for ln in gpu_time_lines(a100))
    assert a100["price_basis"] == "supplier quote"
    assert a100["prices_used"][0]["kind"] == "supplier quote"
    l40s = by_label(c, "L40S", kind="onprem")[0]
    # 12 200 000 RUB incl. VAT, quoted 2026-11-20 -> 22 %: 10 000 000 net
    assert sum(D(ln["upfront_net"]) for ln in gpu_time_lines(l40s)) == D("10000000.00")


def test_expired_quote_is_flagged_and_the_list_price_used(snaps):
    c = plan(snaps, RUB)
    h100 = by_label(c, "H100 SXM5 80GB", kind="onprem")[0]
    assert h100.get("price_basis") != "supplier quote"
    assert D(h100["totals"]["net"]) > 1_000_000  # not the expired 1 000 RUB quote
    assert any("expired on 2026-11-01: the list price is used" in w for w in h100["warnings"])


def test_quotes_are_team_scoped_and_usd_converts_at_the_quote_date(snaps):
    mine, theirs, nobody = plan(snaps, RUB), plan(snaps, ONPREM, "other"), plan(snaps, RUB, "none")
    assert "Other team's supplier" not in str(mine) and "ООО «Пример»" not in str(theirs)
    a100 = by_label(theirs, "A100 SXM4 80GB", kind="onprem")[0]
    # 130 000 USD excl. VAT x 77.7539 (Bank of Russia, 2026-06-30, the quote's date) = 10 108 007.00 RUB
    assert sum(D(ln["upfront_net"]) for ln in gpu_time_lines(a100)) == D("10108007.00")
    bd = gpu_time_lines(a100)[0]["breakdown"][0]
    assert bd["basis"] == "quote" and bd["date"] == "2026-06-30"
    src = bd["source"]
    assert "130000 USD x 77.7539 RUB/USD (rate of 2026-06-30, the quote's date)" in src
    assert not any(o.get("price_basis") == "supplier quote" for o in nobody["options"])


def test_residency_leaves_out_every_non_russian_option_with_the_reason(snaps):
    free, ru = plan(snaps, RUB), plan(snaps, {**RUB, "data_residency": ["RU"]})
    assert {o["detail"].get("provider") for o in free["options"] if o["kind"].startswith("cloud")} > {"Yandex Cloud"}
    assert any(o["kind"] == "api" for o in free["options"])
    for o in ru["options"]:
        assert o["kind"] in ("onprem", "dedicated") or o["detail"].get("provider") in ("Yandex Cloud", "Sber"), o["label"]
    ids = {o["id"] for o in ru["options"]}
    assert {i for v in ru["shortlist"].values() for i in v} <= ids  # the decision compares only what is kept
    assert all(b["a"] in ids and b["b"] in ids for b in ru["break_even_months"] if "a" in b)
    decision = ru["decision"]
    picked = [decision[k]["id"] for k in ("recommended", "cheapest_onprem", "cheapest_cloud") if decision.get(k)]
    assert picked and set(picked) <= ids and {r["id"] for r in decision["ranked"]} <= ids
    assert "Yandex Cloud" in decision["cheapest_cloud"]["label"]
    assert decision["api"] is None or decision["api"]["label"].startswith(("API: Sber", "API: Yandex Cloud"))
    left = {(x["provider"], x["region"]): x for x in ru["data_residency"]["left_out"]}
    for provider in ("AWS", "GCP", "Azure", "Lambda", "OpenAI", "Anthropic", "Google", "DeepSeek"):
        assert any(p == provider for p, _r in left), provider
    assert left[("AWS", "us-east-1")]["reason"] == "AWS us-east-1 is in US, outside the chosen jurisdictions (RU)"
    assert left[("DeepSeek", None)]["reason"] == "DeepSeek is in CN, outside the chosen jurisdictions (RU)"
    assert all(x in ru["skipped"] for x in ru["data_residency"]["left_out"])


def test_unpriced_russian_providers_are_named_with_an_invitation_to_quote(snaps):
    c = plan(snaps, {**RUB, "data_residency": ["RU"]})
    reasons = {s["provider"]: s["reason"] for s in c["skipped"] if "not priced" in str(s.get("reason"))}
    for provider in ("Selectel", "Cloud.ru", "VK Cloud"):
        assert provider in reasons and "quote" in reasons[provider]


def test_a_plan_that_needs_no_gpu_is_not_told_to_ask_gpu_clouds_for_quotes(snaps):
    prices, rates = snaps["team"]
    spec = {"kind": "external_api", "name": "agent", "serving": {"requests_per_second": 1}}
    outcome = compute_from_inputs(inputs={"spec": spec, "costs": {**RUB, "data_residency": ["RU"]}},
                                  price_snapshot=prices, rate_snapshot=rates)
    assert outcome.status == "done", outcome.error
    skipped = outcome.result["costs"]["skipped"]
    assert not [s for s in skipped if "not priced" in str(s.get("reason"))]
    assert any(s["candidate"] == "no-gpu" for s in skipped)


def test_bad_residency_value_is_a_field_error(snaps):
    prices, rates = snaps["none"]
    out = compute_from_inputs(inputs={"spec": SPEC, "costs": {"data_residency": "RU"}}, price_snapshot=prices,
                              rate_snapshot=rates)
    assert out.status == "failed" and "costs.data_residency" in out.error


def test_residency_option_in_the_form_the_api_and_the_cli(snaps, tmp_path):
    import json

    from planner.api.errors import FieldErrors
    from planner.api.services import costs_validate
    from planner.forms import CostOptionsForm

    form = CostOptionsForm(data={"horizon_months": 12, "currency": "RUB", "data_residency": ["RU"]})
    assert form.is_valid(), form.errors
    assert form.options()["data_residency"] == ["RU"]
    assert CostOptionsForm.initial_from(form.options())["data_residency"] == ["RU"]
    bad = CostOptionsForm(data={"horizon_months": 12, "currency": "RUB", "data_residency": ["XX"]})
    assert not bad.is_valid() and "data_residency" in bad.errors
    assert costs_validate(data={"data_residency": ["RU"]}) == {"data_residency": ["RU"]}
    with pytest.raises(FieldErrors) as exc:
        costs_validate(data={"data_residency": ["Russia"]})
    assert "costs.data_residency" in str(exc.value.errors)

    spec = tmp_path / "spec.json"
    spec.write_text(json.dumps({**SPEC, "costs": RUB}), encoding="utf-8")
    out = io.StringIO()
    with transaction.atomic():
        for command in ("load_catalog", "load_rate_cards", "load_ru_prices"):
            call_command(command, stdout=io.StringIO())
        call_command("plan", str(spec), "--as-of", AS_OF.isoformat(), "--data-residency", "RU", stdout=out)
        transaction.set_rollback(True)
    costs = json.loads(out.getvalue())["costs"]
    assert costs["data_residency"]["jurisdictions"] == ["RU"]
    assert {o["detail"].get("provider") for o in costs["options"] if o["kind"].startswith("cloud")} == {"Yandex Cloud"}


def test_xlsx_inputs_date_each_rate_and_price_with_its_own_date(snaps, tmp_path):
    from openpyxl import load_workbook

    from costs.exports_xlsx import costs_xlsx

    c = plan(snaps, RUB)
    wb = load_workbook(io.BytesIO(costs_xlsx(c, title="RU plan")))
    rows = list(wb["Inputs"].iter_rows(values_only=True))
    header = rows[0]
    kind, name, date = header.index("Kind"), header.index("Name"), header.index("Date")
    fx = next(r for r in rows if r[kind] == "FX rate" and r[name] == "USD/RUB")
    assert str(fx[date])[:10] == "2026-07-01"  # the rate's date, not the plan's 2026-12-01
    yandex = next(r for r in rows if str(r[name]).startswith("Yandex Cloud gpu-standard-v4 2 GPU"))
    assert str(yandex[date])[:10] == "2026-01-23"
    quote = next(r for r in rows if r[kind] == "supplier quote")
    assert str(quote[date])[:10] == "2025-12-15"


def test_plan_page_shows_prices_dates_residency_and_freshness(snaps):
    from django.template.loader import render_to_string

    from planner.presentation import costs_view

    view = costs_view(plan(snaps, {**RUB, "data_residency": ["RU"]}))
    yandex = next(o for o in view["options"] if "Yandex Cloud gpu-standard-v4 2 GPU" in o["label"] and o.get("prices_used"))
    html = render_to_string("planner/partials/prices_used.html", {"o": yandex})
    html += render_to_string("planner/partials/price_freshness.html", {"c": view})
    assert "Prices used:" in html and "2026-01-23" in html and "312 days old" in html
    # what residency left out: one collapsed line, each provider and region with its country on demand
    assert "price offers excluded by data residency" in html and "AWS us-east-1 (" in html
    assert "USD/RUB 78.2696: price of 2026-07-01 is 153 days old" in html


def test_a_foreign_currency_quote_before_a_per_gpu_quote_prices_both(snaps):
    """A USD server quote converted at its date's rate, then a per-GPU quote: the per-GPU quote's host cost
    is converted with the plan's FX table (found by schemathesis: the conversion's rate row once replaced
    the table, and the plan failed)."""
    prices, rates = snaps["other"]
    per_gpu = {**prices["supplier_quotes"][0], "id": 10**6, "item_kind": "accelerator", "gpus_per_server": None,
               "accelerator": "nvidia-l40s-48gb", "currency": "RUB", "unit_price": {"amount": "900000", "currency": "RUB"},
               "fx_at_quote_date": {}, "supplier": "Per-GPU supplier"}
    assert prices["supplier_quotes"][0]["unit_price"]["currency"] == "USD"  # converted first
    snapshot = {**prices, "supplier_quotes": [prices["supplier_quotes"][0], per_gpu]}
    outcome = compute_from_inputs(inputs={"spec": SPEC, "costs": RUB}, price_snapshot=snapshot, rate_snapshot=rates)
    assert outcome.status == "done", outcome.error
    sources = str(outcome.result["costs"])
    assert "Per-GPU supplier" in sources and "77.7539 RUB/USD" in sources
