"""/api/v1/calibration/: record runs (file content or one run), the scoreboard, activate and
turn off, with the API's error shape, roles and team scoping (issue 12)."""

import json
from pathlib import Path

import pytest

from planner.calibration.models import Calibration, MeasuredRun
from tests.functional.api_fixtures import *  # noqa: F403
from tests.functional.api_fixtures import catalog, client_for, world  # noqa: F401

pytestmark = pytest.mark.django_db

DATA = Path(__file__).resolve().parents[1] / "data" / "calibration"
RUNS = "/api/v1/calibration/runs/"
UPLOAD = "/api/v1/calibration/runs/upload/"
BOARD = "/api/v1/calibration/scoreboard/"
CALS = "/api/v1/calibration/calibrations/"
ONE_RUN = {"model": "qwen3-32b", "accelerator": "nvidia-h100-sxm5-80gb", "count": 2, "tensor_parallel": 2, "engine": "vllm",
           "engine_version": "0.12.0", "precision": "bf16", "input_tokens": 1024, "output_tokens": 128,
           "concurrency": 16, "ttft_mean_ms": 187.938, "tpot_mean_ms": 22.1835}


def test_record_score_activate_and_turn_off(world, catalog):  # noqa: F811
    api = client_for(world.users["editor"])
    content = (DATA / "vllm_qwen3_32b_h100_tp2_c16.json").read_text()
    r = api.post(UPLOAD, {"team": world.team.id, "content": content, "format": "vllm_json",
                        "context": {"count": 2, "precision": "bf16"}, "filename": "bench.json"}, format="json")
    assert r.status_code == 201, r.json()
    [run] = r.json()
    assert run["model_preset"] == "qwen3-32b" and run["figures"]["ttft_mean_ms"] == 187.938
    r = api.post(RUNS, {"team": world.team.id, "kind": "serving", "run": {**ONE_RUN, "concurrency": 8,
                                                                         "ttft_mean_ms": 154.248, "tpot_mean_ms": 18.037}},
                 format="json")
    assert r.status_code == 201 and r.json()[0]["source"] == "api"

    board = api.get(BOARD, {"team": world.team.id}).json()
    [group] = board["groups"]
    assert len(group["runs"]) == 2 and group["calibration"] is None
    for row in group["runs"]:
        assert set(row["preset"]) == {"ttft_ms", "tpot_ms", "ttft_error", "tpot_error"}
        assert abs(row["preset"]["ttft_error"]) > 0.2  # the presets are well off for these runs
    assert group["fit"]["error_after"]["ttft"] < group["fit"]["error_before"]["ttft"]

    r = api.post(CALS, {"team": world.team.id, "key": group["key"]}, format="json")
    assert r.status_code == 200 and r.json()["active"] and r.json()["run_count"] == 2
    cal_id = r.json()["id"]
    assert api.get(CALS, {"team": world.team.id}).json()[0]["id"] == cal_id
    r = api.delete(f"{CALS}{cal_id}/")
    assert r.status_code == 204
    assert api.get(f"{CALS}{cal_id}/").status_code == 404  # gone, as a DELETE says
    assert api.get(CALS, {"team": world.team.id}).json() == []
    [group] = api.get(BOARD, {"team": world.team.id}).json()["groups"]
    assert len(group["runs"]) == 2 and group["calibration"] is None  # the runs stay, to fit again


