"""A Python client generated from the live schema runs the API journey with its typed models only
(issue 23 part 5).

openapi-python-client (requirements-dev.txt) generates a client from /api/v1/schema/ of a live
server, with no warning; the journey then uses nothing but the generated functions and models:
a first token from username and password, a workload, an estimate, a plan (both body
alternatives), polling, the typed result (decision, costs) and the three exports as bytes. No raw
JSON: no `additional_properties` for a documented field, no `to_dict()`/`from_dict()` by hand, no
httpx of our own.
"""

from __future__ import annotations

import importlib
import io
import os
import subprocess
import sys
import time
import urllib.request
from decimal import Decimal
from pathlib import Path

import httpx  # the generated client's own dependency, for its timeout type only
import pytest
from django.contrib.auth import get_user_model
from django.core.management import call_command

from planner.choices import Role
from planner.models import Membership, Team
from tests.conftest import skip_or_fail

pytestmark = pytest.mark.django_db(transaction=True)  # the live server's thread sees committed rows

CONFIG = Path(__file__).with_name("generated_client_config.yaml")
PACKAGE = "gpu_planner_generated_client"
PASSWORD = "correct-horse-battery-staple-42"


@pytest.fixture(autouse=True)
def _fast_hasher(settings):
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]  # speed, tests only


def _generator() -> list[str]:
    try:
        import openapi_python_client  # noqa: F401
    except ImportError:
        skip_or_fail("openapi-python-client is not installed (requirements-dev.txt)")
    return [sys.executable, "-m", "openapi_python_client"]


def generate_client(schema_url: str, workdir: Path):
    """The generated package, imported; fails on any generator warning or error."""
    schema_path = workdir / "schema.json"
    with urllib.request.urlopen(schema_url, timeout=60) as response:  # noqa: S310 - the test's own live server
        schema_path.write_bytes(response.read())
    out = workdir / PACKAGE
    run = subprocess.run(
        [*_generator(), "generate", "--path", str(schema_path), "--meta", "none", "--output-path", str(out),
         "--config", str(CONFIG)],
        capture_output=True, text=True, timeout=300, env={**os.environ, "COLUMNS": "200"},
    )
    output = (run.stdout + run.stderr).strip()
    assert run.returncode == 0, output
    # a clean run prints only this line; any warning ("Warning(s) encountered", "Unable to parse",
    # "Skipping ...") means a piece of the API is missing or untyped in the client
    assert output == f"Generating {out}", output
    sys.path.insert(0, str(workdir))
    try:
        return importlib.import_module(PACKAGE)
    finally:
        sys.path.remove(str(workdir))


@pytest.fixture
def client_package(live_server, tmp_path):
    call_command("load_catalog", stdout=io.StringIO())  # catalog ids are enums of the schema
    call_command("load_rate_cards", stdout=io.StringIO())
    package = generate_client(f"{live_server.url}/api/v1/schema/?format=json", tmp_path)
    yield package
    for name in [m for m in sys.modules if m == PACKAGE or m.startswith(PACKAGE + ".")]:
        del sys.modules[name]


@pytest.fixture
def alice():
    user = get_user_model().objects.create_user(username="alice", password=PASSWORD)
    team = Team.objects.create(name="Platform", slug="platform")
    Membership.objects.create(team=team, user=user, role=Role.EDITOR)
    return user


def _sub(package, name: str):
    return importlib.import_module(f"{package.__name__}.{name}")


