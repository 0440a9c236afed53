"""The costs pipeline on the shipped catalog and rate card: adapter, CLI and exports."""

import csv
import datetime as dt
import io
import json
from dataclasses import asdict
from decimal import Decimal as D

import pytest
from django.core.management import CommandError, call_command
from django.db import transaction
from openpyxl import load_workbook

from catalog.selectors import accelerator_specs
from catalog.snapshots import price_snapshot
from costs.adapters import price_sizing_result
from costs.exports import costs_csv
from costs.exports_xlsx import costs_xlsx
from costs.selectors import rate_card_snapshot
from planner.engine import size_workload
from planner.engine.result import candidate_id
from planner.engine.spec import parse_workload_spec

pytestmark = pytest.mark.django_db
AS_OF = dt.date(2026, 11, 30)
SPEC = {
    "kind": "inference",
    "name": "Support bot",
    "model": {"preset": "llama-3.1-8b"},
    "serving": {"context_length": 8192, "concurrency": 16, "requests_per_second": 2},
}
API = [
    {
        "provider": "Example",
        "model": "m",
        "currency": "USD",
        "input_per_1m_tokens": "0.5",
        "output_per_1m_tokens": "1.5",
        "source": "user quote",
    }
]


def _load():
    call_command("load_catalog", stdout=io.StringIO())
    call_command("load_rate_cards", stdout=io.StringIO())


@pytest.fixture
def catalog(db):
    _load()


@pytest.fixture(scope="module")
def snapshots(django_db_setup, django_db_blocker):
    """The shipped catalog and rate card as stored snapshots, loaded once and rolled back."""
    with django_db_blocker.unblock(), transaction.atomic():
        _load()
        prices = price_snapshot(as_of=AS_OF)
        accs = accelerator_specs(as_of=AS_OF)
        prices["accelerators"] = [asdict(a) for a in accs]
        rates = rate_card_snapshot(as_of=AS_OF)
        transaction.set_rollback(True)
    return prices, accs, rates


@pytest.fixture
def costs(snapshots):
    prices, accs, rates = snapshots

    def run(options: dict, spec: dict = SPEC) -> dict:
        sizing = size_workload(spec=parse_workload_spec(spec), accelerators=accs).to_dict()
        return price_sizing_result(
            sizing=sizing, price_snapshot=prices, rate_snapshot=rates, options=options, spec=spec
        )

    return run


def test_every_priced_option_has_the_four_rows(costs):
    res = costs({"horizon_months": 12})
    assert res["options"]
    for o in res["options"]:
        assert [r["row"] for r in o["rows"]] == ["gpu_time", "infrastructure", "engineering", "downtime_risk"]


def test_serving_volume_prices_the_api_option(costs):
    # no serving.requests_per_day: the volume is the peak x the average-to-peak ratio 0.3,
    # 2 rps x 3600 s x 730 h x 0.3 = 1 576 800 requests a month x 1024 input tokens at 0.5 USD per 1M
    res = costs({"horizon_months": 1, "options": ["api"], "api_prices": API})
    # every model API is priced on the same volume; the shortlisted ones carry their rows in full
    api = next(o for o in res["options"] if o.get("rows") and o["rows"][0].get("lines"))
    tokens = api["rows"][0]["lines"][0]["inputs"]
    assert D(tokens["tokens_in_per_month"]) == 2 * 3600 * 730 * D("0.3") * 1024
    # with requests_per_day (here 24 000 a day): 24 000 x 730 / 24 = 730 000 requests a month
    given = {**SPEC, "serving": {**SPEC["serving"], "requests_per_day": 24_000}}
    res = costs({"horizon_months": 1, "options": ["api"], "api_prices": API}, given)
    tokens = next(o for o in res["options"] if o.get("rows") and o["rows"][0].get("lines"))["rows"][0]["lines"][0]["inputs"]
    assert D(tokens["tokens_in_per_month"]) == 730_000 * 1024
    assert api["unit_costs"]["per_1m_tokens_net"] is not None


def test_cost_json_is_serialisable_and_records_rate_sources(costs):
    res = costs({"horizon_months": 6})
    json.dumps(res)
    pue = next(r for r in res["inputs_used"]["rates"] if r["key"] == "pue")
    assert pue["source"].startswith("assumption")


def test_csv_export_totals_match_the_json(costs):
    from costs.labels import option_label

    res = costs({"horizon_months": 6})
    text = costs_csv(res).decode("utf-8-sig")
    table = text[text.index("\r\n\r\n") + 4:]
    rows = list(csv.DictReader(io.StringIO(table)))
    totals = sorted((r["Option"], D(r["Total, net"])) for r in rows if r["Row"] == "Total")
    assert totals == sorted((option_label(o), D(o["totals"]["net"]).quantize(D("0.01")))
                            for o in res["options"])


