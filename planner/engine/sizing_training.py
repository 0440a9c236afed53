"""Sizing a training run: search the layouts, rank them, explain efficiency, memory and the recommendation."""

from __future__ import annotations

import dataclasses

import numpy as np

from catalog.domain.messages import Msg

from . import (
    compute,
    efficiency_explain,
    infra,
    memory,
    moe_comm,
    search,
    training_fit_errors,
    training_flops,
    training_goodput,
)
from .calibration import NO_CALIBRATIONS, Calibrations
from .hardware import AcceleratorSpec
from .precision import has_eight_bit_units, weight_bytes_per_param
from .result import Configuration, SizingResult, q
from .sizing_common import CKPT_TEXT, ENGINE_VERSION, TRAINING_ASSUMPTIONS, _model_section
from .sizing_training_rank import (
    _chosen_training_row,
    _cost_or_gpu_hours,
    _first_per_accelerator,
    _no_layout_reason,
    _one_server_rows,
    _pick_training,
    _searched_counts,
    _tie_bucket,
    _training_not_fitting,
    _training_rows,
)
from .spec import WorkloadSpec
from .training_layout import check_precision_on_chip, cross_domain_ep_note, exact_layout_section, exact_pins

TOP_CANDIDATES = 50
IMAGES_PER_CORE_S = 150.0  # JPEG decode + augmentation per CPU core (assumption; GPU decode avoids it)


# ---------------------------------------------------------------------------------- training