def test_errors_have_field_paths_and_store_nothing(world, catalog):  # noqa: F811
    api = client_for(world.users["owner"])
    r = api.post(RUNS, {"team": world.team.id, "kind": "serving", "run": {**ONE_RUN, "tpot_mean_ms": -1,
                                                                         "accelerator": "Z9000"}}, format="json")
    assert r.status_code == 400
    fields = {e["field"] for e in r.json()["errors"]}
    assert fields == {"run.tpot_mean_ms", "run.accelerator"}
    bad_csv = (DATA / "serving_runs.csv").read_text().replace(",16,,149.362", ",-16,,149.362")
    r = api.post(UPLOAD, {"team": world.team.id, "content": bad_csv}, format="json")
    assert r.status_code == 400
    assert r.json()["errors"] == [{"field": "content", "message": "line 3, concurrency: -16 is out of range "
                                                                  "(must be > 0 and <= 1e+06)"}]
    r = api.post(RUNS, {"team": world.team.id}, format="json")
    assert r.status_code == 400
    assert {e["field"] for e in r.json()["errors"]} == {"kind", "run"}
    r = api.post(UPLOAD, {"team": world.team.id}, format="json")
    assert r.status_code == 400 and r.json()["errors"] == [{"field": "content", "message": "Required."}]
    r = api.post(CALS, {"team": world.team.id, "key": "serving|nope|vllm|bf16"}, format="json")
    assert r.status_code == 404 and r.json()["errors"][0]["field"] == "key"  # names no group
    assert not MeasuredRun.objects.exists() and not Calibration.objects.exists()


def test_roles_and_other_teams(world, catalog):  # noqa: F811
    owner = client_for(world.users["owner"])
    assert owner.post(RUNS, {"team": world.team.id, "kind": "serving", "run": ONE_RUN}, format="json").status_code == 201
    run_id = MeasuredRun.objects.get().id
    viewer = client_for(world.users["viewer"])
    assert viewer.post(RUNS, {"team": world.team.id, "kind": "serving", "run": ONE_RUN},
                       format="json").status_code == 403
    assert viewer.get(BOARD, {"team": world.team.id}).status_code == 200
    outsider = client_for(world.outsider)
    assert outsider.get(RUNS).json()["results"] == []
    r = outsider.get(BOARD, {"team": world.team.id})
    assert r.status_code == 404 and r.json()["errors"][0]["field"] == "team"  # not theirs: not found
    assert outsider.delete(f"{RUNS}{run_id}/").status_code == 404
    assert owner.delete(f"{RUNS}{run_id}/").status_code == 204
    assert not MeasuredRun.objects.exists()


def test_a_run_recorded_already_is_a_409_conflict(world, catalog):  # noqa: F811
    api = client_for(world.users["owner"])
    body = {"team": world.team.id, "kind": "serving", "run": ONE_RUN}
    assert api.post(RUNS, body, format="json").status_code == 201
    again = api.post(RUNS, body, format="json")
    assert again.status_code == 409
    assert again.json()["errors"][0]["field"] == "run.file"
    assert "already recorded" in again.json()["errors"][0]["message"]
    assert MeasuredRun.objects.count() == 1


def test_schema_documents_the_endpoints(anon):
    paths = anon.get("/api/v1/schema/", HTTP_ACCEPT="application/json").json()["paths"]
    for path in (RUNS, UPLOAD, BOARD, CALS, "/api/v1/calibration/calibrations/{id}/", "/api/v1/calibration/runs/{id}/"):
        assert path in paths


def test_estimate_of_a_team_uses_its_active_calibrations(world, catalog):  # noqa: F811
    api = client_for(world.users["editor"])
    assert api.post(RUNS, {"team": world.team.id, "kind": "serving", "run": ONE_RUN}, format="json").status_code == 201
    [group] = api.get(BOARD, {"team": world.team.id}).json()["groups"]
    label = api.post(CALS, {"team": world.team.id, "key": group["key"]}, format="json").json()["label"]
    spec = {"kind": "inference", "model": {"preset": "qwen3-32b"}, "hardware": {"accelerator": "H100 SXM"},
            "serving": {"concurrency": 16, "input_tokens": 1024, "output_tokens": 128}}
    mine = api.post("/api/v1/estimate/", {"spec": spec, "team": world.team.id}, format="json")
    assert mine.status_code == 200, mine.json()
    assert label in json.dumps(mine.json()["sizing"]["serving"])
    plain = api.post("/api/v1/estimate/", {"spec": spec}, format="json").json()
    assert label not in json.dumps(plain["sizing"]["serving"])
    outsider = client_for(world.outsider)
    theirs = outsider.post("/api/v1/estimate/", {"spec": spec, "team": world.other_team.id}, format="json").json()
    assert theirs["sizing"]["serving"] == plain["sizing"]["serving"]
    r = outsider.post("/api/v1/estimate/", {"spec": spec, "team": world.team.id}, format="json")
    assert r.status_code == 404 and r.json()["errors"][0]["field"] == "team"


