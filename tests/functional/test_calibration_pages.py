"""Calibration through the web pages and the services: upload, scoreboard, activate, a later
estimate of the same team changes and names the calibration, another team's does not, an old
version recomputes to its own numbers, turning off returns to the presets, bad files store
nothing (issue 12)."""

import html
import json
from pathlib import Path

import pytest
from auditlog.models import LogEntry
from django.urls import reverse

from planner.calibration import services as cs
from planner.calibration.models import Calibration, MeasuredRun
from planner.choices import Role, VersionStatus
from planner.models import PlanVersion
from planner.services import compute_from_inputs, plan_create, plan_version_compute, workload_create
from tests.functional.api_fixtures import catalog  # noqa: F401
from tests.planner_factories import member

pytestmark = pytest.mark.django_db

DATA = Path(__file__).resolve().parents[1] / "data" / "calibration"
VLLM_FILE = "vllm_qwen3_32b_h100_tp2_c16.json"
SPEC = {"kind": "inference", "model": {"preset": "qwen3-32b"}, "hardware": {"accelerator": "H100 SXM"},
        "serving": {"concurrency": 16, "input_tokens": 1024, "output_tokens": 128}}
CONTEXT = {"accelerator": "H100 SXM", "count": "2", "precision": "bf16", "format": "auto"}


@pytest.fixture
def owner(catalog):  # noqa: F811
    return member(Role.OWNER)


@pytest.fixture
def client_for(client):
    def login(user):
        client.force_login(user)
        return client
    return login


def upload(client, team, name=VLLM_FILE, content=None, **fields):
    from django.core.files.uploadedfile import SimpleUploadedFile

    body = content if content is not None else (DATA / name).read_bytes()
    data = {**CONTEXT, "team": team.id, **fields, "file": SimpleUploadedFile(name, body)}
    return client.post(reverse("calibration_upload"), data)


def plan_for(user, team):
    workload = workload_create(team=team, name="Qwen chat", spec=SPEC, user=user)
    plan = plan_create(team=team, workload=workload, options={}, user=user)
    version = plan.versions.get()
    plan_version_compute(version_id=version.id)  # the queue runs on commit, which a test never reaches
    return plan, version


def serving_of(version):
    version.refresh_from_db()
    assert version.status == VersionStatus.DONE, version.error
    return version.result["sizing"]["serving"]


def test_upload_scoreboard_activate_and_use(owner, client_for):
    team = owner.teams.get()
    other_owner = member(Role.OWNER)
    other_team = other_owner.teams.get()
    client = client_for(owner)
    _plan, before = plan_for(owner, team)  # made with the presets
    _other_plan, other_before = plan_for(other_owner, other_team)

    response = upload(client, team)
    assert response.status_code == 302
    run = MeasuredRun.objects.get(team=team)
    assert (run.created_by, run.source, run.source_name) == (owner, "vllm_json", VLLM_FILE)
    assert LogEntry.objects.get_for_object(run).filter(action=LogEntry.Action.CREATE).exists()

    page = client.get(reverse("calibration") + f"?team={team.id}")
    assert page.status_code == 200
    [group] = page.context["groups"]
    [score] = group.scores
    assert abs(score.preset["ttft_error"]) > 0.05  # the presets are off for this run
    assert score.calibrated["ttft_ms"] == pytest.approx(187.938, rel=1e-3)  # one run: the fit reproduces it
    assert "vLLM 0.12.0, 2026-11-20" in page.content.decode()

    response = client.post(reverse("calibration_activate"), {"team": team.id, "key": group.key})
    assert response.status_code == 302
    cal = Calibration.objects.get(team=team)
    assert cal.active and cal.run_count == 1 and "from 1 run(s) on H100 SXM5 80GB, vLLM 0.12.0" in cal.label
    assert LogEntry.objects.get_for_object(cal).exists()

    _plan2, after = plan_for(owner, team)
    assert after.calibrations["serving"][0]["label"] == cal.label
    calibrated = serving_of(after)
    assert cal.label in json.dumps(calibrated)  # the explanation names the calibration
    assert calibrated["ttft_ms"]["value"] != serving_of(before)["ttft_ms"]["value"]
    # Another team's estimate of the same workload neither sees nor uses the calibration.
    _p, other_after = plan_for(other_owner, other_team)
    assert other_after.calibrations == {"serving": [], "training": []}
    assert serving_of(other_after) == serving_of(other_before)
    assert client_for(other_owner).get(reverse("calibration")).context["groups"] == []

    # The version made before activation recomputes to its own numbers, the later one to its own.
    for version in (before, after):
        version = PlanVersion.objects.get(pk=version.pk)
        outcome = compute_from_inputs(inputs=version.inputs, price_snapshot=version.price_snapshot,
                                      rate_snapshot=version.rate_snapshot, calibrations=version.calibrations)
        assert outcome.result["sizing"] == version.result["sizing"]

    # Turning it off returns the team's new estimates to the presets.
    client = client_for(owner)
    assert client.post(reverse("calibration_deactivate", args=[cal.id])).status_code == 302
    _p, off = plan_for(owner, team)
    assert cal.label not in json.dumps(serving_of(off))
    assert serving_of(off)["ttft_ms"] == serving_of(before)["ttft_ms"]


