"""Bodies checked against the schema the OpenAPI document publishes (planner.api.body_schema):
one measured run and one supplier quote. The schema refuses what is malformed, with field paths
and nothing written; the form/parser refuses what one field says about another; the
schemathesis hooks repair only those rules in a generated positive case (issue 16)."""


import pytest

from catalog.models import SupplierQuote
from planner.api.body_schema import check_body, validator_schema
from planner.api.calibration_schema import run_body_schema
from planner.api.errors import FieldErrors
from planner.calibration.models import MeasuredRun
from tests.conftest import schemathesis_hooks
from tests.functional.api_fixtures import *  # noqa: F403
from tests.functional.api_fixtures import catalog, client_for, world  # noqa: F401

pytestmark = pytest.mark.django_db

RUNS = "/api/v1/calibration/runs/"
UPLOAD = "/api/v1/calibration/runs/upload/"
QUOTES = "/api/v1/supplier-quotes/"
SERVING = {"model": "qwen3-32b", "accelerator": "nvidia-h100-sxm5-80gb", "count": 2, "tensor_parallel": 2,
           "engine": "vllm", "precision": "bf16", "input_tokens": 1024, "output_tokens": 128, "concurrency": 16,
           "ttft_mean_ms": 187.9, "tpot_mean_ms": 22.2}
TRAINING = {"model": "llama-3.1-8b", "accelerator": "nvidia-h100-sxm5-80gb", "count": 8, "sequence_length": 8192,
            "global_batch_size": 128, "tokens_per_s": 60000.0}
QUOTE = {"supplier": "ООО Интегратор", "item_kind": "server", "accelerator": "nvidia-h100-sxm5-80gb",
         "gpus_per_server": 8, "unit_price": "42000000.50", "currency": "RUB", "includes_vat": True,
         "quote_date": "2026-11-20", "valid_until": "2027-12-31"}


def _errors(r) -> dict:
    return {e["field"]: e["message"] for e in r.json()["errors"]}


@pytest.mark.parametrize(("kind", "run"), [("serving", SERVING), ("training", TRAINING)])
def test_a_typed_run_is_recorded_and_matches_the_published_schema(world, catalog, kind, run):  # noqa: F811
    body = {"team": world.team.id, "kind": kind, "run": run}
    check_body(run_body_schema(), body)  # valid under the published oneOf too
    r = client_for(world.users["editor"]).post(RUNS, body, format="json")
    assert r.status_code == 201, r.json()
    assert r.json()[0]["kind"] == kind and r.json()[0]["accelerator"] == "nvidia-h100-sxm5-80gb"


@pytest.mark.parametrize(("change", "field", "message"), [
    ({"model": "Qwen/Qwen3-32B"}, "run.model", "Must be one of"),  # a preset id, not a loose name
    ({"model": "bert-base-uncased"}, "run.model", "Must be one of"),  # not a generative decoder
    ({"accelerator": "H100 SXM"}, "run.accelerator", "Must be one of"),
    ({"concurrency": "16"}, "run.concurrency", "Must be a whole number"),
    ({"concurrency": 2.5}, "run.concurrency", "Must be a whole number"),
    ({"ttft_mean_ms": 0}, "run.ttft_mean_ms", "Must be greater than 0"),
    ({"tensor_parallel": 65}, "run.tensor_parallel", "Must be at most 64"),
    ({"engine": "VLLM"}, "run.engine", "Must be one of"),
    ({"measured_on": "01.11.2026"}, "run.measured_on", "YYYY-MM-DD"),
    ({"gpu_typo": 1}, "run.gpu_typo", "Unknown field"),
    ({"engine_version": "x" * 41}, "run.engine_version", "At most 40 characters"),
])
def test_what_the_schema_refuses_is_a_400_naming_the_field(world, catalog, change, field, message):  # noqa: F811
    r = client_for(world.users["editor"]).post(RUNS, {"team": world.team.id, "kind": "serving",
                                                      "run": {**SERVING, **change}}, format="json")
    assert r.status_code == 400
    assert message in _errors(r)[field]
    assert not MeasuredRun.objects.exists()


def test_a_run_without_its_load_or_speed_names_the_alternatives(world, catalog):  # noqa: F811
    api = client_for(world.users["editor"])
    run = {k: v for k, v in SERVING.items() if k != "concurrency"}
    r = api.post(RUNS, {"team": world.team.id, "kind": "serving", "run": run}, format="json")
    assert r.status_code == 400
    assert _errors(r) == {"run": "Give at least one of: concurrency, request_rate, num_prompts."}
    run = {k: v for k, v in TRAINING.items() if k != "tokens_per_s"}
    r = api.post(RUNS, {"team": world.team.id, "kind": "training", "run": run}, format="json")
    assert _errors(r) == {"run": "Give at least one of: tokens_per_s, step_time_s."}


