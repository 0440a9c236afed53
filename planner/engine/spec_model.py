"""Reading the spec's model section: a preset, the architecture fields or a Hugging Face config.json."""

from __future__ import annotations

from collections.abc import Mapping

from catalog.domain.messages import Msg

from .architecture import MODEL_TYPES, ModelArch
from .presets import arch_from_fields, preset_arch, preset_ids, resolve_preset_id
from .spec_reader import _Reader
from .spec_types import (
    MAX_PARAMS,
    MAX_SEQ,
)

ARCH_FIELDS = (
    "model_type", "params", "active_params", "layers", "hidden_size", "attention_heads", "kv_heads",
    "head_dim", "ffn_hidden_size", "gated_ffn", "vocab_size", "tied_embeddings",
    "max_position_embeddings", "attention_bias", "qk_norm", "norms_per_layer", "experts",
    "experts_per_token", "shared_experts", "moe_ffn_hidden_size", "dense_layers", "kv_lora_rank",
    "q_lora_rank", "qk_rope_head_dim", "v_head_dim", "sliding_window", "local_layers",
    "flops_per_sample", "embedding_dim",
)

# Integer architecture fields: (minimum, maximum, required for a transformer). The OpenAPI
# schema (planner/api/input_schema_model.py) is built from this table.
ARCH_INT_BOUNDS = {
    "layers": (1, 1000, True), "hidden_size": (1, 131072, True), "attention_heads": (1, 1024, True),
    "kv_heads": (1, 1024, False), "head_dim": (1, 4096, False), "ffn_hidden_size": (1, 1_048_576, False),
    "vocab_size": (1, 10_000_000, True), "max_position_embeddings": (1, MAX_SEQ, False),
    "norms_per_layer": (0, 8, False), "experts": (0, 4096, False), "experts_per_token": (0, 4096, False),
    "shared_experts": (0, 64, False), "moe_ffn_hidden_size": (1, 1_048_576, False),
    "dense_layers": (0, 1000, False), "kv_lora_rank": (1, 65536, False), "q_lora_rank": (1, 65536, False),
    "qk_rope_head_dim": (0, 4096, False), "v_head_dim": (1, 4096, False),
    "sliding_window": (1, MAX_SEQ, False), "local_layers": (0, 1000, False),
    "embedding_dim": (1, 65536, False),
}


