"""Planner services: versions are frozen and queued on commit, computed once, links hashed."""

import hashlib
from io import StringIO
from unittest import mock

import pytest
from django.core.management import call_command
from django.urls import reverse

from planner import selectors, services
from planner.choices import Role, VersionStatus
from planner.models import Membership, PlanVersion, ShareLink, Team
from tests.planner_factories import PlanFactory, PlanVersionFactory, member

pytestmark = pytest.mark.django_db


def _no_queue():
    return mock.patch("planner.services.plan_version_enqueue")


def test_version_numbers_count_up_per_plan():
    plan = PlanFactory()
    with _no_queue():
        first = services.plan_version_create(plan=plan, user=None)
        second = services.plan_version_create(plan=plan, user=None)
    assert (first.number, second.number) == (1, 2)


def test_version_freezes_inputs_and_snapshots():
    plan = PlanFactory()
    with _no_queue():
        version = services.plan_version_create(plan=plan, user=None)
    plan.cost_options = {"horizon_months": 12}
    plan.save()
    version.refresh_from_db()
    assert version.status == VersionStatus.PENDING
    assert version.inputs == {"spec": plan.workload.spec, "costs": {"horizon_months": 36, "currency": "USD",
                                                                    "include_vat": False, "utilisation": 0.6}}
    assert version.price_snapshot["schema"].startswith("gpu-planner.price-snapshot/")
    assert "accelerators" in version.price_snapshot
    assert version.rate_snapshot


def test_version_is_queued_only_after_commit(django_capture_on_commit_callbacks):
    plan = PlanFactory()
    with mock.patch("planner.tasks.compute_plan_version.delay") as delay:
        with django_capture_on_commit_callbacks(execute=False) as callbacks:
            version = services.plan_version_create(plan=plan, user=None)
        delay.assert_not_called()
        for callback in callbacks:
            callback()
    delay.assert_called_once_with(version.id)


def test_broker_down_leaves_the_version_pending(django_capture_on_commit_callbacks):
    plan = PlanFactory()
    with mock.patch("planner.tasks.compute_plan_version.delay", side_effect=ConnectionError("broker down")):
        with django_capture_on_commit_callbacks(execute=True):
            version = services.plan_version_create(plan=plan, user=None)
    version.refresh_from_db()
    assert version.status == VersionStatus.PENDING


@pytest.mark.parametrize("status", [VersionStatus.DONE, VersionStatus.FAILED])
def test_finished_version_is_never_recomputed(status):
    version = PlanVersionFactory(status=status, result={"sizing": {}} if status == "done" else None,
                                 error="" if status == "done" else "boom")
    with mock.patch("planner.services.compute_from_inputs") as compute:
        services.plan_version_compute(version_id=version.id)
    compute.assert_not_called()
    version.refresh_from_db()
    assert version.status == status


def test_compute_failure_is_stored_with_its_reason():
    version = PlanVersionFactory()
    with mock.patch("planner.services.compute_from_inputs", side_effect=RuntimeError("no accelerator fits")):
        services.plan_version_compute(version_id=version.id)
    version.refresh_from_db()
    assert version.status == VersionStatus.FAILED
    assert "no accelerator fits" in version.error
    assert version.attempts == 1


def test_retry_of_failed_version_makes_a_new_version_with_same_inputs():
    failed = PlanVersionFactory(number=1, status=VersionStatus.FAILED, error="boom")
    with _no_queue():
        retry = services.plan_version_retry(version=failed, user=None)
    assert retry.number == 2
    assert retry.inputs == failed.inputs
    failed.refresh_from_db()
    assert failed.status == VersionStatus.FAILED


def test_assumption_change_saves_options_and_makes_a_new_version():
    version = PlanVersionFactory(number=1)
    with _no_queue():
        new = services.plan_assumptions_update(plan=version.plan, options={"horizon_months": 12}, user=None)
    assert new.number == 2
    assert new.inputs["costs"] == {"horizon_months": 12}
    version.refresh_from_db()
    assert version.inputs["costs"]["horizon_months"] == 36


