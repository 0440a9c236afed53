"""factory_boy factories and helpers for the planner tests (teams, plans, versions)."""

import factory
from django.contrib.auth import get_user_model

from planner.choices import Role, VersionStatus
from planner.models import Membership, Plan, PlanVersion, Team, Workload

INFERENCE_SPEC = {
    "kind": "inference",
    "model": {"preset": "llama-3.1-8b"},
    "serving": {"context_length": 8192, "concurrency": 16, "requests_per_second": 2},
}
COST_OPTIONS = {"horizon_months": 36, "currency": "USD", "include_vat": False, "utilisation": 0.6}


class UserFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = get_user_model()

    username = factory.Sequence(lambda n: f"user{n}")
    password = factory.django.Password("pw-for-tests-1")


class TeamFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Team

    name = factory.Sequence(lambda n: f"Team {n}")
    slug = factory.Sequence(lambda n: f"team-{n}")


class MembershipFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Membership

    team = factory.SubFactory(TeamFactory)
    user = factory.SubFactory(UserFactory)
    role = Role.OWNER


class WorkloadFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Workload

    team = factory.SubFactory(TeamFactory)
    name = factory.Sequence(lambda n: f"Workload {n}")
    kind = "inference"
    spec = factory.LazyFunction(lambda: dict(INFERENCE_SPEC))


class PlanFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Plan

    workload = factory.SubFactory(WorkloadFactory)
    team = factory.SelfAttribute("workload.team")
    name = factory.Sequence(lambda n: f"Plan {n}")
    cost_options = factory.LazyFunction(lambda: dict(COST_OPTIONS))


class PlanVersionFactory(factory.django.DjangoModelFactory):
    """A stored version without running the engines (pending unless told otherwise)."""

    class Meta:
        model = PlanVersion

    plan = factory.SubFactory(PlanFactory)
    number = factory.Sequence(lambda n: n + 1)
    status = VersionStatus.PENDING
    inputs = factory.LazyAttribute(lambda o: {"spec": o.plan.workload.spec, "costs": o.plan.cost_options})
    as_of = factory.Faker("date_object")


def member(role=Role.OWNER, team=None):
    """A user with `role` in `team` (a new team when None)."""
    return MembershipFactory(role=role, team=team or TeamFactory()).user
