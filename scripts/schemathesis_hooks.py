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

import copy
import datetime as dt
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import schemathesis  # noqa: E402

from planner.api.input_schema import HF_KEYS  # noqa: E402
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
}


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
            parse_workload_spec(fixed)
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


def repair_body(body):
    if not isinstance(body, dict):
        return body
    out = dict(body)
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

