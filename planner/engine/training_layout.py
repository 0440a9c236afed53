"""One training layout evaluated exactly (issue 24, 3.): the training counterpart of serving_layout.

`evaluate_training_layout(...)` is a pure function: give it the run (search.TrainingInputs), one
accelerator and a layout (TP, PP, CP, EP, DP, micro-batch, virtual pipeline stages, recomputation, ZeRO)
and it returns the step time, tokens/s per GPU, MFU, memory per GPU and the run's GPU-hours of exactly
that layout, each with how it was obtained. It uses the same memory model (search.training_memory) and
efficiency model (search.training_efficiency_and_goodput) as the search, so a pinned plan's run-time
figures and this section agree (a pinned expert parallelism splits the routed experts in memory in both:
moe_memory.py).

Figures (one optimizer step of `global_batch_tokens`; docs/SIZING.md "Exact training layout"):

    executed FLOPs per step = tokens per step x model FLOPs per token x recomputation factor
    step time               = executed FLOPs per step / (GPUs x dense peak x efficiency)
    tokens/s per GPU        = tokens per step / step time / GPUs
    MFU                     = model FLOPs per token x tokens/s per GPU / dense peak  (= efficiency / recompute)
    GPU-hours               = tokens / tokens/s per GPU / 3600 / goodput
"""

from __future__ import annotations

import dataclasses

import numpy as np

from catalog.domain.messages import Msg

from . import compute, fabrics, memory, search, training_flops
from .errors import FieldError, SpecValidationError
from .hardware import AcceleratorSpec
from .precision import peak_tflops
from .result import q
from .sizing_common import CKPT_TEXT, _fmt_gib

GIB = memory.GIB
LOW_BIT_TRAINING = ("fp8", "fp4")  # formats whose training needs the chip's own tensor-core units


def check_precision_on_chip(compute_precision: str, acc: AcceleratorSpec, *, kind: str) -> None:
    """FP8 (FP4) training on a chip without units for it is a field error on precision.compute: the
    catalog's dense peak column of that format is empty (A100, V100, MI250X...). Serving keeps its
    weight-only fallback (docs/WORKLOADSPEC.md "Precisions")."""
    if kind not in ("pretraining", "finetuning", "classic_training") or compute_precision not in LOW_BIT_TRAINING:
        return
    _, column = peak_tflops(acc, compute_precision)
    if column.split("_")[0] == compute_precision:
        return
    raise SpecValidationError([FieldError(field="precision.compute", message=Msg(
        "{model} has no {fmt} tensor cores (the catalog lists no dense {fmt} peak for it): {fmt} training needs "
        "them (Transformer Engine runs FP8 matmuls on Hopper, Ada, Blackwell and CDNA3 or later); use bf16 or a "
        "chip with {fmt}", model=acc.model, fmt=compute_precision))])


def exact_pins(t, hw) -> dict | None:
    """TrainingInputs pins of an exact layout (training.data_parallel given), else None. Unpinned TP, PP,
    CP and interleaving are 1 (Megatron-Core's defaults); ZeRO and recomputation stay searched unless pinned."""
    if t is None or t.data_parallel is None:
        return None
    tp, pp, cp = t.tensor_parallel or 1, t.pipeline_parallel or 1, t.context_parallel or 1
    return {"tp_pin": tp, "pp_pin": pp, "cp_pin": cp, "vpp": t.virtual_pipeline_stages or 1,
            "count_pin": hw.count or tp * pp * cp * t.data_parallel, "ep_pin": t.expert_parallel}