def _read_architecture(r: _Reader, a: Mapping, path: str, *, name: str) -> ModelArch | None:
    r.keys(a, path, ARCH_FIELDS + ("name",))
    n0 = len(r.errors)
    has_layers = a.get("layers") is not None
    model_type = r.choice(a, "model_type", path, MODEL_TYPES, default="decoder" if has_layers else "other")
    f: dict = {"model_type": model_type}
    f["params"] = r.number(a, "params", path, minimum=1, maximum=MAX_PARAMS, integer=True)
    f["active_params"] = r.number(a, "active_params", path, minimum=1, maximum=MAX_PARAMS, integer=True)
    f["flops_per_sample"] = r.number(a, "flops_per_sample", path, minimum=0, maximum=1e18, strict_min=True)
    if model_type in ("vision", "other"):
        if f["params"] is None:
            r.err(f"{path}.params", Msg("required for a model without a transformer architecture"))
        if len(r.errors) > n0:
            return None
        return arch_from_fields(name=name or "custom model", fields=f)
    for key, (lo, hi, req) in ARCH_INT_BOUNDS.items():
        f[key] = r.integer(a, key, path, minimum=lo, maximum=hi, required=req)
    for key in ("gated_ffn", "tied_embeddings", "attention_bias", "qk_norm"):
        f[key] = r.boolean(a, key, path, default=None)
    if f["attention_heads"] is None or f["hidden_size"] is None or f["layers"] is None:
        return None
    heads, hidden = f["attention_heads"], f["hidden_size"]
    if f["head_dim"] is None:
        if hidden % heads:
            r.err(f"{path}.head_dim", Msg("required: hidden_size {hidden} is not divisible by attention_heads {heads}", hidden=hidden, heads=heads))
        f["head_dim"] = hidden // heads
    if f["kv_heads"] is None:
        f["kv_heads"] = heads
    elif f["kv_lora_rank"] is None and heads % f["kv_heads"]:
        r.err(f"{path}.kv_heads", Msg("must divide attention_heads ({heads}), got {kv_heads}", heads=heads, kv_heads=f['kv_heads']))
    experts = f["experts"] or 0
    if experts:
        if not f["experts_per_token"]:
            r.err(f"{path}.experts_per_token", Msg("required when experts > 0"))
        elif f["experts_per_token"] > experts:
            r.err(f"{path}.experts_per_token", Msg("must be <= experts ({experts})", experts=experts))
        if f["ffn_hidden_size"] is None and f["moe_ffn_hidden_size"] is None:
            r.err(f"{path}.moe_ffn_hidden_size", Msg("required for an MoE model (or ffn_hidden_size)"))
    elif f["ffn_hidden_size"] is None and a.get("ffn_hidden_size") is None:
        r.err(f"{path}.ffn_hidden_size", "required")
    if f["ffn_hidden_size"] is None:
        f["ffn_hidden_size"] = f["moe_ffn_hidden_size"]
    if (f["dense_layers"] or 0) > f["layers"]:
        r.err(f"{path}.dense_layers", Msg("must be <= layers ({layers})", layers=f['layers']))
    if (f["local_layers"] or 0) > f["layers"]:
        r.err(f"{path}.local_layers", Msg("must be <= layers ({layers})", layers=f['layers']))
    if f["sliding_window"] and f["local_layers"] is None:
        f["local_layers"] = f["layers"]  # a window without a layer pattern applies to every layer
    if len(r.errors) > n0:
        return None
    defaults = {"gated_ffn": model_type == "decoder", "tied_embeddings": False, "attention_bias": False,
                "qk_norm": False, "norms_per_layer": 2, "experts": 0, "experts_per_token": 0,
                "shared_experts": 0, "dense_layers": 0, "local_layers": 0}
    for k, v in defaults.items():
        if f[k] is None:
            f[k] = v
    if model_type == "encoder" and f["embedding_dim"] is None:
        f["embedding_dim"] = hidden
    return arch_from_fields(name=name or "custom model", fields=f)


def _hf_get(r: _Reader, cfg: Mapping, path: str, *names: str, required=False, default=None):
    for n in names:
        if cfg.get(n) is not None:
            return cfg[n]
    if required:
        r.err(f"{path}.{names[0]}", Msg("required in the Hugging Face config"))
    return default