def test_several_runs_give_the_median_and_the_range(owner, client_for):
    team = owner.teams.get()
    client = client_for(owner)
    assert upload(client, team, "serving_runs.csv", format="serving_csv", count="", precision="").status_code == 302
    [group] = cs.team_groups(team=team)
    scales = sorted(s.implied["prefill_efficiency"] for s in group.scores)
    assert group.values["prefill_efficiency"] == pytest.approx(scales[1], abs=1e-6)  # median of 3
    assert group.fit["range"]["prefill_efficiency"] == {"low": pytest.approx(scales[0], abs=1e-6),
                                                        "high": pytest.approx(scales[2], abs=1e-6)}
    assert group.fit["error_after"]["ttft"] < group.fit["error_before"]["ttft"]


def test_training_runs_calibrate_training_plans(owner, client_for):
    team = owner.teams.get()
    client = client_for(owner)
    assert upload(client, team, "training_runs.csv", format="auto", count="", precision="").status_code == 302
    [group] = cs.team_groups(team=team)
    assert group.kind == "training" and len(group.scores) == 2
    cal = cs.calibration_activate(team=team, key=group.key, user=owner)
    assert cal.values["goodput"] == pytest.approx(1.0e11 / 120_000 / 3600 / (4200 / 16), rel=1e-5)
    spec = {"kind": "pretraining", "model": {"preset": "llama-3.1-8b"}, "hardware": {"accelerator": "H100 SXM"},
            "training": {"tokens": 1e11, "sequence_length": 8192, "global_batch_size": 128}}
    workload = workload_create(team=team, name="8B", spec=spec, user=owner)
    version = plan_create(team=team, workload=workload, options={}, user=owner).versions.get()
    plan_version_compute(version_id=version.id)
    version.refresh_from_db()
    assert version.status == VersionStatus.DONE, version.error
    mfu = version.result["sizing"]["compute"]["mfu"]
    assert mfu["value"] == pytest.approx(cal.values["mfu"], abs=1e-4) and cal.label in mfu["explain"]


@pytest.mark.parametrize("content,fields,message", [
    (b"not json at all {", {"format": "vllm_json"}, "line 1, file: not JSON"),
    (b'{"model_id": "Qwen/Qwen3-32B", "completed": 1}', {}, "mean_ttft_ms: missing"),
    ((DATA / VLLM_FILE).read_bytes().replace(b'"mean_ttft_ms": 187.938', b'"mean_ttft_ms": -1'), {},
     "line 26, mean_ttft_ms: -1 ms: a negative latency (the benchmark's clock or its parser failed)"),
    ((DATA / VLLM_FILE).read_bytes(), {"accelerator": "Z9000"}, "accelerator: no accelerator in the catalog"),
    ((DATA / VLLM_FILE).read_bytes().replace(b"Qwen/Qwen3-32B", b"acme/Unknown-7B"), {}, "model_id: 'acme/Unknown-7B'"),
], ids=["not-json", "missing-metrics", "negative", "unknown-accelerator", "unknown-model"])
def test_bad_files_get_a_message_and_store_nothing(owner, client_for, content, fields, message):
    team = owner.teams.get()
    response = upload(client_for(owner), team, content=content, **fields)
    assert response.status_code == 400
    assert message in html.unescape(response.content.decode())
    assert not MeasuredRun.objects.exists()


def test_a_file_above_the_limit_is_refused(owner, client_for, settings):
    team = owner.teams.get()
    client = client_for(owner)
    # 6 MB passes the request limit (10 MB) and is refused by the form.
    response = upload(client, team, content=b"{" + b" " * (6 * 2**20) + b"}")
    assert response.status_code == 400 and "at most 5 MB" in response.content.decode()
    # 50 MB is refused before anything reads it, with a message (never a 500).
    response = client.post(reverse("calibration_upload"), data=b"x" * 10, content_type="multipart/form-data; boundary=x",
                           CONTENT_LENGTH=str(50 * 2**20))
    assert response.status_code == 413 and "too large" in response.content.decode()
    assert not MeasuredRun.objects.exists()


