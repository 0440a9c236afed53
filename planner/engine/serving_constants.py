"""Serving runtimes, their memory budgets and the few efficiency constants of the serving model.

Every number here is named, with where it comes from. The efficiency constants of vLLM, SGLang
and TensorRT-LLM on Hopper were fitted on ../shared/reference/serving_measured.csv
(scripts/fit_serving_constants.py reproduces the fit; docs/BENCHMARKS.md lists the rows and the
error). Generations and precisions the measured data does not cover use generation-level factors
that are labelled assumptions. A team calibration (planner/engine/calibration.py) replaces the
preset values by name: see `serving_constants()`.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from catalog.domain.messages import Msg

from .compressed_attention import MODULE_FLOORS_S
from .hardware import AcceleratorSpec, generation_of
from .serving_constants_ix import FITTED_IX, FITTED_IX_ROWS

RUNTIMES = ("vllm", "sglang", "trtllm", "atom", "hf_transformers")
# Runtimes that run only on one vendor's GPUs: ATOM is built on ROCm's AITER kernels, TensorRT-LLM
# on CUDA and NVIDIA's TensorRT (github.com/NVIDIA/TensorRT-LLM: "optimize inference on NVIDIA GPUs").
RUNTIME_VENDORS = {"atom": "AMD", "trtllm": "NVIDIA"}
DEFAULT_RUNTIME = "vllm"

# The constants a calibration may replace (Calibrations.for_serving(...).values uses these names).
CONSTANT_NAMES = (
    "prefill_efficiency",            # share of the dense peak reached by the step's matmuls (prefill and batched decode)
    "decode_bandwidth_efficiency",   # share of peak memory bandwidth reached reading weights and KV cache
    "step_overhead_s",               # fixed time per engine step not hidden behind the GPU (scheduler, sampling, launches)
    "layer_overhead_s",              # per transformer layer per step (kernel launches not folded into CUDA graphs)
    "allreduce_latency_s",           # fixed cost of one tensor-parallel all-reduce
    "request_overhead_s",            # per request before its first token: HTTP, tokenisation, scheduling, detokenisation
    "low_bit_gemm_factor",           # fp8/fp4/int8 matmuls: share of their (2x/4x) peak relative to bf16's share
    "ttft_cohort_factor",            # closed loops: other prompts prefilled with a new one, x sqrt(clients - 1)
    "all_to_all_efficiency",         # MoE dispatch/combine with data-parallel attention: share of the link reached
    "moe_gather_efficiency",         # the same exchange as all-gather + reduce-scatter (SGLang / vLLM without an a2a backend)
    "all_to_all_latency_s",          # MoE dispatch + combine: fixed time per MoE layer per step, per doubling of the EP ranks
    "mtp_accepted_tokens",           # MTP speculative decoding: tokens accepted per decode step
    "disagg_handoff_s",              # disaggregated serving: per request, the remote-prefill handoff between the pools
    "mla_layer_overhead_s",          # MLA models (DeepSeek-V3/R1): fixed time per MLA layer per forward pass (its extra kernels)
    "moe_layer_overhead_s",          # MoE models: fixed time per MoE layer per forward pass (routing, permute, grouped-GEMM launches)
    "scheduler_poll_steps",          # a new request is taken in every this many engine steps (SGLang --scheduler-recv-interval)
)


@dataclass(frozen=True)
class Runtime:
    """How an engine uses memory and schedules work (documented defaults of each engine)."""

    name: str
    label: str
    gpu_memory_fraction: float  # share of GPU memory the engine may use (weights + KV + activations)
    max_running_seqs: int  # scheduler cap on sequences in flight
    step_token_budget: int  # tokens (prefill chunk + decodes) one engine step processes at most
    kv_reservation: str  # "average": paged KV grows with the sequence; "full": isl + osl reserved at admission
    continuous_batching: bool
    logits_all_positions: bool  # eager HF generate() materialises fp32 logits for every prompt position
    workspace_gib: float  # CUDA graphs, sampler and kernel workspaces outside the KV pool
    source: str
    # What gpu_memory_fraction bounds (memory_budget): "total" = weights + activations + KV
    # (vLLM gpu_memory_utilization, ATOM); "free" = the KV pool is that share of the memory left after
    # weights and activations (TensorRT-LLM free_gpu_memory_fraction); "static" = weights + KV only,
    # with the fraction computed from GPU memory, TP and the scheduler's sizes (SGLang
    # mem_fraction_static, sglang_mem_fraction_static below).
    budget_rule: str = "total"


RUNTIME_SPECS = {
    "vllm": Runtime(
        "vllm", "vLLM", 0.90, 1024, 8192, "average", True, False, 1.0,
        "vLLM V1 defaults: gpu_memory_utilization 0.9; on >= 70 GiB GPUs the API server defaults to "
        "max_num_batched_tokens 8192 and max_num_seqs 1024 (vllm/engine/arg_utils.py, _set_default_args); "
        "PagedAttention allocates KV blocks as sequences grow"),
    "sglang": Runtime(
        "sglang", "SGLang", 0.88, 1024, 8192, "average", True, False, 1.0,
        "SGLang defaults: mem_fraction_static computed per GPU memory, TP and scheduler sizes "
        "(sglang_mem_fraction_static; 0.88 is its fallback when GPU memory is unknown), chunked_prefill_size 8192, "
        "radix/paged KV (sglang/srt/server_args.py)", "static"),
    "trtllm": Runtime(
        "trtllm", "TensorRT-LLM", 0.90, 2048, 8192, "full", True, False, 1.0,
        "trtllm-serve defaults: max_batch_size 2048, max_num_tokens 8192, kv_cache_free_gpu_memory_fraction 0.9, "
        "GUARANTEED_NO_EVICT scheduler (reserves a request's whole context at admission); the KV pool is "
        "free_gpu_memory_fraction of the memory left after the weights and the activation profile "
        "(tensorrt_llm KvCacheConfig)", "free"),
    "atom": Runtime(
        "atom", "ATOM (AMD)", 0.90, 512, 16384, "average", True, False, 1.0,
        "ATOM (ROCm/ATOM, atom/config.py Config defaults): gpu_memory_utilization 0.9, max_num_seqs 512, "
        "max_num_batched_tokens 16384, paged KV in blocks of 16; AITER kernels, ROCm only"),
    "hf_transformers": Runtime(
        "hf_transformers", "Hugging Face Transformers (eager generate)", 1.00, 1, 1_000_000, "full", False, True, 0.5,
        "transformers generate(): one request (batch) at a time, no paged KV, no CUDA graphs; the prompt's "
        "forward pass keeps fp32 logits for every position (assumption: one request per process)"),
}

MIB = 1024 ** 2


def sglang_default_cuda_graph_max_bs(gpu_mem_mib, *, tp=1):
    """SGLang's cuda_graph_max_bs when --cuda-graph-max-bs is not given (GPUs of 60 GiB and more; the same
    source as sglang_mem_fraction_static): 512 from 160 GiB or at TP >= 4, else 256."""
    big = np.asarray(gpu_mem_mib, dtype=float) >= 160 * 1024
    return np.where(big | (np.asarray(tp, dtype=float) >= 4), 512.0, 256.0)


def sglang_launch_cuda_graph_max_bs(gpu_mem_mib, *, tp=1, launch_batch=None):
    """The --cuda-graph-max-bs a server launched for `launch_batch` concurrent requests runs with: that
    batch (whole requests, at least 1) where it is below SGLang's default, else the default.

    Why: SGLang's default memory rule reserves CUDA-graph memory for its largest captured batch, with data-
    parallel attention x dp_size (sglang_mem_fraction_static), so a 16-rank DP-attention server on 80 GB
    keeps ~37 GB for graphs of 512 requests per rank. Deployments sized for a known load set the flag to
    it, as the InferenceX / srt-slurm recipes do (recipes/h100/1k1k/mtp/h100-fp8-1p1d-max-dep-mtp.yaml in
    github.com/liz-badada/srt-slurm @ 7947ca8c: decode max-running-requests 64, cuda-graph-max-bs 64 for a
    1-64 client sweep). None: no load known, the default."""
    default = sglang_default_cuda_graph_max_bs(gpu_mem_mib, tp=tp)
    if launch_batch is None:
        return default
    return np.minimum(default, np.maximum(np.ceil(np.asarray(launch_batch, dtype=float)), 1.0))


def sglang_mem_fraction_static(gpu_mem_mib, *, tp=1, pp=1, chunked_prefill_size=None, cuda_graph_max_bs=None,
                               dp_attention=False, dp_size=None, speculative=False):
    """SGLang's default mem_fraction_static ((weights + KV pool) / GPU memory), as the engine computes it.

    Source: sgl-project/sglang python/sglang/srt/server_args.py, ServerArgs._handle_gpu_memory_settings
    (commit 469c63e54e7d94591617ef9590c6aa26d54dc1bb, the one stored version read 2026-12-03; not checked
    against each v0.5.5-v0.5.12 tag the InferenceX rows run: the repository was too large to fetch). GPU memory in MiB (nvidia-smi memory.total); the rest of the
    memory (reserved_mem, MiB) is left for activations and CUDA graphs:
      chunked_prefill_size / cuda_graph_max_bs defaults by GPU memory: < 60 GiB not modelled here;
      < 160 GiB: 8192 / (256 if tp < 4 else 512); >= 160 GiB: 16384 / 512;
      reserved = 512 + 1.5 x max(chunk, 2048) + 2 x cuda_graph_max_bs + tp x pp / 8 x 1024
               [+ DP attention: 3 x bs x dp_size, + 1.5 x bs x dp_size when bs > 300];
      reserved >= 10 GiB on GPUs over 60 GiB; + 2 GiB for an EAGLE/MTP draft;
      mem_fraction_static = round((gpu_mem - reserved) / gpu_mem, 3)."""
    gpu_mem = np.asarray(gpu_mem_mib, dtype=float)
    tp, pp = np.asarray(tp, dtype=float), np.asarray(pp, dtype=float)
    big = gpu_mem >= 160 * 1024
    chunk = np.where(big, 16384.0, 8192.0) if chunked_prefill_size is None else np.asarray(chunked_prefill_size, float)
    bs = (sglang_default_cuda_graph_max_bs(gpu_mem, tp=tp) if cuda_graph_max_bs is None
          else np.asarray(cuda_graph_max_bs, float))
    reserved = 512.0 + np.maximum(chunk, 2048.0) * 1.5 + bs * 2.0 + tp * pp / 8.0 * 1024.0
    dp = tp if dp_size is None else np.asarray(dp_size, dtype=float)
    dpa = np.asarray(dp_attention, dtype=bool)
    reserved = reserved + np.where(dpa, bs * dp * 3.0 + np.where(bs > 300, bs * dp * 1.5, 0.0), 0.0)
    reserved = np.where(gpu_mem > 60 * 1024, np.maximum(reserved, 10 * 1024.0), reserved)
    reserved = reserved + np.where(np.asarray(speculative, dtype=bool), 2 * 1024.0, 0.0)
    return np.round((gpu_mem - reserved) / gpu_mem, 3)


# Fitted on serving_measured.csv, Hopper (H100 SXM) rows only, per runtime; see docs/BENCHMARKS.md
# (section "Serving model vs measured engines") for the rows, the fit command and the error.
# fp8 matmuls do not reach the same share of their doubled peak as bf16 does of its own (H100 measured
# matmul peaks, MAMF: bf16 ~80 %, fp8 lower). Fitted once, on the 180 TensorRT-LLM fp8 rows (Qwen3-32B,
# H100 SXM), with the runtime constants held; used for every runtime and every low-bit compute format.
LOW_BIT_GEMM_FACTOR = 0.544
# 2026-12-04 (h/tpotm): the steady state now prices the step mix (decode-only and chunk-carrying steps each take
# their own max(matmuls, weights) + max(attention, KV); serving_model.Engine._step_mix, docs/SIZING.md "Step mix").
# Without it the step overheads had absorbed the mix's extra time at mid load (TensorRT-LLM 3.0 ms, SGLang 4.5 ms)
# and over-predicted the low-load TPOT (Llama-3.1-8B TP8 8 clients: 4.5 ms predicted, 2.7 measured). The decode
# constants (decode_bandwidth_efficiency, step_overhead_s, allreduce_latency_s; bandwidth share bounded at 0.95,
# which all three reach) were refitted with it per runtime on the same H100 rows (same loss, Nelder-Mead 150 steps,
# with ALLREDUCE_BUS_EFFICIENCY 0.50); the prefill/TTFT constants are held as fitted before. allreduce_latency_s was a
# 10 us assumption: the TP 1-8 rows identify it.
FITTED = {
    "vllm": {"prefill_efficiency": 0.528, "decode_bandwidth_efficiency": 0.95, "step_overhead_s": 3.42e-3,
             "layer_overhead_s": 0.0, "allreduce_latency_s": 11.7e-6, "ttft_cohort_factor": 0.575,
             "request_overhead_s": 32.2e-3, "low_bit_gemm_factor": LOW_BIT_GEMM_FACTOR},
    # Refitted 2026-12-02 (issue 22) when the closed loop's cohort wait joined its Little's-law
    # balance: SGLang's large cohort factor moved its fit loss by 22 % (0.796 -> 0.620, --steps 600); vLLM's and
    # TensorRT-LLM's by < 1.2 %, within the flat of their fits, so their values stand.
    "sglang": {"prefill_efficiency": 0.611, "decode_bandwidth_efficiency": 0.95, "step_overhead_s": 0.618e-3,
               "layer_overhead_s": 0.0, "allreduce_latency_s": 20.0e-6, "ttft_cohort_factor": 4.99,
               "request_overhead_s": 40.6e-3, "low_bit_gemm_factor": LOW_BIT_GEMM_FACTOR},
    "trtllm": {"prefill_efficiency": 0.676, "decode_bandwidth_efficiency": 0.910, "step_overhead_s": 1.31e-3,
               "layer_overhead_s": 0.0, "allreduce_latency_s": 17.8e-6, "ttft_cohort_factor": 0.469,
               "request_overhead_s": 115.5e-3, "low_bit_gemm_factor": LOW_BIT_GEMM_FACTOR},
}
# vLLM's scheduler is synchronous unless --async-scheduling (default from v0.14): the CPU schedules step n+1
# while the GPU runs step n, so less of a step's fixed time adds to it. FITTED["vllm"] describes vLLM 0.12.0
# without it (serving_measured.csv); with it, the step overhead fitted on the InferenceX B200 rows (FITTED_IX
# vllm/blackwell: every InferenceX vLLM recipe sets async-scheduling: true, benchmarks/gptoss_fp4_{b200,h100,h200}.sh)
# applies to every generation without its own InferenceX fit. Hopper's InferenceX rows are not in that fit: they check it.
ASYNC_STEP_OVERHEAD_FROM = {"vllm": ("vllm", "blackwell")}
# ATOM has no serving_measured.csv rows: it starts from vLLM's Hopper constants (ATOM's scheduler and
# paged KV follow vLLM's design) and its own constants are fitted on the InferenceX rows
# (serving_fit_ix.py, FITTED_IX).
FITTED["atom"] = dict(FITTED["vllm"])
FITTED_ROWS = {
    "vllm": Msg("serving_measured.csv: backend vllm, system h100_sxm (93 rows)"),
    "sglang": Msg("serving_measured.csv: backend sglang, system h100_sxm (84 rows)"),
    "trtllm": Msg("serving_measured.csv: backend trtllm, system h100_sxm (357 rows)"),
    "atom": Msg("vLLM's serving_measured.csv constants (no ATOM rows there)"),
}
# HF eager has no measured rows: vLLM's Hopper constants with no CUDA graphs (a launch per kernel,
# ~10 kernels per layer at ~5 us) and no fused attention kernels. Assumption, not fitted.
HF_EAGER = {"prefill_efficiency": 0.40, "decode_bandwidth_efficiency": 0.60, "step_overhead_s": 5.0e-3,
            "layer_overhead_s": 60e-6, "allreduce_latency_s": 25e-6, "ttft_cohort_factor": 0.0, "request_overhead_s": 0.02, "low_bit_gemm_factor": LOW_BIT_GEMM_FACTOR}

# Generation factors on the two efficiencies, relative to Hopper. Blackwell was checked against the
# GB200 rows of serving_measured.csv (18 TensorRT-LLM rows; too noisy to fit: two runs of the same
# point differ 2-5x); the others have no measured rows and are assumptions.
GENERATION_FACTOR = {
    "hopper": (1.00, Msg("fitted on H100 SXM rows")),
    "blackwell": (0.85, Msg("assumption: kernels for a new generation reach a lower share of a higher peak; consistent with the GB200 TensorRT-LLM rows")),
    "ampere": (1.00, Msg("assumption: mature kernels (FlashAttention 2, Marlin) on a lower peak")),
    "ada": (0.90, Msg("assumption: PCIe cards, GDDR6 memory")),
    "volta": (0.70, Msg("assumption: no FlashAttention 2, fp16 only")),
    "turing": (0.70, Msg("assumption: no FlashAttention 2, fp16 only")),
    "cdna": (0.70, Msg("assumption: ROCm kernels (MI300X measured matmul peak ~51% of spec, stas00/ml-engineering)")),
    "gaudi": (0.70, Msg("assumption: vLLM/TGI on SynapseAI")),
    "tpu": (0.70, Msg("assumption: vLLM/JetStream on TPU")),
    "other": (0.60, Msg("assumption: unknown accelerator family")),
}
# Weight formats whose kernels dequantise on the fly reach a lower share of bandwidth and peak.
# Assumptions (no measured rows): Marlin/AWQ int4 and weight-only fp8/fp4 kernels.
WEIGHT_ONLY_FACTOR = {"int4": 0.80, "int8": 0.90, "fp8": 0.90, "fp4": 0.85}

# Tensor-parallel all-reduce: two per layer per step (attention output, MLP output), ring algorithm.
# share of the link's one-way bandwidth a tensor-parallel all-reduce reaches. 0.70 (NCCL tests' large-message
# bus bandwidth, an assumption) until 2026-12-04 (h/tpotm); 0.50 chosen on the grid 0.40 / 0.45 / 0.50 / 0.55 / 0.70
# with the Hopper decode constants (FITTED) refitted at each value: serving_measured.csv's TP 2-8 rows under-predicted
# the compute-heavy steps at TP 8 (-15 to -25 %) and the InferenceX TensorRT-LLM gpt-oss TP 8 rows likewise; a
# step's all-reduce messages (0.1-10 MB) sit below the sizes where NCCL reaches its large-message share.
# docs/BENCHMARKS.md "Decode step mix (h/tpotm)".
ALLREDUCE_BUS_EFFICIENCY = 0.50
PCIE_ALLREDUCE_LATENCY_S = 30e-6  # per all-reduce over PCIe (assumption; NVLink uses the fitted value)
PCIE_ONE_WAY_GB_S = {3: 16.0, 4: 32.0, 5: 64.0, 6: 128.0}  # x16, one direction
PP_HOP_S = 30e-6  # activations handed to the next pipeline stage, per boundary per step (assumption)
# MoE grouped GEMMs compute every touched expert's token rows in tiles of this many rows: the Hopper
# tensor-core instruction is wgmma.mma_async m64nNk16 (PTX ISA 8.x), and vLLM/SGLang fused_moe pads
# each expert's token list to a multiple of BLOCK_SIZE_M (moe_align_block_size; 64 in their default
# configs beyond the smallest batches). A hardware/kernel fact, not fitted.
MOE_TILE_ROWS = 64.0
REQUEST_OVERHEAD_S = 2e-3  # tokenisation, detokenisation and HTTP per request (assumption)
# MoE all-to-all (data-parallel attention): the share of the link a dispatch/combine reaches, until
# fitted per runtime and generation (FITTED_IX): NCCL's all-reduce share above (assumption).
ALL_TO_ALL_EFFICIENCY = ALLREDUCE_BUS_EFFICIENCY
# MoE dispatch + combine also take a fixed time per MoE layer that grows with the ranks exchanged: every rank
# signals and waits on every other (DeepEP's low-latency kernels, H800 over RDMA, 128 tokens per rank: dispatch +
# combine 191 / 313 / 428 / 487 us at EP 8 / 16 / 32 / 64, about 80 us per doubling from one rank; deepseek-ai/DeepEP
# README "Low-latency kernels with pure RDMA"). Modelled as all_to_all_latency_s x log2(EP) per MoE layer per step,
# fitted per runtime and generation where rows run the all-to-all (FITTED_IX). A runtime without such rows takes its
# chip generation's (generation_all_to_all: the same scale-up fabric, measured through another engine's dispatcher);
# 0 where no engine of the generation has them (not known: the README's figures are RDMA at 128 tokens, not the
# NVLink / Infinity Fabric small-batch floor). docs/SIZING.md "MoE serving mechanisms", all-to-all latency.
ALL_TO_ALL_LATENCY_S = 0.0
ALL_TO_ALL_NAMES = ("all_to_all_efficiency", "all_to_all_latency_s")


def generation_all_to_all(generation: str, fitted=None) -> dict[str, float]:
    """The all-to-all constants of the generation's runtimes fitted on rows that run it (median of each; {}: none)."""
    groups = [v for (_, gen), v in (FITTED_IX if fitted is None else fitted).items()
              if gen == generation and "all_to_all_latency_s" in v]
    return {n: float(np.median([v[n] for v in groups])) for n in ALL_TO_ALL_NAMES if groups and all(n in v for v in groups)}


