"""Serving mechanisms of mixture-of-experts deployments (docs/SIZING.md "Serving model", "Expert
parallelism and data-parallel attention", "Speculative decoding (MTP)").

Inside one replica of `tp` GPUs (InferenceX, SGLang, vLLM and TensorRT-LLM lay it out so: expert
parallel and data-parallel attention live inside the tensor-parallel group):

- Expert parallelism (EP): each of the EP ranks holds E / EP whole experts instead of a 1/TP slice
  of every expert. The bytes and FLOPs per GPU are the same as TP's; what changes is the
  communication when attention is data parallel (below).
- Data-parallel attention (DPA, `dp = tp` attention ranks): every rank keeps the full attention
  weights (replicated) and runs attention for its own 1/dp of the sequences, so the KV cache is split
  by sequences over all tp GPUs (MLA's latent KV, which TP replicates on every rank, is then held
  once). Attention needs no all-reduce; the MoE layers exchange tokens instead:
    EP > 1: all-to-all dispatch (each token's hidden state to the ranks of its k experts, once per
            distinct rank: r = EP x (1 - (1 - 1/EP)^k) ranks) and combine (the outputs back):
            r x h x (b_dispatch + b_combine) x (EP - 1) / EP bytes per token per MoE layer, over the
            link x all_to_all_efficiency; b_combine = 2 (bf16 outputs), b_dispatch the format the runtime
            sends the tokens in (dispatch_bytes_per_value: NVFP4 on TensorRT-LLM with NVFP4 experts,
            bf16 otherwise);
            the tokens are spread over the tp attention ranks, each sending its own share;
    EP = 1: the MoE runs tensor parallel on the gathered tokens: all-gather + reduce-scatter, the
            bytes of one ring all-reduce per layer.
  Without DPA, attention and MoE outputs are all-reduced as in a dense model (2 per layer), EP or not.
- The link: the catalog's scale-up link while the group fits the scale-up domain (NVLink /
  Infinity Fabric: an 8-GPU baseboard; NVL72: 72 GPUs), the scale-out NIC beyond it.
- MTP speculative decoding: the checkpoint's MTP layers draft `MTP_DRAFT_TOKENS` tokens one after
  another; the next step verifies them with the target model (1 + drafts tokens per sequence, the
  KV read once) and keeps `accepted` tokens per sequence on average.
"""

from __future__ import annotations

import numpy as np

from . import compressed_attention
from .architecture import ModelArch, _attention_params
from .hardware import AcceleratorSpec
from .moe_comm import COMBINE_BYTES, DISPATCH_BYTES
from .serving_constants import MTP_ACCEPTED_DEFAULT, link  # noqa: F401 (re-exported)

