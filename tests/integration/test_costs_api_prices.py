"""External model API prices: the shipped CSV, its loader (validated, atomic, idempotent), the dated
snapshot and the API option of an inference plan."""

import datetime as dt
import io
from dataclasses import asdict
from decimal import Decimal as D

import pytest
from django.core.management import CommandError, call_command

from catalog.selectors import accelerator_specs
from catalog.snapshots import price_snapshot
from costs.adapters import price_sizing_result
from costs.engine.errors import CostValidationError
from costs.models import ApiTokenPrice, RateCard
from costs.rate_csv import API_COLUMNS, read_api_price_csv
from costs.selectors import rate_card_snapshot
from costs.services import api_token_prices_load
from planner.engine import size_workload
from planner.engine.spec import parse_workload_spec

pytestmark = pytest.mark.django_db

HEADER = ",".join(API_COLUMNS)
GOOD = "Acme,chat-1,0.5,1.5,USD,false,2026-01-01,,,https://example.org/pricing (read 2026-01-01)"


def _csv(tmp_path, rows: list[str], name: str = "api.csv"):
    path = tmp_path / name
    path.write_text(HEADER + "\n" + "\n".join(rows) + "\n", encoding="utf-8")
    return path


# ---- the shipped file ------------------------------------------------------------------------


def test_shipped_api_prices_are_valid_dated_and_sourced():
    rows = read_api_price_csv()
    assert len(rows) >= 10
    assert {r["provider"] for r in rows} >= {"OpenAI", "Anthropic", "Google", "DeepSeek"}
    for r in rows:
        assert r["source"].count("http") + r["source"].count("github.com") >= 1, r
        assert r["output_per_1m_tokens"] > 0 and r["input_per_1m_tokens"] > 0


def test_shipped_api_prices_load_and_reload_unchanged():
    first = api_token_prices_load()
    second = api_token_prices_load()
    assert first["created"] == ApiTokenPrice.objects.count() == len(read_api_price_csv())
    assert second == {"created": 0, "updated": 0, "unchanged": first["created"]}


def test_load_rate_cards_command_loads_the_api_prices_too():
    out = io.StringIO()
    call_command("load_rate_cards", stdout=out)
    assert f"API token prices: {len(read_api_price_csv())} created" in out.getvalue()
    assert ApiTokenPrice.objects.filter(provider="OpenAI", model="gpt-4o-mini").exists()


# ---- loader ----------------------------------------------------------------------------------


def test_changed_price_is_updated_in_place(tmp_path):
    api_token_prices_load(path=_csv(tmp_path, [GOOD]))
    counts = api_token_prices_load(path=_csv(tmp_path, [GOOD.replace(",1.5,", ",1.25,")]))
    assert counts == {"created": 0, "updated": 1, "unchanged": 0}
    assert ApiTokenPrice.objects.get().output_per_1m_tokens == D("1.25")


def test_rub_price_with_vat_keeps_the_flag(tmp_path):
    api_token_prices_load(path=_csv(tmp_path, ["Acme,ru-1,120,360,RUB,true,2026-01-01,,,https://example.ru"]))
    assert ApiTokenPrice.objects.get().includes_vat is True


def test_bad_rows_write_nothing_and_name_line_and_column(tmp_path):
    path = _csv(
        tmp_path,
        [
            GOOD,
            "Acme,chat-2,-1,1.5,USD,false,2026-01-01,,,https://example.org",
            "Acme,chat-3,0.5,1.5,GBP,yes,2026-13-01,,,",
        ],
    )
    with pytest.raises(CostValidationError) as exc:
        api_token_prices_load(path=path)
    assert [str(e) for e in exc.value.errors] == [
        "api.csv:3.input_per_1m_tokens: must be a number, 0 or more",
        "api.csv:4.currency: unknown currency 'GBP'; expected one of RUB, USD, EUR",
        "api.csv:4.includes_vat: must be true or false",
        "api.csv:4.valid_from: must be a date YYYY-MM-DD",
        "api.csv:4.source: every price needs a source",
    ]
    assert ApiTokenPrice.objects.count() == 0


def test_duplicate_provider_model_date_is_refused(tmp_path):
    with pytest.raises(CostValidationError) as exc:
        api_token_prices_load(path=_csv(tmp_path, [GOOD, GOOD.replace("0.5", "0.6", 1)]))
    assert str(exc.value) == "api.csv:3.valid_from: Acme chat-1 from 2026-01-01 is already on line 2"