def borrowed_all_to_all(runtime: str, generation: str) -> dict[str, float]:
    """The generation's all-to-all constants where this runtime has no fitted ones of its own ({}: it has, or none)."""
    if any(n in FITTED_IX.get((runtime, generation), {}) for n in ALL_TO_ALL_NAMES):
        return {}
    return generation_all_to_all(generation)
# Tokens accepted per MTP step when neither the spec nor a fit says otherwise: DeepSeek-V3 technical
# report (arXiv:2412.19437, sec. 5.4.3): the second token is accepted 85-90 % of the time with one
# MTP module; 1 + 0.85 = 1.85.
MTP_ACCEPTED_DEFAULT = 1.85

# Disaggregated serving: the fixed time a request spends between the pools besides the KV bytes on the
# wire (the decode worker's KV-slot pre-allocation and the bootstrap/notification round trips of the
# transfer engine: Dynamo/NIXL, SGLang's mooncake/MoRI). 0 unless fitted (serving_constants_ix.py): no
# published figure was found.
DISAGG_HANDOFF_S = 0.0

# Multi-head latent attention (DeepSeek-V3/R1): a decode step runs the absorbed-MLA path, several more
# kernels per layer than the dense GQA layers the step and layer overheads were fitted on (latent down-
# and up-projections with their norms and RoPE, the per-head W_UK / W_UV batched matmuls, the fp8 KV-cache
# append, the MLA kernel's tile-scheduler metadata and split-KV combine), each a launch-and-drain time
# that does not shrink with the batch. A fixed time per MLA layer per forward pass (the main layers and the
# MTP draft passes); fitted where a group has MLA rows (serving_constants_ix.py; docs/BENCHMARKS.md "Hopper
# DeepSeek-R1 FP8"), else the measured preset below, else 0. The fitted values (TensorRT-LLM Hopper 134 us)
# exceed the whole module's measured latency (44 us): they also carry R1's other per-layer costs (routing,
# grouped-GEMM launches) that no dense row shows; the preset is the module alone, so it errs low.
MLA_LAYER_OVERHEAD_S = 0.0
# Mixture-of-experts layers: a decode step's MoE layer runs the router GEMM, top-k, the token permute / sort, the
# grouped-GEMM problem setup and the un-permute / weighted combine, each a launch-and-drain time that does not
# shrink with the batch and that no dense row shows. A fixed time per MoE layer per forward pass (main layers and
# MTP draft passes); 0 unless fitted (serving_constants_ix.py).
MOE_LAYER_OVERHEAD_S = 0.0
# Where a runtime and generation have no MLA row to fit it on (vLLM everywhere; every group in a leave-DeepSeek-R1-out
# refit), the preset is the measured decode latency of one whole DeepSeek-V3 MLA module less its weight read at the
# chip's peak bandwidth (the part the step model already charges). Source: NVIDIA AIConfigurator's collected tables
# (ai-dynamo/aiconfigurator @ 095f58a5, aic-core/src/aiconfigurator_core/systems/data/<system>/mla/<backend>/<version>/
# mla_generation_module_perf.parquet, read 2026-12-05): the module's forward pass (q/kv projections, norms, RoPE,
# absorbed BMMs, KV append, attention kernel, o_proj) under CUDA graphs at 16 local heads (128 heads at TP8),
# batch 1, 1,024 tokens of context, fp8 KV cache, fp8 block-scaled GEMMs:
#   TensorRT-LLM 1.3.0rc20: H100 54.5 us, H200 51.7 us; B200 45.8, B300 42.6, GB200 43.6 us;
#   vLLM 0.24.0 (FlashMLA / FlashInfer-MLA): H100 116.6 us, H200 113.3 us; B200 52.4, B300 100.3, GB200 100.0 us.
# The module's weights at 16 heads are 36.6 M parameters (fused q/kv down-projection 7168 x 2112, q up 1536 x 3072,
# kv up 512 x 4096, o 2048 x 7168), 36.6 MB in fp8: 10.9 us at 3.35 TB/s (H100), 7.6 us at 4.8 TB/s (H200), 4.6 us
# at 8 TB/s (B200, B300, GB200). Per generation the median chip's value. SGLang and the AMD runtimes have no module
# table (AIConfigurator has SGLang's attention kernel alone and no AMD system): unknown, 0.
MLA_LAYER_OVERHEAD_PRESET_S: dict[tuple[str, str], float] = {
    ("trtllm", "hopper"): 44e-6,     # H100 54.5 - 10.9 = 43.6, H200 51.7 - 7.6 = 44.1
    ("trtllm", "blackwell"): 39e-6,  # B200 45.8 - 4.6 = 41.2, B300 42.6 - 4.6 = 38.0, GB200 43.6 - 4.6 = 39.0
    ("vllm", "hopper"): 106e-6,      # H100 116.6 - 10.9 = 105.7, H200 113.3 - 7.6 = 105.7
    ("vllm", "blackwell"): 95e-6,    # B200 52.4 - 4.6 = 47.8, B300 100.3 - 4.6 = 95.7, GB200 100.0 - 4.6 = 95.4
}
# The scheduler takes in new requests once every this many engine steps, so a new request waits for the
# rest of the running step and, on average, (poll - 1) / 2 more (docs/SIZING.md "Closed-loop TTFT"). 1: every
# step (vLLM's engine core and TensorRT-LLM's executor fetch each iteration; SGLang's default
# --scheduler-recv-interval 1). The InferenceX replay takes it from the recipes where they set it
# (serving_replay_ix.recipe_poll_steps: SGLang DeepSeek-R1 / Qwen3.5 10 below 16 clients, 30 from 16,
# benchmarks/single_node/fixed_seq_len/dsr1_fp4_b200.sh @843c6254); fitted for SGLang CDNA's other rows
# (serving_constants_ix.py), whose DeepSeek-R1 recipes set --num-continuous-decode-steps.
SCHEDULER_POLL_STEPS = 1.0


