"""The page's table of sizing alternatives follows the decision (issue 20: the sizing's own ranking
stops competing): priced configurations in the decision's order, each with its best option's total,
then the unpriced ones by the sizing's rule."""

from decimal import Decimal

from planner.presentation.sizing import in_decision_order


def _row(acc, n, tp=1, pp=1, **kw):
    return {"accelerator_id": acc, "accelerator": acc.upper(), "count": n,
            "layout": {"tensor_parallel": tp, "pipeline_parallel": pp}, "meets_target": True, **kw}


def _option(cand, total, tp=1, pp=1):
    return {"candidate": cand, "totals": {"decision": total}, "detail": {"tensor_parallel": tp, "pipeline_parallel": pp}}


def test_the_decided_configuration_leads_and_unpriced_giants_follow():
    sizing = {"candidates": {
        # the sizing's rule puts a 144-GPU layout first (least GPU time), and two layouts of 6 GPUs
        "ranked": [_row("gh", 144, pp=2), _row("gh", 6, pp=2), _row("gh", 6, tp=2), _row("a100", 8)],
        "best_per_accelerator": [_row("l4", 2)],
    }}
    costs = {"options": [
        _option("a100 x8", "300.00"),              # 0: spot for a service, cheap but not eligible
        _option("gh x6", "900.00", pp=2),          # 1: decided
        _option("l4 x2", "500.00"),                # 2
        _option("a100 x8", "700.00"),              # 3: the same configuration, eligible
    ], "decision": {"order": [1, 2, 3, 0]}}
    view = {"ranked": []}
    in_decision_order(view, sizing, costs)
    rows = [(r["accelerator_id"], r["count"], r["layout"]["tensor_parallel"], r["decision_total"]) for r in view["ranked"]]
    assert rows == [("gh", 6, 1, Decimal("900.00")), ("l4", 2, 1, Decimal("500.00")), ("a100", 8, 1, Decimal("700.00")),
                    ("gh", 144, 1, None), ("gh", 6, 2, None)]
    assert view["decision_ordered"] is True


def test_nothing_priced_keeps_the_sizing_table():
    view = {"ranked": ["as it was"]}
    in_decision_order(view, {"candidates": {"ranked": [_row("gh", 8)]}}, {"options": []})
    assert view == {"ranked": ["as it was"]}


def test_a_rented_decision_shows_no_site_power_or_racks():
    from planner.presentation.sizing import sizing_view

    rec = {"accelerator_id": "gh", "count": 6, "servers": {"value": 6, "unit": "servers", "explain": ""},
           "total_power_kw": {"value": 18.0, "unit": "kW", "explain": ""},
           "server_power_kw": {"value": 3.0, "unit": "kW", "explain": ""}, "racks": {"value": 2, "unit": "racks", "explain": ""}}
    sizing = {"kind": "inference", "recommendation": rec}
    owned = [r["label"] for r in sizing_view(sizing)["recommendation"]]
    rented = [r["label"] for r in sizing_view(sizing, rented=True)["recommendation"]]
    assert len(owned) == 4 and len(rented) == 1  # only the servers row stays
