"""Database down: a clear 503 (page or JSON), never a stack trace."""

import pytest
from django.db import OperationalError
from django.test import Client

from config.middleware import server_error


@pytest.fixture
def db_down_urls(settings):
    settings.ROOT_URLCONF = "tests.reliability.db_down_urls"
    settings.DEBUG = False


def test_a_page_answers_503_with_a_plain_message(client, db_down_urls):
    response = client.get("/page/")
    assert response.status_code == 503
    assert b"database is unavailable" in response.content
    assert b"Traceback" not in response.content and b"5432" not in response.content


def test_the_api_answers_503_json(client, db_down_urls):
    response = client.get("/api/v1/thing/")
    assert response.status_code == 503
    body = response.json()
    assert (body["status"], body["type"]) == (503, "urn:gpu-planner:error:unavailable")
    assert "database is unavailable" in body["errors"][0]["message"]


def test_the_503_asks_clients_to_retry_later(client, db_down_urls):
    assert client.get("/page/")["Retry-After"] == "30"


def test_other_errors_stay_500(db_down_urls):


    response = Client(raise_request_exception=False).get("/bug/")
    assert response.status_code == 500


def test_the_500_handler_turns_a_database_error_raised_outside_the_view_into_503(rf):
    request = rf.get("/plans/")
    try:
        raise OperationalError("server closed the connection unexpectedly")
    except OperationalError:
        response = server_error(request)
    assert response.status_code == 503




# --- broker down: the plan is saved and the user is told why it waits --------------------


@pytest.mark.django_db
def test_a_queued_plan_says_the_computation_service_is_unavailable_when_the_broker_is_down(client, settings):
    from django.urls import reverse

    from planner.choices import Role
    from tests.planner_factories import PlanVersionFactory, member

    version = PlanVersionFactory(number=1)
    client.force_login(member(Role.VIEWER, team=version.plan.team))
    settings.REDIS_URL = "redis://127.0.0.1:1/0"  # nothing listens on port 1
    html = client.get(reverse("plan_version_status", args=[version.plan_id, 1])).content.decode()
    assert "computation service is unavailable" in html


@pytest.mark.django_db
def test_a_queued_plan_says_nothing_extra_when_tasks_run_in_process(client, settings):
    from django.urls import reverse

    from planner.choices import Role
    from tests.planner_factories import PlanVersionFactory, member

    version = PlanVersionFactory(number=1)
    client.force_login(member(Role.VIEWER, team=version.plan.team))
    settings.REDIS_URL = ""
    html = client.get(reverse("plan_version_status", args=[version.plan_id, 1])).content.decode()
    assert "unavailable" not in html and "No computation worker" not in html