def generation_factor(acc: AcceleratorSpec) -> tuple[float, str]:
    return GENERATION_FACTOR[generation_of(acc.architecture)]


def serving_constants(accelerator: AcceleratorSpec, runtime: str, precision: str, *,
                      async_scheduling: bool = False) -> dict[str, float]:
    """Preset constants (by name) for this accelerator, runtime and compute precision.

    The generation factor is folded into the two efficiencies; the precision's kernel factor is
    applied separately by the model (it depends on weights vs compute precision). async_scheduling:
    the engine overlaps scheduling with the GPU step (ASYNC_STEP_OVERHEAD_FROM)."""
    base = {"all_to_all_efficiency": ALL_TO_ALL_EFFICIENCY, "moe_gather_efficiency": ALLREDUCE_BUS_EFFICIENCY,
            "all_to_all_latency_s": ALL_TO_ALL_LATENCY_S,
            "mtp_accepted_tokens": MTP_ACCEPTED_DEFAULT,
            "disagg_handoff_s": DISAGG_HANDOFF_S,
            "moe_layer_overhead_s": MOE_LAYER_OVERHEAD_S,
            "mla_layer_overhead_s": MLA_LAYER_OVERHEAD_PRESET_S.get((runtime, generation_of(accelerator.architecture)),
                                                                    MLA_LAYER_OVERHEAD_S),
            "scheduler_poll_steps": SCHEDULER_POLL_STEPS, **(HF_EAGER if runtime == "hf_transformers" else FITTED[runtime])}
    g, _ = generation_factor(accelerator)
    base["prefill_efficiency"] *= g
    base["decode_bandwidth_efficiency"] *= g
    if async_scheduling and runtime in ASYNC_STEP_OVERHEAD_FROM:  # without that fit (--no-fit): the synchronous value
        fitted = FITTED_IX.get(ASYNC_STEP_OVERHEAD_FROM[runtime], {})
        base["step_overhead_s"] = fitted.get("step_overhead_s", base["step_overhead_s"])
    # Constants fitted on the InferenceX rows for this runtime and chip generation (serving_constants_ix.py)
    base.update(borrowed_all_to_all(runtime, generation_of(accelerator.architecture)))
    base.update(FITTED_IX.get((runtime, generation_of(accelerator.architecture)), {}))
    return base


