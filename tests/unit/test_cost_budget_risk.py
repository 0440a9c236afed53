"""Issue 20, 2.: the headline total is a budget (what will be paid); the expected cost of downtime
is a risk figure beside it, in the decision only on the risk-adjusted basis; no hidden default for
the cost of an hour of downtime; the decision rule (cheapest, risk_adjusted, fewest_gpus) is the
user's choice and its text says it.

Rates: the shipped rate card (tests/unit/cost_inputs.py, USD 1 = RUB 80)."""

from decimal import Decimal as D
from types import SimpleNamespace

import pytest

from costs.engine import decision
from costs.engine.errors import CostValidationError
from costs.engine.inputs import CloudOffer, CostOptions
from costs.engine.options import parse_cost_options, validate_options
from costs.engine.plan import cost_plan
from tests.unit.cost_inputs import inputs, usd, workload

# a 24/7 service on 8 x H100: one 8-GPU cloud instance at 40 USD/h, or one 8-GPU server bought
SERVICE = dict(candidate_id="h100x8", utilisation=D(1), meets_targets=True, sizing_recommended=True)


def _service(**opts):
    base = dict(workloads=[workload(**SERVICE)], options=("cloud_on_demand", "onprem"), include_vat=False,
                horizon_months=36, efficiency=D(1))
    base.update(opts)
    return cost_plan(inputs=inputs(**base))


def _by_kind(res, kind):
    return next(p for p in res.options if p.option.kind == kind)


def test_the_total_excludes_the_expected_cost_of_downtime():
    res = _service(downtime_cost_per_hour=D(1000))
    for p in res.options:
        budget = sum((lt.net for lt in p.lines if lt.line.row != "downtime_risk"), D(0))
        risk = sum((lt.net for lt in p.lines if lt.line.row == "downtime_risk"), D(0))
        assert risk > 0
        assert p.net == budget and p.risk_net == risk
        assert p.cumulative(vat=False)[-1] == budget  # the cash flow is the budget too
        # the cheapest basis compares the budget; only risk-adjusted adds the risk
        assert p.basis_total(res.basis) == budget
        assert p.basis_total(decision.Basis(vat=False, discount_rate=D(0), horizon_months=36,
                                            rule="risk_adjusted")) == budget + risk


def test_on_prem_platform_risk_by_hand():
    # on-prem: 6 incidents a year x 12 h MTTR = 72 h a year, / 12 = 6 h a month x 1000 USD = 6000 a month,
    # x 36 = 216 000.00; GPU failures: 8 GPUs x 0.173 / 12 x 12 h x 1/1 server = 1.384 h a month x 1000
    # = 1384.00 a month x 36 = 49 824.00; expected hours a year: 72 + 16.608 = 88.608 -> 88.6
    op = _by_kind(_service(downtime_cost_per_hour=D(1000)), "onprem")
    lines = {lt.line.key: lt for lt in op.risk_lines}
    assert lines["downtime_risk.outage"].net == D("216000.00")
    assert lines["downtime_risk.hardware_failures"].net == D("49824.00")
    assert op.risk_net == D("265824.00")
    assert op.outage_hours_per_year.quantize(D("0.1")) == D("88.6")


