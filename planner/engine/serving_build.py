"""Engine arrays from a model, a layout and the constants (docs/SIZING.md "Serving model").

Split from serving_model.py: how the per-GPU rates, weights, KV, collectives and speculative
decoding of one replica are put into an Engine (serving_moe.py has the MoE arithmetic).
"""

from __future__ import annotations

import numpy as np

from . import compressed_attention, hyper_connections
from .architecture import ModelArch, embedding_and_head_params, kv_cache_bytes_per_token
from .moe_comm import DISPATCH_BYTES
from .precision import weight_part_bytes
from .serving_constants import ALLREDUCE_BUS_EFFICIENCY, PP_HOP_S
from .serving_model import Engine, moe_split
from .serving_moe import (
    MTP_DRAFT_TOKENS,
    a2a_latency_units,
    attention_weight_params,
    collectives,
    speculative,
)


def build_engine(*, arch: ModelArch, weights: str, kv_precision: str, isl, osl, tp, pp, peak_tflops, bandwidth_gb_s,
                 consts: dict, kernel: float, link_gb_s, link_latency_s, budget, n_max, ep=1, dpa=False,
                 mtp_accepted=None, prompt_share=1.0, mtp_draft=MTP_DRAFT_TOKENS, mtp_reference_drafts=None,
                 dp_balance=False, per_rank_budget=False,
                 mtp_on=True, dec_attn_rate=1.0, dispatch_bytes=DISPATCH_BYTES, moe_gather=False, attn_module_s=0.0,
                 attn_prefill_module_s=0.0) -> Engine:
    """Engine arrays from a model, a layout and the constants (all array-friendly).

    ep / dpa: expert parallel size and data-parallel attention inside the tp group (serving_moe.py);
    mtp_accepted: tokens accepted per step with MTP speculative decoding (None: off), where `mtp_on`
    (broadcast over the layouts: the search's MTP variants), stated at `mtp_reference_drafts` draft tokens
    (None: at `mtp_draft`, the drafts the engine runs; serving_moe.accepted_at); prompt_share 0:
    a decode-only worker of a disaggregated deployment (serving_disagg.py); dp_balance: the runtime
    balances context requests over the attention-DP ranks (TensorRT-LLM, serving_model.Engine); per_rank_budget:
    each attention-DP rank schedules its own `budget` tokens per step (serving_moe.PER_RANK_BUDGET_RUNTIMES);
    dispatch_bytes: bytes per value of the MoE all-to-all dispatch (serving_moe.dispatch_bytes_per_value);
    moe_gather: the DPA MoE layers gather / reduce-scatter the step's tokens instead (serving_moe.moe_gathers);
    attn_module_s: the measured batch-1 latency of every attention module of one forward pass
    (compressed_attention.module_floor_s; 0 where none is measured); attn_prefill_module_s: their measured
    prefill time per prompt token (compressed_attention.prefill_module_s_per_token)."""
    f = lambda x: np.asarray(x, dtype=float)  # noqa: E731
    tp, pp = f(tp), f(pp)
    dpa = np.asarray(dpa, dtype=bool)
    dense, routed = moe_split(arch)
    # DPA replicates the attention weights on every rank: per GPU (dense - attn) / tp + attn, written
    # as a replica total that the engine divides by tp.
    attn_w = attention_weight_params(arch)
    dense = np.where(dpa, dense + attn_w * (tp - 1.0), dense)
    # each part in its own storage format (a checkpoint's mixed format, precision.WeightFormat)
    dense_bytes, routed_bytes = weight_part_bytes(weights, rest_params=dense, expert_params=routed,
                                                  embedding_params=embedding_and_head_params(arch))
    kvpt = kv_cache_bytes_per_token(arch, kv_precision=kv_precision)
    if arch.is_mla:
        kv_split = np.ones_like(tp)
    else:
        kv_split = np.minimum(tp, float(arch.kv_heads or 1))
    kv_split = np.where(dpa, tp, kv_split)  # DPA: each rank holds the KV of its own sequences
    layers = float(arch.layers or 1)
    attn = 0.0
    if arch.is_transformer and arch.attention_heads:
        qk = arch.head_dim or (arch.hidden_size // arch.attention_heads)
        attn = 4.0 * layers * arch.attention_heads * qk
    variant = {}
    if arch.is_mla and arch.kv_lora_rank:
        # MLA decode runs absorbed (W_UK into the query, W_UV after the output: DeepSeek-V2 sec. 2.1.2;
        # FlashMLA, TensorRT-LLM and SGLang decode kernels): every head scores the cached latent + rope
        # (kv_lora_rank + qk_rope_head_dim values) and sums the latent (kv_lora_rank), 2 FLOPs each per
        # context token, instead of the head_dim 4 x 192 of the unabsorbed (prefill) form
        latent = 2.0 * float(arch.kv_lora_rank) + float(arch.qk_rope_head_dim or 0)
        variant = dict(attn_flops_decode=2.0 * layers * arch.attention_heads * latent * (f(isl) + f(osl) / 2.0))
    if arch.is_compressed_attention:  # DeepSeek-V4: per-layer window / CSA / HCA (compressed_attention.py)
        ctx_d = f(isl) + f(osl) / 2.0
        dec_flops, dec_read = compressed_attention.decode_attention(arch, ctx_d, kv_precision=kv_precision)
        variant = dict(attn_flops_decode=dec_flops, kv_read_decode_gpu=dec_read / (kv_split * pp),
                       attn_flops_prefill=compressed_attention.prefill_attention_flops(arch, f(isl)))
    c = {k: f(v) for k, v in consts.items()}
    flops_s = f(peak_tflops) * 1e12 * c["prefill_efficiency"] * kernel * c.get("compute_factor", 1.0)
    lat = np.where(np.isnan(f(link_latency_s)), c["allreduce_latency_s"], f(link_latency_s))
    # Ring all-reduces (2 per layer) or, with DPA, the MoE all-to-all (serving_moe.collectives).
    ar, per_token = collectives(arch, tp=tp, ep=f(ep), dpa=dpa, link_gb_s=f(link_gb_s),
                                a2a_efficiency=c.get("all_to_all_efficiency", ALLREDUCE_BUS_EFFICIENCY),
                                allreduce_efficiency=ALLREDUCE_BUS_EFFICIENCY, dispatch_bytes=f(dispatch_bytes),
                                gather=np.asarray(moe_gather, dtype=bool),
                                gather_efficiency=c.get("moe_gather_efficiency", ALLREDUCE_BUS_EFFICIENCY))
    q, acc, draft = speculative(arch, mtp_accepted, mtp_draft, on=mtp_on, reference_drafts=mtp_reference_drafts)
    bytes_s = f(bandwidth_gb_s) * 1e9 * c["decode_bandwidth_efficiency"] * kernel
    # DeepSeek-V4 hyper-connections: a latency per layer per step + bytes per token (hyper_connections.py)
    hc_fixed, hc_token = hyper_connections.step_costs(arch, bytes_s=bytes_s, tp=tp, dpa=dpa, draft_share=draft)
    # MLA: a fixed time per MLA layer per forward pass, the main layers and the MTP draft passes
    # (serving_constants.MLA_LAYER_OVERHEAD_S); PP stages run their layers one after another.
    mla_fixed = (layers * (1.0 + f(draft)) * c.get("mla_layer_overhead_s", 0.0)) if arch.is_mla else 0.0
    # MoE: a fixed time per MoE layer per forward pass (serving_constants.MOE_LAYER_OVERHEAD_S)
    moe_layers = arch.moe_layers
    moe_fixed = moe_layers * (1.0 + f(draft)) * c.get("moe_layer_overhead_s", 0.0)
    # MoE all-to-all: a fixed time per MoE layer per doubling of the EP ranks (serving_constants.ALL_TO_ALL_LATENCY_S)
    a2a_fixed = (1.0 + f(draft)) * a2a_latency_units(arch, ep=f(ep), dpa=dpa, gather=moe_gather) \
        * c.get("all_to_all_latency_s", 0.0)
    # Measured attention modules (DeepSeek-V4): their latency less the attention weights' read at the peak bandwidth,
    # which the step already charges (as the MLA preset, serving_constants.MLA_LAYER_OVERHEAD_PRESET_S)
    attn_rank_bytes = weight_part_bytes(weights, rest_params=attn_w, expert_params=0.0, embedding_params=0.0)[0] \
        / np.where(dpa, 1.0, tp)
    module_fixed = (1.0 + f(draft)) * np.maximum(f(attn_module_s) - attn_rank_bytes / (f(bandwidth_gb_s) * 1e9), 0.0)
    # Their prefill, less what the engine already charges them per prompt token: the attention projections'
    # matmuls and the attention FLOPs at the engine's sustained rate
    own_attn_s = (2.0 * attn_w + f(variant.get("attn_flops_prefill", 0.0))) / (tp * pp * flops_s)
    prefill_module = np.maximum(f(attn_prefill_module_s) - own_attn_s, 0.0)
    return Engine(
        isl=f(isl), osl=f(osl), flops_per_token=f(2.0 * arch.active_params), attn_flops_per_ctx=f(attn), layers=f(layers),
        tp=tp, pp=pp, dense_weight_bytes=f(dense_bytes), expert_weight_bytes=f(routed_bytes),
        expert_touch=f(arch.experts_per_token / arch.experts if arch.is_moe else 0.0),
        experts=f(arch.experts if arch.is_moe else 0.0),
        expert_row_flops=f(2.0 * routed / arch.experts if arch.is_moe and routed else 0.0),
        kv_bytes_per_token_gpu=kvpt / (kv_split * pp), kv_split=kv_split,
        flops_s=flops_s, prefill_module_s=prefill_module,
        bytes_s=bytes_s,
        overhead_s=(c["step_overhead_s"] + layers * c["layer_overhead_s"] + (pp - 1.0) * PP_HOP_S + hc_fixed
                    + mla_fixed + moe_fixed + module_fixed),
        comm_fixed_s=ar * lat + a2a_fixed, comm_per_token_s=per_token, hc_per_token_s=f(hc_token), budget=f(budget), n_max=f(n_max),
        cohort_factor=c["ttft_cohort_factor"], request_overhead_s=c["request_overhead_s"],
        poll_steps=f(c.get("scheduler_poll_steps", 1.0)),
        spec_q=f(q), spec_a=f(acc), draft_share=f(draft), prompt_share=f(prompt_share),
        dp_balance_ranks=np.where(dpa & bool(dp_balance), tp, 1.0),
        budget_ranks=np.where(dpa & bool(per_rank_budget), tp, 1.0), dec_attn_rate=f(dec_attn_rate), **variant,
    )
