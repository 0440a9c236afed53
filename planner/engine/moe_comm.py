"""Expert-parallel all-to-all of MoE training (docs/SIZING.md "Training efficiency", MoE).

With expert parallelism (EP) every MoE layer sends each token's hidden state to the GPUs that hold
its top-k experts (dispatch) and brings the k expert outputs back (combine), in the forward pass and
again, for the gradients, in the backward pass. No constant is fitted here: the bytes follow from
the architecture and the time from the catalog's link bandwidth.

    bytes per token = 2 (forward + backward) x L_moe x k x h x (b_dispatch + b_combine) x (EP - 1) / EP
                      x 3/2 with full recomputation (the forward, with its dispatch and combine, runs again)
    b_dispatch = b_combine = 2: Megatron-Core's default `alltoall` token dispatcher moves the bf16 hidden
                      states (fp8 dispatch is an option of DeepEP only), whatever the GEMM format
    time per token  = bytes per token / one-way link bandwidth (serving_constants.link: catalog
                      interconnect_gb_s / 2 on NVLink-class links, PCIe otherwise), also for a group that
                      spans scale-up domains: the scale-out bound (fabrics.all_to_all_link_gb_s) is not
                      charged, see docs/SIZING.md "Scale-up domains and scale-out links"
    factor          = 1 / (1 + all-to-all time / compute time), compute time = executed FLOPs per token /
                      (peak x E): the all-to-all is **not overlapped** with compute. Megatron-Bridge runs it
                      in the compute stream unless `overlap_moe_expert_parallel_comm` is set (an opt-in
                      tuning that its docs advise against with full recomputation; "MoE Expert-Parallel
                      Overlap", docs.nvidia.com/nemo/megatron-bridge/latest/skills/perf-techniques/
                      expert-parallel-overlap/SKILL.html). Both times are per GPU: tensor, pipeline and
                      context parallelism divide the tokens' FLOPs and their all-to-all bytes alike.

With `training.expert_overlap` (DeepSeek-V3's DualPipe, "full overlap of forward and backward
computation-communication phases", arXiv:2412.19437 sec. 3.2.1; Megatron-Bridge with
overlap_moe_expert_parallel_comm) the step is the longer of the two: factor = min(1, compute / all-to-all).

EP is not a WorkloadSpec field; it is chosen as Megatron-Core lays it out: expert-parallel ranks are
taken from the data-parallel (x context-parallel) ranks of one pipeline stage, kept inside one scale-up
domain so the all-to-all runs on the scale-up link: EP = the largest power of two that divides the experts,
is <= DP x CP and <= domain / TP (the domain is the server, 8 on HGX / OAM boards, and the NVL72 rack, 72,
on GB200 / GB300: fabrics.scale_up_domain; EP8 for every 8-GPU-server Megatron-Bridge 25.11 recipe of
Qwen3-30B-A3B, Qwen3-235B-A22B and DeepSeek-V3 on H100/B200, EP32/EP64 on GB200/GB300). Only the all-to-all time depends on it,
through (EP - 1) / EP. Expert weights are still counted in memory as split by TP x PP only.
"""

from __future__ import annotations

import numpy as np

from .architecture import ModelArch
from .hardware import AcceleratorSpec
from .precision import BYTES_PER_VALUE
from .serving_constants import link

DISPATCH_BYTES = BYTES_PER_VALUE["bf16"]  # Megatron-Core alltoall dispatcher: bf16 hidden states
COMBINE_BYTES = BYTES_PER_VALUE["bf16"]


def expert_parallel(a: ModelArch, *, dp, cp, tp, domain):
    """EP per layout: largest power of two dividing the experts, <= DP x CP and <= scale-up domain / TP
    (fabrics.scale_up_domain: the server, or the NVL72 rack)."""
    dp, cp, tp = (np.asarray(x, dtype=np.int64) for x in (dp, cp, tp))
    limit = np.minimum(dp * cp, np.maximum(np.asarray(domain, dtype=np.int64) // np.maximum(tp, 1), 1))
    ep = np.ones(np.broadcast(limit, dp).shape, dtype=np.int64)
    if not a.is_moe:
        return ep
    e = 2
    while e <= a.experts:
        if a.experts % e == 0:
            ep = np.where(limit >= e, e, ep)
        e *= 2
    return ep


def all_to_all_bytes_per_token(a: ModelArch, *, ep, full_recompute) -> np.ndarray:
    """Bytes one token sends over the links per training step (dispatch + combine, forward + backward)."""
    if not a.is_moe or not a.hidden_size:
        return np.zeros(np.shape(ep))
    moe_layers = a.moe_layers
    ep = np.asarray(ep, dtype=float)
    passes = np.where(np.asarray(full_recompute, dtype=bool), 3.0, 2.0)
    return (passes * moe_layers * a.experts_per_token * a.hidden_size * (DISPATCH_BYTES + COMBINE_BYTES)
            * (ep - 1.0) / ep)


def link_one_way_gb_s(acc: AcceleratorSpec, ep: int) -> tuple[float, str]:
    """One-way bandwidth of the link the EP group's all-to-all is charged at, and its kind: the scale-up link,
    also for a group that spans scale-up domains (fabrics.all_to_all_link_gb_s is the bound a scale-out NIC
    would set; not charged: it contradicts the published B200 EP8/EP32 pair, docs/SIZING.md "Scale-up domains
    and scale-out links")."""
    bw, _, kind = link(acc, int(ep))
    return float(bw), kind


def all_to_all_factor(efficiency, *, bytes_per_token, link_gb_s, peak_tflops, exec_flops_per_token, overlapped=False):
    """Compute time / step time. Not overlapped (the default): 1 / (1 + t_a2a / t_compute); overlapped
    (training.expert_overlap): the step is the longer of the two, min(1, t_compute / t_a2a)."""
    t_comp = exec_flops_per_token / (np.asarray(peak_tflops, dtype=float) * 1e12 * np.asarray(efficiency, dtype=float))
    t_a2a = np.asarray(bytes_per_token, dtype=float) / (np.asarray(link_gb_s, dtype=float) * 1e9)
    if overlapped:
        return np.minimum(1.0, t_comp / np.maximum(t_a2a, 1e-30))
    return 1.0 / (1.0 + t_a2a / t_comp)
