"""The OpenAPI schemas of the WorkloadSpec and the cost options (planner/api/input_schema.py)
say what the engines' parsers accept: the same fields, the same bounds (probed on both sides
against the parser), the documented examples valid under both."""

from __future__ import annotations

import copy

import jsonschema
import pytest

from costs.engine.errors import CostValidationError
from costs.engine.options import KNOWN_KEYS, parse_cost_options
from costs.engine.rates import RATE_SCHEMA
from planner.api import input_schema as IS
from planner.api.body_schema import validator_schema
from planner.api.input_schema_costs import cost_options_schema
from planner.api.input_schema_model import _architecture
from planner.api.schema import SPEC_EXAMPLES
from planner.engine import spec as S
from planner.engine.errors import SpecValidationError
from tests.conftest import schemathesis_hooks


def _validator(kind: str):
    return jsonschema.Draft4Validator(validator_schema(IS.workload_spec_schema(kind)))


def _errors(spec: dict) -> list[str]:
    try:
        S.parse_workload_spec(spec)
    except SpecValidationError as exc:
        return [e.field for e in exc.errors]
    return []


@pytest.mark.parametrize("kind", S.KINDS)
def test_schema_matches_the_fields_the_parser_reads(kind):
    props = IS.workload_spec_schema(kind)["properties"]
    top = {"kind", "name", "description", "model", "precision", "data", "hardware"}
    sections = {"training": kind in ("pretraining", "finetuning", "classic_training"),
                "serving": kind in ("inference", "rag", "external_api"),
                "rag": kind in ("rag", "external_api")}
    assert set(props) == top | {k for k, used in sections.items() if used}
    if "training" in props:
        fields = set(S.TrainingSpec.__dataclass_fields__)
        if kind != "finetuning":
            fields.discard("double_quant")  # only for qlora
        assert set(props["training"]["properties"]) == fields
    if "serving" in props:
        assert set(props["serving"]["properties"]) == set(S.ServingSpec.__dataclass_fields__)
    if "rag" in props:
        assert set(props["rag"]["properties"]) == set(S.RagSpec.__dataclass_fields__)
    assert set(props["data"]["properties"]) == set(S.DataSpec.__dataclass_fields__)
    hardware = set(S.HardwareSpec.__dataclass_fields__)
    if kind not in ("inference", "rag"):
        hardware -= {"tensor_parallel", "pipeline_parallel", "expert_parallel", "data_parallel_attention"}  # serving only
    assert set(props["hardware"]["properties"]) == hardware
    assert set(props["precision"]["properties"]) == set(S.PrecisionSpec.__dataclass_fields__)
    for branch in props["model"]["oneOf"]:
        if "architecture" in branch["properties"]:
            for arch in branch["properties"]["architecture"]["oneOf"]:
                assert set(arch["properties"]) == set(S.ARCH_FIELDS) | {"name"}


def test_cost_schema_matches_the_fields_the_parser_reads():
    props = cost_options_schema()["properties"]
    assert set(props) == KNOWN_KEYS
    assert set(props["overrides"]["properties"]) == set(RATE_SCHEMA)


@pytest.mark.parametrize("kind", S.KINDS)
def test_documented_examples_are_valid_under_both(kind):
    assert _errors(SPEC_EXAMPLES[kind]) == []
    _validator(kind).validate(SPEC_EXAMPLES[kind])


BASE = {"training": "pretraining", "serving": "inference", "rag": "rag", "data": "inference",
        "hardware": "inference"}


def _numeric_fields(kind: str, section: str):
    schema = IS.workload_spec_schema(kind)["properties"][section]["properties"]
    for name, prop in schema.items():
        if prop.get("type") in ("integer", "number"):
            yield name, prop


CASES = [(section, name, prop) for section, kind in BASE.items() for name, prop in _numeric_fields(kind, section)]


