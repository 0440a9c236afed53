"""WorkloadSpec: the one validated input of the sizing engine (web form, API and CLI share it).

`parse_workload_spec(data)` turns a JSON-like mapping into frozen dataclasses, or raises
SpecValidationError listing *every* problem with its dotted field path. The JSON shape is
documented in docs/WORKLOADSPEC.md.

The dataclasses and vocabularies are in ``spec_types``, the reader in ``spec_reader``, the model
section in ``spec_model``, the other sections in ``spec_sections``; every public name is
re-exported here (the old import path).
"""

from __future__ import annotations

from collections.abc import Mapping

from catalog.domain.messages import Msg

from .errors import FieldError, SpecValidationError
from .precision import PRECISIONS, WeightFormat
from .spec_mechanisms import check_mechanisms
from .spec_model import (
    ARCH_FIELDS,
    ARCH_INT_BOUNDS,
    _read_model,
)
from .spec_reader import _Reader
from .spec_sections import (
    MAX_MODEL_APIS,
    _check_serving_layout,
    _read_rag,
    _read_serving,
    _read_training,
)
from .spec_training_layout import check_training_layout
from .spec_types import (
    ADAPTER_PRECISIONS,
    ATTENTION_IMPLEMENTATIONS,
    AVERAGE_TO_PEAK_RATIO,
    CHECKPOINTING,
    CONTEXT_PARALLEL,
    GENERATORS,
    INDEXES,
    KINDS,
    LLM_KINDS,
    LORA_TARGETS,
    MASTER_WEIGHTS,
    MAX_PARAMS,
    MAX_SEQ,
    MAX_TOKENS,
    METHODS,
    MIN_CHECKPOINT_EVERY_HOURS,
    MIN_GOODPUT,
    MIN_HOURS_PER_DAY,
    OPTIMIZERS,
    STATE_PRECISIONS,
    DataSpec,
    HardwareSpec,
    PrecisionSpec,
    RagSpec,
    ServingSpec,
    TrainingSpec,
    WorkloadSpec,
)

__all__ = [
    "ADAPTER_PRECISIONS",
    "ARCH_FIELDS",
    "ARCH_INT_BOUNDS",
    "ATTENTION_IMPLEMENTATIONS",
    "AVERAGE_TO_PEAK_RATIO",
    "CHECKPOINTING",
    "CONTEXT_PARALLEL",
    "DataSpec",
    "GENERATORS",
    "HardwareSpec",
    "INDEXES",
    "KINDS",
    "LLM_KINDS",
    "LORA_TARGETS",
    "MASTER_WEIGHTS",
    "MAX_MODEL_APIS",
    "MAX_PARAMS",
    "MAX_SEQ",
    "MAX_TOKENS",
    "METHODS",
    "MIN_CHECKPOINT_EVERY_HOURS",
    "MIN_GOODPUT",
    "MIN_HOURS_PER_DAY",
    "OPTIMIZERS",
    "PrecisionSpec",
    "RagSpec",
    "STATE_PRECISIONS",
    "ServingSpec",
    "TrainingSpec",
    "WorkloadSpec",
    "parse_workload_spec",
]


SERVING_KINDS = ("inference", "rag")  # kinds that serve the model itself (rag: its self-hosted generator)


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
    # Serving runs the published checkpoint as stored (gpt-oss: MXFP4 experts, DeepSeek-V3: FP8), so a
    # catalog model's own format is the default there. Training kinds keep 16-bit: training updates
    # 16-bit (fp32 master) weights, whatever format the checkpoint was distributed in.
    if kind in SERVING_KINDS and model is not None and model.preset_id and model.checkpoint_weights:
        default_w = WeightFormat(model.checkpoint_weights)
    weights = r.choice(p, "weights", "precision", PRECISIONS, default=default_w)
    # With the checkpoint's format the matmuls default to it too (how the serving constants were fitted:
    # weights = compute = the measured row's format); chips without those units dequantise (compute_format).
    default_c = str(weights) if isinstance(weights, WeightFormat) else "bf16"
    precision = PrecisionSpec(
        weights=weights,
        compute=r.choice(p, "compute", "precision", PRECISIONS, default=default_c),
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
        expert_parallel=r.integer(h, "expert_parallel", "hardware", minimum=1, maximum=1024),
        data_parallel_attention=r.boolean(h, "data_parallel_attention", "hardware"),
        power_budget_kw=r.number(h, "power_budget_kw", "hardware", minimum=0.0, maximum=1e6, strict_min=True),
        racks=r.integer(h, "racks", "hardware", minimum=1, maximum=100000),
    )
    _check_serving_layout(r, hardware, kind=kind, model=model)
    check_training_layout(r, training, hardware, kind=kind, model=model)
    check_mechanisms(r, hardware, serving, kind=kind, model=model)
    if model is not None and model.model_type == "vision" and kind in LLM_KINDS:
        r.err("model", Msg("a vision model ({name}) cannot be sized as {kind}; use classic_training", name=model.name, kind=kind))
    # A vision architecture given by hand needs its FLOPs too: the run time is 3 x FLOPs per sample x samples.
    if model is not None and kind == "classic_training" and not model.flops_per_sample:
        r.err("model.architecture.flops_per_sample", Msg("required for classic_training"))
    if r.errors:
        raise SpecValidationError(r.errors)
    return WorkloadSpec(kind=kind, name=name, model=model, model_source=model_source, precision=precision,
                        training=training, serving=serving, rag=rag, data=data_spec, hardware=hardware)