def evaluate_training_layout(ti: search.TrainingInputs, acc: AcceleratorSpec, *, tp: int = 1, pp: int = 1,
                             cp: int = 1, dp: int = 1, ep: int | None = None, vpp: int = 1, zero: int = 0,
                             checkpointing: str = "selective", work: float, gpus_per_server: int | None = None) -> dict:
    """Exactly this layout on `tp x pp x cp x dp` GPUs of `acc`. `work`: the run's tokens (samples for a
    vision net), `ti.global_batch_tokens` per step (samples for a vision net); `ti.micro_batch` per rank."""
    count = tp * pp * cp * dp
    ti = dataclasses.replace(ti, ep_pin=ep, count_pin=count)
    cat = search.catalog_arrays([acc], compute_precision=ti.compute_precision, gpus_per_server_pin=gpus_per_server)
    one = lambda v: np.array([v], dtype=np.int64)  # noqa: E731
    lay = {"count": one(count), "tp": one(tp), "pp": one(pp), "dp": one(dp), "cp": one(cp), "vpp": one(vpp),
           "zero": one(zero), "ckpt": one(search.CKPT_CODES[checkpointing])}
    mem = {k: float(np.asarray(v).ravel()[0]) for k, v in search.training_memory(ti, lay).items()}
    eff, good, a2a = (float(x[0]) for x in search.training_efficiency_and_goodput(
        ti, cat, lay, np.array([0]), np.array([0]), np.array([float(count)])))
    ep_used = 1
    if ti.arch.is_moe and not ti.vision:
        ep_used = int(search.moe_all_to_all(ti, cat, lay, [0], [0], [eff / a2a])["ep"][0])
    capacity = acc.memory_gib * GIB
    g = int(cat.gpus_per_server[0])
    peak = float(cat.peak_tflops[0])
    factor = training_flops.recompute_factor(checkpointing=checkpointing, method=ti.method)
    per_step = float(ti.global_batch_tokens or ti.seq * ti.micro_batch)
    flops_per_unit = ti.model_flops / work
    step_s = per_step * flops_per_unit * factor / (count * peak * 1e12 * eff)
    per_s_gpu = per_step / step_s / count
    mfu = flops_per_unit * per_s_gpu / (peak * 1e12)
    gpu_hours = work / per_s_gpu / 3600.0 / good
    m = float(compute.microbatches_per_pipeline(global_batch_tokens=per_step, seq=ti.seq, micro_batch=ti.micro_batch,
                                                dp=dp))
    bubble = float(compute.bubble_factor(pp, m, vpp))
    unit = "samples" if ti.vision else "tokens"
    unit_txt = Msg("samples") if ti.vision else Msg("tokens")
    fits_mem, fits_tp = mem["total"] <= capacity, tp <= g
    why_fit = (Msg("{need} per GPU of {cap:g} GiB", need=_fmt_gib(mem["total"]), cap=acc.memory_gib) if fits_mem
               else Msg("needs {need} per GPU, {acc} has {cap:g} GiB", need=_fmt_gib(mem["total"]), acc=acc.model,
                        cap=acc.memory_gib))
    if not fits_tp:
        why_fit = Msg("tensor parallel {tp} spans more than the {g} GPUs of one server (its all-reduce needs the "
                      "scale-up link); {rest}", tp=tp, g=g, rest=why_fit)
    ckpt_txt = CKPT_TEXT[checkpointing]
    return {
        "layout": {"count": count, "tensor_parallel": tp, "pipeline_parallel": pp, "context_parallel": cp,
                   "expert_parallel": ep_used, "data_parallel": dp, "micro_batch_size": ti.micro_batch,
                   "virtual_pipeline_stages": vpp, "activation_checkpointing": checkpointing, "zero_stage": zero},
        "accelerator_id": acc.id, "accelerator": acc.model,
        "fits": bool(fits_mem and fits_tp), "fits_explain": why_fit,
        "step_time_s": q(step_s, "s", Msg(
            "{n:,.0f} {unit} per step x {f:.4g} model FLOP each x recomputation {r:.3g} ({ckpt}) / ({count} GPUs x "
            "{peak:g} TFLOP/s x efficiency {eff:.3f})", n=per_step, unit=unit_txt, f=flops_per_unit, r=factor, ckpt=ckpt_txt,
            count=count, peak=peak, eff=eff)),
        ("samples_per_second_per_gpu" if ti.vision else "tokens_per_second_per_gpu"): q(per_s_gpu, f"{unit}/s", Msg(
            "{n:,.0f} {unit} per step / {step:.4g} s / {count} GPUs, while steps run (before goodput)",
            n=per_step, unit=unit_txt, step=step_s, count=count)),
        "mfu": q(mfu, "fraction of dense peak", Msg(
            "model FLOPs (without recomputation) per second per GPU / dense {fmt} peak {peak:g} TFLOP/s = efficiency "
            "{eff:.3f} / recomputation {r:.3g}", fmt=ti.compute_precision, peak=peak, eff=eff, r=factor)),
        "efficiency": q(eff, "fraction of dense peak", Msg(
            "executed FLOPs per second per GPU / dense peak (the training efficiency model, docs/SIZING.md "
            "\"Training efficiency\"): pipeline bubble {bubble:.3f} with {m:.4g} micro-batches per pipeline and "
            "{vpp} virtual stages, MoE all-to-all factor {a2a:.3f} (EP{ep})", bubble=bubble, m=m, vpp=vpp, a2a=a2a,
            ep=ep_used)),
        "microbatches_per_pipeline": q(m, "micro-batches", Msg(
            "global batch / (micro-batch {mb} x data parallel {dp})", mb=ti.micro_batch, dp=dp)),
        "peak_tflops_per_gpu": q(peak, "TFLOP/s", Msg("{model} dense peak ({column})", model=acc.model,
                                                      column=cat.peak_column[0])),
        "memory_per_gpu_bytes": q(mem["total"], "bytes", Msg(
            "weights {w} + gradients {g} + optimizer {o} + adapters {ad} + activations {act} + overhead {ov}; TP{tp} × "
            "PP{pp} × CP{cp} × DP{dp}, EP{ep}, ZeRO-{zero}, recomputation {ckpt}", w=_fmt_gib(mem["weights"]),
            g=_fmt_gib(mem["gradients"]), o=_fmt_gib(mem["optimizer"]), ad=_fmt_gib(mem["adapters"]),
            act=_fmt_gib(mem["activations"]), ov=_fmt_gib(mem["overhead"]), tp=tp, pp=pp, cp=cp, dp=dp, ep=ep_used,
            zero=zero, ckpt=ckpt_txt)),
        "gpu_memory_bytes": q(capacity, "bytes", Msg("{model}: {cap:g} GiB", model=acc.model, cap=acc.memory_gib)),
        "goodput": q(good, "fraction of wall-clock", Msg("share of wall-clock in useful steps (training.goodput, "
                                                          "or the default by GPU count)")),
        "gpu_hours": q(gpu_hours, "GPU-hours", Msg(
            "{work:.4g} {unit} / {rate:.4g} {unit}/s per GPU / 3600 / goodput {good:.3f}", work=work, unit=unit_txt,
            rate=per_s_gpu, good=good)),
        "wall_clock_hours": q(gpu_hours / count, "hours", Msg("GPU-hours / {count} GPUs", count=count)),
        "_raw": {"memory": mem, "capacity_bytes": capacity, "step_s": step_s, "per_s_gpu": per_s_gpu, "mfu": mfu,
                 "efficiency": eff, "goodput": good, "gpu_hours": gpu_hours, "peak_tflops": peak},
    }