def test_risk_adjusted_ranks_by_budget_plus_risk():
    # at 5000 USD an hour of downtime: on-prem is the cheaper budget but carries 5 x 265 824 = 1 329 120.00
    # of expected downtime (above); the cloud: 4 / 12 x 2 h x 5000 = 3333.33 and 8 x 0.173 / 12 x 2 h x 5000
    # = 1153.33 a month (each month to the cent), x 36 = 161 519.76
    cheapest = _service(downtime_cost_per_hour=D(5000))
    risky = _service(downtime_cost_per_hour=D(5000), decision_basis="risk_adjusted")
    op, od = _by_kind(cheapest, "onprem"), _by_kind(cheapest, "cloud_on_demand")
    assert op.risk_net == D("1329120.00") and od.risk_net == D("161519.76")
    assert op.net < od.net and op.net + op.risk_net > od.net + od.risk_net
    rec = cheapest.to_dict()["decision"]["recommended"]
    assert rec["id"] == op.option.option_id and rec["total"] == str(op.net)
    rec = risky.to_dict()["decision"]["recommended"]
    assert rec["id"] == od.option.option_id
    assert rec["total"] == str(od.net + od.risk_net) and rec["total_net"] == str(od.net)
    assert rec["expected_downtime_net"] == "161519.76"
    assert "risk-adjusted" in rec["why"] and "expected cost of downtime" in rec["why"]
    assert risky.to_dict()["comparison_basis"]["rule"] == "risk_adjusted"


def test_fewest_gpus_ranks_by_gpu_count_then_cost():
    # 8 x H100 on one 40 USD/h instance, or 16 x L40 on two 8-GPU instances at 10 USD/h: the L40s are
    # the cheaper budget, the H100s the fewer GPUs
    h100 = workload(candidate_id="h100x8", utilisation=D(1), meets_targets=True)
    l40 = workload(candidate_id="l40x16", accelerator_id="l40", gpu_count=16, utilisation=D(1), meets_targets=True)
    l40_offer = CloudOffer(provider="AWS", region="us-east-1", instance_type="g6e.48xlarge", accelerator_id="l40",
                           gpus_per_instance=8, on_demand=usd("10", "per instance-hour"))
    offers = [l40_offer, CloudOffer(provider="AWS", region="us-east-1", instance_type="p5.48xlarge",
                                    accelerator_id="h100", gpus_per_instance=8,
                                    on_demand=usd("40", "per instance-hour"))]

    def plan(**opts):
        return cost_plan(inputs=inputs(workloads=[h100, l40], offers=offers, servers=[], include_vat=False,
                                       options=("cloud_on_demand",), horizon_months=12, **opts)).to_dict()

    cheap = plan()["decision"]
    assert cheap["recommended"]["candidate"] == "l40x16"
    few = plan(decision_basis="fewest_gpus")["decision"]
    assert few["recommended"]["candidate"] == "h100x8"
    assert [r["candidate"] for r in few["ranked"]] == ["h100x8", "l40x16"]
    assert few["basis"]["rule"] == "fewest_gpus"
    assert few["recommended"]["why"].startswith("fewest GPUs of 2 priced options")


def test_pick_on_fewest_gpus_breaks_ties_by_the_total():
    def opt(i, cand, total):
        o = SimpleNamespace(option_id=i, kind="cloud_on_demand", candidate_id=cand, detail={})
        return SimpleNamespace(option=o, basis_total=lambda _b, t=D(total): t)

    w = lambda n: SimpleNamespace(gpu_count=n, meets_targets=True, is_training=True,  # noqa: E731
                                  sizing_recommended=False)
    priced = [opt("a", "a4", 300), opt("b", "b4", 200), opt("c", "c2", 900)]
    basis = decision.Basis(vat=False, discount_rate=D(0), horizon_months=12, rule="fewest_gpus")
    picks = decision.pick(priced=priced, workloads={"a4": w(4), "b4": w(4), "c2": w(2)}, basis=basis)
    assert picks["recommended"] == "c"
    cheapest = decision.Basis(vat=False, discount_rate=D(0), horizon_months=12)
    assert decision.pick(priced=priced[:2], workloads={"a4": w(4), "b4": w(4)}, basis=basis)["recommended"] == "b"
    assert decision.pick(priced=priced, workloads={"a4": w(4), "b4": w(4), "c2": w(2)},
                         basis=cheapest)["recommended"] == "b"