def test_file_content_sent_to_the_one_run_endpoint_points_to_the_upload(world, catalog):  # noqa: F811
    r = client_for(world.users["editor"]).post(RUNS, {"team": world.team.id, "content": "model,accelerator\n"},
                                               format="json")
    assert r.status_code == 400 and UPLOAD in _errors(r)["content"]


def test_errors_speak_the_requests_language(world, catalog):  # noqa: F811
    r = client_for(world.users["editor"]).post(RUNS, {"team": world.team.id, "kind": "serving",
                                                      "run": {**SERVING, "count": "2"}},
                                               format="json", HTTP_ACCEPT_LANGUAGE="ru")
    assert r.status_code == 400 and _errors(r)["run.count"] == "Должно быть целым числом."


def test_a_physically_impossible_run_is_the_parsers_400_and_the_hook_repairs_it(world, catalog):  # noqa: F811
    hooks = schemathesis_hooks()
    api = client_for(world.users["editor"])
    # Schema-valid, but TP 3 does not divide 4 GPUs, and (once it does) a TPOT below one read of the
    # weights at the chip's bandwidth and more tokens/s than 16 streams at that TPOT can produce.
    run = {**SERVING, "accelerator": "nvidia-v100-sxm2-32gb", "count": 4, "tensor_parallel": 3,
           "tpot_mean_ms": 0.01, "output_tokens_per_s": 1e8}
    body = {"team": world.team.id, "kind": "serving", "run": run}
    check_body(run_body_schema(), body)
    r = api.post(RUNS, body, format="json")
    assert r.status_code == 400 and set(_errors(r)) == {"run.tensor_parallel"}
    r = api.post(RUNS, {**body, "run": {**run, "tensor_parallel": 4}}, format="json")
    assert r.status_code == 400 and set(_errors(r)) == {"run.tpot_mean_ms", "run.output_tokens_per_s"}
    fixed = hooks.repair_body(body)
    check_body(run_body_schema(), fixed)  # still schema-valid
    r = api.post(RUNS, fixed, format="json")
    assert r.status_code == 201, r.json()
    # A training run above the chip's peak.
    fast = {"team": world.team.id, "kind": "training", "run": {**TRAINING, "model": "llama-3.1-405b", "count": 1,
                                                                "tokens_per_s": 1e9}}
    assert api.post(RUNS, fast, format="json").status_code == 400
    assert api.post(RUNS, hooks.repair_body(fast), format="json").status_code == 201
    # A step time of 5e-324 s: an infinite speed (found by schemathesis).
    instant = {"team": world.team.id, "kind": "training", "run": {
        "accelerator": "nvidia-h100-sxm5-80gb", "count": 2, "global_batch_size": 1, "model": "qwen3-32b",
        "sequence_length": 1, "step_time_s": 5e-324}}
    assert api.post(RUNS, instant, format="json").status_code == 400
    assert api.post(RUNS, hooks.repair_body(instant), format="json").status_code == 201
    # A rule the schema states is left for the server to refuse.
    bad = {**body, "run": {**run, "count": 0}}
    assert hooks.repair_body(bad)["run"] == bad["run"]


def test_a_quote_is_checked_against_its_schema_then_the_form(world, catalog):  # noqa: F811
    api = client_for(world.users["editor"])
    r = api.post(QUOTES, {"team": world.team.id, **QUOTE}, format="json")
    assert r.status_code == 201, r.json()
    assert r.json()["quantity"] == 1 and r.json()["unit_price"] == {"amount": "42000000.5", "currency": "RUB"}
    for change, field in [({"unit_price": "0"}, "unit_price"), ({"unit_price": 42.5}, "unit_price"),
                          ({"unit_price": "1.1234567"}, "unit_price"), ({"accelerator": "H100"}, "accelerator"),
                          ({"gpus_per_server": 0}, "gpus_per_server"), ({"includes_vat": "yes"}, "includes_vat"),
                          ({"quote_date": ""}, "quote_date"), ({"discount": 5}, "discount"),
                          ({"supplier": "   "}, "supplier"), ({"quantity": "2"}, "quantity")]:
        r = api.post(QUOTES, {"team": world.team.id, **QUOTE, **change}, format="json")
        assert r.status_code == 400 and field in _errors(r), (change, r.json())
    r = api.post(QUOTES, {"team": "1", **QUOTE}, format="json")
    assert r.status_code == 400 and "team" in _errors(r)
    assert SupplierQuote.objects.count() == 1


