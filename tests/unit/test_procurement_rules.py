"""A team's procurement settings (planner.procurement): validated like the cost options they narrow,
and applied as an intersection with the plan's own choice; the team's rules win, and say so."""

import pytest

from costs.engine.errors import CostValidationError
from planner.procurement import apply, defaults_for_language, parse_procurement


def test_parse_keeps_only_rules_that_restrict():
    assert parse_procurement({"data_residency": ["RU", "RU"], "providers": [], "options": ["onprem"]}) == {
        "data_residency": ["RU"], "options": ["onprem"]}
    assert parse_procurement(None) == {} and parse_procurement({}) == {}


@pytest.mark.parametrize("bad, path", [
    ({"data_residency": ["XX"]}, "procurement.data_residency"),
    ({"options": ["cloud_cheap"]}, "procurement.options"),
    ({"providers": [""]}, "procurement.providers"),
    ({"providers": "Yandex Cloud"}, "procurement.providers"),
    ({"budget": 1}, "procurement.budget"),
])
def test_parse_refuses_bad_settings_with_their_path(bad, path):
    with pytest.raises(CostValidationError) as exc:
        parse_procurement(bad)
    assert [e.path for e in exc.value.errors] == [path]


def test_russian_team_defaults_to_russian_jurisdiction():
    assert defaults_for_language("ru") == {"data_residency": ["RU"]}
    assert defaults_for_language("en") == {}


def test_team_rule_fills_what_the_plan_left_open_without_a_change():
    costs, changes = apply({"currency": "RUB"}, {"data_residency": ["RU"], "options": ["onprem", "api"]})
    assert costs == {"currency": "RUB", "data_residency": ["RU"], "options": ["onprem", "api"]}
    assert changes == []


def test_plan_choice_is_narrowed_to_the_team_rules_and_the_change_recorded():
    costs, changes = apply({"options": ["cloud_spot", "onprem"], "providers": ["yandex cloud", "AWS"]},
                           {"options": ["onprem", "cloud_on_demand"], "providers": ["Yandex Cloud"]})
    assert costs["options"] == ["onprem"] and costs["providers"] == ["yandex cloud"]
    assert [c["setting"] for c in changes] == ["providers", "options"]


def test_a_plan_wholly_outside_the_rules_gets_the_team_rules():
    costs, changes = apply({"data_residency": ["US"]}, {"data_residency": ["RU"]})
    assert costs["data_residency"] == ["RU"]
    assert changes == [{"setting": "data_residency", "plan": ["US"], "team": ["RU"], "applied": ["RU"]}]


def test_no_policy_changes_nothing():
    assert apply({"data_residency": ["US"]}, {}) == ({"data_residency": ["US"]}, [])