def test_a_typed_in_run_with_field_errors(owner, client_for):
    team = owner.teams.get()
    client = client_for(owner)
    data = {"team": team.id, "model": "qwen3-32b", "accelerator": "H100 SXM", "count": "2", "tensor_parallel": "2",
            "engine": "vllm", "precision": "bf16", "input_tokens": "1024", "output_tokens": "128",
            "concurrency": "16", "ttft_mean_ms": "-5", "tpot_mean_ms": "22.2"}
    response = client.post(reverse("calibration_run_create", args=["serving"]), data)
    assert response.status_code == 400
    assert response.context["form"].errors["ttft_mean_ms"]
    assert not MeasuredRun.objects.exists()
    response = client.post(reverse("calibration_run_create", args=["serving"]), {**data, "ttft_mean_ms": "187.9"})
    assert response.status_code == 302 and MeasuredRun.objects.get().source == "form"


def test_viewers_read_and_outsiders_do_not_see(owner, client_for):
    team = owner.teams.get()
    assert upload(client_for(owner), team).status_code == 302
    viewer = member(Role.VIEWER, team=team)
    client = client_for(viewer)
    page = client.get(reverse("calibration"))
    assert page.status_code == 200 and len(page.context["groups"]) == 1 and not page.context["can_edit"]
    assert upload(client, team).status_code == 403
    key = page.context["groups"][0].key
    assert client.post(reverse("calibration_activate"), {"team": team.id, "key": key}).status_code == 403
    outsider = client_for(member(Role.OWNER))
    run = MeasuredRun.objects.get()
    assert outsider.get(reverse("calibration") + f"?team={team.id}").status_code == 404
    assert outsider.post(reverse("calibration_run_delete", args=[run.id])).status_code == 404
    assert MeasuredRun.objects.count() == 1


def test_import_command_all_or_nothing(owner):
    from django.core.management import CommandError, call_command

    team = owner.teams.get()
    call_command("import_runs", str(DATA / "serving_runs.csv"), team=team.slug)
    assert MeasuredRun.objects.filter(team=team, source="serving_csv").count() == 3
    bad = DATA.parent / "calibration" / "training_runs.csv"
    with pytest.raises(CommandError) as info:
        call_command("import_runs", str(bad), team=team.slug, format="serving_csv")
    assert info.value.returncode == 2 and "training_runs.csv: line 1, data_parallel: unknown column" in str(info.value)
    assert MeasuredRun.objects.filter(team=team).count() == 3


def test_the_same_run_is_not_recorded_twice(owner, client_for):
    team = owner.teams.get()
    client = client_for(owner)
    assert upload(client, team).status_code == 302
    again = upload(client, team)
    assert again.status_code == 400 and "this run is already recorded" in again.content.decode()
    rows = (DATA / "serving_runs.csv").read_text().splitlines()
    twice = "\n".join([rows[0], rows[1], rows[2], rows[1]]) + "\n"
    response = upload(client, team, "twice.csv", content=twice.encode(), count="", precision="")
    assert response.status_code == 400 and "line 4, file: the same run as line 2" in response.content.decode()
    assert MeasuredRun.objects.filter(team=team).count() == 1
    # Another team may record the same figures: it is their run.
    other = member(Role.OWNER)
    assert upload(client_for(other), other.teams.get()).status_code == 302


def test_sglang_output_file_gives_its_own_key(owner, client_for):
    team = owner.teams.get()
    client = client_for(owner)
    response = upload(client, team, "sglang_qwen3_32b_h100.jsonl", count="", format="auto")
    assert response.status_code == 302
    [group] = cs.team_groups(team=team)
    assert (group.runtime, group.precision, len(group.scores)) == ("sglang", "bf16", 2)
    # From server_info.tp_size; one server each, so tp x pp GPUs.
    assert [(s.run.tensor_parallel, s.run.count) for s in group.scores] == [(2, 2), (4, 4)]
    scales = [s.implied["prefill_efficiency"] for s in group.scores]
    assert group.values["prefill_efficiency"] == pytest.approx(sum(scales) / 2, abs=1e-6)  # median of two
    assert "SGLang 0.5.1.post1" in group.label


def test_the_scoreboard_in_russian(owner, client_for):
    team = owner.teams.get()
    client = client_for(owner)
    assert upload(client, team).status_code == 302
    client.cookies["django_language"] = "ru"
    page = client.get(reverse("calibration"), HTTP_ACCEPT_LANGUAGE="ru")
    text = page.content.decode()
    assert "Калибровка по вашим измеренным прогонам" in text and "Включить" in text
    assert "После калибровки: TTFT / TPOT, мс (ошибка)" in text
