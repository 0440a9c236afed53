"""Issue 20, 8.: an agent on a model API. The spec names the model API(s) (serving.model_api, checked
against the catalog's API prices), the plan prices the CPU server the agent runs on from CPU instance
prices with sources (catalog/data/cpu_instances.csv), says which API it chose and why, and its page
shows no GPU texts.

Hand-computed cost (USD, no VAT: costs.include_vat false; 1 month; the spec below):
  tokens: 1 request/s x 3600 x 24 h x 30.4167 days = 2 628 000 requests a month (the serving volume
  the adapter derives from requests_per_second and hours_per_day; checked against the line's inputs)
  CPU server: the sizing asks 7 cores, 10.31 GiB -> AWS m7a.2xlarge (8 vCPU = 8 cores, 32 GiB),
  0.46368 USD/h x 730 h = 338.4864 USD a month (SkyPilot catalog, us-east-1, on demand).
"""

import io
import re
from decimal import Decimal as D
from html import unescape
from unittest import mock

import pytest
from django.core.management import call_command
from django.urls import reverse

from planner import services
from planner.api import services as services_api
from planner.choices import Role, VersionStatus
from planner.models import Plan, PlanVersion, Workload
from tests.planner_factories import PlanFactory, member

pytestmark = pytest.mark.django_db

SPEC = {
    "kind": "external_api", "name": "Support agent",
    "rag": {"documents": 100000, "generator": "external_api"},
    "serving": {"input_tokens": 2000, "output_tokens": 400, "requests_per_second": 1},
}


@pytest.fixture(autouse=True)
def _run_on_commit_now():
    with mock.patch("django.db.transaction.on_commit", side_effect=lambda fn, *a, **k: fn()):
        yield


@pytest.fixture
def catalog():
    for command in ("load_catalog", "load_rate_cards"):
        call_command(command, stdout=io.StringIO(), verbosity=0)


def _compute(spec, costs=None):
    import datetime as dt

    prices, rates = services.plan_snapshots(as_of=dt.date(2026, 12, 1))
    return services.compute_from_inputs(inputs={"spec": spec, "costs": costs or {}}, price_snapshot=prices,
                                        rate_snapshot=rates)


def _option(result):
    dec = result["decision"]
    return next(o for o in result["costs"]["options"] if o["id"] == dec["option_id"])


def test_named_model_api_is_the_decision_and_its_cost_is_tokens_plus_the_cpu_server(catalog):
    # the volume stated (1 request/s all day = 86 400 a day), not the default 0.3 of the peak
    spec = {**SPEC, "serving": {**SPEC["serving"], "model_api": "openai/gpt-4o", "requests_per_day": 86400}}
    out = _compute(spec, {"currency": "USD", "include_vat": False, "horizon_months": 1})
    assert out.status == VersionStatus.DONE, out.error
    dec, opt = out.result["decision"], _option(out.result)
    assert (dec["model_api"]["provider"], dec["model_api"]["model"]) == ("OpenAI", "gpt-4o")
    assert dec["model_api"]["named"] is True and dec["model_api"]["compared"] == ["OpenAI/gpt-4o"]
    assert "OpenAI/gpt-4o" in dec["why"] and "serving.model_api" in dec["why"]
    assert dec["hardware"] is None
    cpu = dec["cpu_server"]
    assert (cpu["provider"], cpu["instance_type"], cpu["physical_cores"], cpu["cores_needed"]) == ("AWS", "m7a.2xlarge", 8, 7)
    assert "skypilot-catalog" in cpu["source"]
    # the same hour in the plan's currency, net (a USD plan: the list price itself)
    assert (cpu["price_per_hour_net"], cpu["plan_currency"]) == ("0.46", "USD")
    rows = {ln["key"]: ln for r in opt["rows"] for ln in r["lines"]}
    assert set(rows) >= {"gpu_time.api_tokens", "infrastructure.cpu_server"}
    tokens = rows["gpu_time.api_tokens"]
    t_in, t_out = D(tokens["inputs"]["tokens_in_per_month"]), D(tokens["inputs"]["tokens_out_per_month"])
    # 1 request/s around the clock: 2000 in and 400 out per request, 730 h a month
    assert t_in == 2000 * 3600 * 730 and t_out == 400 * 3600 * 730
    # OpenAI gpt-4o: 2.50 USD per 1M input tokens, 10.00 per 1M output (costs/data/api_token_prices.csv)
    expected_tokens = D(5256) * D("2.5") + D("1051.2") * D(10)  # 13 140 + 10 512 = 23 652 USD a month
    assert D(tokens["monthly_net"]) == expected_tokens
    server = rows["infrastructure.cpu_server"]
    assert D(server["monthly_net"]) == (D("0.46368") * 730).quantize(D("0.01"))  # 338.4864 -> 338.49 USD
    assert "m7a.2xlarge" in server["label"]
    # one month, no VAT: the option's net total is the sum of its lines, tokens and the server among them
    assert D(tokens["total_net"]) == expected_tokens
    assert D(server["total_net"]) == D("338.49")
    # (the expected cost of incidents is beside the budget, not in it: issue 20, 2.)
    assert D(opt["totals"]["net"]) == sum(D(ln["total_net"]) for r in opt["rows"] if r["row"] != "downtime_risk"
                                          for ln in r["lines"])