def _probe(section: str, name: str, value):
    kind = BASE[section]
    spec = copy.deepcopy(SPEC_EXAMPLES[kind])
    if section == "training" and name == "dataset_samples":
        spec = copy.deepcopy(SPEC_EXAMPLES["classic_training"])
    spec.setdefault(section, {})[name] = value
    for key in ("context_length", "input_tokens", "output_tokens", "sequence_length"):
        if section in ("serving", "training") and name != key:
            spec[section].pop(key, None)  # keep cross-field rules out of the probe
    if section == "serving" and name in ("input_tokens", "output_tokens", "context_length"):
        spec["model"] = {"architecture": {"layers": 2, "hidden_size": 64, "attention_heads": 4, "vocab_size": 100,
                                          "ffn_hidden_size": 128}}
        if name == "context_length":
            spec[section].update(input_tokens=1, output_tokens=1)
    if section == "training" and name == "sequence_length":
        spec["model"] = {"architecture": {"layers": 2, "hidden_size": 64, "attention_heads": 4, "vocab_size": 100,
                                          "ffn_hidden_size": 128}}
        spec[section]["global_batch_tokens"] = None
    if section == "training" and name == "tensor_parallel":  # a model whose heads the bound divides
        spec["model"] = {"architecture": {"layers": 256, "hidden_size": 4096, "attention_heads": 64,
                                          "vocab_size": 100, "ffn_hidden_size": 128}}
    if section == "training" and name == "pipeline_parallel":
        spec["model"] = {"architecture": {"layers": 256, "hidden_size": 64, "attention_heads": 4, "vocab_size": 100,
                                          "ffn_hidden_size": 128}}
    if section == "training" and name == "global_batch_tokens":
        spec[section].update(sequence_length=1, micro_batch_size=1)
    if section == "hardware" and name in ("tensor_parallel", "pipeline_parallel"):
        spec["model"] = {"architecture": {"layers": 256, "hidden_size": 4096, "attention_heads": 64,
                                          "vocab_size": 100, "ffn_hidden_size": 128}}
    if section == "hardware" and name == "expert_parallel":  # an MoE whose experts the bound divides
        spec["model"] = {"architecture": {"layers": 2, "hidden_size": 64, "attention_heads": 4, "vocab_size": 100,
                                          "ffn_hidden_size": 128, "experts": 1024, "experts_per_token": 2,
                                          "moe_ffn_hidden_size": 64}}
        for key in ("count", "tensor_parallel"):
            spec[section].pop(key, None)
    if section == "training" and name == "context_parallel":
        spec[section]["sequence_length"] = 4096
    if section == "training" and name == "expert_parallel":  # an MoE model whose experts the bound divides
        spec["model"] = {"architecture": {"layers": 2, "hidden_size": 64, "attention_heads": 4, "vocab_size": 100,
                                          "ffn_hidden_size": 128, "experts": 1024, "experts_per_token": 2}}
        spec[section]["data_parallel"] = 1024
    return [f for f in _errors(spec) if f == f"{section}.{name}"]


@pytest.mark.parametrize(("section", "name", "prop"), CASES, ids=[f"{s}.{n}" for s, n, _ in CASES])
def test_numeric_bounds_are_the_parsers(section, name, prop):
    step = 1 if prop["type"] == "integer" else 1e-6
    if "maximum" in prop:
        assert _probe(section, name, prop["maximum"]) == [], "the schema's maximum is accepted"
        beyond = prop["maximum"] + max(step, abs(prop["maximum"]) * 1e-6)
        assert _probe(section, name, int(beyond) if prop["type"] == "integer" else beyond), "beyond is refused"
    if "minimum" in prop:
        if prop.get("exclusiveMinimum"):
            assert _probe(section, name, prop["minimum"]), "the exclusive minimum is refused"
            assert _probe(section, name, prop["minimum"] + step) == []
        else:
            assert _probe(section, name, prop["minimum"]) == []
            assert _probe(section, name, prop["minimum"] - step), "below the minimum is refused"


def test_architecture_bounds_come_from_the_parsers_table():
    arch = _architecture("llm")["oneOf"][0]["properties"]
    for key, (lo, hi, _req) in S.ARCH_INT_BOUNDS.items():
        assert (arch[key]["minimum"], arch[key]["maximum"]) == (lo, hi)