def exact_layout_section(spec, ti: search.TrainingInputs, res: dict | None, cat, rec_i: int | None,
                         accs: list[AcceleratorSpec]) -> dict | None:
    """The result's compute.training_layout of a plan with training.data_parallel: the pinned layout on the
    recommended accelerator (ZeRO and recomputation as the search chose them, unless pinned), or, when it
    fits nowhere, on the pinned accelerator with the most memory-saving of the unpinned choices."""
    t = spec.training
    if t is None or t.data_parallel is None:
        return None
    pins = exact_pins(t, spec.hardware)
    if rec_i is not None:
        acc = cat.accelerators[res["a"][rec_i]]
        li = int(res["lay"][rec_i])
        zero, ck = int(res["layouts"]["zero"][li]), search.CKPT_NAMES[int(res["layouts"]["ckpt"][li])]
    elif len(accs) == 1:
        acc = accs[0]
        dp_cp = t.data_parallel * (t.context_parallel or 1)
        zero = t.zero_stage if t.zero_stage is not None else (3 if dp_cp > 1 else 0)
        ck = t.activation_checkpointing or ("full" if ti.arch.is_transformer else "selective")
    else:
        return None
    work = float(t.tokens) if not ti.vision else float(t.dataset_samples * t.epochs)
    out = evaluate_training_layout(ti, acc, tp=pins["tp_pin"], pp=pins["pp_pin"], cp=pins["cp_pin"],
                                   dp=t.data_parallel, ep=t.expert_parallel, vpp=pins["vpp"], zero=zero,
                                   checkpointing=ck, work=work, gpus_per_server=spec.hardware.gpus_per_server)
    out.pop("_raw")
    out["explain"] = Msg("the pinned layout (training.data_parallel), evaluated exactly; unpinned tensor, pipeline "
                         "and context parallelism and interleaving are 1{searched}",
                         searched=Msg("; ZeRO stage and recomputation as the search chose them")
                         if rec_i is not None else Msg("; it fits on no layout variant, shown with ZeRO-{zero} and "
                                                       "{ckpt} recomputation", zero=zero, ckpt=CKPT_TEXT[ck]))
    return out


def cross_domain_ep_note(ti: search.TrainingInputs, section: dict, accs: list[AcceleratorSpec]) -> Msg | None:
    """A pinned expert-parallel group wider than the scale-up domain sends part of its all-to-all through the
    GPUs' NICs; the engine charges it at the scale-up link (the smaller error on the published runs, which use
    DeepEP: docs/BENCHMARKS.md "EP groups across servers: tried, not kept"), so the plan says so."""
    lay = section.get("layout") or {}
    ep, tp = int(lay.get("expert_parallel") or 1), int(lay.get("tensor_parallel") or 1)
    acc = next((a for a in accs if a.id == section.get("accelerator_id")), None)
    if not ti.arch.is_moe or ep <= 1 or acc is None:
        return None
    domain = fabrics.scale_up_domain(acc)
    if ep * tp <= domain:
        return None
    return Msg("expert parallel {ep} x tensor parallel {tp} spans more than one scale-up domain of {domain} GPUs: part "
               "of the all-to-all crosses the network cards, which the estimate does not charge (published runs "
               "of such layouts use DeepEP-style dispatch, once per node and overlapped); with the plain all-to-all "
               "dispatcher the step is slower", ep=ep, tp=tp, domain=domain)

