"""Login lockout, staff-only admin, CSRF on htmx requests, request size limits, audit log."""

import pytest
from auditlog.models import LogEntry
from django.contrib.auth import get_user_model
from django.test import Client

from planner.choices import Role
from tests.planner_factories import MembershipFactory, PlanFactory

pytestmark = pytest.mark.django_db
PASSWORD = "correct-horse-battery-staple-42"


@pytest.fixture(autouse=True)
def _fast_hasher(settings):
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]  # speed, tests only


@pytest.fixture
def user():
    return get_user_model().objects.create_user(username="alice", password=PASSWORD)


def _login(client, password, ip="203.0.113.7"):
    return client.post("/accounts/login/", {"username": "alice", "password": password}, REMOTE_ADDR=ip)


def test_the_right_password_logs_in(client, user):
    assert _login(client, PASSWORD).status_code == 302


def test_repeated_failed_logins_lock_the_account_for_that_address(client, user, settings):
    for _ in range(settings.AXES_FAILURE_LIMIT - 1):
        assert _login(client, "wrong").status_code == 200  # the form again, with an error
    assert _login(client, "wrong").status_code == 429  # the limit-th failure locks
    response = _login(client, PASSWORD)
    assert response.status_code == 429
    assert "_auth_user_id" not in client.session


def test_the_lockout_is_per_address(client, user, settings):
    for _ in range(settings.AXES_FAILURE_LIMIT):
        _login(client, "wrong", ip="203.0.113.7")
    assert _login(Client(), PASSWORD, ip="198.51.100.9").status_code == 302


def test_client_login_without_a_request_still_works_for_tests(client, user):
    assert client.login(username="alice", password=PASSWORD)


def test_the_admin_is_for_staff_only(client, user):
    client.force_login(user)
    response = client.get("/admin/")
    assert response.status_code == 302 and "/admin/login/" in response["Location"]


def test_staff_reach_the_admin(client, user):
    user.is_staff = True
    user.save()
    client.force_login(user)
    assert client.get("/admin/").status_code == 200


def test_a_post_without_the_csrf_token_is_refused(user):
    client = Client(enforce_csrf_checks=True)
    client.force_login(user)
    assert client.post("/i18n/setlang/", {"language": "ru"}).status_code == 403


def test_an_htmx_post_with_the_header_from_the_page_passes_csrf(user):
    client = Client(enforce_csrf_checks=True)
    client.force_login(user)
    page = client.get("/").content.decode()
    assert 'hx-headers=\'{"X-CSRFToken": "' in page  # base.html sends it on every htmx request
    token = page.split('"X-CSRFToken": "')[1].split('"')[0]
    response = client.post("/i18n/setlang/", {"language": "ru"}, HTTP_X_CSRFTOKEN=token, HTTP_HX_REQUEST="true")
    assert response.status_code == 302


def test_a_request_body_over_the_limit_is_refused_before_reading(client, settings):
    response = client.generic("POST", "/accounts/login/", b"x", CONTENT_LENGTH=str(settings.MAX_REQUEST_BODY_BYTES + 1),
                              content_type="application/octet-stream")
    assert response.status_code == 413


def test_an_api_body_over_the_limit_gets_json(client, settings):
    response = client.generic("POST", "/api/v1/plans/", b"x", CONTENT_LENGTH=str(settings.MAX_REQUEST_BODY_BYTES + 1),
                              content_type="application/json")
    body = response.json()
    assert (response.status_code, body["status"], body["type"]) == (413, 413, "urn:gpu-planner:error:too-large")
    assert body["errors"][0]["field"] is None


def test_plan_changes_are_audited_with_who_and_when():
    from auditlog.context import set_actor

    membership = MembershipFactory(role=Role.OWNER)
    plan = PlanFactory(workload__team=membership.team)
    with set_actor(membership.user):
        plan.cost_options = {**plan.cost_options, "horizon_months": 12}
        plan.save()
    entry = LogEntry.objects.get_for_object(plan).filter(action=LogEntry.Action.UPDATE).get()
    assert entry.actor == membership.user
    assert "cost_options" in entry.changes_dict
    assert entry.timestamp is not None


@pytest.mark.parametrize("model", ["catalog.HardwarePrice", "catalog.CloudOffer", "catalog.DedicatedServerOffer",
                                   "catalog.ExchangeRate", "catalog.VatRate", "catalog.ElectricityTariff",
                                   "planner.Plan", "planner.PlanVersion", "planner.Workload"])
def test_prices_rates_and_plans_are_audited(model):
    from auditlog.registry import auditlog
    from django.apps import apps

    assert auditlog.contains(apps.get_model(model))


def test_every_cost_setting_model_is_audited():
    from auditlog.registry import auditlog
    from django.apps import apps

    assert all(auditlog.contains(m) for m in apps.get_app_config("costs").get_models())


def test_share_link_audit_never_stores_the_token_hash():
    from planner import services

    membership = MembershipFactory(role=Role.OWNER)
    plan = PlanFactory(workload__team=membership.team)
    link, _token = services.share_link_create(plan=plan, user=membership.user)
    entry = LogEntry.objects.get_for_object(link).get()
    assert "token_hash" not in entry.changes_dict


def test_api_and_share_tokens_are_stored_only_as_hashes():
    from django.db import connection

    from planner import services
    from planner.api.models import ApiToken
    from planner.api.tokens import api_token_create
    from planner.models import ShareLink

    membership = MembershipFactory(role=Role.OWNER)
    plan = PlanFactory(workload__team=membership.team)
    _link, share_token = services.share_link_create(plan=plan, user=membership.user)
    _api, api_key = api_token_create(user=membership.user, name="ci")
    with connection.cursor() as cursor:
        for model in (ShareLink, ApiToken):
            cursor.execute(f"SELECT * FROM {model._meta.db_table}")  # noqa: S608 - table names from models
            dump = repr(cursor.fetchall())
            assert share_token not in dump and api_key not in dump


def test_behind_a_trusted_proxy_the_lockout_counts_the_address_the_proxy_saw(rf, settings):
    from config.auth import client_ip

    settings.TRUSTED_PROXY_COUNT = 1
    request = rf.get("/", HTTP_X_FORWARDED_FOR="6.6.6.6, 203.0.113.7", REMOTE_ADDR="10.0.0.2")
    assert client_ip(request) == "203.0.113.7"  # the spoofed left-most entry is ignored


def test_without_a_proxy_the_lockout_counts_the_connecting_address(rf, settings):
    from config.auth import client_ip

    settings.TRUSTED_PROXY_COUNT = 0
    request = rf.get("/", HTTP_X_FORWARDED_FOR="6.6.6.6", REMOTE_ADDR="198.51.100.9")
    assert client_ip(request) == "198.51.100.9"
