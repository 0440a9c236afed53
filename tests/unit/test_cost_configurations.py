"""Which sized configurations the cost adapter prices (no database)."""

from costs.adapters import MAX_CONFIGURATIONS, configurations_to_price


def _row(acc, count, tp=1, **kw):
    return {
        "accelerator_id": acc,
        "accelerator": acc.upper(),
        "count": count,
        "fits": True,
        "layout": {"tensor_parallel": tp, "pipeline_parallel": 1},
        **kw,
    }


def test_recommendation_first_then_best_per_accelerator_not_ranked():
    sizing = {
        "recommendation": {"accelerator_id": "b", "count": 2, "layout": {"tensor_parallel": 2}},
        "candidates": {
            "ranked": [_row("a", 64, 8), _row("a", 128, 8)],
            "best_per_accelerator": [_row("a", 8, 8), _row("b", 2, 2, gpu_hours=10.0)],
        },
    }
    got = [(c["accelerator_id"], c["count"]) for c in configurations_to_price(sizing)]
    assert got[0] == ("b", 2)
    assert ("a", 64) not in got and ("a", 8) in got


def test_recommendation_takes_gpu_hours_from_its_matching_row():
    sizing = {
        "recommendation": {"accelerator_id": "b", "count": 2},
        "candidates": {"ranked": [], "best_per_accelerator": [_row("b", 2, 2, gpu_hours=10.0)]},
    }
    first = configurations_to_price(sizing)[0]
    assert first["gpu_hours"] == 10.0 and first["layout"]["tensor_parallel"] == 2


def test_bounded():
    sizing = {"candidates": {"best_per_accelerator": [_row(f"x{i}", 1) for i in range(40)]}}
    assert len(configurations_to_price(sizing)) == MAX_CONFIGURATIONS


def test_older_result_without_best_per_accelerator_falls_back_to_fitting_ranked_rows():
    sizing = {"candidates": {"ranked": [_row("a", 8), {**_row("c", 1), "fits": False}]}}
    assert [c["accelerator_id"] for c in configurations_to_price(sizing)] == ["a"]


def test_a_malformed_best_per_accelerator_is_ignored():
    sizing = {"candidates": {"ranked": [_row("a", 8)], "best_per_accelerator": 3}}
    assert [c["accelerator_id"] for c in configurations_to_price(sizing)] == ["a"]