def test_generated_client_runs_the_journey_with_typed_models(client_package, alice, live_server):
    p = client_package
    m, types = _sub(p, "models"), _sub(p, "types")
    tokens_password_create, teams_list = _sub(p, "api.account.tokens_password_create"), _sub(p, "api.account.teams_list")
    workloads_create = _sub(p, "api.workloads.workloads_create")
    estimate_create = _sub(p, "api.estimate.estimate_create")
    plans_create, status_retrieve, version_retrieve, export_retrieve = (
        _sub(p, f"api.plans.{name}") for name in (
            "plans_create", "plans_versions_status_retrieve", "plans_versions_retrieve", "plans_versions_export_retrieve"))

    # 1. the first token, from username and password (no browser)
    anonymous = p.Client(base_url=live_server.url, raise_on_unexpected_status=True)
    token = tokens_password_create.sync(
        client=anonymous, body=m.TokenPasswordInRequest(username="alice", password=PASSWORD, name="generated client"))
    assert isinstance(token, m.TokenCreatedOut), token
    api = p.AuthenticatedClient(base_url=live_server.url, token=token.key, prefix="Token",
                                raise_on_unexpected_status=True, timeout=httpx.Timeout(60.0))

    [team] = teams_list.sync(client=api)
    assert isinstance(team, m.TeamOut) and team.role == m.RoleEnum.EDITOR

    # 2. a workload, typed from the kind down to the enums
    spec = m.WorkloadSpecInference(
        kind=m.WorkloadSpecInferenceKind.INFERENCE, name="Support chat assistant",
        model=m.PresetModel(preset=m.PresetEnum("llama-3.1-8b")),
        serving=m.ServingSpec(
            input_tokens=1024, output_tokens=256, concurrency=32, requests_per_second=4.0, ttft_p95_ms=1000.0,
            runtime=m.RuntimeEnum.VLLM),
    )
    workload = workloads_create.sync(client=api, body=m.WorkloadInRequest(team=team.id, name="Chat", spec=spec))
    assert isinstance(workload, m.WorkloadOut), workload
    assert workload.kind == "inference"

    # 3. an estimate: decision, sizing and costs as typed models
    costs = m.CostOptions(horizon_months=36, currency=m.CurrencyEnum.USD)
    quick = estimate_create.sync(client=api, body=m.EstimateInRequest(spec=spec, costs=costs))
    assert isinstance(quick, m.EstimateOut), quick
    _check_decision(m, quick.decision, currency="USD")
    assert isinstance(quick.sizing, m.SizingResult)
    assert isinstance(quick.sizing.recommendation, m.SizingRecommendation)
    assert quick.sizing.recommendation.accelerator_id == quick.decision.hardware.accelerator_id
    assert isinstance(quick.costs, m.CostResult) and quick.costs.currency == "USD"
    assert all(isinstance(option, m.CostOption) for option in quick.costs.options)
    assert quick.decision.option_id in {option.id for option in quick.costs.options}

    # 4. plans: from an inline spec, and from the saved workload (the two body alternatives)
    inline = plans_create.sync(
        client=api, body=m.PlanFromSpecRequest(team=team.id, spec=spec, name="Inline", costs=costs))
    assert isinstance(inline, m.PlanAcceptedOut), inline
    accepted = plans_create.sync(
        client=api, body=m.PlanFromWorkloadRequest(workload=workload.id, name="Q3 budget", costs=costs),
        idempotency_key="generated-client-journey")
    assert isinstance(accepted, m.PlanAcceptedOut), accepted
    assert accepted.plan.workload == workload.id
    assert isinstance(accepted.plan.costs, m.CostOptions) and accepted.plan.costs.horizon_months == 36

    # 5. poll the status until finished
    number = accepted.version.number
    deadline = time.monotonic() + 60
    while True:
        status = status_retrieve.sync(plan_id=accepted.plan.id, number=number, client=api)
        assert isinstance(status, m.VersionStatusOut), status
        if status.finished or time.monotonic() > deadline:
            break
        time.sleep(0.2)
    assert status.status == m.VersionStatusEnum.DONE, status.error

    # 6. the typed result
    version = version_retrieve.sync(plan_id=accepted.plan.id, number=number, client=api)
    assert isinstance(version, m.VersionOut), version
    assert isinstance(version.result, m.PlanResult)
    decision = version.result.decision
    _check_decision(m, decision, currency="USD")
    assert isinstance(version.result.costs, m.CostResult)
    assert version.result.costs.horizon_months == 36
    chosen = next(o for o in version.result.costs.options if o.id == decision.option_id)
    assert Decimal(chosen.totals.net) > 0
    assert version.exports.pdf.endswith("/export/pdf/")

    # 7. the exports, as bytes
    magic = {m.FmtEnum.PDF: b"%PDF", m.FmtEnum.XLSX: b"PK\x03\x04"}
    for fmt in (m.FmtEnum.PDF, m.FmtEnum.XLSX, m.FmtEnum.CSV):
        file = export_retrieve.sync(plan_id=accepted.plan.id, number=number, fmt=fmt, client=api)
        assert isinstance(file, types.File), file
        content = file.payload.read()
        assert isinstance(content, bytes) and content
        if fmt in magic:
            assert content.startswith(magic[fmt]), (fmt, content[:8])
        else:
            assert decision.option_id.encode() in content or b"," in content



def _check_decision(m, decision, *, currency: str) -> None:
    assert isinstance(decision, m.PlanDecision), decision
    assert decision.status in (m.DecisionStatusEnum.DECIDED, m.DecisionStatusEnum.CLOSEST_MISSES_TARGETS)
    assert decision.kind == "inference"
    assert isinstance(decision.hardware, m.DecisionHardware)
    assert decision.hardware.gpu_count >= 1 and decision.hardware.accelerator_id
    assert isinstance(decision.hardware.layout, m.Layout) and decision.hardware.layout.tensor_parallel >= 1
    assert isinstance(decision.targets, m.DecisionTargets) and decision.targets.ttft_p95_ms_target == 1000
    budget = decision.budget
    assert isinstance(budget, m.DecisionBudget) and budget.currency == currency and budget.horizon_months == 36
    assert Decimal(budget.total) > 0 and Decimal(budget.per_month) > 0
    assert all(isinstance(a, m.DecisionAlternative) for a in decision.alternatives)
    assert isinstance(decision.why, str) and decision.why


def test_generator_config_reads_every_export_type_as_bytes():
    """The config maps each media type the export operations declare (test_api_schema) to bytes."""
    text = CONFIG.read_text()
    for media in ("application/pdf", "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet", "text/csv"):
        assert f"{media}: application/octet-stream" in text