def test_without_a_downtime_cost_the_risk_is_unpriced_and_says_what_it_needs():
    res = _service()
    d = res.to_dict()
    assert res.basis.downtime_priced is False
    rate = next(r for r in d["inputs_used"]["rates"] if r["key"] == "downtime_cost_per_hour")
    assert rate["value"] == "0" and "not given" in rate["source"]  # the rate card's 50 000 RUB/h is not used
    op = next(o for o in d["options"] if o["kind"] == "onprem")
    assert op["risk"]["priced"] is False
    assert op["risk"]["expected_downtime_net"] is None and op["risk"]["expected_downtime_gross"] is None
    assert op["risk"]["expected_downtime_hours_per_year"] == "88.6"
    assert op["risk"]["text"] == (
        "88.6 expected hours of downtime a year; enter the cost of an hour of downtime to price it")
    assert d["decision"]["recommended"]["expected_downtime_net"] is None
    # priced by a rate override too (the user's number, in the rate's currency: 1000 RUB = 12.50 USD):
    # 265 824.00 / 80 = 3322.80
    over = _service(overrides={"downtime_cost_per_hour": D(1000)}).to_dict()
    op = next(o for o in over["options"] if o["kind"] == "onprem")
    assert op["risk"]["priced"] is True and op["risk"]["expected_downtime_net"] == "3322.80"


def test_sensitivity_has_no_incident_factor_that_moves_nothing():
    d = _service(downtime_cost_per_hour=D(1000)).to_dict()
    for sens in d["sensitivity"].values():
        assert "incident_rate" not in [f["factor"] for f in sens["factors"]]


@pytest.mark.parametrize(("data", "path"), [
    ({"decision_basis": "cheap"}, "costs.decision_basis"),
    ({"decision_basis": 3}, "costs.decision_basis"),
    ({"decision_basis": "risk_adjusted"}, "costs.downtime_cost_per_hour"),
    ({"downtime_cost_per_hour": -1}, "costs.downtime_cost_per_hour"),
    ({"decision_basis": "risk_adjusted", "downtime_cost_per_hour": -5}, "costs.downtime_cost_per_hour"),
])
def test_bad_basis_or_downtime_cost_is_a_field_error(data, path):
    with pytest.raises(CostValidationError) as exc:
        parse_cost_options(data)
    assert path in [e.path for e in exc.value.errors]


def test_risk_adjusted_with_a_downtime_cost_parses():
    o = parse_cost_options({"decision_basis": "risk_adjusted", "downtime_cost_per_hour": 50000})
    assert o.decision_basis == "risk_adjusted" and o.downtime_cost_per_hour == D(50000)
    o = parse_cost_options({"decision_basis": "risk_adjusted", "overrides": {"downtime_cost_per_hour": 10}})
    assert o.decision_basis == "risk_adjusted"
    assert parse_cost_options({}).decision_basis == "cheapest"
    with pytest.raises(CostValidationError) as exc:
        validate_options(CostOptions(decision_basis="risk_adjusted"))
    assert [e.path for e in exc.value.errors] == ["costs.downtime_cost_per_hour"]


def test_the_page_shows_the_risk_under_the_total_not_in_it():
    from planner.presentation import costs_view

    d = _service(downtime_cost_per_hour=D(1000)).to_dict()
    view = costs_view(d)
    op = next(o for o in view["options"] if o["kind"] == "onprem")
    assert "downtime_risk" not in [r["row"] for r in op["rows"]]  # the table's rows make the total
    assert sum(D(r["total"]) for r in op["rows"]) == op["total"]
    assert op["risk_row"]["row"] == "downtime_risk" and op["risk_view"]["amount"] == D("265824.00")
    assert str(op["risk_view"]["label"]) == "Expected cost of incidents: not in the total"
    rec = view["decision"]["recommended"]
    assert rec["risk"]["priced"] is True and rec["shown_total"] == D(rec["total_net"])
    unpriced = costs_view(_service().to_dict())
    op = next(o for o in unpriced["options"] if o["kind"] == "onprem")
    assert op["risk_view"]["priced"] is False and op["risk_view"]["hours_per_year"] == "88.6"