def test_without_a_named_api_all_are_compared_and_the_plan_says_which_and_why(catalog):
    out = _compute(SPEC)
    assert out.status == VersionStatus.DONE, out.error
    dec = out.result["decision"]
    apis = [o for o in out.result["costs"]["options"] if o["kind"] == "api"]
    assert len(dec["model_api"]["compared"]) == len(apis) > 1
    assert dec["model_api"]["named"] is False
    assert f"cheapest of all {len(apis)} model APIs" in dec["why"]
    cheapest = min(apis, key=lambda o: D(o["totals"]["decision"]))
    assert cheapest["id"] == dec["option_id"]


def test_several_named_apis_are_compared(catalog):
    spec = {**SPEC, "serving": {**SPEC["serving"], "model_api": ["OpenAI/gpt-4o", "Anthropic/claude-haiku-4-5"]}}
    out = _compute(spec)
    assert out.status == VersionStatus.DONE, out.error
    assert sorted(o["id"].split("|", 2)[2] for o in out.result["costs"]["options"]) == [
        "Anthropic|claude-haiku-4-5", "OpenAI|gpt-4o"]
    assert "cheapest of the 2 model APIs the workload names" in out.result["decision"]["why"]


def test_unknown_model_api_is_a_field_error(catalog):
    out = _compute({**SPEC, "serving": {**SPEC["serving"], "model_api": ["OpenAI/gpt-4o", "Nobody/model-x"]}})
    assert out.status == VersionStatus.FAILED
    assert "spec.serving.model_api" in out.error and "Nobody/model-x" in out.error
    assert "OpenAI/gpt-4o-mini" in out.error  # lists what is priced


@pytest.mark.parametrize("bad", ["gpt-4o", ["OpenAI/"], 7, [""]])
def test_malformed_model_api_is_a_spec_field_error(bad):
    from planner.engine.errors import SpecValidationError
    from planner.engine.spec import parse_workload_spec

    with pytest.raises(SpecValidationError) as exc:
        parse_workload_spec({**SPEC, "serving": {**SPEC["serving"], "model_api": bad}})
    assert [e.field for e in exc.value.errors] == ["serving.model_api"]


def _section(html, sid):
    m = re.search(rf'<section[^>]*id="{sid}".*?</section>', html, re.S)
    return unescape(re.sub(r"<[^>]+>", " ", m.group(0))) if m else ""


@pytest.mark.parametrize("lang", ["en", "ru"])
def test_page_of_an_agent_plan_names_the_api_and_the_cpu_server_and_no_gpu(client, catalog, lang):
    spec = {**SPEC, "serving": {**SPEC["serving"], "model_api": "OpenAI/gpt-4o-mini"}}
    plan = PlanFactory(workload__kind="external_api", workload__spec=spec,
                       cost_options={"currency": "RUB", "include_vat": True, "horizon_months": 36})
    services.plan_version_create(plan=plan, user=None)
    assert plan.versions.get().status == VersionStatus.DONE, plan.versions.get().error
    client.force_login(member(Role.VIEWER, team=plan.team))
    html = client.get(reverse("plan_detail", args=[plan.id]), HTTP_ACCEPT_LANGUAGE=lang).content.decode()
    decision, hardware = _section(html, "decision"), _section(html, "recommendation")
    assert decision and hardware
    for text in (decision, hardware):
        assert not re.search(r"GPU|ГП", text), "\n".join(ln.strip() for ln in text.splitlines() if re.search(r"GPU|ГП", ln))
    assert "gpt-4o-mini" in decision and "m7a.2xlarge" in decision
    assert "m7a.2xlarge" in hardware
    # a RUB plan prices the USD-listed instance hour in roubles, net of VAT, the list price beside it
    assert re.search(r"\d RUB/(h|ч) (net of VAT|без НДС) \(0[.,]4637 USD/(h|ч)\)", decision), decision
    from pypdf import PdfReader

    pdf = PdfReader(io.BytesIO(client.get(reverse("plan_version_export", args=[plan.id, 1, "pdf"]),
                                          HTTP_ACCEPT_LANGUAGE=lang).content))
    first = " ".join(pdf.pages[0].extract_text().split())
    assert "gpt-4o-mini" in first and "m7a.2xlarge" in first
    summary = first.split("Alternatives compared" if lang == "en" else "Сравниваемые варианты")[0]
    assert not re.search(r"GPU|ГП", summary), summary


