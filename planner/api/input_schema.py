"""JSON Schemas of the WorkloadSpec and the cost options for the OpenAPI document.

The engines' parsers (planner.engine.spec.parse_workload_spec, costs.engine.options.
parse_cost_options) are the validators; these schemas say the same thing for clients and for
schemathesis, built from the parsers' own constants (kinds, enums, the architecture bound
table, presets, rate names). tests/unit/test_input_schema.py keeps them honest: every field a
parser reads is in the schema and vice versa, every numeric bound is probed on both sides
against the parser, and schema-valid samples are accepted.

Two conventions follow the parsers exactly:
- an optional field may be `null` (the parsers treat null as "not given"); a required one not;
- what a JSON Schema cannot state (one field against another: `kv_heads` dividing
  `attention_heads`, `context_length >= input_tokens + output_tokens`, ...) is left to the
  parser's 400; docs/API.md lists those rules ("Rules the schema cannot state").
"""

from __future__ import annotations

from planner.engine import spec as S
from planner.engine.precision import PRECISIONS
from planner.engine.presets import preset_arch
from planner.engine.serving_constants import RUNTIMES
from planner.engine.serving_moe import MTP_DRAFT_TOKENS
from planner.engine.spec_mechanisms import SPECULATIVE

from .input_schema_costs import cost_options_schema
from .input_schema_model import _model, _presets
from .input_schema_parts import MODEL_API_PATTERN, _bool, _enum, _int, _not_null, _num, _obj, _text

DESCRIPTION_MAX = 2000


# --- WorkloadSpec ----------------------------------------------------------------------


def _precision() -> dict:
    return _obj({k: _enum(PRECISIONS) for k in ("weights", "compute", "kv_cache")})


def _training(kind: str) -> dict:
    methods = S.METHODS if kind == "finetuning" else ("full",)
    props = {
        "tokens": _num(1, S.MAX_TOKENS, description="Dataset tokens (times epochs when epochs is given)."),
        "epochs": _num(0, 10_000, exclusive_min=True),
        "sequence_length": _int(1, S.MAX_SEQ),
        "global_batch_tokens": _int(1, 10**9),
        "micro_batch_size": _int(1, 4096),
        "method": _enum(methods),
        "lora_rank": _int(1, 4096),
        "lora_targets": {"nullable": True, "oneOf": [
            {"type": "array", "minItems": 1, "items": {"type": "string", "enum": list(S.LORA_TARGETS)}},
            {"type": "string", "enum": ["all", "attention", *S.LORA_TARGETS]},
        ]},
        "optimizer": _enum(S.OPTIMIZERS),
        "optimizer_states": _enum(S.STATE_PRECISIONS),
        "master_weights": _enum(S.MASTER_WEIGHTS),
        "adapter_precision": _enum(S.ADAPTER_PRECISIONS),
        "double_quant": {**_bool(), "description": "method qlora only."},
        "expert_overlap": {**_bool(), "description": "mixture-of-experts models only: the expert-parallel "
                                                     "all-to-all overlapped with compute."},
        "context_parallel": {"type": "integer", "enum": [*S.CONTEXT_PARALLEL, None], "nullable": True},
        "goodput": _num(S.MIN_GOODPUT, 1),
        "zero_stage": _int(0, 3),
        "activation_checkpointing": _enum(S.CHECKPOINTING),
        "attention": _enum(S.ATTENTION_IMPLEMENTATIONS),
        "sequence_parallel": _bool(),
        "tensor_parallel": _int(1, 64),
        "pipeline_parallel": _int(1, 256),
        "virtual_pipeline_stages": _int(1, 64),
        "data_parallel": {**_int(1, 65536), "description": "Pins the exact layout: the plan evaluates tensor x "
                          "pipeline x context x data parallel GPUs (hardware.count, when given, must equal it)."},
        "expert_parallel": {**_int(1, 1024), "description": "Mixture-of-experts models, with data_parallel: must "
                            "divide the experts and data_parallel x context_parallel."},
        "deadline_hours": _num(0, 100_000, exclusive_min=True),
        "checkpoint_every_hours": _num(S.MIN_CHECKPOINT_EVERY_HOURS, 10_000),
        "checkpoints_kept": _int(1, 1000),
        "dataset_samples": _int(1, 10**13),
        "global_batch_size": _int(1, 10**7),
    }
    required = ["dataset_samples"] if kind == "classic_training" else ["tokens"]
    for key in required:
        props[key] = _not_null(props[key])
    if kind != "finetuning":
        props.pop("double_quant")  # only for qlora, which only fine-tuning has
    if kind == "classic_training":
        props["context_parallel"] = {"type": "integer", "enum": [1, None], "nullable": True}
    return _obj(props, required=required, nullable=False)


