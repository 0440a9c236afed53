"""The JSON Schema of the WorkloadSpec's `model` section: a preset, an architecture (as
_read_architecture reads it) or a Hugging Face config.json. Apart from input_schema.py because the
architecture alone has as many rules as the other sections together.
"""

from __future__ import annotations

from planner.engine import spec as S
from planner.engine.architecture import MODEL_TYPES
from planner.engine.presets import get_preset, hf_id_aliases, preset_arch, preset_ids

from .input_schema_parts import _NOT_NULL, _bool, _enum, _int, _not_null, _num, _obj, _text

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
    `flops_per_sample` (a vision preset carries it; a vision architecture given by hand must state it)."""
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
        required = ["params"] + (["flops_per_sample"] if group == "classic" else [])
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
