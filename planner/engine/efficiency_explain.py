"""The training efficiency of one layout, with its explanation for the plan (the factors of
compute.py one by one, plus the tensor-parallel and expert-parallel traffic sizing_training
charges). Apart from compute.py, which holds the model the search evaluates over arrays.
"""

from __future__ import annotations

from dataclasses import dataclass

from catalog.domain.messages import Msg

from .compute import (
    GEMM_HALF_WIDTH,
    LOW_BIT,
    MFU_RANGE,
    QLORA_DEQUANT_BYTES_PER_PARAM,
    TP_COMM_EXPOSED,
    VISION_FACTOR,
    attention_factor,
    base_16bit,
    base_efficiency,
    bubble_factor,
    format_class,
    gemm_memory_scale,
    gemm_width,
    stage_balance,
    training_efficiency,
    width_factor,
)


@dataclass(frozen=True, kw_only=True)
class Efficiency:
    value: float
    low: float
    high: float
    explain: str


def explain_efficiency(*, generation: str, compute_precision: str, hidden_size: int | None, tp: int, x_attn: float,
                       peak_ratio: float, pp: int, microbatches: float, vpp: int, method: str, vision: bool,
                       pinned: float | None = None, pinned_label: str = "", qlora: float = 1.0,
                       all_to_all: dict | None = None, has_format_units: bool = True, tokens_per_gpu: float | None = None,
                       attention_speedup: float = 1.0, tp_comm: float = 0.0, layers: int | None = None) -> Efficiency:
    """The efficiency of one layout with its explanation. `all_to_all` (MoE with expert parallelism,
    search.moe_all_to_all for this option): {"factor", "ep", "bytes_per_token", "link_gb_s"}."""
    if pinned is not None:
        why = pinned_label or Msg("given in hardware.mfu")
        return Efficiency(value=pinned, low=pinned, high=pinned, explain=Msg("{why}", why=why))
    base, why = base_efficiency(generation, compute_precision, has_format_units=has_format_units)
    fmt = ({"8": "8-bit", "4": "4-bit"}.get(format_class(compute_precision), "16-bit") if has_format_units
           else "16-bit")
    if vision:
        v = base * VISION_FACTOR
        return Efficiency(value=v, low=v * MFU_RANGE[0], high=min(0.95, v * MFU_RANGE[1]),
                          explain=Msg("{gen} {fmt} base {base:.2f} ({why}) x{vf:g} vision (assumption)",
                                      gen=generation, fmt=fmt, base=base, why=why, vf=VISION_FACTOR))
    r_mem = float(gemm_memory_scale(peak_ratio, compute_precision or "bf16"))
    w = float(width_factor(hidden_size / tp, memory_scale=r_mem, tokens_per_gpu=tokens_per_gpu))
    w_eff = float(gemm_width(hidden_size / tp, tokens_per_gpu))  # in hidden-side units
    x_eff = x_attn / attention_speedup
    att = float(attention_factor(x_eff, peak_ratio))
    balance = float(stage_balance(layers, pp))
    bub = float(bubble_factor(pp, microbatches, vpp)) * balance
    mf = qlora if method == "qlora" else 1.0
    v = base * w * att * bub * mf
    if compute_precision in LOW_BIT:  # never faster than the peak ratio allows (training_efficiency)
        v16 = float(training_efficiency(base=base_16bit(generation), hidden_size=hidden_size, tp=tp, x_attn=x_eff,
                                        peak_ratio=1.0, pp=pp, microbatches=microbatches, vpp=vpp,
                                        tokens_per_gpu=tokens_per_gpu, layers=layers)) * mf
        if v16 < v:
            v = v16
            why = why + Msg("; capped at the 16-bit efficiency of this layout (an 8-bit step is never more than the "
                            "peak ratio faster)")
    params = dict(gen=generation, fmt=fmt, base=base, why=why, w=w, h=hidden_size, tp=tp, att=att, x=x_attn, r=peak_ratio,
                  bub=bub, pp=pp, m=microbatches, vpp=vpp, hw=GEMM_HALF_WIDTH * r_mem, we=w_eff,
                  tok=tokens_per_gpu if tokens_per_gpu is not None else 0, su=attention_speedup)
    if mf != 1.0:
        text = Msg("{gen} {fmt} base {base:.2f} ({why}) x {w:.3f} GEMM shape (hidden {h:.0f} / TP{tp} and {tok:.0f} tokens "
                   "per GPU and micro-batch: effective width {we:.0f}, half width {hw:.0f}) x "
                   "{att:.3f} attention (core/dense FLOPs {x:.3f}, peak ratio {r:.3g}, speed-up {su:g}) x {bub:.3f} pipeline bubble (PP{pp}, "
                   "{m:.0f} micro-batches, VPP{vpp}) x {mf:.3f} QLoRA NF4 dequantisation ({db:g} B of memory traffic per frozen "
                   "parameter per micro-batch, fitted on the Qwen README's LoRA/Q-LoRA timings)",
                   **params, db=QLORA_DEQUANT_BYTES_PER_PARAM, mf=mf)
    else:
        text = Msg("{gen} {fmt} base {base:.2f} ({why}) x {w:.3f} GEMM shape (hidden {h:.0f} / TP{tp} and {tok:.0f} tokens "
                   "per GPU and micro-batch: effective width {we:.0f}, half width {hw:.0f}) x "
                   "{att:.3f} attention (core/dense FLOPs {x:.3f}, peak ratio {r:.3g}, speed-up {su:g}) x {bub:.3f} pipeline bubble (PP{pp}, "
                   "{m:.0f} micro-batches, VPP{vpp})", **params)
    if balance < 1.0:
        text = text + Msg("; the pipeline figure includes {bal:.3f} uneven stages ({layers} layers on PP{pp}: the "
                          "fullest stage runs {most} layers, the mean {mean:.3g})", bal=balance, layers=layers, pp=pp,
                          most=-(-layers // pp), mean=layers / pp)
    if tp_comm > 0:
        t = 1.0 / (1.0 + TP_COMM_EXPOSED * tp_comm * v)
        v *= t
        text = text + Msg(" x {t:.3f} tensor-parallel traffic not overlapped (TP{tp}, {gen} stack)", t=t, tp=tp, gen=generation)
    if all_to_all is not None and all_to_all["bytes_per_token"] > 0:
        v *= all_to_all["factor"]
        a2a = dict(f=all_to_all["factor"], ep=all_to_all["ep"], mb=all_to_all["bytes_per_token"] / 1e6,
                   bw=all_to_all["link_gb_s"])
        if all_to_all.get("overlapped"):
            text = text + Msg(" x {f:.3f} expert-parallel all-to-all (EP{ep}: {mb:.1f} MB per token dispatched and "
                              "combined in bf16, forward and backward, over {bw:g} GB/s one way; overlapped with "
                              "compute, the longer of the two sets the step)", **a2a)
        else:
            text = text + Msg(" x {f:.3f} expert-parallel all-to-all (EP{ep}: {mb:.1f} MB per token dispatched and "
                              "combined in bf16, forward and backward, over {bw:g} GB/s one way; not overlapped with "
                              "compute)", **a2a)
    return Efficiency(value=v, low=v * MFU_RANGE[0], high=min(0.95, v * MFU_RANGE[1]), explain=text)