# --- share links ------------------------------------------------------------------------


def test_share_link_stores_only_the_sha256_of_a_long_token():
    plan = PlanFactory()
    link, token = services.share_link_create(plan=plan, user=None)
    assert len(token) >= 43  # 32 random bytes, url-safe base64
    assert link.token_hash == hashlib.sha256(token.encode()).hexdigest()
    assert token not in str(ShareLink.objects.values_list().get())


def test_share_link_resolves_its_token_only():
    plan = PlanFactory()
    link, token = services.share_link_create(plan=plan, user=None)
    assert selectors.share_link_resolve(token=token) == link
    assert selectors.share_link_resolve(token=token[:-1]) is None


def test_share_link_expiry_must_be_in_the_future():
    from django.utils import timezone

    with pytest.raises(services.PlannerError):
        services.share_link_create(plan=PlanFactory(), user=None, expires_at=timezone.now())


# --- setup_demo -------------------------------------------------------------------------


def test_setup_demo_is_idempotent_and_prints_login():
    out = StringIO()
    call_command("setup_demo", stdout=out)
    call_command("setup_demo", stdout=StringIO())
    assert Team.objects.filter(slug="demo").count() == 1
    assert Membership.objects.get(team__slug="demo").role == Role.OWNER
    assert "/accounts/login/" in out.getvalue()


def test_setup_demo_user_can_log_in(client):
    call_command("setup_demo", stdout=StringIO())
    assert client.login(username="demo", password="demo-planner")


# --- polling ------------------------------------------------------------------------------


def test_status_of_pending_version_keeps_polling(client):
    version = PlanVersionFactory(number=1)
    client.force_login(member(Role.VIEWER, team=version.plan.team))
    response = client.get(reverse("plan_version_status", args=[version.plan_id, 1]), HTTP_HX_REQUEST="true")
    assert response.status_code == 200
    assert 'hx-trigger="every 1s"' in response.content.decode()


@pytest.mark.parametrize("status", [VersionStatus.DONE, VersionStatus.FAILED])
def test_status_of_finished_version_stops_polling_with_286(client, status):
    version = PlanVersionFactory(number=1, status=status, result={} if status == "done" else None, error="boom")
    client.force_login(member(Role.VIEWER, team=version.plan.team))
    response = client.get(reverse("plan_version_status", args=[version.plan_id, 1]), HTTP_HX_REQUEST="true")
    assert response.status_code == 286
    assert "every 1s" not in response.content.decode()


def test_failed_version_page_shows_reason_and_retry(client):
    version = PlanVersionFactory(number=1, status=VersionStatus.FAILED, error="no accelerator fits")
    client.force_login(member(Role.EDITOR, team=version.plan.team))
    html = client.get(reverse("plan_version", args=[version.plan_id, 1])).content.decode()
    assert "no accelerator fits" in html
    assert reverse("plan_version_retry", args=[version.plan_id, 1]) in html


def test_retry_button_makes_a_new_version(client):
    version = PlanVersionFactory(number=1, status=VersionStatus.FAILED, error="boom")
    client.force_login(member(Role.EDITOR, team=version.plan.team))
    with _no_queue():
        response = client.post(reverse("plan_version_retry", args=[version.plan_id, 1]))
    assert response.status_code == 302
    assert PlanVersion.objects.filter(plan=version.plan).count() == 2


def test_ambiguous_accelerator_pin_fails_the_version_naming_the_field():
    # "H100" matches several catalog parts; sizing refuses it, which must end as a clean failure.
    from django.utils import timezone

    call_command("load_catalog", verbosity=0)
    call_command("load_rate_cards", verbosity=0)
    prices, rates = services.plan_snapshots(as_of=timezone.localdate())
    spec = {**PlanFactory.build().workload.spec, "hardware": {"accelerator": "H100"}}
    outcome = services.compute_from_inputs(inputs={"spec": spec, "costs": {}}, price_snapshot=prices,
                                           rate_snapshot=rates)
    assert outcome.status == VersionStatus.FAILED
    assert "hardware.accelerator" in outcome.error and "ambiguous" in outcome.error
