"""WorkloadSpec: the one validated input of the sizing engine (web form, API and CLI share it).

`parse_workload_spec(data)` turns a JSON-like mapping into frozen dataclasses, or raises
SpecValidationError listing *every* problem with its dotted field path. The JSON shape is
documented in docs/WORKLOADSPEC.md.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from dataclasses import dataclass

from catalog.domain.messages import Msg

from .architecture import MODEL_TYPES, ModelArch
from .errors import FieldError, SpecValidationError
from .precision import PRECISIONS
from .presets import arch_from_fields, get_preset, preset_arch, preset_ids, resolve_preset_id
from .serving_constants import DEFAULT_RUNTIME, RUNTIMES

KINDS = ("pretraining", "finetuning", "inference", "rag", "classic_training", "external_api")
METHODS = ("full", "lora", "qlora")
OPTIMIZERS = ("adamw", "adamw_8bit", "paged_adamw_8bit", "adafactor", "sgd")
STATE_PRECISIONS = ("fp32", "bf16", "int8")
MASTER_WEIGHTS = ("fp32", "none")
ADAPTER_PRECISIONS = ("fp32", "bf16", "fp16")
CONTEXT_PARALLEL = (1, 2, 4, 8, 16, 32)
CHECKPOINTING = ("none", "selective", "full")
# fused: FlashAttention / PyTorch SDPA / cuDNN attention (scores never stored); eager: s x s scores kept
ATTENTION_IMPLEMENTATIONS = ("fused", "eager")
INDEXES = ("flat", "hnsw", "ivf_pq")
GENERATORS = ("self_hosted", "external_api")
LORA_TARGETS = ("q", "k", "v", "o", "gate", "up", "down")
LLM_KINDS = ("pretraining", "finetuning", "inference", "rag")

# Upper bounds that catch unit mistakes (bytes typed as GB, etc.), far above any real workload.
MAX_PARAMS = 1e14
MAX_TOKENS = 1e16
MAX_SEQ = 10_000_000
# Checkpoint interval floor (36 s, the web form's bound): a checkpoint takes tens of seconds
# to write, and an interval near zero divided the checkpoint bandwidth by zero (schemathesis,
# issue 16: 5e-324 h).
MIN_CHECKPOINT_EVERY_HOURS = 0.01
# Below 1 % useful hours the run is not a plan but a unit mistake (0.5 typed as 0.005 %); a
# vanishing goodput would make the GPU-hours overflow every money figure.
MIN_GOODPUT = 0.01


@dataclass(frozen=True, kw_only=True)
class PrecisionSpec:
    weights: str = "bf16"
    compute: str = "bf16"
    kv_cache: str = "bf16"


@dataclass(frozen=True, kw_only=True)
class TrainingSpec:
    tokens: float | None = None  # total tokens processed (dataset tokens x epochs)
    dataset_samples: int | None = None  # classic_training
    epochs: float = 1.0
    sequence_length: int = 4096
    global_batch_tokens: int | None = None
    global_batch_size: int | None = None  # classic_training: samples per step
    micro_batch_size: int = 1
    method: str = "full"
    lora_rank: int = 16
    lora_targets: tuple[str, ...] = LORA_TARGETS
    optimizer: str = "adamw"
    zero_stage: int | None = None  # None: the engine picks the smallest stage that fits
    activation_checkpointing: str | None = None  # None: searched (selective first, full when needed)
    sequence_parallel: bool = True
    tensor_parallel: int | None = None  # None: searched
    pipeline_parallel: int | None = None  # None: searched
    virtual_pipeline_stages: int | None = None  # interleaved 1F1B schedule (Megatron); None: searched
    deadline_hours: float | None = None
    checkpoint_every_hours: float = 2.0
    checkpoints_kept: int = 3
    optimizer_states: str = "fp32"  # precision of the optimizer states (int8 for the 8-bit optimizers)
    master_weights: str = "fp32"  # fp32 master copy of 16-bit trainable weights, or none
    adapter_precision: str = "bf16"  # LoRA/QLoRA adapter weights and gradients
    double_quant: bool = True  # QLoRA: NF4 quantisation constants quantised again (8-bit)
    context_parallel: int | None = None  # None: searched for long sequences
    goodput: float | None = None  # None: default by GPU count (docs/SIZING.md "Goodput")
    attention: str = "fused"  # attention kernel: fused (FlashAttention/SDPA, the default) or eager
    expert_overlap: bool = False  # MoE: expert-parallel all-to-all overlapped with compute (DualPipe, EP overlap)


MIN_HOURS_PER_DAY = 0.1


@dataclass(frozen=True, kw_only=True)
class ServingSpec:
    context_length: int = 4096
    input_tokens: int = 1024
    output_tokens: int = 256
    concurrency: int = 8
    requests_per_second: float = 1.0
    ttft_p95_ms: float | None = None
    tpot_p95_ms: float | None = None
    hours_per_day: float = 24.0
    runtime: str = "vllm"  # serving engine: vllm | sglang | trtllm | hf_transformers
    # Volume (average traffic), apart from the peak above that sizes capacity: what token-priced
    # options, egress and the useful share are priced on. None: AVERAGE_TO_PEAK_RATIO of the peak.
    requests_per_day: float | None = None
    # The model API(s) an agent calls, "provider/model" (several: compared); (): every priced one.
    # Checked against the catalog's API prices when the plan is priced (costs.adapters).
    model_api: tuple[str, ...] = ()

    @property
    def peak_requests_per_day(self) -> float:
        """The most a day can hold: the peak held through every serving hour."""
        return self.requests_per_second * 3600.0 * self.hours_per_day

    @property
    def volume_requests_per_day(self) -> float:
        """Requests a day that are priced: the given volume, else the peak x AVERAGE_TO_PEAK_RATIO."""
        if self.requests_per_day is not None:
            return self.requests_per_day
        return self.peak_requests_per_day * AVERAGE_TO_PEAK_RATIO


# Average traffic over the serving hours / the peak rate the capacity is sized for, used when
# serving.requests_per_day is not given (docs/WORKLOADSPEC.md "Peak and volume"). A planning
# assumption, not a measurement: the busiest hour of an office-hours service carries about 1.5-2x
# its average hour (telephony's busy-hour share: 10-15 % of a business line's daily traffic, which
# falls in 8-10 hours), and the peak a p95 latency target is planned for sits about 1.5-2x above
# that hour's mean (Poisson-like bursts over seconds-long windows). 1 / (2.25 ... 4) = 0.25-0.44;
# 0.3 lies in that band, nearer its low end. Give requests_per_day to price the real volume.
AVERAGE_TO_PEAK_RATIO = 0.3


@dataclass(frozen=True, kw_only=True)
class RagSpec:
    documents: int
    tokens_per_document: int = 1000
    chunk_tokens: int = 512
    embedding_model: ModelArch | None = None
    embedding_dimension: int = 1024
    index: str = "hnsw"
    queries_per_second: float = 1.0
    top_k: int = 5
    generator: str = "self_hosted"  # or "external_api": the LLM is a paid API, no GPU for it


@dataclass(frozen=True, kw_only=True)
class DataSpec:
    dataset_gb: float = 0.0
    growth_gb_per_month: float = 0.0
    logs_gb_per_month: float = 0.0
    retention_months: int = 12


@dataclass(frozen=True, kw_only=True)
class HardwareSpec:
    accelerator: str | None = None  # catalog id or unambiguous name; resolved by size_workload
    count: int | None = None
    mfu: float | None = None
    gpus_per_server: int | None = None
    tensor_parallel: int | None = None  # serving: pin the layout (with accelerator + count: exact what-if)
    pipeline_parallel: int | None = None
    # What the site has (issue 20, 7.): IT power the servers may draw at full load, and racks free.
    # The decision keeps owned options within them; the plan says what they allow at most.
    power_budget_kw: float | None = None
    racks: int | None = None


@dataclass(frozen=True, kw_only=True)
class WorkloadSpec:
    kind: str
    name: str = ""
    model: ModelArch | None = None
    model_source: str = ""  # "preset:<id>" | "architecture" | "hf_config"
    precision: PrecisionSpec = PrecisionSpec()
    training: TrainingSpec | None = None
    serving: ServingSpec | None = None
    rag: RagSpec | None = None
    data: DataSpec = DataSpec()
    hardware: HardwareSpec = HardwareSpec()


_MISSING = object()


_UNSTORABLE = re.compile("[\x00\ud800-\udfff]")


class _Reader:
    """Collects errors while reading values; returns None/defaults for bad fields."""

    def __init__(self) -> None:
        self.errors: list[FieldError] = []

    def err(self, field: str, message: str) -> None:
        self.errors.append(FieldError(field=field, message=message))

    def section(self, d: Mapping, key: str, path: str, allowed: tuple[str, ...]) -> Mapping | None:
        value = d.get(key, _MISSING)
        if value is _MISSING or value is None:
            return None
        if not isinstance(value, Mapping):
            self.err(path, Msg("must be an object"))
            return None
        self.keys(value, path, allowed)
        return value

    def keys(self, d: Mapping, path: str, allowed: tuple[str, ...]) -> None:
        for k in d:
            if k not in allowed:
                self.err(f"{path}.{k}" if path else str(k), Msg("unknown field; allowed: {allowed}", allowed=', '.join(allowed)))

    def number(self, d, key, path, *, default=None, minimum=0.0, maximum=None, integer=False,
               strict_min=False, required=False):
        field = f"{path}.{key}" if path else key
        value = d.get(key, _MISSING) if d is not None else _MISSING
        if value is _MISSING or value is None:
            if required:
                self.err(field, "required")
            return default
        if isinstance(value, bool) or not isinstance(value, int | float):
            if isinstance(value, str):
                try:
                    value = float(value.strip())
                except ValueError:
                    self.err(field, Msg("must be a number, got {value}", value=repr(value)))
                    return default
            else:
                self.err(field, Msg("must be a number, got {value_type}", value_type=type(value).__name__))
                return default
        try:
            finite = math.isfinite(value)
        except OverflowError:  # an integer too large for a float (JSON allows any length)
            finite = False
        if not finite:
            self.err(field, Msg("must be a finite number"))
            return default
        if integer and value != int(value):
            self.err(field, Msg("must be a whole number, got {value}", value=value))
            return default
        if (strict_min and value <= minimum) or value < minimum:
            self.err(field, (Msg("must be more than {minimum:,.15g}, got {value:,.15g}", minimum=minimum, value=value) if strict_min else Msg("must be at least {minimum:,.15g}, got {value:,.15g}", minimum=minimum, value=value)))
            return default
        if maximum is not None and value > maximum:
            self.err(field, Msg("must be at most {maximum:,.15g}, got {value:,.15g}", maximum=maximum, value=value))
            return default
        return int(value) if integer else float(value)

    def integer(self, d, key, path, *, default=None, minimum=0, maximum=None, required=False):
        return self.number(d, key, path, default=default, minimum=minimum, maximum=maximum,
                           integer=True, required=required)

    def boolean(self, d, key, path, *, default=None):
        field = f"{path}.{key}"
        value = d.get(key, _MISSING) if d is not None else _MISSING
        if value is _MISSING or value is None:
            return default
        if not isinstance(value, bool):
            self.err(field, Msg("must be true or false, got {value}", value=repr(value)))
            return default
        return value

    def choice(self, d, key, path, allowed, *, default=None, required=False):
        field = f"{path}.{key}" if path else key
        value = d.get(key, _MISSING) if d is not None else _MISSING
        if value is _MISSING or value is None:
            if required:
                self.err(field, Msg("required; one of: {allowed}", allowed=', '.join(allowed)))
            return default
        if not isinstance(value, str) or value.strip().lower() not in allowed:
            self.err(field, Msg("unknown value {value}; allowed: {allowed}", value=repr(value), allowed=', '.join(allowed)))
            return default
        return value.strip().lower()

    def text(self, d, key, path, *, default="", max_length=200):
        field = f"{path}.{key}" if path else key
        value = d.get(key, _MISSING) if d is not None else _MISSING
        if value is _MISSING or value is None:
            return default
        if not isinstance(value, str):
            self.err(field, Msg("must be a string, got {value_type}", value_type=type(value).__name__))
            return default
        if len(value) > max_length:
            self.err(field, Msg("must be at most {max_length} characters", max_length=max_length))
            return default
        if _UNSTORABLE.search(value):  # PostgreSQL text cannot hold NUL; UTF-8 no lone surrogate
            self.err(field, Msg("must not contain NUL or unpaired surrogate characters"))
            return default
        return value.strip()


ARCH_FIELDS = (
    "model_type", "params", "active_params", "layers", "hidden_size", "attention_heads", "kv_heads",
    "head_dim", "ffn_hidden_size", "gated_ffn", "vocab_size", "tied_embeddings",
    "max_position_embeddings", "attention_bias", "qk_norm", "norms_per_layer", "experts",
    "experts_per_token", "shared_experts", "moe_ffn_hidden_size", "dense_layers", "kv_lora_rank",
    "q_lora_rank", "qk_rope_head_dim", "v_head_dim", "sliding_window", "local_layers",
    "flops_per_sample", "embedding_dim",
)

# Integer architecture fields: (minimum, maximum, required for a transformer). The OpenAPI
# schema (planner/api/input_schema.py) is built from this table.
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


def parse_workload_spec(data: Mapping) -> WorkloadSpec:
    """Validate a JSON-like workload description; raise SpecValidationError with all problems."""
    r = _Reader()
    if not isinstance(data, Mapping):
        raise SpecValidationError([FieldError(field="(root)", message=Msg("must be a JSON object"))])
    top = ("kind", "name", "description", "model", "precision", "training", "serving", "rag", "data", "hardware")
    r.keys(data, "", top)
    kind = r.choice(data, "kind", "", KINDS, required=True)
    name = r.text(data, "name", "")
    r.text(data, "description", "", max_length=2000)

    model, model_source = None, ""
    m = r.section(data, "model", "model", ("preset", "architecture", "hf_config", "name"))
    if m is not None:
        model, model_source = _read_model(r, m, "model")
    elif kind in LLM_KINDS + ("classic_training",):
        rag_external = kind == "rag" and isinstance(data.get("rag"), Mapping) and (
            data["rag"].get("generator") == "external_api")
        if not rag_external:
            r.err("model", Msg("required for kind {kind}", kind=kind))

    p = r.section(data, "precision", "precision", ("weights", "compute", "kv_cache")) or {}
    method = None
    t = r.section(data, "training", "training", tuple(TrainingSpec.__dataclass_fields__))
    if t is not None:
        method = r.choice(t, "method", "training", METHODS, default="full")
    default_w = "int4" if method == "qlora" else "bf16"
    precision = PrecisionSpec(
        weights=r.choice(p, "weights", "precision", PRECISIONS, default=default_w),
        compute=r.choice(p, "compute", "precision", PRECISIONS, default="bf16"),
        kv_cache=r.choice(p, "kv_cache", "precision", PRECISIONS, default="bf16"),
    )

    training = None
    if kind in ("pretraining", "finetuning", "classic_training"):
        training = _read_training(r, t or {}, kind=kind, model=model, precision=precision, method=method)
    elif t is not None:
        r.err("training", Msg("not used for kind {kind}; remove it", kind=kind))

    serving = None
    s = r.section(data, "serving", "serving", tuple(ServingSpec.__dataclass_fields__))
    if kind in ("inference", "rag", "external_api"):
        serving = _read_serving(r, s or {}, model=model)
    elif s is not None:
        r.err("serving", Msg("not used for kind {kind}; remove it", kind=kind))

    rag = None
    rg = r.section(data, "rag", "rag", (
        "documents", "tokens_per_document", "chunk_tokens", "embedding_model", "embedding_dimension",
        "index", "queries_per_second", "top_k", "generator"))
    if kind == "rag":
        rag = _read_rag(r, rg or {}, required=rg is None)
    elif rg is not None and kind != "external_api":
        r.err("rag", Msg("not used for kind {kind}; remove it", kind=kind))
    elif rg is not None:
        rag = _read_rag(r, rg, required=False)

    d = r.section(data, "data", "data", tuple(DataSpec.__dataclass_fields__)) or {}
    data_spec = DataSpec(
        dataset_gb=r.number(d, "dataset_gb", "data", default=0.0, maximum=1e9),
        growth_gb_per_month=r.number(d, "growth_gb_per_month", "data", default=0.0, maximum=1e8),
        logs_gb_per_month=r.number(d, "logs_gb_per_month", "data", default=0.0, maximum=1e8),
        retention_months=r.integer(d, "retention_months", "data", default=12, minimum=1, maximum=600),
    )

    h = r.section(data, "hardware", "hardware", tuple(HardwareSpec.__dataclass_fields__)) or {}
    hardware = HardwareSpec(
        accelerator=r.text(h, "accelerator", "hardware", default=None),
        count=r.integer(h, "count", "hardware", minimum=1, maximum=65536),
        mfu=r.number(h, "mfu", "hardware", minimum=0.0, maximum=1.0, strict_min=True),
        gpus_per_server=r.integer(h, "gpus_per_server", "hardware", minimum=1, maximum=16),
        tensor_parallel=r.integer(h, "tensor_parallel", "hardware", minimum=1, maximum=64),
        pipeline_parallel=r.integer(h, "pipeline_parallel", "hardware", minimum=1, maximum=256),
        power_budget_kw=r.number(h, "power_budget_kw", "hardware", minimum=0.0, maximum=1e6, strict_min=True),
        racks=r.integer(h, "racks", "hardware", minimum=1, maximum=100000),
    )
    _check_serving_layout(r, hardware, kind=kind, model=model)
    if model is not None and model.model_type == "vision" and kind in LLM_KINDS:
        r.err("model", Msg("a vision model ({name}) cannot be sized as {kind}; use classic_training", name=model.name, kind=kind))
    if model is not None and kind == "classic_training" and model.model_type != "vision" and not model.flops_per_sample:
        r.err("model.architecture.flops_per_sample", Msg("required for classic_training"))
    if r.errors:
        raise SpecValidationError(r.errors)
    return WorkloadSpec(kind=kind, name=name, model=model, model_source=model_source, precision=precision,
                        training=training, serving=serving, rag=rag, data=data_spec, hardware=hardware)


def _check_serving_layout(r: _Reader, hw: HardwareSpec, *, kind: str, model) -> None:
    tp, pp = hw.tensor_parallel, hw.pipeline_parallel
    if tp is None and pp is None:
        return
    if kind not in ("inference", "rag"):
        field = "hardware.tensor_parallel" if tp is not None else "hardware.pipeline_parallel"
        r.err(field, Msg("serving layouts only; for kind {kind} use training.tensor_parallel / "
                         "training.pipeline_parallel", kind=kind))
        return
    if model is not None and model.is_transformer:
        if tp and model.attention_heads and model.attention_heads % tp:
            r.err("hardware.tensor_parallel", Msg("must divide attention_heads ({heads}), got {tp}",
                                                  heads=model.attention_heads, tp=tp))
        if pp and pp > model.layers:
            r.err("hardware.pipeline_parallel", Msg("must be <= layers ({layers}), got {pp}", layers=model.layers, pp=pp))
    if hw.count and (tp or 1) * (pp or 1) > hw.count:
        r.err("hardware.tensor_parallel", Msg("tensor_parallel x pipeline_parallel ({n}) exceeds hardware.count ({count})",
                                              n=(tp or 1) * (pp or 1), count=hw.count))
    elif hw.count and tp and pp and hw.count % (tp * pp):
        r.err("hardware.count", Msg("must be a multiple of tensor_parallel x pipeline_parallel ({n}), got {count}",
                                    n=tp * pp, count=hw.count))


def _read_training(r: _Reader, t: Mapping, *, kind, model, precision, method) -> TrainingSpec | None:
    P = "training"
    n0 = len(r.errors)
    tokens = r.number(t, "tokens", P, minimum=1, maximum=MAX_TOKENS)
    samples = r.integer(t, "dataset_samples", P, minimum=1, maximum=10**13)
    epochs = r.number(t, "epochs", P, default=1.0, minimum=0, maximum=10_000, strict_min=True)
    max_seq = model.max_position_embeddings if model is not None and model.max_position_embeddings else None
    seq = r.integer(t, "sequence_length", P, default=min(4096, max_seq or 4096), minimum=1, maximum=MAX_SEQ)
    gbt = r.integer(t, "global_batch_tokens", P, minimum=1, maximum=10**9)
    gbs = r.integer(t, "global_batch_size", P, minimum=1, maximum=10**7)
    mbs = r.integer(t, "micro_batch_size", P, default=1, minimum=1, maximum=4096)
    lora_rank = r.integer(t, "lora_rank", P, default=16, minimum=1, maximum=4096)
    targets = t.get("lora_targets")
    lora_targets = LORA_TARGETS
    if targets is not None:
        if isinstance(targets, str):
            targets = {"all": LORA_TARGETS, "attention": ("q", "k", "v", "o")}.get(targets, [targets])
        if not isinstance(targets, list | tuple) or not targets or any(x not in LORA_TARGETS for x in targets):
            r.err(f"{P}.lora_targets", Msg("a list drawn from: {lora_targets} (or 'all' / 'attention')", lora_targets=', '.join(LORA_TARGETS)))
        else:
            lora_targets = tuple(dict.fromkeys(targets))
    optimizer = r.choice(t, "optimizer", P, OPTIMIZERS, default="adamw")
    eight_bit = optimizer in ("adamw_8bit", "paged_adamw_8bit")
    states = r.choice(t, "optimizer_states", P, STATE_PRECISIONS, default="int8" if eight_bit else "fp32")
    if optimizer is not None and eight_bit and states != "int8":
        r.err(f"{P}.optimizer_states", f"{optimizer} keeps its states in int8; remove optimizer_states or use adamw")
    elif states == "int8" and not eight_bit:
        r.err(f"{P}.optimizer_states", "int8 states need an 8-bit optimizer (adamw_8bit or paged_adamw_8bit)")
    master = r.choice(t, "master_weights", P, MASTER_WEIGHTS,
                      default="fp32" if (method or "full") == "full" else "none")
    adapter_precision = r.choice(t, "adapter_precision", P, ADAPTER_PRECISIONS, default="bf16")
    double_quant = r.boolean(t, "double_quant", P, default=True)
    cp = r.integer(t, "context_parallel", P, minimum=1, maximum=32)
    if cp is not None and cp not in CONTEXT_PARALLEL:
        r.err(f"{P}.context_parallel", f"one of {', '.join(map(str, CONTEXT_PARALLEL))}, got {cp}")
    elif cp and cp > 1 and seq and seq % (2 * cp):
        r.err(f"{P}.context_parallel", f"sequence_length ({seq}) must be a multiple of 2 x context_parallel ({2 * cp})")
    goodput = r.number(t, "goodput", P, minimum=MIN_GOODPUT, maximum=1.0)
    zero = r.integer(t, "zero_stage", P, minimum=0, maximum=3)
    ckpt = r.choice(t, "activation_checkpointing", P, CHECKPOINTING, default=None)
    attention = r.choice(t, "attention", P, ATTENTION_IMPLEMENTATIONS, default="fused")
    sp = r.boolean(t, "sequence_parallel", P, default=True)
    expert_overlap = r.boolean(t, "expert_overlap", P, default=False)
    tp = r.integer(t, "tensor_parallel", P, minimum=1, maximum=64)
    pp = r.integer(t, "pipeline_parallel", P, minimum=1, maximum=256)
    vpp = r.integer(t, "virtual_pipeline_stages", P, minimum=1, maximum=64)
    deadline = r.number(t, "deadline_hours", P, minimum=0, maximum=100_000, strict_min=True)
    every = r.number(t, "checkpoint_every_hours", P, default=2.0, minimum=MIN_CHECKPOINT_EVERY_HOURS, maximum=10_000)
    kept = r.integer(t, "checkpoints_kept", P, default=3, minimum=1, maximum=1000)
    method = method or "full"
    if kind == "classic_training":
        if samples is None:
            r.err(f"{P}.dataset_samples", Msg("required for classic_training"))
        if method != "full":
            r.err(f"{P}.method", Msg("classic_training supports only full training"))
    elif tokens is None:
        r.err(f"{P}.tokens", Msg("required for {kind} (dataset tokens x epochs)", kind=kind))
    if kind == "pretraining" and method != "full":
        r.err(f"{P}.method", Msg("pretraining trains all weights: use method full"))
    if method == "qlora" and precision.weights != "int4":
        r.err("precision.weights", Msg("QLoRA keeps the frozen base weights in int4"))
    if method != "qlora" and precision.weights in ("int8", "int4", "fp4") and kind != "classic_training" and method == "full":
        r.err("precision.weights", Msg("full training needs fp32/bf16/fp16 (or fp8) weights; use lora/qlora to train on quantised weights"))
    if gbt is not None and seq and mbs and gbt < seq * mbs:
        r.err(f"{P}.global_batch_tokens", Msg("must be >= micro_batch_size x sequence_length ({mbs})", mbs=mbs * seq))
    if model is not None and model.is_transformer:
        if tp and model.attention_heads and model.attention_heads % tp:
            r.err(f"{P}.tensor_parallel", Msg("must divide attention_heads ({attention_heads}), got {tp}", attention_heads=model.attention_heads, tp=tp))
        if pp and pp > model.layers:
            r.err(f"{P}.pipeline_parallel", Msg("must be <= layers ({layers}), got {pp}", layers=model.layers, pp=pp))
        if max_seq and seq > max_seq * 4:
            r.err(f"{P}.sequence_length", Msg("{seq} is far beyond the model's context ({max_seq})", seq=seq, max_seq=max_seq))
    if kind == "classic_training" and cp and cp > 1:
        r.err(f"{P}.context_parallel", Msg("context parallelism splits token sequences: not for classic_training"))
    if "double_quant" in t and method != "qlora":
        r.err(f"{P}.double_quant", Msg("only for method qlora (NF4 base weights)"))
    if "expert_overlap" in t and model is not None and not model.is_moe:
        r.err(f"{P}.expert_overlap", Msg("only for mixture-of-experts models (expert-parallel all-to-all)"))
    if len(r.errors) > n0:
        return None
    if kind != "classic_training" and gbt is None:
        # Llama-style default of ~4M tokens for pretraining; 128 sequences for fine-tuning.
        gbt = max(seq * mbs, 4 * 1024 * 1024 if kind == "pretraining" else 128 * seq)
    if kind == "classic_training" and gbs is None:
        gbs = 256
    return TrainingSpec(
        tokens=tokens * epochs if tokens is not None and "epochs" in t else tokens,
        dataset_samples=samples, epochs=epochs, sequence_length=seq, global_batch_tokens=gbt,
        global_batch_size=gbs, micro_batch_size=mbs, method=method, lora_rank=lora_rank,
        lora_targets=lora_targets, optimizer=optimizer, zero_stage=zero, activation_checkpointing=ckpt,
        sequence_parallel=sp, tensor_parallel=tp, pipeline_parallel=pp, virtual_pipeline_stages=vpp,
        deadline_hours=deadline, checkpoint_every_hours=every, checkpoints_kept=kept,
        optimizer_states=states, master_weights=master, adapter_precision=adapter_precision,
        double_quant=double_quant, context_parallel=cp, goodput=goodput, attention=attention,
        expert_overlap=bool(expert_overlap),
    )


def _read_serving(r: _Reader, s: Mapping, *, model) -> ServingSpec | None:
    P = "serving"
    n0 = len(r.errors)
    max_ctx = model.max_position_embeddings if model is not None and model.max_position_embeddings else None
    inp = r.integer(s, "input_tokens", P, default=1024, minimum=1, maximum=MAX_SEQ)
    out = r.integer(s, "output_tokens", P, default=256, minimum=1, maximum=MAX_SEQ)
    ctx = r.integer(s, "context_length", P, minimum=1, maximum=MAX_SEQ)
    conc = r.integer(s, "concurrency", P, default=8, minimum=1, maximum=1_000_000)
    rps = r.number(s, "requests_per_second", P, default=1.0, minimum=0, maximum=1_000_000)
    ttft = r.number(s, "ttft_p95_ms", P, minimum=0, maximum=3_600_000, strict_min=True)
    tpot = r.number(s, "tpot_p95_ms", P, minimum=0, maximum=600_000, strict_min=True)
    # at least 6 minutes a day: below that no service is run (and 5e-324 h once overflowed the costing)
    hpd = r.number(s, "hours_per_day", P, default=24.0, minimum=MIN_HOURS_PER_DAY, maximum=24)
    runtime = r.choice(s, "runtime", P, RUNTIMES, default=DEFAULT_RUNTIME)
    rpd = r.number(s, "requests_per_day", P, minimum=0, strict_min=True)
    model_api = _read_model_api(r, s.get("model_api"), f"{P}.model_api")
    if len(r.errors) > n0:
        return None
    if rpd is not None:
        most = rps * 3600.0 * hpd
        if rpd > most * (1 + 1e-12):
            r.err(f"{P}.requests_per_day", Msg(
                "at most {maximum:,.15g}: the peak of {rps:,.15g} requests/s held for {hours:,.15g} hours a day "
                "(requests_per_second x 3600 x hours_per_day); got {value:,.15g}",
                maximum=most, rps=rps, hours=hpd, value=rpd))
    if ctx is None:
        ctx = inp + out
    elif inp + out > ctx:
        r.err(f"{P}.context_length", Msg("must be >= input_tokens + output_tokens ({inp})", inp=inp + out))
    if max_ctx and ctx > max_ctx and model is not None and model.model_type == "decoder":
        r.err(f"{P}.context_length", Msg("{ctx} exceeds the model's maximum context ({max_ctx})", ctx=ctx, max_ctx=max_ctx))
    if len(r.errors) > n0:
        return None
    return ServingSpec(context_length=ctx, input_tokens=inp, output_tokens=out, concurrency=conc,
                       requests_per_second=rps, ttft_p95_ms=ttft, tpot_p95_ms=tpot, hours_per_day=hpd,
                       runtime=runtime, requests_per_day=rpd, model_api=model_api)


MAX_MODEL_APIS = 50


def _read_model_api(r: _Reader, value, field: str) -> tuple[str, ...]:
    """serving.model_api: one "provider/model" or a list of them (compared); the catalog check
    (is it priced?) comes when the plan is priced."""
    if value is None:
        return ()
    items = [value] if isinstance(value, str) else value
    if not isinstance(items, list | tuple) or len(items) > MAX_MODEL_APIS:
        r.err(field, Msg("a \"provider/model\" string or a list of at most {n} of them", n=MAX_MODEL_APIS))
        return ()
    out: list[str] = []
    for item in items:
        text = item.strip() if isinstance(item, str) else None
        provider, _, model = (text or "").partition("/")
        if not text or not provider.strip() or not model.strip() or len(text) > 200 or _UNSTORABLE.search(text):
            r.err(field, Msg("each model API is \"provider/model\" (e.g. OpenAI/gpt-4o-mini), got {value}",
                             value=repr(item)[:80]))
            return ()
        out.append(f"{provider.strip()}/{model.strip()}")
    return tuple(dict.fromkeys(out))


def _read_rag(r: _Reader, g: Mapping, *, required: bool) -> RagSpec | None:
    P = "rag"
    n0 = len(r.errors)
    if required:
        r.err(P, Msg("required for kind rag (at least rag.documents)"))
        return None
    docs = r.integer(g, "documents", P, minimum=1, maximum=10**11, required=True)
    tpd = r.integer(g, "tokens_per_document", P, default=1000, minimum=1, maximum=10**8)
    chunk = r.integer(g, "chunk_tokens", P, default=512, minimum=16, maximum=32768)
    emb = None
    em = g.get("embedding_model")
    if em is not None:
        pid = em.get("preset") if isinstance(em, Mapping) else em
        p = get_preset(pid) if isinstance(pid, str) else None
        if p is None or p.model_type != "encoder":
            allowed = [x for x in preset_ids() if get_preset(x).model_type == "encoder"]
            r.err(f"{P}.embedding_model", Msg("unknown embedding preset {pid}; allowed: {allowed}", pid=repr(pid), allowed=', '.join(allowed)))
        else:
            emb = preset_arch(pid)
    if emb is None and em is None:
        emb = preset_arch("bge-large-en-v1.5")
    default_dim = (emb.embedding_dim if emb is not None and emb.embedding_dim else 1024)
    dim = r.integer(g, "embedding_dimension", P, default=default_dim, minimum=1, maximum=65536)
    index = r.choice(g, "index", P, INDEXES, default="hnsw")
    qps = r.number(g, "queries_per_second", P, default=1.0, minimum=0, maximum=1_000_000)
    top_k = r.integer(g, "top_k", P, default=5, minimum=1, maximum=1000)
    gen = r.choice(g, "generator", P, GENERATORS, default="self_hosted")
    if emb is not None and emb.max_position_embeddings and chunk > emb.max_position_embeddings:
        r.err(f"{P}.chunk_tokens", Msg("must be <= the embedding model's input limit ({max_position_embeddings})", max_position_embeddings=emb.max_position_embeddings))
    if len(r.errors) > n0:
        return None
    return RagSpec(documents=docs, tokens_per_document=tpd, chunk_tokens=chunk, embedding_model=emb,
                   embedding_dimension=dim, index=index, queries_per_second=qps, top_k=top_k, generator=gen)
