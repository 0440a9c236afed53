"""Manifold-constrained hyper-connections (DeepSeek-V4 mHC): the per-layer work a plain residual lacks.

docs/SIZING.md "Hyper-connections (DeepSeek-V4 mHC)". A model whose config.json has hc_mult > 1 keeps
hc_mult residual streams of hidden_size per token. Around each of a layer's two sublayers (attention,
FFN) the engine runs an mHC "pre" (RMS-norm the streams, a small linear to the (2 + hc_mult) x hc_mult
mixing coefficients, hc_sinkhorn_iters Sinkhorn iterations, the weighted sum that is the sublayer's
input) and an mHC "post" (mix the streams and add the sublayer's output). Neither is split by tensor
parallelism: every rank runs it for every token it holds (with data-parallel attention, its own).

Per layer and step it costs a latency that does not depend on the batch plus a memory-bound part per
token (AIConfigurator's collector, ai-dynamo/aiconfigurator@095f58a51c4c, aic-core/src/
aiconfigurator_core/systems/data/*/mhc/*/mhc_module_perf.parquet, one "pre" + one "post" row per layer
covering both sites, num_sites 2; hidden 7168, hc_mult 4, bf16, read 2026-12-03):
- latency: pre + post at 1-64 tokens is 28-36 us on every Hopper and Blackwell table (H100, H200, B200,
  B300, GB200, GB300 x SGLang 0.5.14, TensorRT-LLM 1.3.0rc20, vLLM 0.24.0, and B200 x SGLang 0.5.10:
  19 tables, median 31.8 us), whatever the
  chip's bandwidth: the sequential Sinkhorn iterations and the two kernels' launch, not bytes;
- per token: the slope from 1,024 to 8,192 tokens is 75-83 ns on Blackwell (8 TB/s), 118-131 ns on H200
  (4.8 TB/s), 171-177 ns on H100 (3.35 TB/s): inversely proportional to the bandwidth, 580-640 KB per
  token per layer at the peak. The bytes counted here (per site: pre reads the streams twice, for the
  coefficients and for the weighted sum, and writes the sublayer input; post reads the streams and the
  sublayer output and writes the streams; bf16) are 2 x (4 hc_mult + 2) x hidden x 2 B = 516 KB, over
  the engine's sustained bandwidth. No constant fitted on serving rows.
"""

from __future__ import annotations

import numpy as np

SITES = 2  # attention and FFN sublayers of every layer
STREAM_BYTES_PER_VALUE = 2.0  # bf16 streams (AIConfigurator's mHC module: GEMMQuantMode.bfloat16)
# pre + post of one layer (both sites) at 1-64 tokens: median of the 19 Hopper/Blackwell tables named above
MHC_LAYER_LATENCY_S = 31.8e-6


def has_hyper_connections(a) -> bool:
    return (getattr(a, "hc_mult", 0) or 0) > 1


def bytes_per_token_per_layer(a) -> float:
    """Bytes one token moves through one layer's mHC (both sites, pre and post); 0 without mHC."""
    if not has_hyper_connections(a):
        return 0.0
    return SITES * (4.0 * a.hc_mult + 2.0) * a.hidden_size * STREAM_BYTES_PER_VALUE


def step_costs(a, *, bytes_s, tp, dpa, draft_share=0.0):
    """(seconds per step, seconds per step token) of the mHC on one rank of a replica.

    Per step: the latency of every layer a token passes (the main layers, plus the MTP layer per draft
    pass: layers x (1 + draft_share)). Per step token: its bytes through every layer over the rank's
    sustained bandwidth, divided by tp with data-parallel attention (each rank holds its own tokens)."""
    if not has_hyper_connections(a):
        return 0.0, 0.0
    layers = float(a.layers or 0)
    fixed = layers * (1.0 + np.asarray(draft_share, dtype=float)) * MHC_LAYER_LATENCY_S
    ranks = np.where(np.asarray(dpa, dtype=bool), np.asarray(tp, dtype=float), 1.0)
    per_token = layers * bytes_per_token_per_layer(a) / (np.asarray(bytes_s, dtype=float) * ranks)
    return fixed, per_token
