"""Schemathesis hooks for scripts/schemathesis.sh (loaded through SCHEMATHESIS_HOOKS).

The OpenAPI schema states every single-field rule of the WorkloadSpec and the cost options
(planner/api/input_schema.py). A few rules tie one field to another (or to the clock), which
a JSON Schema cannot say; docs/API.md ("Rules the schema cannot state") lists them. For the
positive phase to send only data the documented rules accept, `map_case` repairs a
generated *positive* case that breaks one of those rules, with the smallest change (mostly:
leave the offending optional field out, so its default applies). Negative cases are never
touched.

The WorkloadSpec repair asks the engine's own parser which rule a spec breaks and acts only
on the rules listed in CROSS_FIELD_RULES: a spec that breaks anything else (a single-field
rule the schema should have stated) is sent unchanged, so the server's 400 shows up as a
schemathesis failure instead of being hidden.
"""

from __future__ import annotations

import ast
import copy
import datetime as dt
import functools
import math
import os
import re
import sys
import threading
from pathlib import Path

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

# CPython 3.11 keeps the AST validator's recursion depth in state its threads share: two threads in
# ast.parse at once can fail with "SystemError: AST constructor recursion depth mismatch". With
# --workers 2, Hypothesis parses a strategy module's source in both threads to describe its lambdas
# (hypothesis.internal.lambda_sources), and a CI run failed on that once, a runtime error of the test
# runner with nothing to do with the API. One parse at a time in this process (the runner's own).
_AST_PARSE = ast.parse
_AST_LOCK = threading.Lock()


def _parse_one_at_a_time(*args, **kwargs):
    with _AST_LOCK:
        return _AST_PARSE(*args, **kwargs)


ast.parse = _parse_one_at_a_time

import schemathesis  # noqa: E402

from planner.api.input_schema_model import HF_KEYS  # noqa: E402
from planner.engine.errors import SpecValidationError  # noqa: E402
from planner.engine.spec import parse_workload_spec  # noqa: E402

ARCH_TO_HF = {arch: hf for hf, arch in HF_KEYS.items()}
MAX_REPAIRS = 8
EXPIRY_MARGIN = dt.timedelta(days=7)


def _template(message) -> str:
    return getattr(message, "template", str(message))


def _container(spec: dict, path: list[str]) -> tuple[dict | None, str]:
    """The dict holding the field at `path` (engine field names) and the key it has there."""
    node = spec
    for i, part in enumerate(path[:-1]):
        if part == "hf_config" and i == 1:
            node = node.get(part)
            return (node if isinstance(node, dict) else None), ARCH_TO_HF.get(path[-1], path[-1])
        node = node.get(part) if isinstance(node, dict) else None
    return (node if isinstance(node, dict) else None), path[-1]


def _drop(spec: dict, path: list[str]) -> bool:
    node, key = _container(spec, path)
    if node is None or key not in node:
        return False
    del node[key]
    return True


def _drop_any(*fields: str):
    """Leave out the first of `fields` (siblings of the reported field) that is present."""
    def action(spec: dict, path: list[str]) -> bool:
        return any(_drop(spec, path[:-1] + [f]) for f in fields)
    return action