def _read_hf_config(r: _Reader, cfg: Mapping, path: str, *, name: str) -> ModelArch | None:
    """Map a Hugging Face config.json (Llama, Mistral, Qwen2/2.5/3, Gemma 2/3, Mixtral,
    DeepSeek-V3, BERT) onto architecture fields; unknown keys are ignored."""
    if isinstance(cfg.get("text_config"), Mapping):  # Gemma 3 multimodal configs nest the decoder
        mt = cfg.get("model_type", "")
        cfg = {**cfg["text_config"], "model_type": cfg["text_config"].get("model_type", mt)}
        path = f"{path}.text_config"
    mt = str(cfg.get("model_type", "")).lower()
    g = lambda *names, **kw: _hf_get(r, cfg, path, *names, **kw)  # noqa: E731
    layers = g("num_hidden_layers", "n_layer", "num_layers", required=True)
    hidden = g("hidden_size", "d_model", "n_embd", required=True)
    heads = g("num_attention_heads", "n_head", required=True)
    vocab = g("vocab_size", "padded_vocab_size", required=True)
    if None in (layers, hidden, heads, vocab):
        return None
    a: dict = {
        "layers": layers, "hidden_size": hidden, "attention_heads": heads, "vocab_size": vocab,
        "kv_heads": g("num_key_value_heads", "n_head_kv", "num_kv_heads", default=heads),
        "max_position_embeddings": g("max_position_embeddings", "n_positions"),
    }
    if cfg.get("head_dim") is not None:
        a["head_dim"] = cfg["head_dim"]
    encoder = mt in ("bert", "roberta", "xlm-roberta", "distilbert")
    if encoder:
        a["model_type"] = "encoder"
        a["gated_ffn"] = False
    moe_experts = g("num_local_experts", "n_routed_experts", "num_experts", default=0)
    inter = g("intermediate_size", "ffn_hidden_size", "n_inner")
    if moe_experts:
        a["experts"] = moe_experts
        a["experts_per_token"] = g("num_experts_per_tok", "num_experts_per_token", "top_k", required=True)
        a["moe_ffn_hidden_size"] = g("moe_intermediate_size", default=inter)
        a["shared_experts"] = g("n_shared_experts", default=0)
        a["dense_layers"] = g("first_k_dense_replace", default=0)
        if mt.startswith("qwen2_moe") and cfg.get("shared_expert_intermediate_size"):
            # Qwen2-MoE: one shared expert of its own width, counted as whole-width shared experts.
            a["shared_experts"] = round(cfg["shared_expert_intermediate_size"] / a["moe_ffn_hidden_size"])
    if inter is not None:
        a["ffn_hidden_size"] = inter
    elif not moe_experts:
        r.err(f"{path}.intermediate_size", Msg("required in the Hugging Face config"))
        return None
    if cfg.get("kv_lora_rank"):
        a["kv_lora_rank"] = cfg["kv_lora_rank"]
        a["q_lora_rank"] = cfg.get("q_lora_rank")
        a["qk_rope_head_dim"] = cfg.get("qk_rope_head_dim", 0)
        a["v_head_dim"] = cfg.get("v_head_dim")
        a["head_dim"] = cfg.get("qk_nope_head_dim", 0) + cfg.get("qk_rope_head_dim", 0)
    gemma = mt.startswith("gemma")
    tied = cfg.get("tie_word_embeddings")
    a["tied_embeddings"] = bool(tied) if tied is not None else gemma  # HF Gemma default: tied
    if mt in ("qwen2", "qwen2_moe"):
        a["attention_bias"] = True
    elif cfg.get("attention_bias") is not None:
        a["attention_bias"] = bool(cfg["attention_bias"])
    if mt.startswith(("qwen3", "gemma3")):
        a["qk_norm"] = True
    if mt.startswith(("gemma2", "gemma3")):
        a["norms_per_layer"] = 4
    window = cfg.get("sliding_window")
    if window and cfg.get("use_sliding_window", True):
        a["sliding_window"] = window
        if isinstance(cfg.get("layer_types"), list):
            a["local_layers"] = sum(1 for t in cfg["layer_types"] if t == "sliding_attention")
        elif mt.startswith("gemma2"):
            a["local_layers"] = layers // 2
        elif mt.startswith("gemma3"):
            pattern = cfg.get("sliding_window_pattern", 6)
            a["local_layers"] = layers - layers // pattern
        else:
            a["local_layers"] = layers
    return _read_architecture(r, a, path, name=name or str(cfg.get("_name_or_path", "")) or mt or "custom model")


def _read_model(r: _Reader, m: Mapping, path: str) -> tuple[ModelArch | None, str]:
    r.keys(m, path, ("preset", "architecture", "hf_config", "name"))
    name = r.text(m, "name", path)
    given = [k for k in ("preset", "architecture", "hf_config") if m.get(k) is not None]
    if len(given) != 1:
        r.err(path, Msg("give exactly one of: preset, architecture, hf_config"))
        return None, ""
    key = given[0]
    if key == "preset":
        pid = resolve_preset_id(m["preset"])
        if pid is None:
            r.err(f"{path}.preset", Msg("unknown preset {pid}; allowed: {preset_ids} (or a catalog model's Hugging Face id)", pid=repr(m["preset"]), preset_ids=', '.join(preset_ids())))
            return None, ""
        return preset_arch(pid), f"preset:{pid}"
    value = m[key]
    if not isinstance(value, Mapping):
        r.err(f"{path}.{key}", Msg("must be an object"))
        return None, ""
    if key == "architecture":
        return _read_architecture(r, value, f"{path}.architecture", name=name), "architecture"
    return _read_hf_config(r, value, f"{path}.hf_config", name=name), "hf_config"