def test_valid_to_must_follow_valid_from(tmp_path):
    with pytest.raises(CostValidationError) as exc:
        api_token_prices_load(path=_csv(tmp_path, [GOOD.replace("2026-01-01,,", "2026-01-01,2025-12-31,")]))
    assert [e.path for e in exc.value.errors] == ["api.csv:2.valid_to"]


def test_wrong_columns_are_refused(tmp_path):
    path = tmp_path / "api.csv"
    path.write_text("provider,model,price\nAcme,m,1\n", encoding="utf-8")
    with pytest.raises(CostValidationError, match="columns must be"):
        api_token_prices_load(path=path)


def test_command_with_a_bad_api_file_leaves_the_rate_card_untouched(tmp_path):
    bad = _csv(tmp_path, ["Acme,chat-1,x,1.5,USD,false,2026-01-01,,,https://example.org"])
    with pytest.raises(CommandError) as exc:
        call_command("load_rate_cards", api_file=str(bad), stdout=io.StringIO())
    assert "api.csv:2.input_per_1m_tokens: must be a number" in str(exc.value)
    assert RateCard.objects.count() == 0 and ApiTokenPrice.objects.count() == 0


# ---- dated snapshot --------------------------------------------------------------------------


def _api(snapshot: dict, provider: str, model: str) -> dict:
    (row,) = [a for a in snapshot["api_prices"] if (a["provider"], a["model"]) == (provider, model)]
    return row


def test_snapshot_takes_the_price_valid_at_the_plan_date():
    api_token_prices_load()
    # Gemini 3.8 Flash: $0.75 / $3.75 through 2026-12-31, $1.50 / $7.50 from 2027-01-01 (one page, two rows)
    before = _api(rate_card_snapshot(as_of=dt.date(2026, 12, 31)), "Google", "gemini-3.8-flash")
    after = _api(rate_card_snapshot(as_of=dt.date(2027, 1, 1)), "Google", "gemini-3.8-flash")
    assert (before["input_per_1m_tokens"], before["output_per_1m_tokens"]) == ("0.75", "3.75")
    assert (after["input_per_1m_tokens"], after["output_per_1m_tokens"]) == ("1.5", "7.5")
    # a plan dated before a model's first sourced price does not see it
    early = rate_card_snapshot(as_of=dt.date(2025, 10, 1))["api_prices"]
    assert not [a for a in early if a["provider"] == "Google"]


# ---- the API option of an inference plan -----------------------------------------------------

AS_OF = dt.date(2026, 11, 30)
# 1 request/s around the clock: 3600 x 730 = 2 628 000 requests a month,
# x 1000 input tokens = 2 628 M tokens in, x 250 output tokens = 657 M tokens out
SPEC = {
    "kind": "inference",
    "name": "Support bot",
    "model": {"preset": "llama-3.1-8b"},
    "serving": {
        "context_length": 4096,
        "concurrency": 8,
        "requests_per_second": 1,
        # the peak held around the clock: 1 x 3600 x 24 = 86 400 requests a day (the most a day can hold)
        "requests_per_day": 86400,
        "input_tokens": 1000,
        "output_tokens": 250,
    },
}


def _plan(spec: dict, **options) -> dict:
    call_command("load_catalog", stdout=io.StringIO())
    call_command("load_rate_cards", stdout=io.StringIO())
    prices = price_snapshot(as_of=AS_OF)
    accs = accelerator_specs(as_of=AS_OF)
    prices["accelerators"] = [asdict(a) for a in accs]
    sizing = size_workload(spec=parse_workload_spec(spec), accelerators=accs).to_dict()
    return price_sizing_result(
        sizing=sizing,
        price_snapshot=prices,
        rate_snapshot=rate_card_snapshot(as_of=AS_OF),
        options={"as_of": AS_OF.isoformat(), "currency": "USD", "include_vat": False, "horizon_months": 12,
                 **options},
        spec=spec,
    )


@pytest.fixture
def plan(db):
    return _plan(SPEC)


def _token_line(option: dict) -> dict:
    (line,) = [ln for ln in option["rows"][0]["lines"] if ln["key"] == "gpu_time.api_tokens"]
    return line