def test_hooks_repair_only_the_documented_cross_field_rules():
    hooks = schemathesis_hooks()
    arch = {"layers": 4, "hidden_size": 100, "attention_heads": 3, "vocab_size": 10, "ffn_hidden_size": 8,
            "kv_heads": 2, "experts": 2, "experts_per_token": 5, "moe_ffn_hidden_size": 8, "dense_layers": 9}
    spec = {"kind": "inference", "model": {"architecture": arch},
            "serving": {"input_tokens": 100, "output_tokens": 100, "context_length": 50}}
    for_schema = _validator("inference")
    for_schema.validate(spec)  # schema-valid, yet the parser refuses it on cross-field rules
    assert _errors(spec)
    fixed = hooks.repair_spec(spec)
    assert _errors(fixed) == []
    for_schema.validate(fixed)
    # A single-field error the schema states is left for the server to refuse.
    bad = {**spec, "serving": {"input_tokens": 0}}
    assert hooks.repair_spec(bad) is bad


def test_hooks_move_a_past_expiry_into_the_future():
    hooks = schemathesis_hooks()
    assert hooks.repair_expiry("2000-01-01T00:00:00Z") > "2026"
    assert hooks.repair_expiry("2999-01-01T00:00:00Z") == "2999-01-01T00:00:00Z"
    assert hooks.repair_costs({"runs": 2, "runs_per_month": 1, "as_of": "2000-01-01"}) == {"runs": 2}


def test_hooks_keep_the_risk_adjusted_basis_only_with_a_downtime_cost():
    """The rule the decision_basis description states and the parser enforces (found by schemathesis:
    risk_adjusted without a downtime cost is refused with a 400)."""
    from costs.engine.errors import CostValidationError
    from costs.engine.options import parse_cost_options

    hooks = schemathesis_hooks()
    with pytest.raises(CostValidationError):
        parse_cost_options({"decision_basis": "risk_adjusted"})
    assert hooks.repair_costs({"decision_basis": "risk_adjusted", "vat_recoverable": False}) == {
        "vat_recoverable": False}
    kept = {"decision_basis": "risk_adjusted", "downtime_cost_per_hour": 1000}
    assert hooks.repair_costs(kept) == kept
    parse_cost_options(kept)
    via_override = {"decision_basis": "risk_adjusted", "overrides": {"downtime_cost_per_hour": 10}}
    assert hooks.repair_costs(via_override) == via_override
    parse_cost_options(via_override)


def test_cost_bounds_are_the_parsers():
    props = cost_options_schema()["properties"]
    for name, prop in props.items():
        if prop.get("type") not in ("integer", "number") or "maximum" not in prop:
            continue
        if prop.get("exclusiveMaximum"):
            with pytest.raises(CostValidationError):
                parse_cost_options({name: prop["maximum"]})
            parse_cost_options({name: prop["maximum"] - 1e-6})
            continue
        parse_cost_options({name: prop["maximum"]})
        step = 1 if prop["type"] == "integer" else max(1e-6, abs(prop["maximum"]) * 1e-9)
        with pytest.raises(CostValidationError):
            parse_cost_options({name: prop["maximum"] + step})


@pytest.mark.parametrize("model_type", ["vision", "other"])
def test_classic_training_by_hand_needs_its_flops_per_sample(model_type):
    """A hand-given vision architecture without FLOPs per sample crashed the sizing (3 x FLOPs x samples on None);
    now both the schema and the parser refuse it on that field, and stating it makes the spec valid."""
    arch = {"model_type": model_type, "params": 25_000_000}
    spec = {"kind": "classic_training", "model": {"architecture": arch},
            "training": {"dataset_samples": 1_000_000, "epochs": 10}}
    assert _errors(spec) == ["model.architecture.flops_per_sample"]
    assert list(_validator("classic_training").iter_errors(spec))
    good = copy.deepcopy(spec)
    good["model"]["architecture"]["flops_per_sample"] = 8e9
    assert _errors(good) == []
    _validator("classic_training").validate(good)