def _rows_msg(note: dict) -> Msg:
    """The InferenceX runs a group was fitted on (serving_constants_ix.FITTED_IX_ROWS), in the reader's language."""
    return Msg("{rows} InferenceX runs: {engines}; {gpus}; {models}", rows=note["rows"],
               engines=", ".join(note["engines"]), gpus=", ".join(note["gpus"]), models=", ".join(note["models"]))


# Constants only a model with that mechanism uses (architecture attribute): a plan's source line names the fitted
# constants its own model runs on, not a MoE layer time on a dense model.
MECHANISM_CONSTANTS = {"moe_layer_overhead_s": "is_moe", "all_to_all_efficiency": "is_moe", "moe_gather_efficiency": "is_moe",
                       "all_to_all_latency_s": "is_moe",
                       "mla_layer_overhead_s": "is_mla", "mtp_accepted_tokens": "mtp_layers"}


def constants_used_by(names, arch) -> list[str]:
    """`names` less the mechanism constants `arch` has no use for (all of them when the model is not known)."""
    return [n for n in names if arch is None or n not in MECHANISM_CONSTANTS or getattr(arch, MECHANISM_CONSTANTS[n])]


def constants_source(accelerator: AcceleratorSpec, runtime: str, arch=None) -> Msg:
    line = _constants_line(accelerator, runtime, arch)
    generation = generation_of(accelerator.architecture)
    if arch is not None and arch.is_moe and runtime != "hf_transformers" and borrowed_all_to_all(runtime, generation):
        line = Msg("{line}; MoE all-to-all (expert parallel with data-parallel attention): no {runtime} run of it was "
                   "measured on {generation} chips, so it takes the efficiency and latency fitted on other engines' runs "
                   "on the same chips", line=line, runtime=RUNTIME_SPECS[runtime].label, generation=generation)
    if arch is None or not getattr(arch, "is_compressed_attention", False) or runtime == "hf_transformers":
        return line
    # DeepSeek-V4: whether its attention modules' measured latency is in the step (compressed_attention.py)
    if (runtime, generation_of(accelerator.architecture)) in MODULE_FLOORS_S:
        return Msg("{line}; attention modules (CSA / HCA): latency measured on this engine and chip generation "
                   "(NVIDIA's kernel tables)", line=line)
    return Msg("{line}; attention modules (CSA / HCA): no measured latency for this engine and chip, so the step "
               "is optimistic", line=line)


