"""Fixtures shared by the API tests (import with `from tests.functional.api_fixtures import *`)."""

import pytest
from django.contrib.auth import get_user_model
from django.core.cache import cache
from django.utils import timezone
from rest_framework.test import APIClient

from planner.api.schema import SPEC_EXAMPLES
from planner.api.tokens import api_token_create
from planner.choices import Role, VersionStatus
from planner.models import Membership, Plan, PlanVersion, Team, Workload

INFERENCE_SPEC = SPEC_EXAMPLES["inference"]
# A stored result for versions made directly in the database: the API serves it as given.
STORED_RESULT = {"sizing": {"gpu_count": 2, "accelerator": "test-accelerator"}, "costs": {"currency": "USD"}}

__all__ = [
    "World", "INFERENCE_SPEC", "STORED_RESULT", "_clear_throttle_cache", "catalog", "real_result", "real_snapshots", "world", "client_for", "anon", "make_version",
]


@pytest.fixture(autouse=True)
def _clear_throttle_cache():
    # Rolled-back rows can hand their ids to the next test (SQLite): start every test cold (the
    # process caches are cleared for every test by tests/conftest.py; this is the throttle's cache)
    cache.clear()
    yield
    cache.clear()


class World:
    """Two teams; team A has an owner, an editor and a viewer; team B has its own owner."""

    def __init__(self):
        user = get_user_model()
        self.team = Team.objects.create(name="Team A", slug="team-a")
        self.other_team = Team.objects.create(name="Team B", slug="team-b")
        self.users = {}
        for role in (Role.OWNER, Role.EDITOR, Role.VIEWER):
            u = user.objects.create_user(username=f"{role}-a")  # no password: hashing is slow and unused
            Membership.objects.create(team=self.team, user=u, role=role)
            self.users[str(role)] = u
        self.outsider = user.objects.create_user(username="owner-b")  # no password: hashing is slow and unused
        Membership.objects.create(team=self.other_team, user=self.outsider, role=Role.OWNER)
        self.users["other_team"] = self.outsider
        self.workload = Workload.objects.create(team=self.team, name="Chat", kind="inference",
                                                spec=INFERENCE_SPEC)
        self.plan = Plan.objects.create(team=self.team, workload=self.workload, name="Chat plan")
        self.version = make_version(self.plan, 1, VersionStatus.DONE)


def make_version(plan, number, status, *, result=None, inputs=None):
    done = status == VersionStatus.DONE
    return PlanVersion.objects.create(
        plan=plan, number=number, status=status,
        inputs=inputs or {"spec": plan.workload.spec, "costs": plan.cost_options},
        as_of=timezone.localdate(), result=(result or STORED_RESULT) if done else None,
        error="engine failed" if status == VersionStatus.FAILED else "",
        engine_version="test" if done else "", finished_at=timezone.now() if done else None,
    )


@pytest.fixture
def world(db):
    return World()


def client_for(user) -> APIClient:
    """A client authenticated with a real API token of `user`."""
    _token, key = api_token_create(user=user, name="test")
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {key}")
    return client


@pytest.fixture
def anon():
    return APIClient()


@pytest.fixture(scope="session")
def real_snapshots(django_db_setup, django_db_blocker):
    """Today's price and rate snapshots of the shipped catalog, built once (then rolled back)."""
    from django.db import transaction

    from planner.api.estimate import _snapshots

    with django_db_blocker.unblock(), transaction.atomic():
        _load_catalog()
        snapshots = _snapshots(timezone.localdate())
        transaction.set_rollback(True)
    return snapshots


@pytest.fixture(scope="session")
def real_result(real_snapshots):
    """A result computed once by the real engines on the shipped catalog."""
    from planner.services import compute_from_inputs

    prices, rates = real_snapshots
    outcome = compute_from_inputs(inputs={"spec": INFERENCE_SPEC, "costs": {}}, price_snapshot=prices,
                                  rate_snapshot=rates)
    assert outcome.status == VersionStatus.DONE, outcome.error
    return outcome.result


def _load_catalog():
    import io

    from django.core.management import call_command

    call_command("load_catalog", stdout=io.StringIO())
    call_command("load_rate_cards", stdout=io.StringIO())


@pytest.fixture
def catalog(db):
    """The shipped reference catalog and rate card, loaded as `make run` would."""
    _load_catalog()
    return True
