"""The training efficiency model and its fitted constants (docs/SIZING.md "Training efficiency").

Its neighbours hold the rest of a training run's time: training_flops.py (FLOPs, recomputation,
hours), training_goodput.py (goodput), efficiency_explain.py (one layout's efficiency, explained)
and implied_efficiency.py (what a measured run implies in these terms).

Efficiency is the share of the accelerator's dense peak *for the compute format* that the
executed FLOPs reach while training steps run. Executed FLOPs are the model FLOPs (6·N·D for
full training, 4·N·D + 6·N_adapter·D for LoRA) times the recomputation factor. Goodput is the
share of wall-clock spent in useful steps (restarts, lost work, stalls excluded); it is separate
from efficiency. GPU-hours = executed FLOPs / (GPUs x peak x efficiency) / goodput.

The efficiency model (every effect counted once, constants fitted jointly on the published runs
in planner/engine/data/training_published.json by scripts/fit_training_efficiency.py):

    E = base[generation, format] x W x A x P
    W = 1 / (1 + r_mem x (GEMM_HALF_WIDTH / w + TOKEN_HALF_WIDTH / M)),  w = hidden_size / tensor_parallel
        (a GEMM's memory part per FLOP is the sum of the inverses of its sides: the hidden side split by TP,
        w, with the unsplit hidden side folded into GEMM_HALF_WIDTH, and the token side M = sequence x
        micro-batch / context_parallel, the tokens one GPU multiplies per micro-batch (routed experts: the
        tokens routed to one expert, gemm_tokens); without M (former model) the token term is left out)
        r_mem = peak_ratio x max(bytes(format), 2) / 2: a GEMM's time is a compute part (FLOPs / peak)
        plus a memory part (its activations, ~FLOPs / width bytes, over HBM); the 16-bit activations
        between GEMMs are not made smaller by an 8-bit compute format, so only the compute part
        speeds up and the half width grows by the peak ratio (fp8: x2; fp32/tf32: x1)
    A = 1 / (1 + ATTENTION_COST x x_attn x peak_ratio / speedup)              (attention core)
        x_attn = attention-core FLOPs / dense FLOPs = L x s x heads x (d_qk + d_v) / N_active
        speedup = ATTENTION_SPEEDUP of the chip generation (Blackwell Ultra: 2, NVIDIA's figure)
        peak_ratio = peak(format) / peak(bf16): the attention core runs in bf16 whatever the format
    P = 1 / (1 + (pp - 1) / (vpp x m))                                        (pipeline bubble)
        m = micro-batches per pipeline per step
    T = 1 / (1 + TP_COMM_EXPOSED x (2/9) x (tp - 1) x peak x E' / (hidden x link))  (tensor-parallel traffic)
        the two all-reduces of a layer's activations forward and two backward (16 h (tp-1)/tp bytes per
        token and layer in bf16) over the one-way scale-up link, against the layer's 72 h^2 / tp FLOPs
        at the efficiency E' of the other factors; generations whose training stacks overlap it with the
        GEMMs (TP_COMM_OVERLAPPED: Hopper, Blackwell) get T = 1; unknown link bandwidth: T = 1

`hardware.mfu` (or a team calibration) replaces the whole product.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from catalog.domain.messages import Msg

from .architecture import ModelArch
from .hardware import GENERATION_KEYS, generation_of  # noqa: F401 (re-exported: compute.generation_of)
from .precision import BYTES_PER_VALUE, EIGHT_BIT

LOW_BIT = (*EIGHT_BIT, "fp4")  # formats with their own base and the peak-ratio cap (fp4: NVFP4/MXFP4 GEMMs)

# ------------------------------------------------------------------------------ constants

# Fitted by scripts/fit_training_efficiency.py on the 108 rows with role "fit" of
# planner/engine/data/training_published.json (MosaicML llm-foundry benchmark tables on A100/H100,
# BF16 and FP8; Korthikanti et al. 2022 MFU table; NeMo 24.07 H100 and 25.02 B200 FP8 tables; PaLM;
# issue 24: MLPerf Training v5.0/v5.1 result logs on H100/H200/B200/GB200 and AMD MI300X-MI355X,
# Megatron-Bridge 25.11-26.06 tables on B200/GB200/GB300/H100); the rows with role "held_out" were not
# used. Errors, per vendor and generation and leave-one-source-out: docs/BENCHMARKS.md "Training:
# broader fit set (issue 24)". GEMM_HALF_WIDTH, TOKEN_HALF_WIDTH, ATTENTION_COST and TP_COMM_EXPOSED are
# a joint grid search (the bases are closed-form for each grid point).
GEMM_HALF_WIDTH = 450.0  # per-GPU hidden width (hidden / TP) at which 16-bit GEMM efficiency halves (tokens aside)
TOKEN_HALF_WIDTH = 250.0  # tokens per GPU and micro-batch at which 16-bit GEMM efficiency halves (width aside)
# Tokens per expert and micro-batch at which a routed expert's grouped GEMM halves (width aside). Fitted on the one
# published pair that isolates it (docs/SIZING.md "Tokens per expert"): Megatron-Bridge B200 DeepSeek-V3 FP8,
# EP8/PP16 (26.04, 1,024 tokens per expert) vs EP32/PP8/VP2 (26.04.01, 4,096): 2,815 -> 3,328 tokens/s/GPU, x1.18.
EXPERT_TOKEN_HALF_WIDTH = 330.0
ATTENTION_COST = 1.4  # time of one attention-core FLOP relative to one dense GEMM FLOP (bf16)

# Tensor-parallel communication that is not hidden behind the GEMMs, as a share of its link time: fitted
# by scripts/fit_training_efficiency.py on the TP > 1 fit rows of generations without TP overlap
# (Korthikanti et al. 2022 on A100, TP8; the MosaicML rows are TP1). Megatron-Core / Transformer Engine
# overlap TP communication with the GEMMs on Hopper and Blackwell (TP_COMM_OVERLAP=True in the MLPerf
# Training v5.0 Llama 3.1 405B configs read; the Megatron-Bridge recipes do the same), so those generations
# get none; AMD's MLPerf configs set TP_COMM_OVERLAP=False (their rows are TP1, so the constant is not
# checked there).
TP_COMM_EXPOSED = 0.5
TP_COMM_OVERLAPPED = ("hopper", "blackwell")

# Attention-core speed-up of a chip generation over the ATTENTION_COST of the rest (not fitted): NVIDIA
# states "2X attention-layer acceleration" for Blackwell Ultra (B300, GB300: doubled special-function
# throughput for the softmax exponentials; NVIDIA Technical Blog "Inside NVIDIA Blackwell Ultra: The Chip
# Powering the AI Factory Era", 2025-08). The fit set agrees: without it the GB300 Megatron-Bridge rows are
# up to 24% low, and of the factors tried (1, 1.5, 2) 2 gives the lowest fit error (RMS log 0.122, 0.117, 0.116).
ATTENTION_SPEEDUP = {"blackwell ultra": 2.0}

# Asymptotic efficiency (wide GEMMs, no attention, no bubble) by generation and format class.
# "16" covers bf16/fp16 (and tf32/fp32 against their own peak), "8" fp8/int8 against the fp8 peak.
# Generations without a published training run read are assumptions and say so: the former
# ">= 13B" presets x 1.3, about Hopper's ratio of fitted base to its former preset (0.54 / 0.40). The
# fitted fp8 asymptotes (Hopper 0.55, Blackwell 0.54) are above the 16-bit 0.53 (wide-GEMM limits, with
# the memory part of narrow GEMMs in the width term); fp8 still never beats its peak ratio: an 8-bit
# step's efficiency is capped at the 16-bit efficiency of the same layout (training_efficiency).
BASE = {
    ("ampere", "16"): (0.80, Msg("fitted: MosaicML A100 table, Korthikanti et al. 2022")),
    ("hopper", "16"): (0.55, Msg("fitted: MosaicML H100 BF16 table")),
    ("hopper", "8"): (0.62, Msg("fitted: MosaicML H100 FP8 table, NeMo 24.07 H100 FP8 tables, MLPerf Training v5.0/v5.1 "
                                "H100/H200 FP8 results, Megatron-Bridge H100 FP8 SFT")),
    ("blackwell", "16"): (0.55, Msg("assumption: the Hopper 16-bit base (no published Blackwell BF16 run read)")),
    ("blackwell", "8"): (0.60, Msg("fitted: NeMo 25.02 B200 FP8 table, Megatron-Bridge B200/GB200/GB300 FP8 tables, "
                                   "MLPerf Training v5.0 B200/GB200 and v5.1 B300 FP8 results")),
    ("blackwell", "4"): (0.59, Msg("fitted: Megatron-Bridge 26.04.01/26.06 GB200/GB300 NVFP4 tables (Llama 3 70B, Llama 3.1 405B), "
                                   "MLPerf Training v5.1 B300 NVFP4 Llama 3.1 8B")),
    ("cdna3", "16"): (0.43, Msg("assumption: the fitted CDNA 3 8-bit base (no published MI300X/MI325X BF16 training run read)")),
    ("cdna3", "8"): (0.43, Msg("fitted: MLPerf Training v5.0 MI300X/MI325X Llama 2 70B LoRA FP8 results")),
    ("cdna4", "16"): (0.57, Msg("assumption: the fitted CDNA 4 8-bit base (no published MI350X/MI355X BF16 training run read)")),
    ("cdna4", "8"): (0.57, Msg("fitted: MLPerf Training v5.1 MI350X/MI355X Llama 2 70B LoRA and Llama 3.1 8B FP8 results")),
    ("tpu", "16"): (0.66, Msg("PaLM 540B: 46.2% MFU on 6144 TPU v4 (Chowdhery et al. 2022)")),
    ("volta", "16"): (0.45, Msg("assumption (pre-BF16 generation)")),
    ("turing", "16"): (0.33, Msg("assumption (inference card, FP16 only)")),
    ("ada", "16"): (0.45, Msg("assumption (PCIe cards without NVLink)")),
    ("cdna", "16"): (0.39, Msg("assumption (CDNA 1/2: ROCm stack; no published training run read)")),
    ("gaudi", "16"): (0.45, Msg("assumption")),
    ("other", "16"): (0.39, Msg("assumption (unknown accelerator family)")),
}

# QLoRA dequantises the NF4 base weights in every forward, backward and recompute pass of every
# micro-batch, whatever its length: a memory-bound cost per frozen parameter, expressed as bytes of
# memory traffic per parameter per micro-batch (bandwidth-bound floor: 3 passes x (0.5 read + 2
# write + 2 read) = 13.5 B). Fitted by scripts/fit_training_efficiency.py as the geometric mean over
# the Qwen README's LoRA / Q-LoRA pairs (Qwen-7B and -14B, one A100-80GB, 256-8192 tokens): ~4x
# the floor (bitsandbytes kernels). LoRA itself has no factor: its FLOPs already drop the frozen
# weights' gradient GEMMs.
QLORA_DEQUANT_BYTES_PER_PARAM = 50.0
VISION_FACTOR = 0.5  # convolutional/vision nets reach about half an LLM's utilisation (assumption)
MFU_RANGE = (0.75, 1.2)  # low-high multipliers around the estimate (fit error band, docs/BENCHMARKS.md)


def format_class(compute_precision: str) -> str:
    """The BASE format key: "8" (fp8/int8), "4" (fp4) or "16" (the rest)."""
    return "8" if compute_precision in EIGHT_BIT else "4" if compute_precision == "fp4" else "16"


def base_efficiency(generation: str, compute_precision: str, *, has_format_units: bool = True) -> tuple[float, str]:
    """Asymptotic base for the generation and format (8- and 4-bit formats: the fitted base where there
    is one; the step is still never faster than the peak ratio allows, see training_efficiency). A chip
    without the format's units (fp8 on A100, fp4 on H100) runs 16-bit matmuls: the 16-bit base, at its
    16-bit peak. A 4-bit format without a fitted 4-bit base takes the 8-bit base (said so)."""
    b16, why16 = BASE.get((generation, "16"), BASE[("other", "16")])
    if compute_precision in LOW_BIT and not has_format_units:
        return b16, why16 + Msg("; no {compute} units: 16-bit matmuls at the 16-bit peak", compute=compute_precision)
    if compute_precision == "fp4":
        b4 = BASE.get((generation, "4"))
        if b4 is not None:
            return b4
        b8 = BASE.get((generation, "8"))
        if b8 is not None:
            return b8[0], b8[1] + Msg("; no published 4-bit run read: the 8-bit base against the 4-bit peak")
        return b16, why16 + Msg("; no published 4-bit or 8-bit run read: the 16-bit base against the 4-bit peak")
    if compute_precision in EIGHT_BIT:
        b8 = BASE.get((generation, "8"))
        if b8 is None:
            return b16, why16 + Msg("; no published fp8 run read: the 16-bit base against the fp8 peak")
        return b8
    return b16, why16


def base_16bit(generation: str) -> float:
    """The 16-bit base of the generation (the cap of an 8-bit step: never faster than the peak ratio)."""
    return BASE.get((generation, "16"), BASE[("other", "16")])[0]


def training_generation(architecture: str) -> str:
    """The efficiency generation of a chip: hardware.generation_of, with AMD CDNA split by generation
    (CDNA 3: MI300X/MI325X, gfx942; CDNA 4: MI350X/MI355X, gfx950): their kernels and published FP8
    training results differ (MLPerf Training v5.0/v5.1), so each has its own fitted base."""
    gen = generation_of(architecture)
    if gen == "cdna":
        s = architecture.lower()
        if "cdna 4" in s or "cdna4" in s or "gfx950" in s:
            return "cdna4"
        if "cdna 3" in s or "cdna3" in s or "gfx942" in s:
            return "cdna3"
    return gen


def tp_comm_coefficient(*, generation: str, tp, hidden_size, peak_tflops, link_gb_s):
    """(2/9) x (tp - 1) x peak / (hidden x link) per unit of efficiency (0 where the generation overlaps TP
    communication, TP = 1 or the link bandwidth is unknown); training_efficiency multiplies it by
    TP_COMM_EXPOSED and the efficiency."""
    tp = np.asarray(tp, dtype=float)
    link = np.asarray(link_gb_s, dtype=float)
    if generation in TP_COMM_OVERLAPPED:
        return np.zeros(np.broadcast(tp, link).shape)
    ok = (tp > 1) & np.isfinite(link) & (link > 0)
    c = (2.0 / 9.0) * (tp - 1.0) * np.asarray(peak_tflops, dtype=float) * 1e12 / (
        np.asarray(hidden_size, dtype=float) * np.where(ok, link, 1.0) * 1e9)
    return np.where(ok, c, 0.0)


def tp_link_gb_s(acc, tp) -> float:
    """One-way GB/s of the scale-up link TP uses (serving_constants.link); NaN for a scale-up fabric whose
    bandwidth the catalog does not hold (unknown stays unknown: no TP term)."""
    from .serving_constants import link

    text = (acc.interconnect or "").lower()
    if any(k in text for k in ("nvlink", "infinity fabric", "ici", "xgmi")) and not acc.interconnect_gb_s:
        return float("nan")
    return float(link(acc, int(tp))[0])


def attention_speedup(architecture: str) -> float:
    """ATTENTION_SPEEDUP of the chip (1 unless its generation has a stated attention speed-up)."""
    s = architecture.lower()
    return max([v for k, v in ATTENTION_SPEEDUP.items() if k in s], default=1.0)


@dataclass(frozen=True)
class EfficiencyConstants:
    gemm_half_width: float = GEMM_HALF_WIDTH
    attention_cost: float = ATTENTION_COST
    token_half_width: float = TOKEN_HALF_WIDTH
    tp_comm_exposed: float = TP_COMM_EXPOSED


DEFAULT_CONSTANTS = EfficiencyConstants()


ASPECT_RATIO = 128  # hidden size / layers of GPT-3 175B (12288/96) and Llama 2 7B (4096/32)


def model_width(a: ModelArch) -> float:
    """GEMM width of the model: the hidden size for a dense model; for a model given only by its
    parameter count, the width a dense decoder of that size has at the GPT-3/Llama aspect ratio:
    N ~ 12 L h^2 with L = h / 128, so h = (128 N / 12)^(1/3).

    MoE: a GEMM is as wide as its narrower side, so the active experts' FFN GEMMs (h x moe_ffn) are
    min(h, moe_ffn_hidden_size) wide (768 for Qwen3-30B-A3B) and the rest (attention projections,
    dense layers, router, LM head) h. The width factor W = w / (w + GEMM_HALF_WIDTH) is a time
    ratio, so the mix is the FLOP-weighted harmonic mean of the widths: with f_e the active expert
    FLOP share, 1 / w_eff = f_e / w_expert + (1 - f_e) / h, which gives exactly the FLOP-weighted
    time of the two GEMM classes at any tensor parallelism (W(w_eff / t) = 1 / sum f_i / W(w_i / t))."""
    if not a.hidden_size:
        return float((ASPECT_RATIO * max(a.active_params, 1) / 12.0) ** (1.0 / 3.0))
    h = float(a.hidden_size)
    if not (a.is_moe and a.moe_ffn_hidden_size and a.active_params):
        return h
    w_expert = float(min(a.hidden_size, a.moe_ffn_hidden_size))
    per_expert = (3 if a.gated_ffn else 2) * a.hidden_size * a.moe_ffn_hidden_size
    active_expert = (a.layers - a.dense_layers) * (a.experts_per_token + a.shared_experts) * per_expert
    share = min(max(active_expert / float(a.active_params), 0.0), 1.0)
    return 1.0 / (share / w_expert + (1.0 - share) / h)


def gemm_tokens(a: ModelArch, tokens_per_gpu, ep=1):
    """Tokens per GEMM per micro-batch (the M side of gemm_width), FLOP-weighted harmonically as model_width.

    Dense GEMMs multiply the tokens one GPU holds per micro-batch (sequence x micro-batch / CP). A routed
    expert multiplies only the tokens routed to it: with expert parallelism EP, the EP ranks' tokens times
    top-k spread over the experts, M_e = M x EP x k / E (Qwen3-30B-A3B, 128 experts, top-8, EP8: M_e = M / 2;
    EP1: M / 16). 1 / M_eff = f_e / M_e + (1 - f_e) / M with f_e the routed-expert FLOP share."""
    m = np.asarray(tokens_per_gpu, dtype=float)
    if not (a.is_moe and a.moe_ffn_hidden_size and a.active_params and a.experts):
        return m
    per_expert = (3 if a.gated_ffn else 2) * a.hidden_size * a.moe_ffn_hidden_size
    routed = (a.layers - a.dense_layers) * a.experts_per_token * per_expert
    share = min(max(routed / float(a.active_params), 0.0), 1.0)
    m_e = np.maximum(m * np.asarray(ep, dtype=float) * a.experts_per_token / a.experts, 1.0)
    m_e = m_e * TOKEN_HALF_WIDTH / EXPERT_TOKEN_HALF_WIDTH  # grouped expert GEMMs: their own half width
    return 1.0 / (share / m_e + (1.0 - share) / np.maximum(m, 1.0))


def attention_ratio(a: ModelArch, *, seq: int) -> float:
    """Attention-core FLOPs (QK^T and AV, full s x s as Megatron counts) over dense FLOPs per token."""
    if not a.active_params or a.model_type == "vision":
        return 0.0
    if not a.is_transformer:  # parameter count only: the aspect-ratio decoder of model_width
        h = model_width(a)
        return float(2.0 * (h / ASPECT_RATIO) * seq * h / a.active_params)
    heads = a.attention_heads or 1
    d_qk = a.head_dim or (a.hidden_size // heads)
    d_v = a.v_head_dim or d_qk
    layers = a.layers or 0
    local = min(a.local_layers or 0, layers) if a.sliding_window else 0
    ctx = (layers - local) * seq + local * min(seq, a.sliding_window or seq)
    return float(ctx * heads * (d_qk + d_v) / a.active_params)


def gemm_memory_scale(peak_ratio, compute_precision: str = "bf16"):
    """r_mem: how much larger the memory part of a GEMM's time is, relative to its compute part, than
    in bf16. Compute part ~ FLOPs / peak(format); memory part ~ activation bytes / HBM bandwidth, with
    the activations between GEMMs kept in 16 bits (Transformer Engine: only the GEMM inputs are cast to
    fp8, outputs stay bf16) or in the format itself when it is wider (fp32). So r_mem = peak(format) /
    peak(bf16) x max(bytes(format), 2) / 2: 2 for fp8 on H100/B200, 1 for bf16 and tf32/fp32."""
    act_bytes = max(BYTES_PER_VALUE.get(compute_precision, 2.0), 2.0)
    return np.asarray(peak_ratio, dtype=float) * act_bytes / 2.0


def gemm_width(hidden_per_gpu, tokens_per_gpu=None, constants: EfficiencyConstants = DEFAULT_CONSTANTS):
    """Effective GEMM width per GPU in hidden-side units: 1 / w_eff = 1 / (hidden / TP) + (TOKEN_HALF_WIDTH /
    GEMM_HALF_WIDTH) / M, so that W = w_eff / (w_eff + GEMM_HALF_WIDTH x r_mem); without M, hidden / TP."""
    w = np.asarray(hidden_per_gpu, dtype=float)
    if tokens_per_gpu is None:
        return w
    ratio = constants.token_half_width / constants.gemm_half_width
    return 1.0 / (1.0 / w + ratio / np.maximum(np.asarray(tokens_per_gpu, dtype=float), 1.0))


def width_factor(hidden_per_gpu, constants: EfficiencyConstants = DEFAULT_CONSTANTS, memory_scale=1.0,
                 tokens_per_gpu=None):
    """W = 1 / (1 + r_mem x (GEMM_HALF_WIDTH / w + TOKEN_HALF_WIDTH / M)): the share of a GEMM's time that
    is compute (1 / (1 + memory part / compute part), the memory part ~ the inverse sides), r_mem from
    gemm_memory_scale."""
    w = gemm_width(hidden_per_gpu, tokens_per_gpu, constants)
    return w / (w + constants.gemm_half_width * np.asarray(memory_scale, dtype=float))


def attention_factor(x_attn, peak_ratio, constants: EfficiencyConstants = DEFAULT_CONSTANTS):
    return 1.0 / (1.0 + constants.attention_cost * np.asarray(x_attn, dtype=float) * np.asarray(peak_ratio, dtype=float))


def stage_balance(layers, pp):
    """Mean stage / fullest stage when `layers` do not split evenly into `pp` stages: the step runs at the pace
    of the stage with ceil(L/PP) layers (61 DeepSeek-V3 layers on PP8: 8 on the fullest, 7.625 on average,
    0.953). ceil(L/PP) is the least any split reaches, Megatron-Core's included (an explicit
    `pipeline_model_parallel_layout`, or `account_for_embedding/loss_in_pipeline_split`; with interleaving
    the chunks of one stage are sized so its total is ceil(L/PP) or floor(L/PP)). 1 without a layer count."""
    pp = np.asarray(pp, dtype=float)
    if not layers:
        return np.ones_like(pp)
    return (float(layers) / pp) / np.ceil(float(layers) / pp)


def bubble_factor(pp, microbatches, vpp):
    pp = np.asarray(pp, dtype=float)
    m = np.maximum(np.asarray(microbatches, dtype=float), 1.0)
    return 1.0 / (1.0 + (pp - 1.0) / (np.asarray(vpp, dtype=float) * m))


def qlora_factor(efficiency, *, frozen_params: float, peak_tflops, bandwidth_gb_s, exec_flops_per_token: float,
                 tokens_per_microbatch, cp=1, dequant_bytes: float = QLORA_DEQUANT_BYTES_PER_PARAM):
    """Share of a QLoRA micro-batch's time spent in GEMMs: 1 / (1 + dequantisation / compute time).

    Per GPU and micro-batch, compute = exec FLOPs per token x tokens / (TP x PP x CP) / (peak x E)
    and dequantisation = dequant_bytes x frozen params / (TP x PP) / bandwidth, so the ratio is
    dequant_bytes x N x peak x E x CP / (bandwidth x exec FLOPs per token x tokens per micro-batch).
    """
    ratio = (dequant_bytes * frozen_params * np.asarray(peak_tflops, dtype=float) * 1e12 * np.asarray(efficiency, dtype=float)
             * np.asarray(cp, dtype=float)
             / (np.asarray(bandwidth_gb_s, dtype=float) * 1e9 * exec_flops_per_token * np.asarray(tokens_per_microbatch, dtype=float)))
    return 1.0 / (1.0 + ratio)


def training_efficiency(*, base, hidden_size, tp, x_attn, peak_ratio, pp, microbatches, vpp, method="full",
                        vision=False, constants: EfficiencyConstants = DEFAULT_CONSTANTS, compute_precision: str = "bf16",
                        base_16bit=None, tokens_per_gpu=None, tp_comm=None, layers=None):
    """E = base x W x A x P x method (x vision): arrays broadcast (one value per candidate). P: the pipeline
    bubble x the stage balance of `layers` over PP stages (stage_balance; None: even stages).

    With `base_16bit` (the generation's 16-bit base), an 8-bit step is capped at the 16-bit efficiency
    of the same layout, E8 <= E16, so it is never more than the peak ratio faster than bf16."""
    if vision:
        return np.asarray(base, dtype=float) * VISION_FACTOR * np.ones_like(np.asarray(tp, dtype=float))
    width = np.asarray(hidden_size, dtype=float) / np.asarray(tp, dtype=float)
    bubble = bubble_factor(pp, microbatches, vpp) * stage_balance(layers, pp)
    w = width_factor(width, constants, gemm_memory_scale(peak_ratio, compute_precision), tokens_per_gpu)
    e = np.asarray(base, dtype=float) * w * attention_factor(x_attn, peak_ratio, constants) * bubble
    if base_16bit is not None and compute_precision in LOW_BIT:
        e16 = (np.asarray(base_16bit, dtype=float) * width_factor(width, constants, 1.0, tokens_per_gpu)
               * attention_factor(x_attn, 1.0, constants))
        e = np.minimum(e, e16 * bubble)
    if tp_comm is not None:  # tp_comm_coefficient: exposed TP traffic grows with the efficiency it interrupts
        e = e / (1.0 + constants.tp_comm_exposed * np.asarray(tp_comm, dtype=float) * e)
    return e


def microbatches_per_pipeline(*, global_batch_tokens, seq, micro_batch, dp):
    """Micro-batches each pipeline runs per optimizer step (>= 1)."""
    seqs = np.asarray(global_batch_tokens, dtype=float) / float(seq)
    return np.maximum(seqs / (float(micro_batch) * np.asarray(dp, dtype=float)), 1.0)