def _training(spec: WorkloadSpec, accs: list[AcceleratorSpec], warnings: list[str],
              calibrations: Calibrations = NO_CALIBRATIONS, chosen: Configuration | None = None) -> SizingResult:
    if spec.hardware.accelerator and len(accs) == 1:
        check_precision_on_chip(spec.precision.compute, accs[0], kind=spec.kind)
    exact = exact_pins(spec.training, spec.hardware)
    if exact is not None:  # training.data_parallel: exactly TP x PP x CP x DP GPUs
        spec = dataclasses.replace(spec, hardware=dataclasses.replace(spec.hardware, count=exact["count_pin"]))
    a, t, p, hw = spec.model, spec.training, spec.precision, spec.hardware
    vision = spec.kind == "classic_training"
    if t.method == "full":
        trainable = float(a.params)
    else:
        trainable = float(memory.lora_adapter_params(a, rank=t.lora_rank, targets=t.lora_targets))
    if spec.kind == "classic_training":
        model_flops = training_flops.classic_training_flops(a, samples=t.dataset_samples, epochs=t.epochs)
        flops_explain = Msg("3 x {flops_per_sample:.3g} FLOP/sample (forward + 2x backward) x {dataset_samples:,} samples x {epochs:g} epochs", flops_per_sample=a.flops_per_sample, dataset_samples=t.dataset_samples, epochs=t.epochs)
        tokens = None
    else:
        tokens = t.tokens
        model_flops = training_flops.training_flops(a, tokens=tokens, method=t.method, trainable_params=trainable)
        flops_explain = (Msg("6 x {active_params:,} active params x {tokens:.4g} tokens", active_params=a.active_params, tokens=tokens) if t.method == "full" else
                         Msg("4 x {active_params:,} params x {tokens:.4g} tokens (frozen weights: no weight gradients) + 6 x {trainable:,.0f} adapter params x tokens", active_params=a.active_params, tokens=tokens, trainable=trainable))
    ti = search.TrainingInputs(
        arch=a, kind=spec.kind, method=t.method, weights=p.weights, compute_precision=p.compute,
        optimizer=t.optimizer, seq=t.sequence_length if not vision else 1, micro_batch=t.micro_batch_size,
        global_batch_tokens=t.global_batch_tokens if not vision else t.global_batch_size,
        checkpointing=t.activation_checkpointing, sequence_parallel=t.sequence_parallel,
        vpp=t.virtual_pipeline_stages, tp_pin=t.tensor_parallel, pp_pin=t.pipeline_parallel, zero_pin=t.zero_stage,
        count_pin=hw.count, trainable_params=trainable, model_flops=model_flops, deadline_hours=t.deadline_hours,
        mfu_pin=hw.mfu, vision=vision, cp_pin=t.context_parallel, optimizer_states=t.optimizer_states,
        master_weights=t.master_weights, adapter_precision=t.adapter_precision, double_quant=t.double_quant,
        goodput_pin=t.goodput, calibrated=_training_calibrations(calibrations, accs), attention=t.attention,
        expert_overlap=t.expert_overlap,
    )
    if exact is not None:
        ti = dataclasses.replace(ti, **exact)
    cat = search.catalog_arrays(accs, compute_precision=p.compute, gpus_per_server_pin=hw.gpus_per_server) if accs else None
    res = search.search_training(ti, cat) if cat is not None else None
    if a.is_moe and not vision and (note := training_fit_errors.moe_accuracy_note(a.preset_id)) is not None:
        warnings.append(note)  # what published MoE runs say of this estimate (issue 24)

    candidates: list[dict] = []
    best: list[dict] = []
    one_server: list[dict] = []
    rec_i = None
    if res is not None and res.get("mem") is not None and len(res["a"]):
        # what a team would run: within the deadline (30 days without one), then the cheapest where
        # prices are known (else the fewest GPU-hours), then the shorter wall-clock; never the largest
        # cluster first for a job that one GPU finishes in an hour
        cost_key = np.where(np.isfinite(res["cost"]), _tie_bucket(res["cost"]), np.inf)  # priced before unpriced
        order = np.lexsort((res["wall"], _tie_bucket(res["gpu_hours"]), res["count"], cost_key, ~res["meets"]))
        candidates = _training_rows(res, cat, order[:TOP_CANDIDATES])
        best_rows = _first_per_accelerator(
            res["a"], ~res["meets"], np.where(res["meets"], _cost_or_gpu_hours(res), res["wall"]), res["count"])
        best = _training_rows(res, cat, best_rows[np.argsort(res["wall"][best_rows], kind="stable")])
        one_server = _one_server_rows(res, cat, best_rows)
        one_server = _training_rows(res, cat, one_server[np.argsort(res["wall"][one_server], kind="stable")])
        rec_i = _chosen_training_row(res, cat, chosen)
        if rec_i is None:
            rec_i = _pick_training(res, best_rows)
        if not res["meets"].any():
            fastest = int(np.argmin(res["wall"]))
            warnings.append(
                Msg("deadline unreachable with {counts}: the fastest option takes {hours:,.0f} h ({n} x {acc})",
                    counts=_searched_counts(spec, res), hours=float(res["wall"][fastest]), n=int(res["count"][fastest]),
                    acc=cat.accelerators[res["a"][fastest]].model)
                if t.deadline_hours else Msg("no option finishes within 30 days with {counts}; the fastest is shown",
                                             counts=_searched_counts(spec, res)))
    not_fitting = _training_not_fitting(spec, res, cat, ti) if res is not None and res.get("mem") is not None else []
    if res is not None and res.get("mem") is None:
        warnings.append(_no_layout_reason(spec, ti))
    elif res is not None and not len(res.get("a", [])):
        warnings.append(Msg("does not fit on any catalog accelerator with {n} in the allowed layouts",
                            n=_searched_counts(spec, res)))

    # Memory breakdown: the recommended layout, else one GPU without parallelism.
    if rec_i is not None:
        li = int(res["lay"][rec_i])
        mem = {k: float(v[li]) for k, v in res["mem"].items()}
        lay = {k: int(v[li]) for k, v in res["layouts"].items()}
        acc = cat.accelerators[res["a"][rec_i]]
    else:
        cp = t.context_parallel or 1
        lay = {"count": hw.count or 1, "tp": t.tensor_parallel or 1, "pp": t.pipeline_parallel or 1,
               "dp": max(1, (hw.count or 1) // ((t.tensor_parallel or 1) * (t.pipeline_parallel or 1) * cp)),
               "zero": t.zero_stage or 0, "ckpt": search.CKPT_CODES[t.activation_checkpointing or "full"], "cp": cp,
               "vpp": t.virtual_pipeline_stages or 1}
        one = {k: np.array([v]) for k, v in lay.items()}
        mem = {k: float(np.asarray(v).ravel()[0]) for k, v in search.training_memory(ti, one).items()}
        acc = accs[0] if len(accs) == 1 else None
    memory_section = _training_memory_section(mem, lay, t, p, ti)
    ckpt = search.CKPT_NAMES[lay["ckpt"]]
    factor = training_flops.recompute_factor(checkpointing=ckpt, method=t.method)
    executed = model_flops * factor

    compute_section = {
        "total_flops": q(model_flops, "FLOP", flops_explain),
        "executed_flops": q(executed, "FLOP", Msg("model FLOPs x recomputation factor ({factor:.3g}; activation recomputation: {ckpt})", factor=factor, ckpt=CKPT_TEXT[ckpt])),
    }
    if tokens is not None:
        compute_section["tokens"] = q(tokens, "tokens", Msg("tokens processed (dataset tokens x epochs)"))
        compute_section["tokens_per_param"] = q(tokens / a.params, "tokens/param",
                                                Msg("Chinchilla compute-optimal is ~20 (Hoffmann et al. 2022)"))
    recommendation: dict = {}
    if rec_i is not None:
        count = int(res["count"][rec_i])
        eff = _training_efficiency_explained(spec, ti, acc, lay, cat, res, rec_i, calibrations)
        good = float(res["goodput"][rec_i])
        good_why = _goodput_explain(spec, acc, count, calibrations)
        peak = float(cat.peak_tflops[res["a"][rec_i]])
        wall = float(res["wall"][rec_i])
        lo = training_flops.hours(flops=executed, gpus=count, peak_tflops=peak, efficiency=eff.high, goodput=good)
        hi = training_flops.hours(flops=executed, gpus=count, peak_tflops=peak, efficiency=eff.low, goodput=good)
        step_hours = training_flops.hours(flops=executed, gpus=count, peak_tflops=peak, efficiency=float(res["mfu"][rec_i]))
        compute_section.update({
            "mfu": {"value": round(float(res["mfu"][rec_i]), 4), "low": round(eff.low, 4), "high": round(eff.high, 4),
                    "unit": "fraction of dense peak", "explain": eff.explain},
            "goodput": {"value": round(good, 4), "unit": "fraction of wall-clock", "explain": good_why},
            "peak_tflops_per_gpu": q(peak, "TFLOP/s", _peak_explain(acc, p.compute, cat.peak_column[res['a'][rec_i]])),
            "gpu_hours": q(float(res["gpu_hours"][rec_i]), "GPU-hours",
                           Msg("executed FLOPs / ({peak:g} TFLOP/s x efficiency {eff:.3f}) / 3600 / goodput {good:.3f}",
                               peak=peak, eff=float(res["mfu"][rec_i]), good=good)),
            "step_hours": q(float(step_hours), "hours",
                            Msg("time in training steps alone (efficiency {eff:.3f}, before goodput)",
                                eff=float(res["mfu"][rec_i]))),
            "wall_clock_hours": {"value": wall, "low": float(lo), "high": float(hi), "unit": "hours",
                                 "explain": Msg("GPU-hours / {count} GPUs (steps at efficiency {eff:.3f}, {good:.1%} of "
                                                "wall-clock useful); range from efficiency {lo:.2f}-{hi:.2f}",
                                                count=count, eff=float(res["mfu"][rec_i]), good=good, lo=eff.low, hi=eff.high)},
        })
        if tokens is not None:
            compute_section["tokens_per_second_per_gpu"] = q(tokens / (float(step_hours) * 3600 * count), "tokens/s",
                                                             Msg("steady-state throughput while steps run (before goodput)"))
        recommendation = _training_recommendation(spec, acc, lay, res, rec_i, cat, trainable, executed, warnings,
                                                  gpus_per_server=chosen and chosen.gpus_per_server,
                                                  as_instances=bool(chosen and chosen.as_instances))
    layout_section = exact_layout_section(spec, ti, res, cat, rec_i, accs)
    if layout_section is not None and (note := cross_domain_ep_note(ti, layout_section, accs)) is not None:
        warnings.append(note)
    if layout_section is not None:
        compute_section["training_layout"] = layout_section
    result_candidates = {
        "evaluated": res["evaluated"] if res else 0,
        "ranking": Msg("fits, then meets the deadline (30 days without one), then lower cost (priced accelerators "
                       "first; within 2 % a tie), then fewer GPUs, then fewer GPU-hours, then shorter wall-clock"),
        "ranked": candidates,
        "best_per_accelerator": best,
        "one_server_per_accelerator": one_server,
        "not_fitting": not_fitting,
    }
    return SizingResult(engine_version=ENGINE_VERSION, kind=spec.kind, gpu_required=True,
                        model=_model_section(spec), memory=memory_section, compute=compute_section,
                        candidates=result_candidates, recommendation=recommendation,
                        warnings=tuple(warnings), assumptions=TRAINING_ASSUMPTIONS)


def _training_calibrations(calibrations: Calibrations, accs: list[AcceleratorSpec]) -> tuple:
    out = []
    for acc in accs:
        c = calibrations.for_training(acc.id)
        if c is not None and (c.values.get("mfu") is not None or c.values.get("goodput") is not None):
            out.append((acc.id, c.values.get("mfu"), c.values.get("goodput")))
    return tuple(out)


def _training_efficiency_explained(spec, ti, acc, lay, cat, res, i, calibrations) -> efficiency_explain.Efficiency:
    t, hw, a = spec.training, spec.hardware, spec.model
    cal = calibrations.for_training(acc.id)
    if hw.mfu is not None:
        return efficiency_explain.explain_efficiency(generation="", compute_precision="", hidden_size=None, tp=1, x_attn=0.0,
                                          peak_ratio=1.0, pp=1, microbatches=1, vpp=1, method=t.method, vision=False,
                                          pinned=hw.mfu)
    if cal is not None and cal.values.get("mfu") is not None:
        return efficiency_explain.explain_efficiency(generation="", compute_precision="", hidden_size=None, tp=1, x_attn=0.0,
                                          peak_ratio=1.0, pp=1, microbatches=1, vpp=1, method=t.method, vision=False,
                                          pinned=float(cal.values["mfu"]),
                                          pinned_label=Msg("team calibration: {label}", label=cal.label))
    m = float(compute.microbatches_per_pipeline(global_batch_tokens=ti.global_batch_tokens or ti.seq * ti.micro_batch,
                                                seq=ti.seq, micro_batch=ti.micro_batch, dp=lay["dp"]))
    args = dict(generation=compute.training_generation(acc.architecture), compute_precision=spec.precision.compute,
                hidden_size=compute.model_width(a), tp=lay["tp"], x_attn=compute.attention_ratio(a, seq=ti.seq),
                peak_ratio=float(cat.peak_ratio[res["a"][i]]), pp=lay["pp"], microbatches=m, vpp=lay.get("vpp", 1),
                layers=search.stage_layers(a), method=t.method, vision=ti.vision,
                tokens_per_gpu=float(compute.gemm_tokens(a, ti.seq * ti.micro_batch / lay.get("cp", 1), moe_comm.expert_parallel(
                    a, dp=lay["dp"], cp=lay.get("cp", 1), tp=lay["tp"], domain=int(cat.scale_up_domain[res["a"][i]])))),
                attention_speedup=compute.attention_speedup(acc.architecture),
                tp_comm=float(compute.tp_comm_coefficient(
                    generation=compute.training_generation(acc.architecture), tp=lay["tp"], hidden_size=compute.model_width(a),
                    peak_tflops=float(cat.peak_tflops[res["a"][i]]), link_gb_s=compute.tp_link_gb_s(acc, lay["tp"]))),
                has_format_units=has_eight_bit_units(spec.precision.compute, cat.peak_column[res["a"][i]]))
    eff = efficiency_explain.explain_efficiency(**args)
    a2a = None
    if a.is_moe and not ti.vision:  # the search applied the expert-parallel all-to-all share
        before = float(res["mfu"][i]) / float(res["a2a_factor"][i])  # the efficiency the factor was computed at
        a2a = search.moe_all_to_all(ti, cat, res["layouts"], [res["a"][i]], [res["lay"][i]], [before])
        a2a = {k: v if k == "overlapped" else (int(v[0]) if k == "ep" else float(v[0])) for k, v in a2a.items()}
        args["all_to_all"] = a2a
        eff = efficiency_explain.explain_efficiency(**args)
    if t.method == "qlora" and not ti.vision and eff.value > 0:  # the search applied the dequantisation share
        eff = efficiency_explain.explain_efficiency(**args, qlora=float(res["mfu"][i]) / eff.value)
    return eff


def _goodput_explain(spec, acc, count: int, calibrations) -> Msg:
    cal = calibrations.for_training(acc.id)
    if spec.training.goodput is not None:
        return Msg("given in training.goodput")
    if cal is not None and cal.values.get("goodput") is not None:
        return Msg("team calibration: {label}", label=cal.label)
    return Msg("default for {n} GPUs: {base:.2f} x 1 / (1 + {rate:.3g} interruptions per GPU-hour x {n} GPUs x {lost:.2f} h "
               "lost each) = {good:.3f}. The rate is Llama 3's 466 interruptions in 54 days on 16,384 GPUs and the loss per "
               "interruption makes that 90% (Dubey et al. 2024, sec. 3.3.4); {base:.2f} is the scale-independent share "
               "(evaluation, checkpoint and data stalls) fitted on published whole-run GPU-hours (docs/SIZING.md)",
               n=count, base=training_goodput.GOODPUT_BASE, rate=training_goodput.INTERRUPTIONS_PER_GPU_HOUR,
               lost=training_goodput.LOST_HOURS_PER_INTERRUPTION, good=float(training_goodput.default_goodput(count)))


def _optimizer_explain(t, p, ti) -> Msg:
    bpp = search.trainable_bytes_per_param(ti)
    where = Msg("in host RAM (paged)") if t.optimizer in memory.PAGED_OPTIMIZERS else Msg("on the GPU")
    return Msg("{opt}: states {states} {sb:.3g} B/param {where} + master copy {mb:g} B/param ({master}); with {wb:g} B "
               "weights and {gb:g} B gradients", opt=t.optimizer, states=t.optimizer_states, sb=bpp["states"], where=where,
               mb=bpp["master"], master=t.master_weights, wb=bpp["weights"], gb=bpp["gradients"])


def _training_memory_section(mem: dict, lay: dict, t, p, ti) -> dict:
    zero_txt = {0: Msg("replicated"), 1: Msg("optimizer sharded (ZeRO-1)"), 2: Msg("optimizer+gradients sharded (ZeRO-2)"),
                3: Msg("weights+gradients+optimizer sharded (ZeRO-3/FSDP)")}[lay["zero"]]
    cp = lay.get("cp", 1)
    m = float(compute.microbatches_per_pipeline(global_batch_tokens=ti.global_batch_tokens or ti.seq * ti.micro_batch,
                                                seq=ti.seq, micro_batch=ti.micro_batch, dp=lay["dp"]))
    sets = float(memory.inflight_layer_microbatches(ti.arch, pp=lay["pp"], vpp=lay.get("vpp", 1), microbatches=m))
    where = Msg("TP{tp} × PP{pp} × CP{cp} × DP{dp}, {zero_txt}", tp=lay["tp"], pp=lay["pp"], cp=cp, dp=lay["dp"],
                zero_txt=zero_txt)
    if t.method == "qlora":
        frozen = Msg("frozen base weights in NF4 ({bpp:.4g} B/param incl. block-64 constants{dq}), embeddings and "
                     "output head in 16 bits, per GPU, {where}", bpp=memory.NF4_BYTES_PER_PARAM[t.double_quant],
                     dq=Msg(", double-quantised") if t.double_quant else "", where=where)
    else:
        frozen = (Msg("frozen base weights ({weights}) per GPU, {where}", weights=p.weights, where=where)
                  if t.method != "full" else Msg("weights ({weights}) per GPU, {where}", weights=p.weights, where=where))
    comps = {
        "weights_bytes": q(mem["weights"], "bytes", frozen),
        "gradients_bytes": q(mem["gradients"], "bytes",
                             Msg("gradients of trainable weights") if t.method == "full" else Msg("in adapter_bytes")),
        "optimizer_bytes": q(mem["optimizer"], "bytes", _optimizer_explain(t, p, ti) if t.method == "full" else Msg("in adapter_bytes")),
        "adapter_bytes": q(mem["adapters"], "bytes",
                           Msg("LoRA rank {r} adapters on {targets} in {prec}: weights + gradients + optimizer ({opt})",
                               r=t.lora_rank, targets=",".join(t.lora_targets), prec=t.adapter_precision,
                               opt=_optimizer_explain(t, p, ti))
                           if t.method != "full" else Msg("no adapters (full training)")),
        "activations_bytes": q(mem["activations"], "bytes",
                               Msg("Korthikanti et al. 2022, activation recomputation: {ckpt_names}, sequence parallel {sp}, "
                                   "micro-batch {micro_batch_size} x {sequence_length} tokens{cp_split}, fullest pipeline "
                                   "stage: {sets:.4g} layer x micro-batch activation sets in flight (PP{pp}, VPP{vpp}, "
                                   "{m:.4g} micro-batches per pipeline)",
                                   ckpt_names=CKPT_TEXT[search.CKPT_NAMES[lay["ckpt"]]],
                                   sp=Msg("on") if t.sequence_parallel and lay["tp"] > 1 else Msg("off"),
                                   micro_batch_size=t.micro_batch_size, sequence_length=t.sequence_length,
                                   cp_split=Msg(" split over CP{cp}", cp=cp) if cp > 1 else "", sets=sets, pp=lay["pp"],
                                   vpp=lay.get("vpp", 1), m=m)),
        "kv_cache_bytes": q(0, "bytes", Msg("no KV cache in training")),
        "overhead_bytes": q(mem["overhead"], "bytes", Msg("CUDA context + NCCL buffers (1.5 GiB) + {frag:.0%} allocator "
                                                          "fragmentation on the transient tensors (activations, gradients)",
                                                          frag=memory.FRAGMENTATION["training"])),
    }
    if mem.get("host_optimizer", 0.0):
        comps["host_optimizer_bytes"] = q(mem["host_optimizer"], "bytes",
                                          Msg("paged optimizer states per GPU, held in host RAM (not counted in per_gpu_bytes)"))
    return {
        "per_gpu_bytes": q(mem["total"], "bytes", Msg("sum of the GPU components on one GPU ({where})", where=where)),
        "total_bytes": q(mem["total"] * lay["count"], "bytes", Msg("per GPU x {count} GPUs", count=lay["count"])),
        "layout": {"count": lay["count"], "tensor_parallel": lay["tp"], "pipeline_parallel": lay["pp"],
                   "context_parallel": cp, "virtual_pipeline_stages": lay.get("vpp", 1), "data_parallel": lay["dp"],
                   "zero_stage": lay["zero"],
                   "activation_checkpointing": search.CKPT_NAMES[lay["ckpt"]]},
        "components": comps,
    }


def _checkpoint_bytes(spec, trainable: float) -> tuple[float, str]:
    a, t = spec.model, spec.training
    if t.method == "full":
        per = weight_bytes_per_param(spec.precision.weights) + memory.optimizer_bytes_per_param(
            optimizer=t.optimizer, weights=spec.precision.weights, states=t.optimizer_states, master=t.master_weights)
        return a.params * per, Msg("{params:,} params x {per:g} B (weights + master copy + optimizer state)",
                                   params=a.params, per=per)
    per = 2 + memory.optimizer_bytes_per_param(optimizer=t.optimizer, weights=t.adapter_precision,
                                                states=t.optimizer_states, master=t.master_weights)
    return trainable * per, Msg("{trainable:,.0f} adapter params x {per:g} B (base weights are not re-saved)",
                                trainable=trainable, per=per)


def _peak_explain(acc: AcceleratorSpec, compute: str, column: str) -> Msg:
    """Which peak the estimate runs at; says so when the chip lacks the format's own units
    (bf16 on V100 is fp16 with loss scaling; fp8 on A100 runs 16-bit matmuls)."""
    own = {"fp32": ("tf32", "fp32"), "int4": ("bf16",)}.get(compute, (compute,))
    fmt = column.split("_")[0]
    if fmt in own:
        return Msg("{model} dense {compute} peak ({peak_column})", model=acc.model, compute=compute, peak_column=column)
    return Msg("{model} has no {compute} tensor cores: {compute} runs as {fmt}, at its dense {fmt} peak ({peak_column})",
               model=acc.model, compute=compute, fmt=fmt, peak_column=column)


def _training_recommendation(spec, acc, lay, res, i, cat, trainable, executed, warnings, *,
                             gpus_per_server: int | None = None, as_instances: bool = False) -> dict:
    t, d = spec.training, spec.data
    count = lay["count"]
    gps = gpus_per_server or int(cat.gpus_per_server[res["a"][i]])
    sp = infra.servers_and_power(acc=acc, count=count, gpus_per_server=gps, tensor_parallel=lay["tp"],
                                 as_instances=as_instances)
    servers = sp["servers"]["value"]
    wall = float(res["wall"][i])
    # Data-parallel gradient all-reduce must hide behind compute: bytes per GPU per step / step time.
    req_gb_s = None
    if servers > 1 and lay["dp"] > 1 and spec.model.is_transformer and t.global_batch_tokens and t.tokens:
        steps = t.tokens / t.global_batch_tokens
        step_s = wall * 3600 / steps
        grad_bytes = trainable / (lay["tp"] * lay["pp"]) * 2
        ring = 2 * (lay["dp"] - 1) / lay["dp"] * grad_bytes
        req_gb_s = ring / step_s / 1e9
    ckpt, ckpt_why = _checkpoint_bytes(spec, trainable)
    write_gb_s = ckpt / (infra.CHECKPOINT_STALL_SHARE * t.checkpoint_every_hours * 3600) / 1e9
    dataset_bytes = d.dataset_gb * 1e9
    if not dataset_bytes and t.tokens:
        dataset_bytes = t.tokens / max(t.epochs, 1e-9) * 4  # tokenised uint32 ids
    weights_bytes = spec.model.params * weight_bytes_per_param(spec.precision.weights)
    storage = {
        "nvme_per_server_bytes": q(min(dataset_bytes, 4e12) / max(servers, 1) + 2 * ckpt / max(servers, 1) + 200e9, "bytes",
                                   Msg("hot tier: local dataset shard cache (<= 4 TB total) + 2 checkpoint shards + 200 GB images/caches")),
        "checkpoints_bytes": q(ckpt * t.checkpoints_kept, "bytes", Msg("{checkpoints_kept} kept x {ckpt_why}", checkpoints_kept=t.checkpoints_kept, ckpt_why=ckpt_why)),
        "checkpoint_write_gb_s": q(write_gb_s, "GB/s", Msg("one checkpoint written in <= {checkpoint_stall_share:.0%} of the {checkpoint_every_hours:g} h interval (shared fast storage / parallel FS)", checkpoint_stall_share=infra.CHECKPOINT_STALL_SHARE, checkpoint_every_hours=t.checkpoint_every_hours)),
        "datasets_bytes": q(dataset_bytes + d.growth_gb_per_month * 1e9 * d.retention_months, "bytes",
                            Msg("object storage (S3-compatible): dataset + growth over the retention period")
                            + ("" if d.dataset_gb else Msg("; dataset size estimated as tokens x 4 B (tokenised)"))),
        "model_registry_bytes": q(3 * weights_bytes, "bytes", Msg("object storage: 3 released model versions")),
        "logs_bytes": q(d.logs_gb_per_month * 1e9 * d.retention_months, "bytes", Msg("logs x retention months")),
    }
    paged = float(res["mem"]["host_optimizer"][res["lay"][i]]) * min(count, sp["gpus_per_server"]["value"])
    host = infra.host_cpu_ram(kind=spec.kind, per_server=sp["gpus_per_server"]["value"], acc=acc,
                              vision=spec.kind == "classic_training", extra_ram_bytes=paged,
                              extra_ram_why=Msg("paged optimizer states of the server's GPUs"))
    if spec.kind == "classic_training" and wall > 0:
        images_s = t.dataset_samples * t.epochs / (wall * 3600) / servers
        cores = host["cpu_cores_per_server"]["value"]
        if images_s > cores * IMAGES_PER_CORE_S:
            warnings.append(Msg("CPU too weak for input: {images_s:,.0f} images/s per server need more than {cores} cores at ~{images_per_core_s:g} images/s/core; decode on the GPU (NVIDIA DALI) or add cores", images_s=images_s, cores=cores, images_per_core_s=IMAGES_PER_CORE_S))
    return {
        "accelerator_id": acc.id, "accelerator": acc.model, "count": count,
        "why": Msg("meets the target at the lowest cost where prices are known, otherwise with the fewest GPU-hours (prices unknown), then the fewest GPUs"),
        "layout": {"tensor_parallel": lay["tp"], "pipeline_parallel": lay["pp"], "data_parallel": lay["dp"],
                   "zero_stage": lay["zero"], "activation_checkpointing": search.CKPT_NAMES[lay["ckpt"]]},
        **sp,
        "nvlink_needed": infra.nvlink_needed(acc=acc, tp=lay["tp"], kind=spec.kind, count=count, zero=lay["zero"]),
        **host,
        "storage": storage,
        "network": infra.network(kind=spec.kind, servers=servers, required_inter_node_gb_s=req_gb_s),
        "kubernetes": infra.kubernetes(servers=servers, replicas=1, services=1),
        "software": infra.software_stack(acc),
        **infra.monitoring(spec.kind),
    }