def test_xlsx_export_has_summary_inputs_and_numeric_money(costs, tmp_path):
    res = costs({"horizon_months": 6})
    path = tmp_path / "plan.xlsx"
    path.write_bytes(costs_xlsx(res))
    wb = load_workbook(path)
    assert wb.sheetnames[0] == "Summary" and {"Cash flow", "Inputs"} <= set(wb.sheetnames)
    ws = wb["Summary"]
    header = next(r for r in range(1, 30) if ws.cell(r, 1).value == "Rank")
    assert ws.cell(header, 5).value == "Total, net"
    cell = ws.cell(header + 1, 5)  # first option's net total
    assert isinstance(cell.value, (int, float)) and "USD" in cell.number_format
    sources = [row[5] for row in wb["Inputs"].iter_rows(min_row=2, values_only=True)]
    assert all(sources)


def test_cli_prints_json_table_and_workbook(catalog, tmp_path):
    path = tmp_path / "spec.json"
    path.write_text(
        json.dumps({**SPEC, "costs": {"horizon_months": 12, "currency": "RUB"}}), encoding="utf-8"
    )
    out = io.StringIO()
    call_command("plan", str(path), "--as-of", AS_OF.isoformat(), stdout=out)
    data = json.loads(out.getvalue())
    assert data["costs"]["currency"] == "RUB" and data["sizing"]["kind"] == "inference"
    table = io.StringIO()
    call_command(
        "plan",
        str(path),
        "--format",
        "table",
        "--xlsx",
        str(tmp_path / "p.xlsx"),
        "--as-of",
        AS_OF.isoformat(),
        stdout=table,
    )
    assert "gpu_time" in table.getvalue() and load_workbook(tmp_path / "p.xlsx").sheetnames[0] == "Summary"


def test_cli_bad_input_exits_2_naming_the_fields(db, tmp_path):
    path = tmp_path / "spec.json"
    path.write_text(json.dumps({**SPEC, "costs": {"utilisation": 1.5, "currency": "GBP"}}), encoding="utf-8")
    with pytest.raises(CommandError) as exc:
        call_command("plan", str(path))
    assert exc.value.returncode == 2
    assert "costs.utilisation: must be between 0 and 1" in str(exc.value)
    assert "costs.currency: unknown currency 'GBP'" in str(exc.value)


def test_cli_not_json_exits_2(tmp_path):
    path = tmp_path / "spec.json"
    path.write_text("{nope", encoding="utf-8")
    with pytest.raises(CommandError) as exc:
        call_command("plan", str(path))
    assert exc.value.returncode == 2 and "not valid JSON" in str(exc.value)


def test_missing_rates_in_a_stored_snapshot_fall_back_to_the_shipped_card(snapshots):
    prices, accs, rates = snapshots
    sizing = size_workload(spec=parse_workload_spec(SPEC), accelerators=accs).to_dict()
    stored = {"rates": {}, "vat_history": rates["vat_history"]}
    res = price_sizing_result(
        sizing=sizing, price_snapshot=prices, rate_snapshot=stored, options={}, spec=SPEC
    )
    assert res["options"] and "shipped defaults used" in res["notes"][0]


def test_residential_tariff_is_not_used_for_data_centre_power(costs):
    res = costs({"horizon_months": 6, "country": "RU"})
    assert any("residential only" in n for n in res["notes"])
    assert res["inputs_used"]["power_tariff"] is None  # the rate card's business tariff is used


def test_serving_spot_pays_restarts_but_no_lost_training_progress(costs):
    # serving 24 h a day: u = 1; 4 interruptions x (no checkpoint loss + 0.25 h restart) = 1 extra hour
    res = costs({"horizon_months": 1, "options": ["cloud_spot"]})
    billed = {
        ln["inputs"]["billed_hours_per_month"]
        for o in res["options"]
        for r in o["rows"]
        for ln in r["lines"] or []  # lines: shortlisted options only
        if ln["key"] == "gpu_time.useful"
    }
    assert billed == {"731"}


LLAMA_70B_SERVING = {
    "kind": "inference",
    "name": "Llama 3.1 70B serving",
    "model": {"preset": "llama-3.1-70b"},
    "serving": {"context_length": 8192, "concurrency": 16, "requests_per_second": 2, "ttft_p95_ms": 2000},
}


def test_70b_serving_never_splits_a_tensor_parallel_group_over_instances(costs, snapshots):
    res = costs({"horizon_months": 12}, LLAMA_70B_SERVING)
    gpu = [o for o in res["options"] if o["kind"] != "api"]
    assert gpu
    for o in gpu:
        d = o["detail"]
        per_host = d.get("gpus_per_instance") or d.get("gpus_per_server")
        if per_host is None:  # hybrid: the burst part
            continue
        assert per_host >= d["tensor_parallel"] and per_host % d["tensor_parallel"] == 0, o["label"]
    # the single-GPU T4 VM that was once "cheapest" for 16 T4s is not offered any more
    assert not any("Standard_NC4as_T4_v3" in o["label"] for o in gpu)