# Scale-up domain: an HGX / OAM baseboard connects 8 GPUs by NVLink / Infinity Fabric (NVIDIA HGX
# H100/B200 and AMD MI300X/MI355X platform specifications: 8 GPUs per baseboard); the NVL72 rack's
# NVLink Switch connects 72 (catalog interconnect "72-GPU domain").
BASEBOARD_GPUS = 8
# Scale-out NIC per GPU: 400 Gb/s = 50 GB/s one way (NVIDIA DGX H100 / DGX B200 user guides: eight
# ConnectX-7 400 Gb/s compute ports, one per GPU; AMD MI355X platforms: Pensando Pollara 400 per GPU).
NIC_GB_S = 50.0
NIC_LATENCY_S = 10e-6  # per collective over RDMA (assumption: InfiniBand/RoCE one-way latency ~2-5 us x hops)
# MTP drafting: SGLang's documented DeepSeek-V3/R1 setting --speculative-num-steps 3
# --speculative-eagle-topk 1 --speculative-num-draft-tokens 4 (docs "DeepSeek Usage", MTP), which
# TensorRT-LLM's DeepSeek-R1 recipes also use (num_nextn_predict_layers 3); ATOM accepts only
# num_speculative_tokens 1 (ROCm/ATOM atom/config.py, Config.__post_init__). Settings, not fits. The
# fitted `mtp_accepted_tokens` of a runtime is stated at these draft counts (accepted_at carries it to others).
MTP_DRAFT_TOKENS = 3
MTP_DRAFT_TOKENS_BY_RUNTIME = {"atom": 1, "vllm": 2}
# Fewer drafts where a rank's decode batch is large: its steps run near the compute roofline, where each
# rejected draft costs about what a kept token does. The recipes launch one draft with data-parallel attention
# in TensorRT-LLM, aggregated (SemiAnalysisAI/InferenceX benchmarks/single_node/fixed_seq_len/
# dsr1_fp4_b200_trt_mtp.sh, dsr1_fp8_b200_trt_mtp.sh, dsr1_fp8_h200_trt_mtp.sh @843c6254: MTP=1 if DP_ATTENTION
# else 3) and in Dynamo decode pools (NVIDIA/srt-slurm recipes/trtllm/*/8k1k/mtp/*_mtp1*.yaml @deb1dfd9: DPA
# decode at 128 or more sequences per rank), and in SGLang decode pools (InferenceX configs/amd-master.yaml,
# MoRI DEP8 decode: DECODE_MTP_SIZE 1). Aggregated SGLang keeps its drafts with DPA (dsv4_fp4_b300_sglang_mtp.sh).
# vLLM's MTP recipes run 2 (dsv4_fp4_b200_vllm_mtp.sh, NUM_SPEC_TOKENS=2 "for all configs"). Read 2026-12-06.
DPA_DRAFT_TOKENS = 1
DPA_ONE_DRAFT = ("trtllm",)  # aggregated and in decode pools
DPA_ONE_DRAFT_DECODE_POOLS = ("trtllm", "sglang")
# Runtimes that balance context requests over the attention-DP ranks (serving_model.Engine.dp_balance_ranks):
# TensorRT-LLM's attention_dp_config enable_balance, as its DeepSeek-R1 attention-DP recipes run it.
DP_BALANCING_RUNTIMES = ("trtllm",)
# Runtimes whose attention-DP ranks each schedule their own step token budget (serving_model.Engine.budget_ranks).
# TensorRT-LLM: max_num_tokens and max_batch_size are per attention-DP rank, e.g. the Dynamo recipe
# NVIDIA/srt-slurm recipes/DeepSeek-V4-Pro/disagg/trtllm_dynamo/gb300_mxfp4/ISL1K_OSL1K/STP/
# ctx4dep4_gen1dep32_batch256_eplb384_mtp0.yaml runs 8,192 clients on one decode worker of 32 ranks with
# max_batch_size 256 and max_num_tokens 256. vLLM: --data-parallel-size starts one engine core, with its own
# scheduler and max_num_batched_tokens, per rank. SGLang is not here: with --enable-dp-attention it divides
# --chunked-prefill-size by dp_size (server_args.py), so its step budget stays the server's total.
PER_RANK_BUDGET_RUNTIMES = ("trtllm", "vllm")
# The mechanisms each runtime can run, as its launch flags express them (launch_flags.py, whose
# docstring names the flag sources: InferenceX benchmarks/*.sh recipes and each engine's docs):
# "ep" expert parallel, "dpa" data-parallel attention, "mtp" MTP speculative decoding. ATOM's
# recipes have no data-parallel attention; eager Transformers has none of them. The serving search
# explores only these where the spec leaves them open (search_serving.serving_variants).
RUNTIME_MECHANISMS = {
    "vllm": frozenset({"ep", "dpa", "mtp"}),
    "sglang": frozenset({"ep", "dpa", "mtp"}),
    "trtllm": frozenset({"ep", "dpa", "mtp"}),
    "atom": frozenset({"ep", "mtp"}),
}
# Vendors whose builds of these engines run the mechanisms above (the launch flags' sources and every
# InferenceX row are NVIDIA and AMD). Intel Gaudi's engine forks document tensor parallel only
# (docs.habana.ai "SGLang with Gaudi FAQs": "use tensor parallelism to distribute the model", read
# 2026-12-04; HabanaAI/sglang-fork, vllm-gaudi): the search does not try EP, DPA or MTP there (a pinned
# value is still evaluated as stated).
MECHANISM_VENDORS = ("nvidia", "amd")
# Runtimes that run disaggregated prefill/decode pools (launch_flags.router: vLLM behind NVIDIA Dynamo or
# llm-d with the NIXL connector, SGLang's PD router with Mooncake, trtllm-serve disaggregated; the InferenceX
# Dynamo rows run these engines). ATOM has no disaggregated mode (the AMD disaggregated rows run SGLang with
# MoRI); eager Transformers none. The serving search tries pool splits only on these (search_disagg.py).
DISAGG_RUNTIMES = ("vllm", "sglang", "trtllm")
# Runtimes that quantize the tokens to the experts' NVFP4 activation format *before* the MoE all-to-all
# dispatch (and run the expert GEMM on what arrives): TensorRT-LLM's "post-quant all-to-all",
# `use_postquant_alltoall = TRTLLM_MOE_POST_QUANT_ALLTOALLV (default "1") and quant_mode.has_nvfp4()`
# (NVIDIA/TensorRT-LLM tensorrt_llm/_torch/modules/fused_moe/fused_moe_wide_ep.py and fused_moe_cutlass.py,
# read 2026-12-04). Its combine stays bf16 (`use_low_precision_combine` defaults to False). mxfp4 experts
# (gpt-oss) are not NVFP4: their tokens go in bf16. A setting of the engine, not a fit.
NVFP4_DISPATCH_RUNTIMES = ("trtllm",)
NVFP4_BYTES_PER_VALUE = 0.5 + 1.0 / 16.0  # E2M1 + one E4M3 scale per 16 values (precision.WEIGHT_SCHEMES)


