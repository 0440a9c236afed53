"""Issue 22, 5.: the plan page and the API give the decided serving layout's launch command and
Kubernetes manifest, in the page's language."""

from unittest import mock

import pytest
import yaml
from django.core.management import call_command
from django.urls import reverse

from planner import services
from planner.choices import Role, VersionStatus
from tests.planner_factories import PlanFactory, member

pytestmark = pytest.mark.django_db


@pytest.fixture
def plan():
    call_command("load_catalog", verbosity=0)
    call_command("load_rate_cards", verbosity=0)
    plan = PlanFactory()
    with mock.patch("django.db.transaction.on_commit", side_effect=lambda fn, *a, **k: fn()):
        version = services.plan_version_create(plan=plan, user=None)
    version.refresh_from_db()
    assert version.status == VersionStatus.DONE, version.error
    return plan, version


def test_page_and_api_give_the_launch_command_of_the_decided_layout(client, plan):
    plan, version = plan
    decision = version.result["decision"]
    launch = decision["launch"]
    layout = decision["hardware"]["layout"]
    assert f"--tensor-parallel-size {layout['tensor_parallel']}" in launch["command"]
    client.force_login(member(Role.VIEWER, team=plan.team))
    page = client.get(reverse("plan_version", args=[plan.id, version.number]), HTTP_ACCEPT_LANGUAGE="ru")
    text = page.content.decode()
    assert "Готово к запуску" in text and "vllm serve" in text
    if launch["kubernetes"]:
        manifest = text.split('id="launch-manifest">', 1)[1].split("</code>", 1)[0].replace("&quot;", '"').replace(
            "&#x27;", "'").replace("&amp;", "&").replace("&lt;", "<").replace("&gt;", ">")
        docs = list(yaml.safe_load_all(manifest))
        assert [d["kind"] for d in docs] == ["Deployment", "Service"]
    api = client.get(f"/api/v1/plans/{plan.id}/versions/{version.number}/").json()
    assert api["result"]["decision"]["launch"]["command"] == launch["command"]