def test_prices_the_recommendation_and_one_configuration_per_accelerator(costs, snapshots):
    prices, accs, rates = snapshots
    sizing = size_workload(spec=parse_workload_spec(LLAMA_70B_SERVING), accelerators=accs).to_dict()
    res = price_sizing_result(
        sizing=sizing,
        price_snapshot=prices,
        rate_snapshot=rates,
        options={"horizon_months": 12},
        spec=LLAMA_70B_SERVING,
    )
    rec = sizing["recommendation"]
    wanted = {f"{rec['accelerator_id']} x{rec['count']}"} | {
        f"{b['accelerator_id']} x{b['count']}" for b in sizing["candidates"]["best_per_accelerator"]
    } | {candidate_id(d) for d in sizing["candidates"].get("disaggregated") or []}  # pool splits priced beside them
    # the external model API (shipped prices) is a candidate of its own
    assert {o["candidate"] for o in res["options"]} - {"api"} <= wanted
    rec_id = f"{rec['accelerator_id']} x{rec['count']}"
    # priced and shortlisted, or listed as skipped with the reason (e.g. no catalog price)
    assert rec_id in res["shortlist"] or any(s["candidate"] == rec_id for s in res["skipped"])


def test_labels_name_gpus_and_instances_and_are_unique(costs):
    res = costs({"horizon_months": 12}, LLAMA_70B_SERVING)
    labels = [o["label"] for o in res["options"]]
    assert len(labels) == len(set(labels))
    cloud = next(o for o in res["options"] if o["kind"] == "cloud_on_demand")
    d = cloud["detail"]
    assert cloud["label"].startswith(f"{d['gpus']} x ")
    assert f"(TP{d['tensor_parallel']}" in cloud["label"]
    assert f" on {d['instances']} x {d['provider']} {d['instance_type']} " in cloud["label"]


def test_reference_inference_plan_cost_json_stays_small(costs):
    # the plan page and the API serve this JSON: it was 2.2 MB with every offer in full; the per-line
    # breakdown (quantity x unit price x months with source and date, issue 13) adds about 50 KB, the
    # engine texts' {template, params} for translation (issue 15) a few more; pricing the volume instead of
    # the peak (issue 20 part 3) makes three API options cheap enough to be kept in full (was one): +24 KB;
    # budget and risk apart (issue 20 part 2): each option's risk figure (about 14 KB) and more options
    # kept in full; the decision order and server shapes a little more. Issue 20 asks for 250 KB in the
    # end: that is the plan-size work (bench/), not this guard's, which catches regressions.
    res = costs({"api_prices": API})
    assert len(json.dumps(res)) < 420_000
    assert res["offers_priced"] > len(res["options"]) - 1  # more offers priced than kept


def test_serving_spot_warns_and_prices_outages(costs):
    res = costs({"horizon_months": 1, "options": ["cloud_spot"]}, LLAMA_70B_SERVING)
    assert res["options"]
    for o in res["options"]:
        assert any("SLA" in w for w in o["warnings"])
        downtime = next(r for r in o["rows"] if r["row"] == "downtime_risk")
        if downtime["lines"] is not None:
            assert "downtime_risk.spot_interruptions" in {ln["key"] for ln in downtime["lines"]}


def test_csv_and_xlsx_carry_the_per_line_breakdown(costs):
    res = costs({"api_prices": API, "horizon_months": 12})
    text = costs_csv(res).decode("utf-8-sig")
    rows = list(csv.DictReader(io.StringIO(text[text.index("\r\n\r\n") + 4:])))
    items = [r for r in rows if r["Item"]]
    # every priced item has its amount and unit price; the outage hours are not priced without the
    # user's cost of an hour of downtime (no hidden default), so those items have neither
    unpriced = [r for r in items if r["Basis"] == "not given"]
    assert unpriced and all(not r["Amount"] and not r["Unit price"] and r["Quantity"] for r in unpriced)
    assert items and all(r["Amount"] and r["Unit price"] for r in items if r not in unpriced)
    gpu = next(r for r in items if r["Kind"] == "Cloud, on demand" and r["Line"] == "GPU time, useful")
    assert gpu["Source"] and gpu["Price date"] and gpu["Basis"] == "list price"
    wb = load_workbook(io.BytesIO(costs_xlsx(res)))
    sheet = wb.worksheets[1]
    texts = [c.value for row in sheet.iter_rows() for c in row if isinstance(c.value, str)]
    assert any(t.startswith("Breakdown") for t in texts)


def test_cli_one_plan_date(db, tmp_path):
    # costs.as_of and --as-of must agree: prices, FX and VAT of one day
    path = tmp_path / "spec.json"
    path.write_text(json.dumps({**SPEC, "costs": {"as_of": "2026-11-01"}}), encoding="utf-8")
    with pytest.raises(CommandError) as exc:
        call_command("plan", str(path), "--as-of", "2026-11-30")
    assert exc.value.returncode == 2
    assert "costs.as_of" in str(exc.value)


def test_costs_as_of_must_match_the_price_snapshot(costs):
    from costs.engine.errors import CostValidationError

    with pytest.raises(CostValidationError) as exc:
        costs({"as_of": "2026-01-01"})
    assert exc.value.errors[0].path == "costs.as_of"
