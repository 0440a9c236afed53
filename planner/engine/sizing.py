"""size_workload: from a WorkloadSpec and the catalog to a SizingResult (pure)."""

from __future__ import annotations

import math
from collections.abc import Sequence

from catalog.domain.messages import Msg

from . import infra
from .calibration import NO_CALIBRATIONS, Calibrations
from .errors import FieldError, SpecValidationError
from .hardware import AcceleratorSpec
from .rag import rag_index_bytes, rag_section
from .resolve import resolve_accelerator
from .result import Configuration, SizingResult, q
from .serving_constants import RUNTIME_VENDORS
from .sizing_common import (
    ENGINE_VERSION,
    GIB,
    GIB_ASSUMPTION,
    SERVING_ASSUMPTIONS,
    _model_section,
    checkpoint_assumption,
)
from .sizing_serving import size_serving
from .sizing_training import _training
from .spec import WorkloadSpec

__all__ = ["ENGINE_VERSION", "size_workload"]


def size_workload(*, spec: WorkloadSpec, accelerators: Sequence[AcceleratorSpec],
                  calibrations: Calibrations = NO_CALIBRATIONS, chosen: Configuration | None = None,
                  search_memo: list | None = None) -> SizingResult:
    """Size a workload on the given catalog; `calibrations` (a team's measured efficiencies) replace
    the engines' presets by name (planner/engine/calibration.py). `chosen`: the configuration the plan
    decided on (one of this sizing's candidates); the result's recommendation, memory, serving and
    run-time sections then describe it instead of the sizing's own pick (fewest GPUs meeting the
    targets). A chosen configuration that is not among the candidates is ignored. `search_memo`: a list
    the caller keeps across the sizings of one plan, so an equal serving search runs once."""
    accs = list(accelerators)
    full_catalog = list(accs)
    warnings: list[str] = []
    if spec.hardware.accelerator:
        acc, note = resolve_accelerator(spec.hardware.accelerator, accs)
        accs = [acc]
        if note:
            warnings.append(note)
    vendor = RUNTIME_VENDORS.get(spec.serving.runtime) if spec.serving else None
    if vendor and spec.kind != "external_api":  # ATOM: AMD GPUs only; TensorRT-LLM: NVIDIA only
        if spec.hardware.accelerator and accs and accs[0].vendor != vendor:
            raise SpecValidationError([FieldError(field="serving.runtime", message=Msg(
                "{runtime} runs on {vendor} GPUs only; {chip} is not one", runtime=spec.serving.runtime,
                vendor=vendor, chip=accs[0].model))])
        accs = [a for a in accs if a.vendor == vendor]
    if spec.kind == "external_api" or (spec.kind == "rag" and spec.rag is not None and spec.rag.generator == "external_api"):
        return _cpu_only(spec, warnings)
    if not accs:
        warnings.append(Msg("the accelerator catalog is empty: no candidates can be evaluated"))
    if spec.kind in ("pretraining", "finetuning", "classic_training"):
        return _training(spec, accs, warnings, calibrations, chosen)
    return _serving(spec, accs, warnings, calibrations, full_catalog=full_catalog,
                    pinned=bool(spec.hardware.accelerator), chosen=chosen, search_memo=search_memo)


# ----------------------------------------------------------------------------------- serving


def _serving(spec: WorkloadSpec, accs: list[AcceleratorSpec], warnings: list, calibrations: Calibrations, *,
             full_catalog: list[AcceleratorSpec], pinned: bool, chosen: Configuration | None = None,
             search_memo: list | None = None) -> SizingResult:
    a, s = spec.model, spec.serving
    if spec.rag is not None and s.input_tokens < spec.rag.top_k * spec.rag.chunk_tokens:
        warnings.append(Msg("serving.input_tokens ({input_tokens}) is below the {top_k} x {chunk_tokens} retrieved tokens each prompt carries; raise it for a realistic sizing", input_tokens=s.input_tokens, top_k=spec.rag.top_k, chunk_tokens=spec.rag.chunk_tokens))
    if not a.has_kv_cache:
        warnings.append(Msg("{name} is not a generative decoder: serving figures assume it answers like an LLM", name=a.name))
    memory_section, compute_section, serving_section, cands, recommendation, rec_acc = ({}, {}, {}, {}, {}, None)
    if accs:
        memory_section, compute_section, serving_section, cands, recommendation, rec_acc = size_serving(
            spec, accs, warnings, calibrations, full_catalog=full_catalog, pinned=pinned, chosen=chosen,
            search_memo=search_memo)
    # Embedding ingest time is quoted on the recommended accelerator.
    rag_out = rag_section(spec, rec_acc) if spec.kind == "rag" else {}
    return SizingResult(engine_version=ENGINE_VERSION, kind=spec.kind, gpu_required=True, model=_model_section(spec),
                        memory=memory_section, compute=compute_section, serving=serving_section, rag=rag_out,
                        candidates=cands, recommendation=recommendation, warnings=tuple(warnings),
                        assumptions=SERVING_ASSUMPTIONS + checkpoint_assumption(spec))


# --------------------------------------------------------------------------------------- RAG


def _cpu_only(spec: WorkloadSpec, warnings: list[str]) -> SizingResult:
    s, d = spec.serving, spec.data
    rps = s.requests_per_second if s else 1.0
    rag = rag_section(spec, None) if spec.rag is not None else {}
    index = rag_index_bytes(spec)[0] if spec.rag is not None else 0.0
    emb_cores = rag.get("query_embedding_cpu_cores", {}).get("value", 0) or 0
    cores = max(4, math.ceil(rps * 0.05 / 0.5)) + emb_cores + 2
    ram = 8 * GIB + 1.3 * index + (spec.rag.embedding_model.params * 4 if spec.rag and spec.rag.embedding_model else 0)
    nvme = 100e9 + 2 * index + (rag.get("chunk_text_bytes", {}).get("value") or 0) + d.logs_gb_per_month * 1e9 * d.retention_months
    rec = {
        "gpu_needed": {"value": False, "explain": Msg("the model runs behind an external API: this server runs only the agent/RAG pipeline, vector database and queues, so CPU, RAM and NVMe suffice")},
        "cpu_cores": q(cores, "cores", Msg("orchestration ~50 ms CPU per request at {rps:g} rps and 50% load, + query embedding, + 2 for the OS", rps=rps)),
        "host_ram_bytes": q(ram, "bytes", Msg("8 GiB base + vector index x 1.3 (HNSW build/update headroom) + embedding model in fp32")),
        "nvme_bytes": q(nvme, "bytes", Msg("100 GB OS/images + 2x index (rebuild) + chunk text + logs x retention")),
        "network": {"user_traffic": Msg("10/25 GbE"), "explain": Msg("external API calls and user traffic are small")},
        "kubernetes": infra.kubernetes(servers=1, replicas=1, services=4 if spec.rag is not None else 2),
        **infra.monitoring("inference"),
    }
    return SizingResult(engine_version=ENGINE_VERSION, kind=spec.kind, gpu_required=False,
                        model=_model_section(spec) if spec.model is not None else {}, rag=rag,
                        recommendation=rec, warnings=tuple(warnings), assumptions=(GIB_ASSUMPTION,))
