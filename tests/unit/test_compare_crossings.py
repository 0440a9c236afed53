"""The plans compare page's break-even row (planner.compare._crossings): only the pairs with the plan's
decided option whose cumulative costs cross within the horizon, as "A is cheaper than B from month N"
(it listed every pair of the compared options, mostly "none", unreadable at 1366 px)."""

from planner.compare import _crossings

BREAK_EVEN = [
    {"a": "own", "b": "cloud", "a_label": "Own", "b_label": "Cloud", "month": 11, "cheaper_after": "a"},
    {"a": "cloud", "b": "own", "a_label": "Cloud", "b_label": "Own", "month": 11, "cheaper_after": "b"},
    {"a": "own", "b": "api", "a_label": "Own", "b_label": "API", "month": None, "cheaper_after": "b"},
    {"a": "cloud", "b": "api", "a_label": "Cloud", "b_label": "API", "month": 4, "cheaper_after": "a"},
]


def test_only_crossings_with_the_decided_option_named_by_the_cheaper_one():
    assert _crossings(BREAK_EVEN, "own") == [{"cheaper": "Own", "than": "Cloud", "month": 11}] * 2
    # decided API: the pair with "own" never crosses; cloud becomes cheaper than the API from month 4
    assert _crossings(BREAK_EVEN, "api") == [{"cheaper": "Cloud", "than": "API", "month": 4}]


def test_without_a_decision_every_crossing_is_listed():
    assert [c["month"] for c in _crossings(BREAK_EVEN, None)] == [11, 11, 4]