def _constants_line(accelerator: AcceleratorSpec, runtime: str, arch=None) -> Msg:
    g, why = generation_factor(accelerator)
    if runtime == "hf_transformers":
        return Msg("Hugging Face eager constants are assumptions (no measured rows); generation factor {g:g}: {why}",
                   g=g, why=why)
    ix = constants_used_by(FITTED_IX.get((runtime, generation_of(accelerator.architecture)), {}), arch)
    if ix:
        return Msg("{runtime} constants fitted on {rows}; {names} fitted on the InferenceX rows ({ix_rows})",
                   runtime=RUNTIME_SPECS[runtime].label, rows=FITTED_ROWS[runtime], names=", ".join(ix),
                   ix_rows=_rows_msg(FITTED_IX_ROWS[(runtime, generation_of(accelerator.architecture))]))
    return Msg("{runtime} constants fitted on {rows}; generation factor {g:g}: {why}",
               runtime=RUNTIME_SPECS[runtime].label, rows=FITTED_ROWS[runtime], g=g, why=why)


def resolve_constants(accelerator: AcceleratorSpec, runtime: str, precision: str, calibrations, *,
                      async_scheduling: bool = False, arch=None) -> tuple[dict, Msg]:
    """Presets, replaced by a team calibration where one exists for (accelerator, runtime, precision)."""
    values = serving_constants(accelerator, runtime, precision, async_scheduling=async_scheduling)
    cal = calibrations.for_serving(accelerator.id, runtime, precision) if calibrations else None
    if cal is None:
        return values, constants_source(accelerator, runtime, arch)
    used = {k: float(v) for k, v in cal.values.items() if k in CONSTANT_NAMES}
    values.update(used)
    return values, Msg("team calibration: {label} (replaces {names})", label=cal.label,
                       names=", ".join(sorted(used)) or Msg("nothing: no known constant names"))