def _set_head_dim(spec: dict, path: list[str]) -> bool:
    node, _ = _container(spec, path)
    if node is None:
        return False
    hf = path[1] == "hf_config"
    hidden = node.get("hidden_size")
    heads = node.get("num_attention_heads" if hf else "attention_heads")
    if not isinstance(hidden, int | float) or not isinstance(heads, int | float) or heads < 1:
        return False
    node["head_dim"] = max(1, min(4096, int(hidden) // int(heads)))
    return True


def _experts_per_token(spec: dict, path: list[str]) -> bool:
    node, _ = _container(spec, path)
    if node is None or not isinstance(node.get("experts"), int | float):
        return False
    node["experts_per_token"] = int(node["experts"])
    return True


def _context(spec: dict, path: list[str]) -> bool:
    """context_length against input+output tokens and the model's maximum context: leave out
    context_length (then input+output), else the architecture's max_position_embeddings."""
    if _drop(spec, ["serving", "context_length"]):
        return True
    if _drop(spec, ["serving", "input_tokens"]) | _drop(spec, ["serving", "output_tokens"]):
        return True
    model = spec.get("model") or {}
    for key in ("architecture", "hf_config"):
        if isinstance(model.get(key), dict) and model[key].pop("max_position_embeddings", None) is not None:
            return True
    return False


def _drop_field(spec: dict, path: list[str]) -> bool:
    return _drop(spec, path)


def _drop_layout(spec: dict, path: list[str]) -> bool:
    return _drop(spec, ["hardware", "tensor_parallel"]) | _drop(spec, ["hardware", "pipeline_parallel"])


def _drop_training_model_parallel(spec: dict, path: list[str]) -> bool:
    """classic training is data parallel only: leave out tensor and pipeline parallel (and the
    interleaving that needs pipeline parallel)."""
    return any([_drop(spec, ["training", f]) for f in ("tensor_parallel", "pipeline_parallel", "virtual_pipeline_stages")])


def _drop_disaggregation(spec: dict, path: list[str]) -> bool:
    return _drop(spec, ["serving", "disaggregation"])


# (last part of the error's field path, text in the message template) -> repair. Each is a
# rule between fields that the OpenAPI schema cannot state; docs/API.md lists them.
CROSS_FIELD_RULES = {
    ("head_dim", "required: hidden_size {hidden} is not divisible by attention_heads"): _set_head_dim,
    ("kv_heads", "must divide attention_heads"): _drop_field,
    ("experts_per_token", "must be <= experts"): _experts_per_token,
    ("dense_layers", "must be <= layers"): _drop_field,
    ("local_layers", "must be <= layers"): _drop_field,
    ("tensor_parallel", "must divide attention_heads"): _drop_field,
    ("pipeline_parallel", "must be <= layers"): _drop_field,
    ("tensor_parallel", "tensor_parallel x pipeline_parallel ({n}) exceeds hardware.count"): _drop_layout,
    ("count", "must be a multiple of tensor_parallel x pipeline_parallel"): _drop_field,
    ("context_length", "must be >= input_tokens + output_tokens"): _context,
    ("requests_per_day", "the peak of {rps:,.15g} requests/s held for"): _drop_field,
    ("context_length", "{ctx} exceeds the model's maximum context"): _context,
    ("sequence_length", "{seq} is far beyond the model's context"): _drop_field,
    ("global_batch_tokens", "must be >= micro_batch_size x sequence_length"): _drop_field,
    ("context_parallel", "sequence_length ("): _drop_field,
    ("optimizer_states", "int8 states need an 8-bit optimizer"): _drop_field,
    ("optimizer_states", "keeps its states in int8; remove optimizer_states"): _drop_field,
    ("double_quant", "only for method qlora"): _drop_field,
    ("expert_overlap", "only for mixture-of-experts models"): _drop_field,
    ("weights", "QLoRA keeps the frozen base weights in int4"): _drop_field,
    ("weights", "full training needs fp32/bf16/fp16 (or fp8) weights"): _drop_field,
    # serving mechanisms (issue 22; planner/engine/spec_mechanisms.py)
    ("expert_parallel", "must divide the model's experts"): _drop_field,
    ("expert_parallel", "must divide the GPUs of the group"): _drop_field,
    ("expert_parallel", "exceeds hardware.count"): _drop_field,
    ("expert_parallel", "only for mixture-of-experts models"): _drop_field,
    ("data_parallel_attention", "only for transformer models"): _drop_field,
    ("speculative", "has no multi-token-prediction layers"): _drop_field,
    ("accepted_tokens", "only with method mtp"): _drop_field,
    ("accepted_tokens", "must be at most"): _drop_field,  # 1 + the runtime's draft tokens (ATOM: 1)
    ("disaggregation", "the pools hold"): _drop_field,
    ("count", "required with serving.disaggregation"): _drop_disaggregation,
    ("tensor_parallel", "with serving.disaggregation each pool states its tensor_parallel"): _drop_layout,
    ("runtime", "runs on {vendor} GPUs only"): _drop_field,
    # an exact training layout (issue 24; planner/engine/spec_training_layout.py)
    ("global_batch_size", "must be a multiple of micro_batch_size x data_parallel"): _drop_field,
    ("global_batch_tokens", "must be a multiple of sequence_length x micro_batch_size x data_parallel"): _drop_field,
    ("expert_parallel", "expert parallelism splits the experts of a mixture-of-experts model"): _drop_field,
    ("expert_parallel", "must divide the {experts} experts"): _drop_field,
    ("expert_parallel", "pins an exact layout: give training.data_parallel too"): _drop_field,
    ("expert_parallel", "must divide data_parallel x context_parallel"): _drop_field,
    ("tensor_parallel", "classic_training runs data parallel only"): _drop_training_model_parallel,
    ("data_parallel", "tensor x pipeline x context x data parallel"): _drop_field,
    ("count", "must equal tensor_parallel x pipeline_parallel x context_parallel x data_parallel"): _drop_field,
    ("virtual_pipeline_stages", "interleaving needs pipeline_parallel > 1"): _drop_field,
    ("virtual_pipeline_stages", "model chunks need at least one layer each"): _drop_field,
    # a pinned accelerator that cannot hold the model within the pinned count (sizing_serving.check_pinned_fit:
    # a rule between the model, the precision and the hardware that no schema states)
    ("accelerator", "cannot hold the weights"): _drop_field,
}


@functools.cache
def _catalog():
    from planner.engine.catalog_csv import load_accelerators_csv  # noqa: PLC0415
    return load_accelerators_csv(Path(__file__).resolve().parents[1] / "catalog" / "data" / "accelerators.csv")


def _parse_and_check(spec: dict) -> None:
    from planner.engine.sizing_serving import check_pinned_fit  # noqa: PLC0415
    check_pinned_fit(parse_workload_spec(spec), _catalog())


def _rule(field: str, message):
    last = field.rsplit(".", 1)[-1]
    text = _template(message)
    for (name, part), action in CROSS_FIELD_RULES.items():
        if name == last and part in text:
            return action
    return None


def repair_spec(spec):
    """`spec` changed only as far as CROSS_FIELD_RULES need; unchanged when it breaks any
    other rule (or none)."""
    if not isinstance(spec, dict):
        return spec
    fixed = copy.deepcopy(spec)
    for _ in range(MAX_REPAIRS):
        try:
            _parse_and_check(fixed)
            return fixed
        except SpecValidationError as exc:
            actions = [(_rule(e.field, e.message), e.field.split(".")) for e in exc.errors]
        except (TypeError, ValueError, ArithmeticError):
            return spec
        if any(action is None for action, _ in actions):
            return spec  # a rule the schema states: let the server say so
        if not any(action(fixed, path) for action, path in actions):
            return spec
    return spec


def repair_costs(costs):
    """runs (a one-off job) and runs_per_month (a recurring one) exclude each other; as_of
    must be the plan's price date (today on the server), so it is left out (= that date)."""
    if not isinstance(costs, dict):
        return costs
    costs = {k: v for k, v in costs.items() if k != "as_of"}
    if costs.get("runs") is not None and costs.get("runs_per_month") is not None:
        costs = {k: v for k, v in costs.items() if k != "runs_per_month"}
    # the risk-adjusted basis needs the cost of an hour of downtime (its description says so; the
    # server refuses it without): without one, the basis is left out (= cheapest)
    overrides = costs.get("overrides") if isinstance(costs.get("overrides"), dict) else {}
    if costs.get("decision_basis") == "risk_adjusted" and costs.get("downtime_cost_per_hour") is None \
            and "downtime_cost_per_hour" not in overrides:
        costs = {k: v for k, v in costs.items() if k != "decision_basis"}
    return costs


def repair_expiry(value):
    """An expiry must lie in the future (checked against the server's clock)."""
    if not isinstance(value, str):
        return value
    try:
        when = dt.datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return value
    if when.tzinfo is None:
        when = when.replace(tzinfo=dt.UTC)
    now = dt.datetime.now(dt.UTC)
    if when <= now + dt.timedelta(minutes=1):
        return (now + EXPIRY_MARGIN).replace(microsecond=0).isoformat()
    return value


def repair_quote(body: dict) -> dict:
    """A whole server needs its GPU count, and a quote cannot expire before its date (both
    SupplierQuoteForm.clean): a server without gpus_per_server becomes a per-GPU quote, and
    dates in the wrong order are swapped."""
    out = dict(body)
    if out.get("item_kind") == "server" and not out.get("gpus_per_server"):
        out["item_kind"] = "accelerator"
    start, end = out.get("quote_date"), out.get("valid_until")
    if isinstance(start, str) and isinstance(end, str) and end < start:  # ISO dates sort as text
        out["quote_date"], out["valid_until"] = end, start
    return out


_resolver_cache = []


def _resolver():
    """The catalog the server validates runs against (same DATABASE_URL, exported by the script)."""
    if not _resolver_cache:
        import django

        os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
        django.setup()
        from planner.calibration.services import catalog_resolver

        _resolver_cache.append(catalog_resolver())
    return _resolver_cache[0]


def _supported_precision(run: dict, _field: str, _message: str) -> bool:
    from planner.calibration.fit import compute_precision
    from planner.engine.precision import PRECISIONS, peak_tflops

    acc = _resolver().accelerator(run["accelerator"])
    for precision in PRECISIONS:
        if peak_tflops(acc, compute_precision(precision))[0]:
            run["precision"] = precision
            return True
    return False


def _drop_run_fields(*names: str):
    def action(run: dict, _field: str, _message: str) -> bool:
        return bool([run.pop(n) for n in names if n in run])
    return action


def _set_run_field(name: str, value):
    def action(run: dict, _field: str, _message: str) -> bool:
        changed = run.get(name) != value
        run[name] = value
        return changed
    return action


def _short_prompt(run: dict, _field: str, _message: str) -> bool:
    """Input + output beyond the model's context: a prompt and answer every preset's context holds."""
    changed = (run.get("input_tokens"), run.get("output_tokens")) != (1024, 128)
    run["input_tokens"], run["output_tokens"] = 1024, 128
    return changed


def _tokens_per_s(run: dict) -> float | None:
    if run.get("tokens_per_s"):
        return float(run["tokens_per_s"])
    try:
        return float(run["global_batch_size"]) * float(run["sequence_length"]) / float(run["step_time_s"])
    except (KeyError, TypeError, ValueError, ZeroDivisionError):
        return None


def _speed_at(mfu_target: float):
    """A training speed beyond the chip's peak, or below the plausible floor: the speed that gives
    `mfu_target` (the parser's message says the implied MFU), the step time left out."""
    def action(run: dict, _field: str, message: str) -> bool:
        implied = re.search(r"implies ([0-9.e+-]+|inf|nan)(%?) of", message)
        tokens = _tokens_per_s(run)
        if not implied or not tokens:
            return False
        mfu = float(implied.group(1)) / (100 if implied.group(2) else 1)
        run.pop("step_time_s", None)
        # An MFU that under- or overflowed cannot be scaled: 1 token/s first, scaled on the next pass.
        scalable = mfu > 0 and math.isfinite(mfu) and math.isfinite(tokens)
        run["tokens_per_s"] = min(1e12, max(1e-6, tokens * mfu_target / mfu)) if scalable else 1.0
        return True
    return action


# (field, text in the parser's message) -> repair, for the rules between a run's fields (or
# against the chip) that planner.calibration.formats checks after the schema; docs/API.md.
RUN_RULES = {
    ("tensor_parallel", "does not divide the"): _drop_run_fields("tensor_parallel", "pipeline_parallel"),
    ("precision", "has no known"): _supported_precision,
    ("tpot_mean_ms", "is below the"): _set_run_field("tpot_mean_ms", 60_000),
    ("ttft_mean_ms", "is below the"): _set_run_field("ttft_mean_ms", 3_600_000),
    ("input_tokens", "exceed the model's maximum context"): _short_prompt,
    ("output_tokens_per_s", "is more than"): _drop_run_fields("output_tokens_per_s"),
    ("measured_on", "is not a plausible measurement date"): _drop_run_fields("measured_on"),
    ("data_parallel", "tensor x pipeline x data parallel"): _drop_run_fields("data_parallel"),
    ("step_time_s", "global batch x sequence length / step time"): _drop_run_fields("step_time_s"),
    ("tokens_per_s", "more than the chip can do"): _speed_at(0.4),
    ("step_time_s", "more than the chip can do"): _speed_at(0.4),
    ("tokens_per_s", "no real run is that slow"): _speed_at(0.4),
    ("step_time_s", "no real run is that slow"): _speed_at(0.4),
    ("wall_clock_hours", "tokens at the measured speed"): _drop_run_fields("total_tokens"),
    ("gpu_hours", "tokens at the measured speed"): _drop_run_fields("total_tokens"),
}


def repair_run(kind, run):
    """`run` changed only as far as RUN_RULES need (asking the server's own parser which rule
    it breaks); unchanged when it breaks any other rule, so the server's 400 shows up."""
    if not isinstance(run, dict) or kind not in ("serving", "training"):
        return run
    from planner.calibration.formats import clean_serving, clean_training

    clean = clean_serving if kind == "serving" else clean_training
    fixed = copy.deepcopy(run)
    for _ in range(MAX_REPAIRS):
        errors = []
        try:
            if clean(dict(fixed), line=None, resolver=_resolver(), errors=errors) is not None:
                return fixed
        except (TypeError, ValueError, ArithmeticError):
            return run
        actions = []
        for error in errors:
            action = next((a for (name, part), a in RUN_RULES.items()
                           if name == error.field and part in error.message), None)
            if action is None:
                return run  # a rule the schema states: let the server say so
            actions.append((action, error))
        if not any(action(fixed, error.field, error.message) for action, error in actions):
            return run
    return run


def repair_body(body):
    if not isinstance(body, dict):
        return body
    out = dict(body)
    # a name of blanks is refused like an empty one (DRF trims it; minLength cannot say so)
    if isinstance(out.get("name"), str) and not out["name"].strip():
        out["name"] = "plan"
    if "quote_date" in out or "item_kind" in out:
        out = repair_quote(out)
    if "run" in out and "kind" in out:
        out["run"] = repair_run(out["kind"], out["run"])
    if "spec" in out:
        out["spec"] = repair_spec(out["spec"])
    if "costs" in out:
        out["costs"] = repair_costs(out["costs"])
    if "expires_at" in out:
        out["expires_at"] = repair_expiry(out["expires_at"])
    return out


@schemathesis.hook
def map_case(context, case):
    meta = case.meta
    if meta is None or not meta.generation.mode.is_positive:
        return case
    body = case.body
    if isinstance(body, dict):
        case.body = repair_body(body)
    return case

