"""Serving: prefill (compute-bound), decode (bandwidth-bound at small batch, compute-bound at
large batch), TTFT, TPOT, concurrency and replicas (docs/SIZING.md). Array-friendly.

Efficiency constants were chosen with the only decode measurement in the reference cases in
view (TensorRT-LLM GPT-J 6B, A100 FP16 / H100 FP8, batch 1); they are assumptions, not
validated across engines: treat latencies as +-30 %.
"""

from __future__ import annotations

import numpy as np

from .architecture import ModelArch, forward_flops_per_token

# Achieved share of peak memory bandwidth when streaming weights (MBU), by weight format:
# low-bit kernels dequantise on the fly and reach lower bandwidth utilisation.
MBU = {"fp32": 0.7, "bf16": 0.7, "fp16": 0.7, "fp8": 0.45, "int8": 0.45, "int4": 0.35}
PREFILL_EFFICIENCY = 0.5  # share of dense peak reached by prefill GEMMs
DECODE_COMPUTE_EFFICIENCY = 0.5  # share of peak in the compute-bound regime of decode
LAYER_OVERHEAD_S = 20e-6  # kernel launches / scheduling per layer per forward step
TP_LAYER_OVERHEAD_S = 15e-6  # two all-reduces per layer when tensor parallel
REQUEST_OVERHEAD_S = 2e-3  # tokenisation, scheduling, sampling, detokenisation per request
TARGET_UTILISATION = 0.8  # plan replicas to run at <= 80 % of capacity (queueing headroom)
BATCH_GRID = np.array([1, 2, 4, 8, 16, 32, 64, 128, 256], dtype=float)  # 256 = vLLM max_num_seqs


PP_HOP_S = 30e-6  # hand-over of activations between pipeline stages, per stage boundary per step


def step_overhead_s(a: ModelArch, tp, pp=1):
    tp = np.asarray(tp, dtype=float)
    hops = (np.asarray(pp, dtype=float) - 1.0) * PP_HOP_S
    return (a.layers or 1) * (LAYER_OVERHEAD_S + np.where(tp > 1, TP_LAYER_OVERHEAD_S, 0.0)) + hops


def decode_step_s(a: ModelArch, *, batch, context_tokens, tp, bandwidth_gb_s, peak_tflops, weight_bytes,
                  kv_bytes_per_seq, weights_precision: str, pp=1):
    """Seconds per decode step of `batch` sequences (each step emits one token per sequence)."""
    batch = np.asarray(batch, dtype=float)
    share = min(1.0, a.active_params / a.params) if a.params else 1.0
    weights_read = weight_bytes * np.minimum(1.0, share * batch)  # MoE: experts touched grow with batch
    mem_s = (weights_read + batch * kv_bytes_per_seq) / (tp * bandwidth_gb_s * 1e9 * MBU[weights_precision])
    flops = batch * forward_flops_per_token(a, context_tokens=context_tokens)
    compute_s = flops / (tp * peak_tflops * 1e12 * DECODE_COMPUTE_EFFICIENCY)
    return np.maximum(mem_s, compute_s) + step_overhead_s(a, tp, pp)


def prefill_s(a: ModelArch, *, input_tokens, tp, bandwidth_gb_s, peak_tflops, weight_bytes,
              weights_precision: str, pp=1):
    """Seconds to process one prompt: compute-bound, but never faster than one weight read."""
    flops = input_tokens * forward_flops_per_token(a, context_tokens=input_tokens / 2)
    compute_s = flops / (tp * peak_tflops * 1e12 * PREFILL_EFFICIENCY)
    mem_s = weight_bytes / (tp * bandwidth_gb_s * 1e9 * MBU[weights_precision])
    return np.maximum(compute_s, mem_s) + step_overhead_s(a, tp, pp)


def ttft_s(prefill_seconds):
    return prefill_seconds + REQUEST_OVERHEAD_S


def replica_capacity_rps(*, batch, prefill_seconds, step_seconds, output_tokens):
    """Requests per second one replica completes with `batch` sequences in flight."""
    return batch / (prefill_seconds + output_tokens * step_seconds)


def embedding_throughput_tokens_s(*, params: float, peak_tflops, efficiency=PREFILL_EFFICIENCY):
    """Encoder embedding throughput: 2 FLOPs per parameter per token at prefill efficiency."""
    return peak_tflops * 1e12 * efficiency / (2.0 * params)