# ----------------------------------------------------------------------------- precision x hardware

_COMPUTE_COLUMNS = {
    "fp32": ("tf32_tflops_dense", "fp32_tflops"),
    "bf16": ("bf16_tflops_dense", "fp16_tflops_dense"),
    "fp16": ("fp16_tflops_dense", "bf16_tflops_dense"),
    "fp8": ("fp8_tflops_dense",),
    "fp4": ("fp4_tflops_dense",),
    "int8": ("int8_tops_dense",),
}


def compute_format(acc: AcceleratorSpec, *, weights: str, compute: str) -> tuple[float | None, str, Msg]:
    """(dense peak in TFLOP/s, format the matmuls really run in, explanation).

    fp8/fp4/int8 compute needs the chip's units for that format; without them the weights stay
    quantised in memory (weight-only quantisation) and the matmuls run in bf16 (fp16 where the chip
    has no bf16). bf16 on V100/T4 runs as fp16. int4 is always weight-only (no engine runs int4
    matmuls). Never a speed-up the chip cannot give."""
    wanted = "bf16" if compute == "int4" else compute
    for col in _COMPUTE_COLUMNS[wanted]:
        v = getattr(acc, col)
        if not v:
            continue
        fmt = col.split("_")[0]
        if wanted == "bf16" and fmt == "fp16":
            return float(v), fmt, Msg("{chip} has no bf16 tensor cores: bf16 runs as fp16 at {peak:g} TFLOP/s dense",
                                      chip=acc.model, peak=float(v))
        if kernel_factor(weights=weights, compute_fmt=fmt) < 1.0:
            return float(v), fmt, Msg("{weights} weights are dequantised in the kernel (weight-only); matmuls in "
                                      "{fmt} at {peak:g} TFLOP/s dense", weights=weights, fmt=fmt, peak=float(v))
        return float(v), fmt, Msg("matmuls in {fmt} at {peak:g} TFLOP/s dense", fmt=fmt, peak=float(v))
    for col in ("bf16_tflops_dense", "fp16_tflops_dense"):
        v = getattr(acc, col)
        if v:
            fmt = col.split("_")[0]
            return float(v), fmt, Msg(
                "{chip} has no {compute} units: {weights} weights run as weight-only quantisation, matmuls in {fmt} "
                "at {peak:g} TFLOP/s dense (no {compute} speed-up)",
                chip=acc.model, compute=compute, weights=weights, fmt=fmt, peak=float(v))
    return None, "", Msg("{chip} has no known {compute} throughput", chip=acc.model, compute=compute)


