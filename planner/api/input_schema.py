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

from costs.engine.inputs import DECISION_BASES, OPTION_KINDS, REDUNDANCY
from costs.engine.money import CURRENCIES
from costs.engine.options import (
    ISO_COUNTRIES,
    MAX_HORIZON_MONTHS,
    MAX_MAGNITUDE,
    MAX_SAMPLES,
    MIN_SAMPLES,
    SUPPORT_KINDS,
    SUPPORT_PER,
    SUPPORT_SCALE,
)
from costs.engine.rates import RATE_SCHEMA
from planner.engine import spec as S
from planner.engine.architecture import MODEL_TYPES
from planner.engine.precision import PRECISIONS
from planner.engine.presets import get_preset, hf_id_aliases, preset_arch, preset_ids
from planner.engine.serving_constants import RUNTIMES
from planner.engine.serving_moe import MTP_DRAFT_TOKENS
from planner.engine.spec_mechanisms import SPECULATIVE

NAME_MAX = 200  # _Reader.text default
DESCRIPTION_MAX = 2000


# --- helpers ---------------------------------------------------------------------------


def _num(lo=None, hi=None, *, integer=False, exclusive_min=False, nullable=True, description=None) -> dict:
    out: dict = {"type": "integer" if integer else "number"}
    if lo is not None:
        out["minimum"] = lo
        if exclusive_min:
            out["exclusiveMinimum"] = True
    if hi is not None:
        out["maximum"] = hi
    if nullable:
        out["nullable"] = True
    if description:
        out["description"] = description
    return out


def _int(lo=None, hi=None, **kw) -> dict:
    return _num(lo, hi, integer=True, **kw)


def _enum(values, *, nullable=True, description=None) -> dict:
    out: dict = {"type": "string", "enum": list(values)}
    if nullable:
        out["nullable"] = True
        out["enum"] = [*values, None]
    if description:
        out["description"] = description
    return out


def _text(max_length=NAME_MAX, *, nullable=True) -> dict:
    out: dict = {"type": "string", "maxLength": max_length}
    if nullable:
        out["nullable"] = True
    return out


def _bool(*, nullable=True) -> dict:
    out: dict = {"type": "boolean"}
    if nullable:
        out["nullable"] = True
    return out


def _obj(properties: dict, *, required=(), nullable=True, description=None, extra: dict | None = None) -> dict:
    out: dict = {"type": "object", "properties": properties, "additionalProperties": False}
    if required:
        out["required"] = list(required)
    if nullable:
        out["nullable"] = True
    if description:
        out["description"] = description
    if extra:
        out.update(extra)
    return out


_NOT_NULL = {"not": {"enum": [None]}}


def _not_null(schema: dict) -> dict:
    out = {k: v for k, v in schema.items() if k != "nullable"}
    if "enum" in out:
        out["enum"] = [v for v in out["enum"] if v is not None]
    return out


# --- WorkloadSpec ----------------------------------------------------------------------

ARCH_BOOLEANS = ("gated_ffn", "tied_embeddings", "attention_bias", "qk_norm")
ARCH_FLOAT = {  # _read_architecture: params/active_params whole numbers, flops_per_sample > 0
    "params": _int(1, S.MAX_PARAMS),
    "active_params": _int(1, S.MAX_PARAMS),
    "flops_per_sample": _num(0, 1e18, exclusive_min=True, description="Forward+backward FLOPs per sample "
                             "(classic_training)."),
}
TRANSFORMER_REQUIRED = tuple(k for k, (_, _, req) in S.ARCH_INT_BOUNDS.items() if req)


def _arch_properties(model_types, *, transformer: bool = True) -> dict:
    props: dict = {"model_type": _enum(model_types), **ARCH_FLOAT}
    # Without a transformer only params, active_params and flops_per_sample are read; the
    # other fields are allowed and ignored.
    for key, (lo, hi, _req) in S.ARCH_INT_BOUNDS.items():
        props[key] = _int(lo, hi) if transformer else {}
    for key in ARCH_BOOLEANS:
        props[key] = _bool() if transformer else {}
    props["name"] = {"description": "Not read: name the model with `model.name`."}
    return props


