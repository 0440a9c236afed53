"""DeepSeek-V4 compressed attention: KV bytes and attention work per layer by its compress ratio.

docs/SIZING.md "Compressed attention (DeepSeek-V4)". A layer's `compress_ratios` entry (config.json)
says what it keeps and attends to; every layer also keeps a `sliding_window` of uncompressed entries:

- 0: sliding window only (`window` entries of head_dim values);
- 4, compressed sparse attention (CSA): + floor(ctx / 4) compressed entries and an FP4 indexer key
  (index_head_dim values) per compressed entry; a query attends to the window plus the
  min(ctx / 4, index_topk) entries the indexer selects, the indexer scoring every compressed entry
  with index_n_heads heads of index_head_dim;
- 128, heavily compressed attention (HCA): + floor(ctx / 128) entries, all attended.

One entry is head_dim values at the KV-cache precision (one KV head shared by every query head, MLA-
style); each compressing layer also keeps an fp32 compressor state per sequence (kv and score
buffers). Formulas follow NVIDIA AIConfigurator (ai-dynamo/aiconfigurator@095f58a51c4c):
`DeepSeekV4Model.get_kvcache_bytes_per_sequence` (aic-core/src/aiconfigurator_core/sdk/models/
deepseek_v4.py lines 376-395) and the speed-of-light `dsv4_attention_sol_ms`
(aic-core/rust/aiconfigurator-core/src/perf_database/dsv4.rs lines 1188-1300: window / compressed
pairs, 4 x heads x head_dim FLOPs per pair, indexer 2 x pairs x index_n_heads x index_head_dim,
KV read = pairs x head_dim + the indexer cache). Pure arithmetic; no fitted constant.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from .precision import BYTES_PER_VALUE

CSA, HCA = 4, 128  # the compress ratios the engines implement (sglang/vLLM assert {0, 4, 128})
INDEXER_BYTES_PER_VALUE = 0.5  # FP4 indexer keys (AIConfigurator common.deepseek_v4_indexer_cache_entry_bytes)
STATE_BYTES_PER_VALUE = 4.0  # fp32 compressor kv_state and score_state buffers


def layer_counts(a) -> tuple[int, int, int]:
    """(window-only layers, CSA layers, HCA layers) of a compressed-attention model."""
    r = a.compress_ratios
    return sum(1 for x in r if x == 0), sum(1 for x in r if x == CSA), sum(1 for x in r if x == HCA)


def _entry_bytes(a, kv_precision: str) -> float:
    return a.head_dim * BYTES_PER_VALUE[kv_precision]


def state_bytes_per_sequence(a) -> float:
    """fp32 compressor state per sequence: 2 x ratio x coff x head_dim per compressing layer (coff 2 for
    CSA's overlapping windows), + the CSA indexer compressor's 2 x 4 x 2 x index_head_dim."""
    _, csa, hca = layer_counts(a)
    per_csa = 2 * CSA * 2 * a.head_dim + 2 * CSA * 2 * a.index_head_dim
    per_hca = 2 * HCA * 1 * a.head_dim
    return STATE_BYTES_PER_VALUE * (csa * per_csa + hca * per_hca)


def kv_bytes_per_sequence(a, *, tokens: int, kv_precision: str) -> float:
    """KV-cache bytes of one sequence of `tokens` (exact: window cap and whole compressed entries)."""
    t = max(0, int(tokens))
    e = _entry_bytes(a, kv_precision)
    idx = a.index_head_dim * INDEXER_BYTES_PER_VALUE
    total = len(a.compress_ratios) * min(t, a.sliding_window) * e
    for r in a.compress_ratios:
        if r:
            total += (t // r) * e + ((t // r) * idx if r == CSA else 0.0)
    return total + state_bytes_per_sequence(a)


def kv_bytes_per_context_token(a, *, kv_precision: str) -> float:
    """Bytes each further token adds once past the window: one entry per ratio tokens (+ indexer key)."""
    _, csa, hca = layer_counts(a)
    return csa * (_entry_bytes(a, kv_precision) + a.index_head_dim * INDEXER_BYTES_PER_VALUE) / CSA \
        + hca * _entry_bytes(a, kv_precision) / HCA


def kv_fixed_bytes_per_sequence(a, *, kv_precision: str) -> float:
    """The part of a sequence's KV that does not grow with it: the full windows + compressor state."""
    return len(a.compress_ratios) * a.sliding_window * _entry_bytes(a, kv_precision) + state_bytes_per_sequence(a)


def _pairs(a, ctx):
    """Entries one query attends to over all layers at context ctx (window + selected/compressed)."""
    _, csa, hca = layer_counts(a)
    ctx = np.asarray(ctx, dtype=float)
    return (len(a.compress_ratios) * np.minimum(ctx, a.sliding_window)
            + csa * np.minimum(ctx / CSA, a.index_topk) + hca * ctx / HCA)


def decode_attention(a, ctx, *, kv_precision: str):
    """(attention FLOPs, KV bytes read) of one token at context ctx, all layers, whole replica."""
    _, csa, _ = layer_counts(a)
    ctx = np.asarray(ctx, dtype=float)
    pairs = _pairs(a, ctx)
    flops = 4.0 * a.attention_heads * a.head_dim * pairs + csa * 2.0 * (ctx / CSA) * a.index_heads * a.index_head_dim
    read = pairs * _entry_bytes(a, kv_precision) + csa * (ctx / CSA) * a.index_head_dim * INDEXER_BYTES_PER_VALUE
    return flops, read


def _mean_min(P, slope: float, cap: float):
    """Mean over positions p in [0, P] of min(slope x p, cap)."""
    P = np.maximum(np.asarray(P, dtype=float), 1e-9)
    p0 = cap / slope
    ramp = slope * P / 2.0
    capped = (slope * p0 * p0 / 2.0 + cap * (P - p0)) / P
    return np.where(P <= p0, ramp, capped)


def prefill_attention_flops(a, prompt):
    """Attention FLOPs per prompt token, averaged over the prompt's positions (causal)."""
    _, csa, hca = layer_counts(a)
    pairs = (len(a.compress_ratios) * _mean_min(prompt, 1.0, a.sliding_window)
             + csa * _mean_min(prompt, 1.0 / CSA, a.index_topk) + hca * np.asarray(prompt, dtype=float) / (2.0 * HCA))
    indexer = csa * 2.0 * (np.asarray(prompt, dtype=float) / (2.0 * CSA)) * a.index_heads * a.index_head_dim
    return 4.0 * a.attention_heads * a.head_dim * pairs + indexer


def attention_params_per_layer(a, ratio: int) -> int:
    """Weights of one attention layer (the modules AIConfigurator's SOL reads, dsv4.rs 1280-1290):
    wq_a, wq_b, wkv, grouped wo_a, wo_b; the compressor (wkv + wgate, doubled for CSA's overlap); the
    CSA indexer's query projection, head weights and its own compressor; plus the q / kv norms."""
    h, q, o, hd, nh = a.hidden_size, a.q_lora_rank, a.o_lora_rank, a.head_dim, a.attention_heads
    p = h * q + q * nh * hd + h * hd + nh * hd * o + a.o_groups * o * h + q + hd
    if ratio:
        p += 2 * h * (2 if ratio == CSA else 1) * hd
    if ratio == CSA:
        p += q * a.index_heads * a.index_head_dim + h * a.index_heads + 2 * h * 2 * a.index_head_dim
    return p


def attention_params_total(a) -> int:
    return sum(attention_params_per_layer(a, r) for r in a.compress_ratios)



# The measured decode latency of a whole V4 attention module at batch 1 (projections, compressor, CSA indexer and
# top-k, sparse attention): a launch-and-drain time per layer that does not shrink with the batch, which the step's
# bytes and FLOPs above do not carry. Per (runtime, chip generation), CSA below / above its top-k threshold and HCA,
# by heads on the GPU: data/compressed_attention_modules.json, extracted from NVIDIA's collected kernel tables by
# scripts/extract_attention_modules.py (its docstring and the file's "source" say which tables and how). No row of
# serving_fit.csv is fitted on. A runtime or generation without a table (ATOM, AMD, TensorRT-LLM on Hopper): 0.
_MODULES = json.loads((Path(__file__).parent / "data" / "compressed_attention_modules.json").read_text())
MODULE_FLOORS_S: dict[tuple[str, str], dict[str, dict[float, float]]] = {
    tuple(k.split("|")): {regime: {float(h): s for h, s in t.items()} for regime, t in v.items()}
    for k, v in _MODULES["floors_s"].items()}
MODULE_SOURCE = _MODULES["source"]


def _by_heads(table: dict[float, float], heads):
    """The table's latency at `heads` per GPU: linear in log2(heads) between the measured counts, held at the ends."""
    h = np.sort(np.array(list(table), dtype=float))
    return np.interp(np.log2(np.maximum(np.asarray(heads, dtype=float), 1.0)), np.log2(h), [table[x] for x in h])


def _measured(a, runtime: str, generation: str, regime: str):
    """The runtime and generation's module tables if the model has compressed attention and they hold `regime`."""
    t = MODULE_FLOORS_S.get((runtime, generation))
    return t if getattr(a, "is_compressed_attention", False) and t is not None and regime in t else None


def module_floor_s(a, *, runtime: str, generation: str, heads_per_gpu, ctx):
    """Seconds per forward pass of every compressed-attention layer's module at batch 1 (0: not such a model,
    or no measured table for the runtime and generation). ctx: the decode context; CSA's indexer selects its
    top-k once the compressed entries exceed index_topk (ctx > index_topk x 4)."""
    t = _measured(a, runtime, generation, "csa_short")
    if t is None:
        return 0.0
    _, csa, hca = layer_counts(a)
    long = np.asarray(ctx, dtype=float) > a.index_topk * CSA
    csa_s = np.where(long, _by_heads(t["csa_long"], heads_per_gpu), _by_heads(t["csa_short"], heads_per_gpu))
    return csa * csa_s + hca * _by_heads(t["hca"], heads_per_gpu)


def prefill_module_s_per_token(a, *, runtime: str, generation: str, heads_per_gpu, tp, dpa):
    """Seconds each further prompt token costs in every compressed-attention layer's prefill module, per token of
    the replica (0 as module_floor_s). Measured at batch 1 (the context tables' slope over 1,024-16,384 tokens) at
    the heads a rank runs; with data-parallel attention a rank runs all heads for its own 1 / tp of the tokens."""
    t = _measured(a, runtime, generation, "csa_prefill")
    if t is None:
        return 0.0
    _, csa, hca = layer_counts(a)
    per_token = csa * _by_heads(t["csa_prefill"], heads_per_gpu) + hca * _by_heads(t["hca_prefill"], heads_per_gpu)
    return np.where(np.asarray(dpa, dtype=bool), per_token / np.asarray(tp, dtype=float), per_token)
