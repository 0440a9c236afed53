"""RAG sizing: the vector index, chunk text and embedding work of a retrieval-augmented workload
(shared by the GPU sizing, the serving sizing and the CPU-only agent server)."""

from __future__ import annotations

import math

from catalog.domain.messages import Msg

from . import infra, search, serving
from .hardware import AcceleratorSpec
from .result import q
from .spec import WorkloadSpec


def rag_index_bytes(spec: WorkloadSpec) -> tuple[float, str]:
    r = spec.rag
    chunks = r.documents * math.ceil(r.tokens_per_document / r.chunk_tokens)
    d = r.embedding_dimension
    if r.index == "flat":
        per, why = 4 * d, Msg("flat: {d} fp32 values", d=d)
        extra = 0.0
    elif r.index == "hnsw":
        per, why = 4 * d + 2 * 32 * 4, Msg("HNSW (M=32): {d} fp32 values + 64 links x 4 B", d=d)
        extra = 0.0
    else:
        m = max(8, d // 16)
        nlist = int(4 * math.sqrt(chunks))
        per, why = m + 8, Msg("IVF-PQ: {m}-byte code + 8-byte id", m=m)
        extra = nlist * d * 4.0
        why += Msg(" + {nlist} centroids", nlist=nlist)
    return chunks * per + extra, Msg("{chunks:,} chunks x {why}", chunks=chunks, why=why)


def rag_section(spec: WorkloadSpec, acc: AcceleratorSpec | None) -> dict:
    r = spec.rag
    emb = r.embedding_model
    chunks = r.documents * math.ceil(r.tokens_per_document / r.chunk_tokens)
    tokens = r.documents * r.tokens_per_document
    idx, why = rag_index_bytes(spec)
    out = {
        "chunks": q(float(chunks), "chunks", Msg("{documents:,} documents x ceil({tokens_per_document}/{chunk_tokens})", documents=r.documents, tokens_per_document=r.tokens_per_document, chunk_tokens=r.chunk_tokens)),
        "embedding_model": emb.name if emb else None,
        "index_bytes": q(idx, "bytes", why),
        "chunk_text_bytes": q(chunks * r.chunk_tokens * 4.0, "bytes", Msg("chunk text at ~4 bytes per token, on NVMe")),
    }
    if emb is not None:
        cpu_tok_s = infra.CPU_EMBED_GFLOPS_PER_CORE * 1e9 / (2.0 * emb.params)
        out["ingest_cpu_core_hours"] = q(tokens / cpu_tok_s / 3600, "core-hours",
                                         Msg("{tokens:.3g} tokens x 2 x {params:,} params at {cpu_embed_gflops_per_core:g} GFLOP/s per core (assumption)", tokens=tokens, params=emb.params, cpu_embed_gflops_per_core=infra.CPU_EMBED_GFLOPS_PER_CORE))
        if acc is not None:
            peak, _ = search.peak_tflops(acc, "bf16")
            if peak:
                gpu_tok_s = serving.embedding_throughput_tokens_s(params=emb.params, peak_tflops=peak)
                out["ingest_gpu_hours"] = q(tokens / gpu_tok_s / 3600, "GPU-hours", Msg("on one {model} at 50% of bf16 peak", model=acc.model))
        q_tokens = 32
        out["query_embedding_cpu_cores"] = q(math.ceil(r.queries_per_second * q_tokens / cpu_tok_s / 0.5) or 1, "cores",
                                             Msg("{queries_per_second:g} queries/s x ~{q_tokens} tokens at 50% CPU load", queries_per_second=r.queries_per_second, q_tokens=q_tokens))
    return out
