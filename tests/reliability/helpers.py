"""Plans for the reliability tests, submitted through the real service path."""

import uuid

from planner.services import compute_from_inputs, plan_create
from tests.planner_factories import MembershipFactory, WorkloadFactory


def submit_plans(n: int) -> list[int]:
    """Create n plans the way the web form and the API do (pending version queued on commit);
    returns their version ids."""
    membership = MembershipFactory()
    workload = WorkloadFactory(team=membership.team)
    ids = []
    for i in range(n):
        plan = plan_create(team=membership.team, workload=workload, user=membership.user,
                           options={"horizon_months": 36, "currency": "USD", "include_vat": False,
                                    "utilisation": 0.6},
                           name=f"reliability {i} {uuid.uuid4().hex[:6]}")
        ids.append(plan.versions.get().id)
    return ids


def expected_outcome(version_id: int):
    """What a direct, in-process computation of the stored inputs gives (status, result)."""
    from planner.models import PlanVersion

    v = PlanVersion.objects.get(pk=version_id)
    outcome = compute_from_inputs(inputs=v.inputs, price_snapshot=v.price_snapshot, rate_snapshot=v.rate_snapshot)
    return outcome.status, outcome.result