def kernel_factor(*, weights: str, compute_fmt: str) -> float:
    """Efficiency factor of weight-only kernels (weights stored narrower than the matmul format)."""
    narrow = {"fp4": 0.5, "int4": 0.5, "fp8": 1, "int8": 1, "fp16": 2, "bf16": 2, "fp32": 4, "tf32": 4}
    if narrow.get(weights, 2) < narrow.get(compute_fmt, 2):
        return WEIGHT_ONLY_FACTOR.get(weights, 1.0)
    return 1.0


# ------------------------------------------------------------------------------------ interconnect


def link(acc: AcceleratorSpec, tp: int) -> tuple[float, float | None, str]:
    """(one-way GB/s, latency per all-reduce in s or None = the fitted NVLink-class value, kind)."""
    text = (acc.interconnect or "").lower()
    scale_up = any(k in text for k in ("nvlink", "infinity fabric", "ici", "roce", "xgmi")) and "c2c" not in text
    bridge = "bridge" in text
    if scale_up and acc.interconnect_gb_s and (not bridge or tp <= 2):
        return acc.interconnect_gb_s / 2.0, None, "nvlink" if "nvlink" in text else "scale-up"
    pcie = PCIE_ONE_WAY_GB_S.get(acc.pcie_gen or 4, 32.0)
    return pcie, PCIE_ALLREDUCE_LATENCY_S, "pcie"