def test_inference_plan_prices_every_shipped_api_model_valid_at_the_plan_date(plan):
    from costs.adapters.entry import build_cost_inputs_with_sources
    from costs.engine.plan import cost_plan

    shipped = {m for (_, m) in [(a["provider"], a["model"]) for a in read_api_price_csv()]}
    prices = price_snapshot(as_of=AS_OF)
    accs = accelerator_specs(as_of=AS_OF)
    prices["accelerators"] = [asdict(a) for a in accs]
    inputs, _notes, _sources = build_cost_inputs_with_sources(
        sizing=size_workload(spec=parse_workload_spec(SPEC), accelerators=accs).to_dict(), price_snapshot=prices,
        rate_snapshot=rate_card_snapshot(as_of=AS_OF), spec=parse_workload_spec(SPEC),
        options={"as_of": AS_OF.isoformat(), "currency": "USD", "include_vat": False, "horizon_months": 12})
    priced = cost_plan(inputs=inputs).options
    assert {p.option.detail["model"] for p in priced if p.option.kind == "api"} == shipped
    # the plan lists the cheapest of them (and counts the options it leaves out)
    listed = {o["detail"]["model"] for o in plan["options"] if o["kind"] == "api"}
    assert listed <= shipped and plan["decision"]["api"]["id"] in {o["id"] for o in plan["options"]}
    assert plan["options_listed"] + plan["options_left_out"] == len(priced)
    assert "api" in plan["compared_candidates"]


def test_cheapest_api_option_is_kept_in_full_with_hand_checked_token_cost(plan):
    # GPT-4o mini, $0.15 in / $0.60 out per 1M: 2628 x 0.15 + 657 x 0.60 = 394.20 + 394.20 = 788.40 USD a month
    api = [o for o in plan["options"] if o["kind"] == "api"]
    cheapest = min(api, key=lambda o: D(o["totals"]["net"]))
    assert cheapest["id"] == "api|api|OpenAI|gpt-4o-mini"
    assert cheapest["id"] in plan["shortlist"]["api"]
    line = _token_line(cheapest)
    assert D(line["inputs"]["tokens_in_per_month"]) == 3600 * 730 * 1000
    assert D(line["inputs"]["tokens_out_per_month"]) == 3600 * 730 * 250
    assert D(line["monthly_net"]) == D("788.40")
    assert D(line["total_net"]) == D("788.40") * 12


def test_every_api_option_has_its_token_cost_and_the_shortlisted_one_its_source(plan):
    # DeepSeek V3.2, $0.28 / $0.42: 2628 x 0.28 + 657 x 0.42 = 735.84 + 275.94 = 1011.78 USD a month
    (ds,) = [o for o in plan["options"] if o["id"] == "api|api|DeepSeek|deepseek-chat"]
    assert D(ds["rows"][0]["total_net"]) == D("1011.78") * 12
    (mini,) = [o for o in plan["options"] if o["id"] == "api|api|OpenAI|gpt-4o-mini"]
    # each unit price of the line's breakdown (input, output tokens) names its source and date
    breakdown = _token_line(mini)["breakdown"]
    sources = [b["source"] for b in breakdown]
    assert len(sources) == 2 and all("platform.openai.com/docs/pricing" in s for s in sources)
    assert all(b["date"] == "2026-05-01" and b["basis"] == "list price" for b in breakdown)


# ---- which API the decision compares with self-hosting -------------------------------------------


def test_an_api_serving_the_same_open_model_is_the_one_compared(db):
    """DeepSeek's API serves DeepSeek-V3.2, of the DeepSeek-V3 family the preset sizes: like for like,
    though other APIs are cheaper per token."""
    c = _plan({**SPEC, "model": {"preset": "deepseek-v3"}})
    api = c["decision"]["api"]
    assert api["id"] == "api|api|DeepSeek|deepseek-chat"
    assert "like for like" in str(api["comparison"]) and "DeepSeek-V3" in str(api["comparison"])
    cheapest = min((o for o in c["options"] if o["kind"] == "api"), key=lambda o: D(o["totals"]["net"]))
    assert cheapest["id"] != api["id"]  # cheaper per token, but another model