def test_unknown_model_api_from_the_api_is_400_and_writes_nothing(catalog):
    from tests.functional.api_fixtures import World, client_for

    world = World()
    editor = client_for(world.users["editor"])
    before = (Plan.objects.count(), PlanVersion.objects.count(), Workload.objects.count())
    spec = {**SPEC, "serving": {**SPEC["serving"], "model_api": ["OpenAI/gpt-4o", "Nobody/model-x"]}}
    response = editor.post("/api/v1/plans/", {"team": world.team.id, "spec": spec}, format="json")
    assert response.status_code == 400
    errors = response.json()["errors"]
    assert [e["field"] for e in errors] == ["spec.serving.model_api"]
    assert "Nobody/model-x" in errors[0]["message"] and "OpenAI/gpt-4o-mini" in errors[0]["message"]
    assert (Plan.objects.count(), PlanVersion.objects.count(), Workload.objects.count()) == before
    ok = editor.post("/api/v1/plans/", {"team": world.team.id, "spec": {**spec, "serving": {
        **SPEC["serving"], "model_api": "OpenAI/gpt-4o"}}}, format="json")
    assert ok.status_code == 202, ok.content


def test_the_form_asks_the_model_api_and_refuses_nothing_priced(client, catalog):
    from planner.forms import WorkloadForm
    from planner.models import Workload as W

    user = member(Role.EDITOR)
    client.force_login(user)
    from planner.models import Team

    form = WorkloadForm(teams=Team.objects.none(), initial={"kind": "external_api"})
    asked = {bf.name: bf for _step, _heading, fields in form.steps() for bf in fields}
    assert "serving__model_api" in asked
    html = str(asked["serving__model_api"])
    assert "OpenAI gpt-4o-mini" in html and "Anthropic claude-haiku-4-5" in html  # with the provider
    data = {"team": user.memberships.get().team_id, "name": "agent", "kind": "external_api",
            "rag__documents": "100000", "serving__input_tokens": "2000", "serving__output_tokens": "400",
            "serving__requests_per_second": "1", "horizon_months": "36", "currency": "USD",
            "serving__model_api": ["OpenAI/gpt-4o", "Anthropic/claude-haiku-4-5"]}
    response = client.post(reverse("workload_create"), data)
    assert response.status_code in (302, 303), response.context["form"].errors if response.context else response
    assert W.objects.get().spec["serving"]["model_api"] == ["OpenAI/gpt-4o", "Anthropic/claude-haiku-4-5"]
    bad = client.post(reverse("workload_create"), {**data, "serving__model_api": ["Nobody/x"]})
    assert bad.status_code == 400 and "serving__model_api" in bad.context["form"].errors
    assert W.objects.count() == 1


def test_schema_lists_the_priced_model_apis_the_server_accepts(client, catalog):
    # The server refuses an unpriced model API, so the published schema must say which it takes.
    schema = client.get("/api/v1/schema/?format=json").json()
    components = schema["components"]["schemas"]
    # the serving section and its enum are shared components (issue 23, 5.): follow the references
    model_api = components["ServingSpec"]["properties"]["model_api"]
    one, many = model_api["oneOf"]

    def enum(node):
        ref = node.get("$ref") or (node.get("allOf") or [{}])[0].get("$ref")
        return components[ref.rsplit("/", 1)[-1]]["enum"] if ref else node["enum"]

    priced = [key for key, _label in services_api.priced_model_apis()]
    assert enum(one) == enum(many["items"]) == priced
    assert "Sber/GigaChat-2-Max" in priced and "OpenAI/gpt-4o-mini" in priced


@pytest.mark.parametrize("lang", ["en", "ru"])
def test_page_1_of_an_agent_plan_compares_the_cheapest_api_of_each_other_provider(client, catalog, lang):
    """One way of paying (model APIs): PDF page 1 compares the decided API and the cheapest of each other
    provider (costs.order.compared_options), says so, and each compared option carries its lines."""
    plan = PlanFactory(workload__kind="external_api", workload__spec=SPEC)
    services.plan_version_create(plan=plan, user=None)
    version = plan.versions.get()
    assert version.status == VersionStatus.DONE, version.error
    apis = [o for o in version.result["costs"]["options"] if o["kind"] == "api"]
    in_full = [o for o in apis if o["rows"][0].get("lines")]
    providers = [o["detail"]["provider"] for o in in_full]
    assert len(in_full) == min(5, len({o["detail"]["provider"] for o in apis})) >= 2
    assert len(set(providers)) == len(providers)  # one per provider
    client.force_login(member(Role.VIEWER, team=plan.team))
    from pypdf import PdfReader

    pdf = PdfReader(io.BytesIO(client.get(reverse("plan_version_export", args=[plan.id, 1, "pdf"]),
                                          HTTP_ACCEPT_LANGUAGE=lang).content))
    first = " ".join(pdf.pages[0].extract_text().split())
    assert ("cheapest of each other provider" if lang == "en" else "каждого другого провайдера") in first
    for o in in_full:
        assert o["detail"]["model"] in first, o["detail"]["model"]
