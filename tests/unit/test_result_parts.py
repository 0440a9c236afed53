"""planner.result_parts: a version serves the options its plan names, and the two parts put back together
are the engines' result, every option in its place (issue 20: a result JSON of at most 250 KB)."""

import copy

from planner.result_parts import KEPT_IN_ORDER, merged, split


def _result(n_options: int = 12) -> dict:
    options = [{"id": f"o{i}", "kind": "cloud_on_demand", "label": f"option {i}", "cash_flow": None}
               for i in range(n_options)]
    if n_options > 7:
        options[7]["cash_flow"] = {"net": ["1.00"]}  # compared in full
    order = [9, 4, 7, 0, 11, 1, 2, 3, 5, 6, 8, 10] if n_options == 12 else list(range(n_options))[::-1]
    return {
        "decision": {"option_id": "o9", "alternatives": [{"option_id": "o6"}]},
        "sizing": {"candidates": {}},
        "costs": {
            "options": options, "options_listed": n_options, "options_left_out": 0,
            "skipped": [{"candidate": "x", "kind": "onprem", "reason": "no price"}], "skipped_total": 1,
            "shortlist": {"c": ["o10"]},
            "freshness": {"as_of": "2026-12-05", "prices": [
                {"row": "a", "source": "list"},
                {"row": "b", "source": "GPU + vCPU", "components": {"on_demand": {"components": [{"label": "GPU"}]}}}]},
            "decision": {"recommended": {"id": "o9"}, "cheapest_onprem": {"id": "o2"}, "ranked": [{"id": "o3"}],
                         "order": order},
        },
    }


def test_the_served_result_keeps_the_named_options_in_their_order():
    result = _result()
    lean, catalog = split(copy.deepcopy(result))
    ids = [o["id"] for o in lean["costs"]["options"]]
    first = {f"o{i}" for i in result["costs"]["decision"]["order"][:KEPT_IN_ORDER]}
    # decided, cheapest on-prem, ranked, the plan's alternative, the one in full, the first in the decision's order
    assert set(ids) == {"o9", "o2", "o3", "o6", "o7"} | first
    assert ids == sorted(ids, key=lambda i: int(i[1:]))  # original order
    assert "o10" not in ids  # a shortlist entry alone does not keep an option
    costs = lean["costs"]
    assert costs["options_listed"] == len(ids) and costs["options_left_out"] == 12 - len(ids)
    assert costs["skipped"] == [] and costs["skipped_total"] == 1
    # the decision's order names the same options, in the same order, by their new positions
    by_position = [ids[i] for i in costs["decision"]["order"]]
    assert by_position == [f"o{i}" for i in result["costs"]["decision"]["order"] if f"o{i}" in ids]
    assert len(catalog["options"]) == 12 - len(ids)
    # a composed price keeps its row and source text; its parts are in the catalog
    assert costs["freshness"]["prices"] == [{"row": "a", "source": "list"}, {"row": "b", "source": "GPU + vCPU"}]
    assert costs["freshness"]["as_of"] == "2026-12-05"


def test_merged_parts_are_the_engines_result():
    result = _result()
    lean, catalog = split(copy.deepcopy(result))
    assert merged(lean, catalog) == result
    assert merged(lean, None) == lean  # a version stored before the split


def test_nothing_to_leave_out_keeps_one_part():
    result = _result(KEPT_IN_ORDER)  # every option among the first in the decision's order
    result["costs"]["skipped"] = []
    result["costs"]["freshness"]["prices"].pop()
    lean, catalog = split(copy.deepcopy(result))
    assert catalog is None and lean == result


def test_results_without_options_pass_through():
    for result in (None, {"decision": {}, "sizing": {}}, {"costs": None}):
        assert split(result) == (result, None)
        assert merged(result, {"options": []}) == result
