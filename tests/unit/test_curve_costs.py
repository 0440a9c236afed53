"""Cost per million output tokens along the serving curves (planner.curve_costs, issue 22 part 3)."""

from decimal import Decimal as D

from planner.curve_costs import priced_curves


def _sizing(*accelerators):
    return {"candidates": {"curves": [
        {"accelerator_id": acc, "accelerator": acc.upper(), "layout": {"tensor_parallel": 2},
         "points": [{"output_tokens_per_s_per_gpu": 1000.0, "tpot_p50_ms": 20.0, "ttft_p95_ms": 150.0},
                    {"output_tokens_per_s_per_gpu": 2500.0, "tpot_p50_ms": 40.0, "ttft_p95_ms": 900.0}]}
        for acc in accelerators]}}


def _option(oid, candidate, net, gross, kind="cloud_on_demand"):
    return {"id": oid, "kind": kind, "candidate": candidate, "label": oid,
            "unit_costs": {"per_running_gpu_hour_net": net, "per_running_gpu_hour_gross": gross}}


COSTS = {
    "currency": "RUB", "include_vat": True,
    "options": [_option("b200-spot", "b200 x2", "400.0000", "488.0000", "cloud_spot"),
                _option("b200-od", "b200 x2", "600.0000", "732.0000"),
                _option("h100-od", "h100 x8", "300.0000", "366.0000")],
    # positions in options: the decision ranks h100 first, then the B200 on demand, then the spot
    "decision": {"order": [2, 1, 0], "recommended": {"id": "b200-od"}},
}


def test_a_point_costs_the_options_running_gpu_hour_over_its_tokens_in_that_hour():
    out = priced_curves(_sizing("b200"), COSTS)
    curve = out["candidates"]["curves"][0]
    # the decided option runs this accelerator: it prices the curve, on the gross basis (VAT included)
    assert curve["priced_by"] == {"option_id": "b200-od", "label": "b200-od", "kind": "cloud_on_demand",
                                  "per_running_gpu_hour": "732.0000", "basis": "gross", "currency": "RUB"}
    # 732 / (1000 tok/s x 3600 s) x 1e6 = 203.3333; at 2 500 tok/s: 81.3333
    assert [p["cost_per_1m_output_tokens"] for p in curve["points"]] == ["203.3333", "81.3333"]
    # tokens/s a user sees: 1000 / TPOT
    assert [p["output_tokens_per_s_per_user"] for p in curve["points"]] == [50.0, 25.0]
    # the more a GPU serves, the less a token costs
    costs = [D(p["cost_per_1m_output_tokens"]) for p in curve["points"]]
    assert costs[1] < costs[0]


def test_another_accelerator_is_priced_on_its_first_option_in_the_decisions_order_and_net_without_vat():
    out = priced_curves(_sizing("h100", "b200", "mi300x"), {**COSTS, "include_vat": False})
    h100, b200, mi300x = out["candidates"]["curves"]
    assert h100["priced_by"]["option_id"] == "h100-od" and h100["priced_by"]["basis"] == "net"
    assert h100["points"][0]["cost_per_1m_output_tokens"] == "83.3333"  # 300 / 3.6
    assert b200["priced_by"]["option_id"] == "b200-od"  # the decided one before the spot, whatever the order
    # no priced option of this accelerator: no cost and no priced_by, the curve itself is kept
    assert "priced_by" not in mi300x and all("cost_per_1m_output_tokens" not in p for p in mi300x["points"])
    assert mi300x["points"][0]["output_tokens_per_s_per_user"] == 50.0


def test_without_curves_or_options_the_sizing_is_returned_as_it_is():
    sizing = {"candidates": {"ranked": []}}
    assert priced_curves(sizing, COSTS) is sizing
    out = priced_curves(_sizing("b200"), {"options": [], "include_vat": True})
    assert "priced_by" not in out["candidates"]["curves"][0]