def _serving() -> dict:
    return _obj({
        "input_tokens": _int(1, S.MAX_SEQ),
        "output_tokens": _int(1, S.MAX_SEQ),
        # >= input_tokens + output_tokens (each >= 1), so never below 2
        "context_length": _int(2, S.MAX_SEQ, description=">= input_tokens + output_tokens; default their sum."),
        "concurrency": _int(1, 1_000_000),
        "requests_per_second": _num(0, 1_000_000),
        "ttft_p95_ms": _num(0, 3_600_000, exclusive_min=True),
        "tpot_p95_ms": _num(0, 600_000, exclusive_min=True),
        "hours_per_day": _num(S.MIN_HOURS_PER_DAY, 24),
        "runtime": _enum(RUNTIMES),
        "requests_per_day": _num(0, exclusive_min=True, description=(
            "Volume: requests a day, priced for model-API tokens, egress and the useful share "
            "(requests_per_second is the peak that sizes capacity). At most requests_per_second x 3600 x "
            "hours_per_day. Default: that maximum x 0.3 (average-to-peak ratio).")),
        "model_api": _model_api(),
        "speculative": {"nullable": True, "description": (
            "Speculative decoding: \"none\" or \"mtp\" (the checkpoint's multi-token-prediction layers; "
            "models without them are refused); an object adds accepted_tokens per decode step at the engine's "
            "reference draft count (3; vLLM 2; ATOM 1), carried to the drafts the launch runs. Not given: the "
            "serving search tries MTP where the model has MTP layers and the runtime runs it."),
            "oneOf": [_not_null(_enum(SPECULATIVE)), _obj({
                "method": _enum(SPECULATIVE), "accepted_tokens": _num(1, 1 + MTP_DRAFT_TOKENS)}, nullable=False)]},
        "disaggregation": _obj({"prefill": _not_null(_pool()), "decode": _not_null(_pool())},
                               required=("prefill", "decode"), description=(
            "Prefill and decode on separate pools; hardware.count must equal both pools' GPUs "
            "(workers x tensor_parallel).")),
    })


def _pool() -> dict:
    return _obj({"workers": _int(1, 4096), "tensor_parallel": _int(1, 1024), "expert_parallel": _int(1, 1024),
                 "data_parallel_attention": _bool()})


def _model_api() -> dict:
    # planner.api.schema adds the enum of the model APIs the catalog prices today (a database read).
    one = {"type": "string", "maxLength": 200, "pattern": MODEL_API_PATTERN,
           "example": "OpenAI/gpt-4o-mini"}
    return {
        "nullable": True,
        "oneOf": [one, {"type": "array", "items": one, "maxItems": S.MAX_MODEL_APIS}],
        "description": "The model API(s) an agent calls, \"provider/model\" as the catalog prices it "
                       "(GET the catalog's API prices; the enum is the catalog of the day); several are "
                       "compared. Omitted: every priced model API is compared and the plan names the "
                       "cheapest. Not priced: a field error.",
    }


ENCODER_PRESETS = _presets(("encoder",))
# chunk_tokens may not exceed the embedding model's input limit: the largest any encoder preset has.
CHUNK_TOKENS_MAX = max(preset_arch(p).max_position_embeddings for p in ENCODER_PRESETS)


def _rag(*, required: bool) -> dict:
    embedding = _enum(ENCODER_PRESETS)
    schema = _obj({
        "documents": _not_null(_int(1, 10**11)),
        "tokens_per_document": _int(1, 10**8),
        "chunk_tokens": _int(16, min(32768, CHUNK_TOKENS_MAX)),
        "embedding_model": {"nullable": True, "oneOf": [
            _not_null(embedding),
            {"type": "object", "required": ["preset"], "properties": {"preset": _not_null(embedding)}},
        ]},
        "embedding_dimension": _int(1, 65536),
        "index": _enum(S.INDEXES),
        "queries_per_second": _num(0, 1_000_000),
        "top_k": _int(1, 1000),
        "generator": _enum(S.GENERATORS),
    }, required=["documents"], nullable=not required)
    return schema