def test_a_runs_fit_is_made_when_recorded_and_read_by_the_scoreboard(world, catalog, monkeypatch):  # noqa: F811
    """A serving run's fit (~0.4 s of engine evaluations) is kept on the run: a scoreboard of a hundred
    runs reads them instead of spending most of a minute (schemathesis's 10 s limit found it)."""
    from django.core.cache import cache

    from planner.calibration import fit as calibration_fit

    api = client_for(world.users["editor"])
    assert api.post(RUNS, {"team": world.team.id, "kind": "serving", "run": ONE_RUN}, format="json").status_code == 201
    run = MeasuredRun.objects.get()
    assert run.fit_memo["key"].startswith("calibration-fit:") and run.fit_memo["prefill_scale"] > 0
    cache.clear()
    calls = []
    real = calibration_fit.fit_serving_run
    monkeypatch.setattr(calibration_fit, "fit_serving_run", lambda *a, **k: calls.append(1) or real(*a, **k))
    board = api.get(BOARD, {"team": world.team.id})
    assert board.status_code == 200 and len(board.json()["groups"][0]["runs"]) == 1
    assert calls == []  # read, not fitted again
    # Another engine: the stored fit no longer applies; it is made again once, and kept.
    monkeypatch.setattr("planner.engine.ENGINE_VERSION", "another")
    assert api.get(BOARD, {"team": world.team.id}).status_code == 200 and calls == [1]
    assert api.get(BOARD, {"team": world.team.id}).status_code == 200 and calls == [1]


def test_real_sglang_medians_file_is_recorded_with_its_notes(world, catalog):  # noqa: F811
    api = client_for(world.users["editor"])
    content = (DATA / "sglang_medians_llama33_70b_h200_datacrunch.jsonl").read_text()
    context = {"model": "meta-llama/Llama-3.3-70B-Instruct", "accelerator": "NVIDIA H200", "count": 4,
               "tensor_parallel": 4, "precision": "bf16"}
    r = api.post(UPLOAD, {"team": world.team.id, "content": content, "context": context}, format="json")
    assert r.status_code == 201, r.json()
    runs = r.json()
    assert len(runs) == 7 and {x["accelerator"] for x in runs} == {"nvidia-h200-sxm-141gb"}
    assert runs[0]["figures"]["accelerator_given"] == "NVIDIA H200"
    assert runs[0]["notes"][0] == ("The file records no mean TTFT: its median (85.75 ms) is taken as the mean (p50, "
                                   "not a mean; a long tail makes the mean higher).")
    assert MeasuredRun.objects.get(pk=runs[0]["id"]).notes[1]["template"].startswith("The file records no TPOT")


def test_negative_latencies_are_refused_and_nothing_is_written(world, catalog):  # noqa: F811
    api = client_for(world.users["editor"])
    lines = (DATA / "vllm_append_llama32_3b_l40s_nerdalert.jsonl").read_text().splitlines()
    lines[1] = lines[1].replace('"mean_ttft_ms": 80.19281090889662', '"mean_ttft_ms": -80.19281090889662')
    r = api.post(UPLOAD, {"team": world.team.id, "content": "\n".join(lines), "context": {"precision": "bf16"}},
                 format="json")
    assert r.status_code == 400
    assert r.json()["errors"] == [{"field": "content", "message": "line 2, mean_ttft_ms: -80.1928 ms: a negative "
                                   "latency (the benchmark's clock or its parser failed); the file cannot be used"}]
    assert not MeasuredRun.objects.exists()