def _architecture(group: str) -> dict:
    """`architecture` as _read_architecture reads it. A transformer (decoder/encoder; the
    default when `layers` is given) needs layers, hidden_size, attention_heads, vocab_size and
    an FFN width (`ffn_hidden_size`, or `moe_ffn_hidden_size` for an MoE); anything else needs
    `params`. Sizing an LLM kind refuses a vision model; classic_training needs
    `flops_per_sample` unless the model is a vision model."""
    transformer = _obj(
        _arch_properties(("decoder", "encoder")), nullable=False,
        required=TRANSFORMER_REQUIRED + (("flops_per_sample",) if group == "classic" else ()),
        extra={"allOf": [
            {"anyOf": [  # an FFN width: ffn_hidden_size, or moe_ffn_hidden_size for an MoE
                {"required": ["ffn_hidden_size"], "properties": {"ffn_hidden_size": _NOT_NULL}},
                {"required": ["moe_ffn_hidden_size", "experts"],
                 "properties": {"moe_ffn_hidden_size": _NOT_NULL, "experts": {"minimum": 1, **_NOT_NULL}}},
            ]},
            {"anyOf": [  # an MoE (experts >= 1) routes each token to experts_per_token >= 1 experts
                {"not": {"required": ["experts"], "properties": {"experts": {"minimum": 1, **_NOT_NULL}}}},
                {"required": ["experts_per_token"], "properties": {"experts_per_token": {"minimum": 1, **_NOT_NULL}}},
            ]},
        ]},
    )
    for key in TRANSFORMER_REQUIRED:
        transformer["properties"][key] = _not_null(transformer["properties"][key])
    if group == "classic":
        transformer["properties"]["flops_per_sample"] = _not_null(transformer["properties"]["flops_per_sample"])
    # Not a transformer: model_type vision/other, or no model_type and no layers ("other").
    given = lambda key: {"required": [key], "properties": {key: _NOT_NULL}}  # noqa: E731
    untyped = {"not": {"anyOf": [given("layers"), given("model_type")]}}
    other_types = ("other",) if group == "llm" else ("vision", "other")
    branches = []
    for mt in other_types:
        required = ["params"] + (["flops_per_sample"] if group == "classic" and mt == "other" else [])
        b = _obj(_arch_properties(MODEL_TYPES, transformer=False), nullable=False, required=required,
                 extra={"anyOf": [{"required": ["model_type"], "properties": {"model_type": {"enum": [mt]}}}]
                        + ([untyped] if mt == "other" else [])})
        for key in required:
            b["properties"][key] = _not_null(b["properties"][key])
        branches.append(b)
    return {"oneOf": [transformer, *branches]}


HF_KEYS = {  # the keys _read_hf_config reads under these names (it also knows aliases)
    "num_hidden_layers": "layers", "hidden_size": "hidden_size", "num_attention_heads": "attention_heads",
    "vocab_size": "vocab_size", "intermediate_size": "ffn_hidden_size", "num_key_value_heads": "kv_heads",
    "max_position_embeddings": "max_position_embeddings", "head_dim": "head_dim",
}


def _hf_config() -> dict:
    props = {}
    for hf, arch in HF_KEYS.items():
        lo, hi, _ = S.ARCH_INT_BOUNDS[arch]
        props[hf] = _int(lo, hi)
    required = ("num_hidden_layers", "hidden_size", "num_attention_heads", "vocab_size", "intermediate_size")
    for key in required:
        props[key] = _not_null(props[key])
    props["tie_word_embeddings"] = {"description": "Read as true/false (any JSON value)."}
    return {
        "type": "object", "properties": props, "required": list(required),
        # A config.json has many more keys: those read are listed in docs/WORKLOADSPEC.md, the rest ignored.
        "additionalProperties": True,
        "description": "A Hugging Face config.json (Llama, Mistral, Qwen, Gemma, Mixtral, DeepSeek-V3, BERT).",
    }


def _presets(model_types) -> list[str]:
    return [p for p in preset_ids() if get_preset(p).model_type in model_types]


def _model_presets(group: str) -> list[str]:
    """LLM kinds refuse a vision model; classic_training needs a vision model or FLOPs per sample."""
    if group == "llm":
        return [p for p in preset_ids() if get_preset(p).model_type != "vision"]
    if group == "classic":
        return [p for p in preset_ids()
                if get_preset(p).model_type == "vision" or preset_arch(p).flops_per_sample]
    return list(preset_ids())