def _data() -> dict:
    return _obj({
        "dataset_gb": _num(0, 1e9), "growth_gb_per_month": _num(0, 1e8), "logs_gb_per_month": _num(0, 1e8),
        "retention_months": _int(1, 600),
    })


def _hardware(kind: str) -> dict:
    props = {
        "accelerator": {**_text(), "description": "A catalog accelerator id or unambiguous name."},
        "count": _int(1, 65536),
        "mfu": _num(0, 1, exclusive_min=True),
        "gpus_per_server": _int(1, 16),
        "power_budget_kw": _num(0, 1e6, exclusive_min=True, description="IT power (kW) the site can give the "
                                "servers at full load; owned options must fit in it."),
        "racks": _int(1, 100000),
    }
    if kind in ("inference", "rag"):  # serving layouts; training takes training.tensor_parallel
        props["tensor_parallel"] = _int(1, 64)
        props["pipeline_parallel"] = _int(1, 256)
        props["expert_parallel"] = _int(1, 1024, description=(
            "Mixture-of-experts models: experts split over this many GPUs of the tensor-parallel group; "
            "must divide the model's experts and the GPUs. Not given: the whole tensor-parallel group where "
            "the runtime runs expert parallel."))
        props["data_parallel_attention"] = {**_bool(), "description": (
            "Attention replicated per GPU, the batch and KV cache split across them; MoE tokens exchanged "
            "by all-to-all instead of all-reduce. Not given: the serving search tries both for a "
            "mixture-of-experts model where the runtime runs it.")}
    return _obj(props)


def workload_spec_schema(kind: str, *, external_generator: bool = False) -> dict:
    """One complete alternative of WorkloadSpec. kind rag has two, told apart by rag.generator:
    a self-hosted generator needs the model; an external-API generator may leave it out. Two
    whole schemas rather than an anyOf of constraint-only branches, so client generators keep
    the model typed (issue 23 part 5)."""
    group = {"classic_training": "classic", "external_api": "any"}.get(kind, "llm")
    props: dict = {
        "kind": {"type": "string", "enum": [kind]},
        "name": _text(),
        "description": _text(DESCRIPTION_MAX),
        "precision": _precision(),
        "data": _data(),
        "hardware": _hardware(kind),
    }
    required = ["kind"]
    if kind != "external_api":
        props["model"] = _model(group)
        required.append("model")
    else:
        props["model"] = {**_model(group), "nullable": True}
    if kind in ("pretraining", "finetuning", "classic_training"):
        props["training"] = _training(kind)
        required.append("training")
    if kind in ("inference", "rag", "external_api"):
        props["serving"] = _serving()
    if kind in ("rag", "external_api"):
        props["rag"] = _rag(required=kind == "rag")
    if kind == "rag":
        required.append("rag")
        generators = [g for g in S.GENERATORS if (g == "external_api") == external_generator]
        rag = props["rag"]
        if external_generator:  # the answers come from a paid API: no model to size
            required.remove("model")
            props["model"] = {**props["model"], "nullable": True}
            props["rag"] = {**rag, "required": [*rag["required"], "generator"],
                            "properties": {**rag["properties"], "generator": {"type": "string", "enum": generators}}}
        else:
            props["rag"] = {**rag, "properties": {**rag["properties"],
                                                   "generator": {"type": "string", "enum": [*generators, None],
                                                                 "nullable": True}}}
    return _obj(props, required=required, nullable=False)


def workload_spec_component() -> dict:
    return {
        "oneOf": [{"$ref": f"#/components/schemas/{name}"} for name in WORKLOAD_SPEC_VARIANTS],
        "description": "A WorkloadSpec (docs/WORKLOADSPEC.md); `kind` selects the sections it takes "
                       "(kind rag: WorkloadSpec_rag with a self-hosted generator and its model, or "
                       "WorkloadSpec_rag_external_generator with rag.generator external_api).",
    }


# component name -> (kind, external_generator)
WORKLOAD_SPEC_VARIANTS = {
    **{f"WorkloadSpec_{kind}": (kind, False) for kind in S.KINDS},
    "WorkloadSpec_rag_external_generator": ("rag", True),
}


def input_components() -> dict:
    out = {name: workload_spec_schema(kind, external_generator=ext)
           for name, (kind, ext) in WORKLOAD_SPEC_VARIANTS.items()}
    out["WorkloadSpec"] = workload_spec_component()
    out["CostOptions"] = cost_options_schema()
    return out
