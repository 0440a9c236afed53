"""Issue 22, Build 4: a disaggregated serving decision (prefill + decode pools) is one layout everywhere:
the decision's hardware (GPU count = both pools), the plan page, PDF page 1, the API, and the launch
commands and manifests per pool."""

import io
from unittest import mock

import pytest
from django.core.management import call_command
from django.urls import reverse
from pypdf import PdfReader

from planner import services
from planner.choices import Role, VersionStatus
from tests.planner_factories import PlanFactory, WorkloadFactory, member

pytestmark = pytest.mark.django_db

STATED = {
    "kind": "inference", "model": {"preset": "deepseek-r1-0528"},
    "precision": {"weights": "fp4", "compute": "fp4", "kv_cache": "fp8"},
    "serving": {"runtime": "sglang", "concurrency": 64, "requests_per_second": 2, "input_tokens": 1024,
                "output_tokens": 1024, "context_length": 4096,
                "disaggregation": {"prefill": {"workers": 1, "tensor_parallel": 4, "expert_parallel": 4},
                                   "decode": {"workers": 1, "tensor_parallel": 8, "expert_parallel": 8,
                                              "data_parallel_attention": True}}},
    "hardware": {"count": 12},
}


@pytest.fixture
def stated_plan():
    call_command("load_catalog", verbosity=0)
    call_command("load_rate_cards", verbosity=0)
    plan = PlanFactory(workload=WorkloadFactory(spec=STATED))
    with mock.patch("django.db.transaction.on_commit", side_effect=lambda fn, *a, **k: fn()):
        version = services.plan_version_create(plan=plan, user=None)
    version.refresh_from_db()
    assert version.status == VersionStatus.DONE, version.error
    return plan, version


def _squash(text: str) -> str:
    return "".join(str(text).split())


def test_a_disaggregated_decision_shows_one_layout_on_the_page_the_pdf_and_the_api(client, stated_plan):
    plan, version = stated_plan
    result = version.result
    decision = result["decision"]
    hw = decision["hardware"]
    pools = hw["layout"]["disaggregated"]
    assert pools["prefill"]["workers"] * pools["prefill"]["tensor_parallel"] == 4
    assert pools["decode"]["workers"] * pools["decode"]["tensor_parallel"] == 8
    assert hw["gpu_count"] == 12 == result["sizing"]["recommendation"]["count"]
    assert " disagg P1xTP4 D1xTP8" in decision["candidate"]
    # the stated layout is the plan's candidate (priced), not an evaluation beside aggregated replicas
    assert not any("plan aggregated replicas" in str(w) for w in result["sizing"]["warnings"])
    assert result["sizing"]["serving"]["disaggregated"]["decode"]["tensor_parallel"] == 8
    # launch: one command and one Deployment per pool, GPUs per pod = the pool's TP
    launch = decision["launch"]
    pre, dec = launch["pools"]
    assert (pre["role"], pre["workers"], pre["gpus_per_worker"]) == ("prefill", 1, 4)
    assert (dec["role"], dec["workers"], dec["gpus_per_worker"]) == ("decode", 1, 8)
    for p in (pre, dec):
        limits = p["kubernetes"]["deployment"]["spec"]["template"]["spec"]["containers"][0]["resources"]["limits"]
        assert limits == {"nvidia.com/gpu": p["gpus_per_worker"]} or limits == {"amd.com/gpu": p["gpus_per_worker"]}
        assert p["kubernetes"]["deployment"]["spec"]["replicas"] == p["workers"]
    assert launch["command"].count("sglang.launch_server") == 2

    client.force_login(member(Role.VIEWER, team=plan.team))
    page = client.get(reverse("plan_version", args=[plan.id, version.number]), HTTP_ACCEPT_LANGUAGE="en")
    text = page.content.decode()
    layout_text = "disaggregated: prefill 1 × TP4 (EP4) + decode 1 × TP8 (EP8, DPA)"
    assert layout_text in text
    assert "--disaggregation-mode" in text
    api = client.get(f"/api/v1/plans/{plan.id}/versions/{version.number}/").json()
    api_hw = api["result"]["decision"]["hardware"]
    assert api_hw["gpu_count"] == 12 and api_hw["layout"] == hw["layout"]
    assert api["result"]["decision"]["launch"]["command"] == launch["command"]
    pdf = client.get(reverse("plan_version_export", args=[plan.id, version.number, "pdf"]), HTTP_ACCEPT_LANGUAGE="en")
    first = " ".join(PdfReader(io.BytesIO(pdf.content)).pages[0].extract_text().split())
    assert _squash(layout_text) in _squash(first)
    assert _squash(f"12 × {hw['accelerator']}") in _squash(first)
