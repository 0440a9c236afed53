"""A site's power budget and racks (issue 20, 7.): the decision never buys what the site cannot
hold, and the plan says what the site allows at most. The 70B chat service of the issue, bought
only (options: on-prem), on a hand-checked 4 x H200 server of 5.16 kW at full load
((4 x 700 W + 1 500 W host) x 1.2, planner/engine/infra.py)."""

from decimal import Decimal

import pytest

from costs.adapters.site import _site_limit
from planner.engine.errors import SpecValidationError
from planner.engine.spec import HardwareSpec, parse_workload_spec
from planner.services import compute_from_inputs
from tests.integration.test_costs_plan import snapshots  # noqa: F401 - the shipped catalog, loaded once
from tests.integration.test_one_decision_pipeline import CHAT_70B

pytestmark = pytest.mark.django_db
ONPREM = {"currency": "RUB", "horizon_months": 36, "include_vat": True, "as_of": "2026-11-30", "options": ["onprem"]}


def _plan(snapshots, hardware):  # noqa: F811
    prices, _accs, rates = snapshots
    spec = {**CHAT_70B, "hardware": hardware}
    out = compute_from_inputs(inputs={"spec": spec, "costs": ONPREM}, price_snapshot=prices, rate_snapshot=rates)
    assert out.result is not None, out.error
    return out.result


def test_site_limit_by_hand():
    five = Decimal("5160")
    assert _site_limit(HardwareSpec(power_budget_kw=6.0), servers=1, power_w=five) == ""
    assert "10.3 kW" in _site_limit(HardwareSpec(power_budget_kw=6.0), servers=2, power_w=five)
    # 15 kW racks hold 2 servers of 5.16 kW: 3 servers need 2 racks
    assert _site_limit(HardwareSpec(racks=2), servers=3, power_w=five) == ""
    assert "needs 2 racks" in _site_limit(HardwareSpec(racks=1), servers=3, power_w=five)
    assert _site_limit(HardwareSpec(), servers=100, power_w=five) == ""  # no limit set


def test_the_decision_buys_only_what_the_site_holds(snapshots):  # noqa: F811
    free = _plan(snapshots, {})
    assert free["decision"]["option_kind"] == "onprem"
    need_kw = free["decision"]["hardware"]["total_power_kw"]
    # a budget just below the unconstrained decision's power: another configuration, or none, is chosen
    tight = _plan(snapshots, {"power_budget_kw": need_kw - 0.1})
    d = tight["decision"]
    assert d.get("option_id") != free["decision"]["option_id"]
    if d.get("hardware") and d.get("option_kind") == "onprem":
        assert d["hardware"]["total_power_kw"] <= need_kw - 0.1
    limited = tight["costs"]["decision"]["site_limited"]
    assert limited["excluded"] >= 1 and "kW" in limited["text"]


def test_the_plan_says_what_the_site_allows(snapshots):  # noqa: F811
    plan = _plan(snapshots, {"power_budget_kw": 12, "racks": 1})
    d = plan["decision"]
    rec = plan["sizing"]["recommendation"]
    server_kw, per_server = rec["server_power_kw"]["value"], rec["gpus_per_server"]["value"]
    servers = min(int(12 // server_kw), int(15 // server_kw))
    assert d["site"]["max_servers"] == servers and d["site"]["max_gpus"] == servers * per_server
    per_gpu = plan["sizing"]["serving"]["output_tokens_per_s_per_gpu"]["value"]
    assert d["site"]["max_output_tokens_per_s"] == pytest.approx(servers * per_server * per_gpu, abs=0.1)


@pytest.mark.parametrize("hardware,field", [({"power_budget_kw": -5}, "hardware.power_budget_kw"),
                                            ({"power_budget_kw": 0}, "hardware.power_budget_kw"),
                                            ({"racks": 0}, "hardware.racks"),
                                            ({"racks": "two"}, "hardware.racks")])
def test_bad_site_limits_are_field_errors(hardware, field):
    with pytest.raises(SpecValidationError) as exc:
        parse_workload_spec({**CHAT_70B, "hardware": hardware})
    assert [e.field for e in exc.value.errors] == [field]