def _model(group: str) -> dict:
    name = _text()
    one = lambda key, schema: _obj({key: schema, "name": name}, required=[key], nullable=False)  # noqa: E731
    ids = _model_presets(group)
    aliases = [hf for hf, pid in hf_id_aliases().items() if pid in ids]
    preset = _enum(ids + aliases, nullable=False,
                   description="A preset id (GET /api/v1/presets/) or, as an alias, a catalog model's Hugging Face id "
                               "(e.g. \"deepseek-ai/DeepSeek-R1-0528\"; matched case-insensitively).")
    branches = [one("preset", preset),
                one("architecture", _architecture(group))]
    if group != "classic":  # a config.json gives no FLOPs per sample
        branches.append(one("hf_config", _hf_config()))
    return {"oneOf": branches, "description": "Exactly one of preset, architecture, hf_config."}


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
            "models without them are refused); an object adds accepted_tokens per decode step. Not given: the "
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
    one = {"type": "string", "maxLength": 200, "pattern": r"^\s*[^/]*[^/\s][^/]*/.*\S.*$",
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


# --- cost options ----------------------------------------------------------------------


def _rate_override(kind: str) -> dict:
    if kind == "fraction":
        return _not_null(_num(0, 1))
    if kind == "min1":
        return _not_null(_num(1))
    return _not_null(_num(0))


def _bounded(node):
    """Every number of the cost options at most MAX_MAGNITUDE in size (the parser's rule)."""
    if isinstance(node, list):
        return [_bounded(x) for x in node]
    if not isinstance(node, dict):
        return node
    out = {k: _bounded(v) for k, v in node.items()}
    if out.get("type") == "number":
        out.setdefault("maximum", float(MAX_MAGNITUDE))
        out.setdefault("minimum", -float(MAX_MAGNITUDE))
    return out


def cost_options_schema() -> dict:
    return _bounded(_cost_options_schema())


def _cost_options_schema() -> dict:
    countries = sorted(ISO_COUNTRIES)
    price_item = lambda props, required: _obj(props, required=required, nullable=False)  # noqa: E731
    amount = _not_null(_num(0))
    currency = {"type": "string", "enum": list(CURRENCIES)}
    overrides = {}
    for key, spec in RATE_SCHEMA.items():
        if key == "price_drift_per_year":
            overrides[key] = _not_null(_num())
        else:
            overrides[key] = _rate_override(spec.kind)
    return _obj({
        "horizon_months": _not_null(_int(1, MAX_HORIZON_MONTHS)),
        "currency": currency,
        "include_vat": _not_null(_bool()),
        "country": {"type": "string", "enum": countries},
        "as_of": {"type": "string", "format": "date"},
        "utilisation": _num(0, 1),
        "efficiency": _num(0, 1, exclusive_min=True),
        "options": {"type": "array", "minItems": 1, "items": {"type": "string", "enum": list(OPTION_KINDS)}},
        "redundancy": {"type": "string", "enum": list(REDUNDANCY)},
        "hybrid_owned_share": _not_null(_num(0, 1, exclusive_min=True)),
        "monte_carlo_samples": _not_null(_int(MIN_SAMPLES, MAX_SAMPLES)),
        "seed": _not_null(_int(0, 2**63 - 1)),
        "overrides": _obj(overrides, nullable=False, description="Rate-card values to replace, by rate name."),
        "server_prices": {"type": "array", "items": price_item({
            "accelerator": {"type": "string", "minLength": 1, "pattern": r"\S"},
            "gpus_per_server": _not_null(_int(1, 64)), "amount": amount, "currency": currency,
            "includes_vat": {}, "source": {}, "name": {}, "power_w": _not_null(_num(0, exclusive_min=True)),
            "rack_units": _not_null(_int(1, 60)), "date": {"type": "string", "format": "date", "nullable": True},
        }, ["accelerator", "gpus_per_server", "amount", "currency"])},
        "api_prices": {"type": "array", "items": {
            "type": "object",
            "required": ["provider", "model", "currency", "input_per_1m_tokens", "output_per_1m_tokens"],
            "properties": {
                "provider": {"type": "string", "minLength": 1, "pattern": r"\S"},
                "model": {"type": "string", "minLength": 1, "pattern": r"\S"},
                "currency": currency, "input_per_1m_tokens": amount, "output_per_1m_tokens": amount,
                "open_weights_model": {"type": "string", "enum": preset_ids(), "nullable": True,
                                       "description": "The preset id when the API serves that open-weights "
                                                      "model: compared like for like with self-hosting it."},
            },
        }},
        "data_residency": {"type": "array", "items": {"type": "string", "enum": countries}},
        "providers": {"type": "array", "maxItems": 100, "description": (
            "Providers the plan may buy from, by their catalog names (e.g. \"Yandex Cloud\"); empty or absent: "
            "any. A team's procurement settings narrow it further."),
            "items": {"type": "string", "minLength": 1, "maxLength": 120, "pattern": r"\S"}},
        "egress_gb_per_month": _num(0),
        "inter_zone_gb_per_month": _num(0),
        "runs": _int(1, 100_000),
        "runs_per_month": _num(0, 10_000, exclusive_min=True),
        "discount_rate": {**_num(0), "maximum": 1, "exclusiveMaximum": True},
        "vat_recoverable": _not_null(_bool()),
        "downtime_cost_per_hour": _num(0),
        "decision_basis": {"type": "string", "enum": list(DECISION_BASES),
                           "description": "How the decision picks: cheapest budget (default), risk_adjusted "
                                          "(budget + expected cost of downtime; needs downtime_cost_per_hour), "
                                          "fewest_gpus (then the cheapest)."},
        "support_lines": {"type": "array", "items": price_item({
            "label": {"type": "string", "minLength": 1, "pattern": r"\S"},
            "amount": amount, "currency": currency,
            "per": {"type": "string", "enum": list(SUPPORT_PER)},
            "scale": {"type": "string", "enum": list(SUPPORT_SCALE)},
            "kinds": {"type": "array", "minItems": 1, "items": {"type": "string", "enum": list(OPTION_KINDS)}},
            "includes_vat": {}, "source": {},
        }, ["label", "amount", "currency"])},
    }, nullable=False, description="Cost options (docs/COSTS.md); defaults apply to what is left out. "
                                   f"support_lines kinds default to {', '.join(SUPPORT_KINDS)}.")


def input_components() -> dict:
    out = {name: workload_spec_schema(kind, external_generator=ext)
           for name, (kind, ext) in WORKLOAD_SPEC_VARIANTS.items()}
    out["WorkloadSpec"] = workload_spec_component()
    out["CostOptions"] = cost_options_schema()
    return out
