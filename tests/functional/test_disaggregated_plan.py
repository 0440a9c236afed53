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


# long prompts, a tight TPOT: prefill interference costs aggregated replicas GPUs a decode pool does not need
SEARCHED = {
    "kind": "inference", "model": {"preset": "deepseek-r1-0528"},
    "precision": {"weights": "fp4", "compute": "fp4", "kv_cache": "fp8"},
    "serving": {"runtime": "sglang", "concurrency": 64, "requests_per_second": 20, "input_tokens": 8000,
                "output_tokens": 1000, "context_length": 9100, "ttft_p95_ms": 3000, "tpot_p95_ms": 20},
}


def _computed(spec):
    call_command("load_catalog", verbosity=0)
    call_command("load_rate_cards", verbosity=0)
    plan = PlanFactory(workload=WorkloadFactory(spec=spec))
    with mock.patch("django.db.transaction.on_commit", side_effect=lambda fn, *a, **k: fn()):
        version = services.plan_version_create(plan=plan, user=None)
    version.refresh_from_db()
    assert version.status == VersionStatus.DONE, version.error
    return plan, version


@pytest.fixture
def stated_plan():
    return _computed(STATED)


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


def test_the_search_decides_on_a_disaggregated_layout_where_it_is_cheapest(client):
    plan, version = _computed(SEARCHED)
    result = version.result
    decision, sizing = result["decision"], result["sizing"]
    ranked = (result["costs"].get("decision") or {}).get("ranked") or []
    assert any(" disagg " in (r.get("candidate") or "") for r in ranked)  # priced beside the aggregated ones
    assert " disagg " in decision["candidate"], decision["candidate"]
    hw = decision["hardware"]
    pools = hw["layout"]["disaggregated"]
    gpus = sum(p["workers"] * p["tensor_parallel"] for p in pools.values())
    assert hw["gpu_count"] == gpus == sizing["recommendation"]["count"] == sizing["memory"]["layout"]["count"]
    assert sizing["serving"]["meets_targets"] is True and decision["targets"]["meets"] is True
    assert sizing["serving"]["tpot_p95_ms"]["value"] <= 20 and sizing["serving"]["ttft_p95_ms"]["value"] <= 3000
    assert [p["role"] for p in decision["launch"]["pools"]] == ["prefill", "decode"]
    client.force_login(member(Role.VIEWER, team=plan.team))
    text = client.get(reverse("plan_version", args=[plan.id, version.number]), HTTP_ACCEPT_LANGUAGE="en").content.decode()
    pre, dec = pools["prefill"], pools["decode"]
    assert f"disaggregated: prefill {pre['workers']} × TP{pre['tensor_parallel']}" in text
    assert f"decode {dec['workers']} × TP{dec['tensor_parallel']}" in text
    # the priced option's label names the pools too (it read "44 x B200 (TP8) on 6 x ..."), in both languages
    option = next(o for o in result["costs"]["options"] if o["id"] == decision["option_id"])
    assert f"(prefill {pre['workers']} × TP{pre['tensor_parallel']} + decode {dec['workers']} × " in option["label"]
    ru = client.get(reverse("plan_version", args=[plan.id, version.number]), HTTP_ACCEPT_LANGUAGE="ru").content.decode()
    assert f"(предзаполнение {pre['workers']} × TP{pre['tensor_parallel']} + декодирование" in ru
    api = client.get(f"/api/v1/plans/{plan.id}/versions/{version.number}/").json()["result"]["decision"]
    assert api["hardware"]["layout"] == hw["layout"] and api["candidate"] == decision["candidate"]