# The MoE exchange of a DPA + EP step follows the engine's all-to-all backend flag. Without one, SGLang (its default
# --moe-a2a-backend none) and vLLM (its default --all2all-backend allgather_reducescatter, docs.vllm.ai serving/
# expert_parallel_deployment "Backend Selection Guide") all-gather the step's tokens of every DP rank and reduce-scatter
# the experts' output (sglang/srt/layers/dp_attention.py: dp_gather / dp_reduce_scatter_tensor; SGLANG_DP_USE_GATHERV
# and SGLANG_DP_USE_REDUCE_SCATTER in InferenceX benchmarks/single_node/fixed_seq_len/dsv4_fp4_mi355x_sglang.sh); with
# a backend they send each token to its experts' ranks only (an all-to-all, collectives()). The recipes behind the
# InferenceX rows launch one on NVL72 racks (NVIDIA/srt-slurm @c88ef731 recipes/gb200-fp4/*, gb200-fp8/*: SGLang
# moe-a2a-backend deepep; InferenceX @843c6254 benchmarks/multi_node/srt-slurm-recipes/vllm/kimi-k2.5-fp4/1k1k/
# disagg-gb200-*.yaml: vLLM all2all-backend flashinfer_nvlink_one_sided) and in AMD disaggregated pools (InferenceX
# benchmarks/multi_node/amd_utils/models.yaml ep_flags: --moe-a2a-backend mori; models_vllm.yaml: --all2all-backend
# mori_low_latency), and none on HGX baseboards (srt-slurm recipes/h100/*, h200/*, b200-fp8/*; InferenceX
# srt-slurm-recipes/sglang/dsr1/b200-fp4/*, single_node dsr1_fp4_b200.sh) or in AMD aggregated servers. Read
# 2026-12-07. A launch setting, not a fit: the plan's launch command emits the same flag (launch_flags.engine_argv).
# TensorRT-LLM and ATOM keep the all-to-all.
MOE_A2A_BACKENDS = {"sglang": ("deepep", "mori"), "vllm": ("flashinfer_nvlink_one_sided", "mori_low_latency")}


def moe_a2a_backend(runtime: str, acc: AcceleratorSpec, disaggregated: bool = False) -> str | None:
    """The all-to-all backend `runtime` is launched with on `acc` (None: the engine's default)."""
    nvl72, amd_disagg = MOE_A2A_BACKENDS.get(runtime, (None, None))
    if scale_up_domain(acc) > BASEBOARD_GPUS:
        return nvl72
    if (acc.vendor or "").lower() == "amd" and disaggregated:
        return amd_disagg
    return None


def moe_gathers(runtime: str, acc: AcceleratorSpec, disaggregated: bool = False) -> bool:
    """The runtime moves a DPA step's MoE tokens by all-gather + reduce-scatter over the DP ranks (not all-to-all)."""
    return runtime in MOE_A2A_BACKENDS and moe_a2a_backend(runtime, acc, disaggregated) is None


def scale_up_domain(acc: AcceleratorSpec) -> int:
    text = (acc.interconnect or "").lower()
    return 72 if "72-gpu" in text else BASEBOARD_GPUS


def group_link(acc: AcceleratorSpec, group: int) -> tuple[float, float | None, str]:
    """(one-way GB/s, latency or None = the fitted scale-up value, kind) for a collective over `group` GPUs."""
    if group > scale_up_domain(acc):
        return NIC_GB_S, NIC_LATENCY_S, "network"
    return link(acc, int(group))