def test_another_model_is_flagged_as_a_price_comparison_only(plan):
    api = plan["decision"]["api"]
    assert api["id"] == "api|api|OpenAI|gpt-4o-mini"
    assert "another model than the self-hosted Llama 3.1 8B" in str(api["comparison"])
    assert "not the quality" in str(api["comparison"])


def test_a_teams_api_price_for_the_same_open_model_is_compared_like_for_like(db):
    own = {"provider": "Hoster", "model": "llama-3.1-8b-instruct", "currency": "USD", "input_per_1m_tokens": "0.2",
           "output_per_1m_tokens": "0.4", "open_weights_model": "llama-3.1-8b", "source": "quote 2026-11-30"}
    c = _plan(SPEC, api_prices=[own])
    assert c["decision"]["api"]["id"] == "api|api|Hoster|llama-3.1-8b-instruct"
    assert "like for like" in str(c["decision"]["api"]["comparison"])
    with pytest.raises(CostValidationError) as exc:
        _plan(SPEC, api_prices=[{**own, "open_weights_model": "llama-9"}])
    assert [e.path for e in exc.value.errors] == ["costs.api_prices[0].open_weights_model"]


def test_a_bad_open_weights_model_in_the_file_names_line_and_column(tmp_path):
    bad = GOOD.replace(",,,https", ",,llama-9,https")
    with pytest.raises(CostValidationError) as exc:
        api_token_prices_load(path=_csv(tmp_path, [GOOD.replace("chat-1", "chat-0"), bad]))
    assert [str(e) for e in exc.value.errors] == [
        "api.csv:3.open_weights_model: 'llama-9' is not a model preset id (or leave it empty)"]
    assert ApiTokenPrice.objects.count() == 0


# ---- peak and volume: the 70B chat service of issue 20, worked by hand in docs/COSTS.md -------------

CHAT_70B = {
    "kind": "inference",
    "name": "Chat for 300 employees",
    "model": {"preset": "llama-3.1-70b"},
    # peak 5 requests/s in a 10-hour working day; 300 employees x 20 requests = 6 000 requests a day
    "serving": {"input_tokens": 2000, "output_tokens": 400, "requests_per_second": 5, "hours_per_day": 10,
                "ttft_p95_ms": 2000, "requests_per_day": 6000},
}


def _line(option: dict, key: str) -> dict:
    return next(ln for row in option["rows"] for ln in row["lines"] or () if ln["key"] == key)


def test_the_70b_chat_example_prices_the_api_on_the_volume(db):
    # 6 000 requests a day x 730 / 24 = 182 500 requests a month:
    #   365 M input tokens x 0.15 USD + 73 M output tokens x 0.60 USD = 54.75 + 43.80 = 98.55 USD a month;
    #   egress 73 M tokens x 200 B = 14.6 GB x 0.09 USD = 1.314 USD a month
    # (the peak held all 10 hours, 180 000 requests a day, was priced before: 2 956.50 USD, 30 times more)
    c = _plan(CHAT_70B)
    (mini,) = [o for o in c["options"] if o["id"] == "api|api|OpenAI|gpt-4o-mini"]
    tokens = _token_line(mini)
    assert (D(tokens["inputs"]["tokens_in_per_month"]), D(tokens["inputs"]["tokens_out_per_month"])) == (
        D(365_000_000), D(73_000_000))
    assert D(tokens["monthly_net"]) == D("98.55")
    traffic = _line(mini, "infrastructure.traffic")
    assert D(traffic["inputs"]["quantity"]) == D("14.6")
    assert D(traffic["monthly_net"]) == D("1.31")
    assert any("volume: 6,000 requests a day" in n for n in c["notes"])


def test_the_70b_chat_example_without_a_volume_states_the_assumed_one(db):
    # 5 x 3600 x 10 x 0.3 = 54 000 requests a day x 730 / 24 = 1 642 500 a month:
    #   3 285 M x 0.15 + 657 M x 0.60 = 492.75 + 394.20 = 886.95 USD a month
    spec = {**CHAT_70B, "serving": {k: v for k, v in CHAT_70B["serving"].items() if k != "requests_per_day"}}
    c = _plan(spec)
    (mini,) = [o for o in c["options"] if o["id"] == "api|api|OpenAI|gpt-4o-mini"]
    assert D(_token_line(mini)["monthly_net"]) == D("886.95")
    assert any("volume assumed: 54,000 requests a day" in n for n in c["notes"])
