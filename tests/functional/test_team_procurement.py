"""Issue 23 part 2: a team's procurement settings (allowed jurisdictions, providers, ways to buy),
asked when the team is created (Russian providers and on-prem by default for a team working in
Russian), changed by its owners, frozen into each plan version and followed by its options."""

import re
from unittest import mock

import pytest
from django.core.management import call_command
from django.urls import reverse

from planner import services
from planner.choices import Role, VersionStatus
from planner.models import Team
from tests.planner_factories import PlanFactory, TeamFactory, WorkloadFactory, member

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def _run_on_commit_now():
    with mock.patch("django.db.transaction.on_commit", side_effect=lambda fn, *a, **k: fn()):
        yield


@pytest.fixture
def catalog():
    for command in ("load_catalog", "load_rate_cards", "load_ru_prices"):
        call_command(command, verbosity=0)


def test_new_team_in_russian_starts_with_russia_ticked(client, catalog):
    client.force_login(member())
    page = client.get(reverse("team_create"), HTTP_ACCEPT_LANGUAGE="ru").content.decode()
    assert "Новая команда" in page
    ticked = re.findall(r'<input type="checkbox" name="data_residency" value="(\w+)"[^>]*checked', page)
    assert ticked == ["RU"]
    page_en = client.get(reverse("team_create"), HTTP_ACCEPT_LANGUAGE="en").content.decode()
    assert "checked" not in page_en


def test_team_created_with_its_settings_and_the_creator_owns_it(client, catalog):
    user = member()
    client.force_login(user)
    r = client.post(reverse("team_create"), {"name": "ML платформа", "data_residency": ["RU"],
                                             "providers": ["Yandex Cloud"], "options": ["onprem", "cloud_on_demand"]})
    team = Team.objects.get(name="ML платформа")
    assert r.status_code == 302 and r["Location"] == reverse("team_procurement", args=[team.id])
    assert team.procurement == {"data_residency": ["RU"], "providers": ["Yandex Cloud"],
                                "options": ["onprem", "cloud_on_demand"]}
    assert team.memberships.get(user=user).role == Role.OWNER


def test_bad_settings_are_refused_and_nothing_is_written(client, catalog):
    client.force_login(member())
    before = Team.objects.count()
    r = client.post(reverse("team_create"), {"name": "X", "providers": ["No Such Cloud"], "options": ["cheap"]},
                    HTTP_ACCEPT_LANGUAGE="en")
    assert r.status_code == 400 and Team.objects.count() == before
    page = r.content.decode()
    assert "No Such Cloud is not one of the available choices" in page
    r = client.post(reverse("team_create"), {"name": "   "}, HTTP_ACCEPT_LANGUAGE="en")
    assert r.status_code == 400 and Team.objects.count() == before


def test_only_owners_change_the_settings(client, catalog):
    team = TeamFactory()
    client.force_login(member(Role.EDITOR, team=team))
    url = reverse("team_procurement", args=[team.id])
    assert client.get(url).status_code == 200
    assert client.post(url, {"data_residency": ["RU"]}).status_code == 403
    team.refresh_from_db()
    assert team.procurement == {}
    client.force_login(member(Role.OWNER, team=team))
    assert client.post(url, {"data_residency": ["RU"], "options": ["onprem"]}).status_code == 302
    team.refresh_from_db()
    assert team.procurement == {"data_residency": ["RU"], "options": ["onprem"]}
    client.force_login(member())  # another team's user: not found
    assert client.get(url).status_code == 404


def test_plan_follows_the_team_rules_and_says_so(client, catalog):
    team = TeamFactory(procurement={"data_residency": ["RU"], "providers": ["Yandex Cloud"]})
    plan = PlanFactory(workload=WorkloadFactory(team=team), team=team,
                       cost_options={"currency": "RUB", "horizon_months": 12, "data_residency": ["RU", "US"]})
    version = services.plan_version_create(plan=plan, user=None)
    version.refresh_from_db()
    assert version.status == VersionStatus.DONE, version.error
    frozen = version.inputs["procurement"]
    assert frozen["team"] == team.procurement
    assert frozen["changes"] == [{"setting": "data_residency", "plan": ["RU", "US"], "team": ["RU"],
                                  "applied": ["RU"]}]
    assert version.inputs["costs"]["providers"] == ["Yandex Cloud"]
    options = version.result["costs"]["options"]
    providers = {(o.get("detail") or {}).get("provider") for o in options if o["kind"] not in ("onprem", "hybrid")}
    assert providers and providers <= {"Yandex Cloud"}
    assert any(o["kind"] == "onprem" for o in options)  # own servers stay
    # A later change of the team's settings does not alter the version already computed
    services.team_procurement_update(team=team, procurement={})
    version.refresh_from_db()
    assert version.inputs["procurement"]["team"]["providers"] == ["Yandex Cloud"]

    client.force_login(member(Role.VIEWER, team=team))
    page = client.get(reverse("plan_version", args=[plan.id, version.number]), HTTP_ACCEPT_LANGUAGE="ru")
    text = page.content.decode()
    assert "Правила закупок команды" in text and "Yandex Cloud" in text


def test_api_lists_the_team_settings(client, catalog):
    team = TeamFactory(procurement={"data_residency": ["RU"]})
    client.force_login(member(Role.VIEWER, team=team))
    rows = client.get("/api/v1/teams/").json()
    assert rows[0]["procurement"] == {"data_residency": ["RU"]}