def attention_weight_params(a: ModelArch) -> float:
    """Attention projection parameters of all layers (replicated on every rank with DPA)."""
    if not a.is_transformer or not a.attention_heads:
        return 0.0
    if a.is_compressed_attention:
        return float(compressed_attention.attention_params_total(a))
    return float(a.layers * _attention_params(a))


def dispatch_bytes_per_value(a: ModelArch, *, runtime: str, weights: str, compute_fmt: str) -> float:
    """Bytes per hidden value of the MoE all-to-all dispatch: NVFP4 (0.5625) where the runtime quantizes
    before dispatching (NVFP4_DISPATCH_RUNTIMES) and the experts run NVFP4 (fp4 matmuls on fp4 weights
    that are not the checkpoint's own mxfp4), bf16 (moe_comm.DISPATCH_BYTES) otherwise."""
    if runtime not in NVFP4_DISPATCH_RUNTIMES or compute_fmt != "fp4" or str(weights) != "fp4":
        return float(DISPATCH_BYTES)
    parts = getattr(weights, "parts", None)
    if parts is None and "experts=mxfp4" in (a.checkpoint_weights or "").replace(" ", ""):
        return float(DISPATCH_BYTES)  # the published mxfp4 checkpoint (gpt-oss) served as it is
    if parts is not None and parts.get("experts") == "mxfp4":
        return float(DISPATCH_BYTES)
    return NVFP4_BYTES_PER_VALUE


def collectives(a: ModelArch, *, tp, ep, dpa, link_gb_s, a2a_efficiency, allreduce_efficiency,
                dispatch_bytes=DISPATCH_BYTES, gather=False, gather_efficiency=None):
    """(collectives per token pass, seconds per token over the link) of one replica's step.

    Arrays broadcast over tp / ep / dpa / link / dispatch_bytes / gather. Ring all-reduce of one 16-bit hidden
    state moves 2 (tp-1)/tp x 2h bytes; an all-to-all dispatch + combine r x h x (b_dispatch + 2) x (ep-1)/ep
    (dispatch_bytes_per_value); with `gather` (moe_gathers) a DPA MoE layer instead all-gathers and
    reduce-scatters the whole step's 16-bit hidden states over the tp ranks: 2 x (tp-1)/tp x 2h bytes per step
    token on every rank, at `gather_efficiency` of the link (None: the ring collectives' bus efficiency), two
    collectives per MoE layer."""
    tp, ep = np.asarray(tp, dtype=float), np.asarray(ep, dtype=float)
    dpa = np.asarray(dpa, dtype=bool)
    h, L = float(a.hidden_size or 0), float(a.layers or 1)
    moe_layers = float(a.moe_layers)
    bw = np.asarray(link_gb_s, dtype=float) * 1e9
    ar_bytes = 2.0 * (tp - 1.0) / np.maximum(tp, 1.0) * h * 2.0
    # A token goes once to each distinct rank among its k experts' (DeepEP / the engines' dispatchers
    # deduplicate per rank): ep x (1 - (1 - 1/ep)^k) ranks expected under uniform routing, of which
    # (ep - 1) / ep are remote.
    k = float(a.experts_per_token if a.is_moe else 0)
    ranks = ep * -np.expm1(k * np.log1p(-1.0 / np.maximum(ep, 1.0 + 1e-9)))
    a2a_bytes = ranks * h * (np.asarray(dispatch_bytes, dtype=float) + COMBINE_BYTES) * (ep - 1.0) / np.maximum(ep, 1.0)
    # Without DPA: 2 all-reduces per layer. With DPA: dense layers 1 all-reduce-equivalent
    # (gather + scatter), MoE layers an all-to-all (EP > 1) or one all-reduce-equivalent (EP = 1).
    tp_s = 2.0 * L * ar_bytes / (bw * allreduce_efficiency)
    # With DPA the step's tokens are spread over the tp attention ranks: each rank dispatches its own
    # 1/tp of them over its own link, in parallel with the others (per-token seconds of the step / tp).
    # Gathered instead (moe_gathers): every rank receives and reduces the whole step's tokens, so no 1/tp.
    gathered = np.asarray(gather, dtype=bool) & (ep > 1)
    g_eff = allreduce_efficiency if gather_efficiency is None else gather_efficiency
    moe_a2a = np.where(gathered, 2.0 * ar_bytes / (bw * g_eff),  # an all-gather + a reduce-scatter: 2 x ar_bytes
                       np.where(ep > 1, a2a_bytes / (bw * a2a_efficiency) / np.maximum(tp, 1.0),
                                ar_bytes / (bw * allreduce_efficiency)))
    dpa_s = (L - moe_layers) * ar_bytes / (bw * allreduce_efficiency) + moe_layers * moe_a2a
    n_tp = np.where(tp > 1, 2.0 * L, 0.0)
    n_dpa = np.where(tp > 1, L + np.where(gathered, moe_layers, 0.0), 0.0)
    count = np.where(dpa, n_dpa, n_tp)
    per_token = np.where(tp > 1, np.where(dpa, dpa_s, tp_s), 0.0)
    return count, per_token