def test_the_quote_forms_cross_field_rules_and_their_repair(world, catalog):  # noqa: F811
    hooks = schemathesis_hooks()
    api = client_for(world.users["editor"])
    body = {"team": world.team.id, **QUOTE, "gpus_per_server": None, "quote_date": "2027-01-02",
            "valid_until": "2026-01-01"}
    r = api.post(QUOTES, body, format="json")
    assert r.status_code == 400 and set(_errors(r)) == {"gpus_per_server", "valid_until"}
    fixed = hooks.repair_body(body)
    assert (fixed["item_kind"], fixed["quote_date"], fixed["valid_until"]) == ("accelerator", "2026-01-01",
                                                                               "2027-01-02")
    assert api.post(QUOTES, fixed, format="json").status_code == 201


def test_nullable_is_read_as_published():
    schema = {"type": "object", "properties": {"n": {"type": "integer", "nullable": True}}}
    assert validator_schema(schema)["properties"]["n"]["type"] == ["integer", "null"]
    check_body(schema, {"n": None})
    with pytest.raises(FieldErrors):
        check_body(schema, {"n": "1"})


def _extremes(fields):
    for name, f in fields.items():
        low = 1 if f.integer else 5e-324  # the smallest the schema allows (> 0)
        yield name, low
        yield name, int(f.high) if f.integer else f.high


def test_runs_at_the_schemas_extremes_are_recorded_or_refused_and_never_break_the_scoreboard(world, catalog):  # noqa: F811
    """Every numeric field at its smallest and largest schema-valid value, repaired as the fuzzer's
    hook repairs a positive case: recorded (201) or already recorded (409), and the scoreboard and
    activation of every group still answer (found by schemathesis: a run at 5e-324 s per step implied
    an MFU of 0 and the scoreboard divided by it)."""
    from planner.calibration.formats import COMMON_NUMBERS, SERVING_NUMBERS, TRAINING_NUMBERS

    hooks = schemathesis_hooks()
    api = client_for(world.users["editor"])
    for kind, base, fields in (("serving", SERVING, {**COMMON_NUMBERS, **SERVING_NUMBERS}),
                               ("training", TRAINING, {**COMMON_NUMBERS, **TRAINING_NUMBERS})):
        for name, value in _extremes(fields):
            body = hooks.repair_body({"team": world.team.id, "kind": kind, "run": {**base, name: value}})
            r = api.post(RUNS, body, format="json")
            assert r.status_code in (201, 409), (kind, name, value, r.json())
    board = api.get("/api/v1/calibration/scoreboard/", {"team": world.team.id})
    assert board.status_code == 200
    for group in board.json()["groups"]:
        r = api.post("/api/v1/calibration/calibrations/", {"team": world.team.id, "key": group["key"]}, format="json")
        assert r.status_code in (200, 400), r.json()


def test_a_run_too_slow_to_be_real_is_refused(world, catalog):  # noqa: F811
    api = client_for(world.users["editor"])
    slow = {**TRAINING, "tokens_per_s": 0.5}  # 8 H100s at 0.5 tokens/s: an MFU of ~1e-8
    r = api.post(RUNS, {"team": world.team.id, "kind": "training", "run": slow}, format="json")
    assert r.status_code == 400 and "no real run is that slow" in _errors(r)["run.tokens_per_s"]


def test_the_documented_examples_are_accepted(world, catalog):  # noqa: F811
    """Schemathesis's examples phase sends these as they are; each must be recorded."""
    from catalog.api.quotes import QUOTE_EXAMPLE, quote_body_schema
    from planner.api.calibration import RUN_EXAMPLE, UPLOAD_EXAMPLE
    from planner.api.calibration_schema import upload_body_schema

    api = client_for(world.users["editor"])
    for path, example, schema in ((RUNS, RUN_EXAMPLE.value, run_body_schema()),
                                  (UPLOAD, UPLOAD_EXAMPLE.value, upload_body_schema()),
                                  (QUOTES, QUOTE_EXAMPLE, quote_body_schema())):
        body = {**example, "team": world.team.id}
        check_body(schema, body)
        r = api.post(path, body, format="json")
        assert r.status_code == 201, (path, r.json())
