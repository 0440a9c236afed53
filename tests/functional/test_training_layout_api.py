"""A pinned training layout that cannot run (issue 24): the API answers 400 with the field paths and why,
and writes nothing; a good one reaches the engine and the result shows the exact layout."""

import copy

import jsonschema
import pytest
from drf_spectacular.generators import SchemaGenerator

from planner.api.body_schema import validator_schema
from planner.models import Plan, PlanVersion, Workload
from tests.functional.api_fixtures import *  # noqa: F403

pytestmark = pytest.mark.django_db
URL = "/api/v1/workloads/"
SPEC = {"kind": "pretraining", "model": {"preset": "llama-3.1-70b"},
        "training": {"tokens": 1e12, "sequence_length": 8192, "global_batch_tokens": 4194304,
                     "tensor_parallel": 4, "pipeline_parallel": 4, "context_parallel": 2, "data_parallel": 8},
        "precision": {"compute": "fp8"}, "hardware": {"accelerator": "nvidia-h100-sxm5-80gb", "count": 256}}


def _counts():
    return Workload.objects.count(), Plan.objects.count(), PlanVersion.objects.count()


def _spec(training=None, hardware=None):
    spec = copy.deepcopy(SPEC)
    spec["training"].update(training or {})
    spec["hardware"].update(hardware or {})
    return spec


@pytest.mark.parametrize(("spec", "path", "why"), [
    (_spec(hardware={"count": 128}), "spec.hardware.count", "4 x 4 x 2 x 8 = 256"),
    (_spec(training={"sequence_length": 8190, "global_batch_tokens": 8190 * 512}), "spec.training.context_parallel",
     "2 x CP = 4"),
    (_spec(training={"expert_parallel": 2}), "spec.training.expert_parallel", "dense"),
    (_spec(training={"global_batch_tokens": 8192 * 12}), "spec.training.global_batch_tokens", "whole micro-batches"),
    (_spec(hardware={"accelerator": "nvidia-a100-sxm4-80gb"}), "spec.precision.compute", "no fp8 tensor cores"),
])
def test_a_layout_that_cannot_run_is_a_400_naming_the_field(world, catalog, spec, path, why):
    editor = client_for(world.users["editor"])  # noqa: F405
    before = _counts()
    response = editor.post(URL, {"team": world.team.id, "name": "Pre-train", "spec": spec}, format="json")
    assert response.status_code == 400, response.json()
    errors = {e["field"]: e["message"] for e in response.json()["errors"]}
    assert path in errors and why in errors[path], errors
    assert _counts() == before


def test_the_estimate_shows_the_exact_layout(world, catalog):
    viewer = client_for(world.users["viewer"])  # noqa: F405
    response = viewer.post("/api/v1/estimate/", {"spec": SPEC}, format="json", HTTP_ACCEPT_LANGUAGE="ru")
    assert response.status_code == 200, response.json()
    document = SchemaGenerator().get_schema(request=None, public=True)
    root = {"$ref": "#/components/schemas/EstimateOut",
            "components": {"schemas": validator_schema(document["components"]["schemas"])}}
    assert not list(jsonschema.Draft4Validator(root).iter_errors(response.json()))
    layout = response.json()["sizing"]["compute"]["training_layout"]
    assert layout["layout"]["data_parallel"] == 8 and layout["layout"]["count"] == 256
    assert 0 < layout["mfu"]["value"] <= 1 and layout["fits"] is True
    assert layout["memory_per_gpu_bytes"]["value"] <= layout["gpu_memory_bytes"]["value"]


def test_the_plan_page_shows_the_exact_layout(world, real_snapshots):
    from django.urls import reverse

    from planner.choices import VersionStatus
    from planner.services import compute_from_inputs

    prices, rates = real_snapshots
    outcome = compute_from_inputs(inputs={"spec": SPEC, "costs": {}}, price_snapshot=prices, rate_snapshot=rates)
    assert outcome.status == VersionStatus.DONE, outcome.error
    tl = outcome.result["sizing"]["compute"]["training_layout"]
    assert tl["layout"]["data_parallel"] == 8 and tl["fits"] is True
    world.workload.spec = SPEC
    world.workload.kind = "pretraining"
    world.workload.save()
    make_version(world.plan, 2, VersionStatus.DONE, result=outcome.result)  # noqa: F405
    from django.test import Client

    client = Client()
    client.force_login(world.users["editor"])
    html = client.get(reverse("plan_detail", args=[world.plan.id])).content.decode()
    assert "Exact training layout" in html and "Step time" in html and "Micro-batches per pipeline" in html
    html_ru = client.get(reverse("plan_detail", args=[world.plan.id]), HTTP_ACCEPT_LANGUAGE="ru").content.decode()
    assert "Точная раскладка обучения" in html_ru and "Время шага" in html_ru