def a2a_latency_units(a: ModelArch, *, ep, dpa, gather=False):
    """MoE layers x log2(EP) of a step where its MoE layers run the all-to-all (data-parallel attention, EP > 1,
    not gathered): what all_to_all_latency_s multiplies (serving_constants.ALL_TO_ALL_LATENCY_S). Broadcasts."""
    ep = np.asarray(ep, dtype=float)
    moe_layers = float(a.moe_layers)
    a2a = np.asarray(dpa, dtype=bool) & (ep > 1) & ~np.asarray(gather, dtype=bool)
    return np.where(a2a, moe_layers * np.log2(np.maximum(ep, 1.0)), 0.0)


def mtp_draft_tokens(runtime: str, dpa=False, decode_only=False):
    """Draft tokens per step the engine is launched with (broadcasts over dpa): the runtime's drafts, one
    with data-parallel attention where its recipes do so (DPA_ONE_DRAFT, DPA_ONE_DRAFT_DECODE_POOLS)."""
    base = MTP_DRAFT_TOKENS_BY_RUNTIME.get(runtime, MTP_DRAFT_TOKENS)
    fewer = runtime in (DPA_ONE_DRAFT_DECODE_POOLS if decode_only else DPA_ONE_DRAFT)
    return np.where(np.asarray(dpa, dtype=bool) & fewer, DPA_DRAFT_TOKENS, base)


def accepted_at(accepted, reference_drafts, drafts):
    """Tokens accepted per step with `drafts` draft tokens, from `accepted` at `reference_drafts`.

    A chain of drafts is kept up to its first rejection; with each draft kept with the same probability
    a given the one before, a step keeps 1 + a + ... + a^d tokens (Leviathan et al. 2023, "Fast Inference
    from Transformers via Speculative Decoding", eq. 1). Solves a at the reference, evaluates it at `drafts`
    (bisection: the sum rises monotonically with a on [0, 1]). Array-friendly."""
    accepted = np.asarray(accepted, dtype=float)
    drafts = np.asarray(drafts, dtype=float)
    k_ref = np.arange(int(reference_drafts) + 1, dtype=float)
    target = np.clip(accepted, 1.0, 1.0 + reference_drafts)
    lo, hi = np.zeros_like(target), np.ones_like(target)
    for _ in range(40):
        mid = (lo + hi) / 2.0
        low = (mid[..., None] ** k_ref).sum(axis=-1) < target
        lo, hi = np.where(low, mid, lo), np.where(low, hi, mid)
    a = (lo + hi) / 2.0
    chain = np.where(np.isclose(a, 1.0), drafts + 1.0, (1.0 - a ** (drafts + 1.0)) / np.maximum(1.0 - a, 1e-12))
    return np.where(drafts == reference_drafts, target, chain)


def speculative(a: ModelArch, accepted, draft_tokens=MTP_DRAFT_TOKENS, on=True, reference_drafts=None):
    """(tokens verified per sequence per step, tokens accepted per step, draft share of a step's
    matmuls and weight read); (1, 1, 0) without speculative decoding (accepted None, or `on` False).
    `accepted` is stated at `reference_drafts` draft tokens (None: at `draft_tokens`) and carried to
    `draft_tokens` by accepted_at. accepted, draft_tokens and on broadcast (per accelerator, per layout
    variant of the search, per row of a replay)."""
    if accepted is None or not a.mtp_layers:
        return 1.0, 1.0, 0.0
    on = np.asarray(on, dtype=bool)
    d = np.asarray(draft_tokens, dtype=float)
    q = 1.0 + d
    acc = np.asarray(accepted, dtype=float)
    if reference_drafts is not None and np.any(d != reference_drafts):
        acc = accepted_at(acc, reference_drafts, d)
    acc = np.clip(acc, 1.0, q)
    draft = d * a.mtp_layers / float(a.layers or 1)
    return np.where(on, q, 1.0), np.where(on, acc, 1.0), np.where(on, draft, 0.0)
