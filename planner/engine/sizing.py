"""size_workload: from a WorkloadSpec and the catalog to a SizingResult (pure)."""

from __future__ import annotations

import bisect
import dataclasses
import math
from collections.abc import Sequence

import numpy as np

from catalog.domain.messages import Msg

from . import compute, infra, memory, search
from .architecture import (
    kv_cache_bytes_per_token,
    kv_layers,
    kv_values_per_token_per_layer,
    linear_state_bytes_per_sequence,
)
from .calibration import NO_CALIBRATIONS, Calibrations
from .hardware import AcceleratorSpec
from .precision import has_eight_bit_units, weight_bytes_per_param
from .rag import rag_index_bytes, rag_section
from .resolve import resolve_accelerator
from .result import Configuration, SizingResult, q
from .sizing_serving import size_serving
from .spec import WorkloadSpec

ENGINE_VERSION = "1.1.0"  # 1.1: serving on the continuous-batching model fitted on measured engines
GIB = memory.GIB
TOP_CANDIDATES = 50
IMAGES_PER_CORE_S = 150.0  # JPEG decode + augmentation per CPU core (assumption; GPU decode avoids it)

ASSUMPTIONS = (
    Msg("1 GiB = 2^30 bytes; accelerator memory is taken as memory_gib x 2^30 bytes."),
    Msg("Optimizer state convention: mixed-precision AdamW = 16 bytes/parameter (2 weights + 2 gradients + "
        "12 fp32 master+m+v), as in the ZeRO paper (K=12)."),
    Msg("Training efficiency is a fitted model of GEMM width per GPU, attention share, pipeline bubble, accelerator "
        "generation and compute format (docs/SIZING.md); goodput (useful share of wall-clock) defaults by GPU count "
        "from Llama 3's interruption rate. Override with hardware.mfu / training.goodput. Time ranges use 0.75x-1.2x "
        "the efficiency."),
    Msg("Training activations assume fused attention (FlashAttention / PyTorch SDPA / cuDNN; "
        "training.attention = eager counts them): the s x s attention scores are recomputed in the backward pass, "
        "never stored. The logits and cross-entropy are "
        "counted fused for pre-training (one fp32 value per token and vocabulary entry, Megatron-Core) and unfused "
        "for fine-tuning (HF: 16-bit logits, fp32 copy, fp32 log-softmax and its gradient, 14 bytes)."),
    Msg("Serving: continuous-batching engine steps (max of compute and memory traffic per step) with per-runtime "
        "constants fitted on 552 measured points (serving_measured.csv; error in docs/BENCHMARKS.md); replicas are "
        "planned so the p95 TTFT/TPOT hold at the stated load (open loop at requests_per_second, closed loop at "
        "concurrency)."),
)


# Activation checkpointing modes as texts (the layout itself keeps the codes).
CKPT_TEXT = {"none": Msg("none"), "selective": Msg("selective"), "full": Msg("full")}


def _fmt_gib(b: float) -> str:
    return Msg("{b:,.1f} GiB", b=b / GIB)


def size_workload(*, spec: WorkloadSpec, accelerators: Sequence[AcceleratorSpec],
                  calibrations: Calibrations = NO_CALIBRATIONS, chosen: Configuration | None = None) -> SizingResult:
    """Size a workload on the given catalog; `calibrations` (a team's measured efficiencies) replace
    the engines' presets by name (planner/engine/calibration.py). `chosen`: the configuration the plan
    decided on (one of this sizing's candidates); the result's recommendation, memory, serving and
    run-time sections then describe it instead of the sizing's own pick (fewest GPUs meeting the
    targets). A chosen configuration that is not among the candidates is ignored."""
    accs = list(accelerators)
    full_catalog = list(accs)
    warnings: list[str] = []
    if spec.hardware.accelerator:
        acc, note = resolve_accelerator(spec.hardware.accelerator, accs)
        accs = [acc]
        if note:
            warnings.append(note)
    if spec.kind == "external_api" or (spec.kind == "rag" and spec.rag is not None and spec.rag.generator == "external_api"):
        return _cpu_only(spec, warnings)
    if not accs:
        warnings.append(Msg("the accelerator catalog is empty: no candidates can be evaluated"))
    if spec.kind in ("pretraining", "finetuning", "classic_training"):
        return _training(spec, accs, warnings, calibrations, chosen)
    return _serving(spec, accs, warnings, calibrations, full_catalog=full_catalog,
                    pinned=bool(spec.hardware.accelerator), chosen=chosen)


# ------------------------------------------------------------------------------------- model


def _model_section(spec: WorkloadSpec) -> dict:
    a, p = spec.model, spec.precision
    bpp = weight_bytes_per_param(p.weights)
    out = {
        "name": a.name,
        "preset_id": a.preset_id,  # None for a typed architecture: the cost engine's like-for-like API check
        "source": a.source or spec.model_source,
        "model_type": a.model_type,
        "params": q(a.params, "params", a.params_explain),
        "active_params": q(a.active_params, "params",
                           Msg("MoE: {experts_per_token} of {experts} routed experts", experts_per_token=a.experts_per_token, experts=a.experts)
                           + (Msg(" + {shared_experts} shared", shared_experts=a.shared_experts) if a.shared_experts else "")
                           + Msg(" per token")
                           if a.is_moe else Msg("dense model: every parameter is used for every token")),
        "weight_bytes": q(a.params * bpp, "bytes", Msg("{params:,} parameters x {bpp:g} bytes ({weights}", params=a.params, bpp=bpp, weights=p.weights)
                          + (Msg(", incl. group-128 scales") if p.weights == "int4" else "") + ")"),
    }
    if a.has_kv_cache:
        per_layer = kv_values_per_token_per_layer(a)
        how = (Msg("MLA latent: (kv_lora_rank {kv_lora_rank} + rope {qk_rope_head_dim}) x {layers} layers", kv_lora_rank=a.kv_lora_rank, qk_rope_head_dim=a.qk_rope_head_dim, layers=a.layers)
               if a.is_mla else Msg("2 (K,V) x {layers} layers x {kv_heads} KV heads x {head_dim} head_dim", layers=a.layers, kv_heads=a.kv_heads, head_dim=a.head_dim))
        note = ""
        if a.sliding_window and a.local_layers:
            note = Msg("; {local_layers} layers keep at most {sliding_window} tokens (sliding window)", local_layers=a.local_layers, sliding_window=a.sliding_window)
        if a.linear_attention_layers:
            how = Msg("2 (K,V) x {layers} full-attention layers x {kv_heads} KV heads x {head_dim} head_dim", layers=kv_layers(a), kv_heads=a.kv_heads, head_dim=a.head_dim)
            note += Msg("; {linear_layers} linear-attention layers hold no per-token KV but a fixed state of {state_bytes:,.0f} bytes per sequence", linear_layers=a.linear_attention_layers, state_bytes=linear_state_bytes_per_sequence(a))
        out["kv_cache_bytes_per_token"] = q(kv_cache_bytes_per_token(a, kv_precision=p.kv_cache), "bytes",
                                            Msg("{how} x {v:g} bytes ({kv_cache}){note}", how=how, v=per_layer and (kv_cache_bytes_per_token(a, kv_precision=p.kv_cache) / (kv_layers(a) * per_layer)), kv_cache=p.kv_cache, note=note))
    else:
        out["kv_cache_bytes_per_token"] = q(0, "bytes", Msg("no KV cache: not an autoregressive decoder"))
    if a.flops_per_sample:
        out["flops_per_sample"] = q(a.flops_per_sample, "FLOP", Msg("forward FLOPs per input (2 FLOPs per multiply-accumulate)"))
    return out


# ---------------------------------------------------------------------------------- training


def _training(spec: WorkloadSpec, accs: list[AcceleratorSpec], warnings: list[str],
              calibrations: Calibrations = NO_CALIBRATIONS, chosen: Configuration | None = None) -> SizingResult:
    a, t, p, hw = spec.model, spec.training, spec.precision, spec.hardware
    vision = spec.kind == "classic_training"
    if t.method == "full":
        trainable = float(a.params)
    else:
        trainable = float(memory.lora_adapter_params(a, rank=t.lora_rank, targets=t.lora_targets))
    if spec.kind == "classic_training":
        model_flops = compute.classic_training_flops(a, samples=t.dataset_samples, epochs=t.epochs)
        flops_explain = Msg("3 x {flops_per_sample:.3g} FLOP/sample (forward + 2x backward) x {dataset_samples:,} samples x {epochs:g} epochs", flops_per_sample=a.flops_per_sample, dataset_samples=t.dataset_samples, epochs=t.epochs)
        tokens = None
    else:
        tokens = t.tokens
        model_flops = compute.training_flops(a, tokens=tokens, method=t.method, trainable_params=trainable)
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
    cat = search.catalog_arrays(accs, compute_precision=p.compute, gpus_per_server_pin=hw.gpus_per_server) if accs else None
    res = search.search_training(ti, cat) if cat is not None else None

    candidates: list[dict] = []
    best: list[dict] = []
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
    factor = compute.recompute_factor(checkpointing=ckpt, method=t.method)
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
        lo = compute.hours(flops=executed, gpus=count, peak_tflops=peak, efficiency=eff.high, goodput=good)
        hi = compute.hours(flops=executed, gpus=count, peak_tflops=peak, efficiency=eff.low, goodput=good)
        step_hours = compute.hours(flops=executed, gpus=count, peak_tflops=peak, efficiency=float(res["mfu"][rec_i]))
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
    result_candidates = {
        "evaluated": res["evaluated"] if res else 0,
        "ranking": Msg("fits, then meets the deadline (30 days without one), then lower cost (priced accelerators "
                       "first; within 2 % a tie), then fewer GPUs, then fewer GPU-hours, then shorter wall-clock"),
        "ranked": candidates,
        "best_per_accelerator": best,
        "not_fitting": not_fitting,
    }
    return SizingResult(engine_version=ENGINE_VERSION, kind=spec.kind, gpu_required=True,
                        model=_model_section(spec), memory=memory_section, compute=compute_section,
                        candidates=result_candidates, recommendation=recommendation,
                        warnings=tuple(warnings), assumptions=ASSUMPTIONS)


def _first_per_accelerator(a_idx: np.ndarray, *keys: np.ndarray) -> np.ndarray:
    """Row index of the best option of each accelerator: sort by (accelerator, keys...) and take
    the first row of every accelerator (vectorised; no loop over the catalog)."""
    order = np.lexsort(tuple(reversed(keys)) + (a_idx,))
    _, first = np.unique(a_idx[order], return_index=True)
    return order[first]


# Costs (or GPU-hours) within 2 % of each other are a tie when ranking alternatives: a budget cannot
# tell them apart (cloud prices alone move more than that from month to month), so the smaller cluster
# ranks first instead of one whose extra GPUs save a rounding error.
COST_TIE_SHARE = 0.02


def _tie_bucket(values: np.ndarray) -> np.ndarray:
    """log-spaced buckets COST_TIE_SHARE wide: equal buckets are ties."""
    v = np.asarray(values, dtype=float)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(np.isfinite(v) & (v > 0), np.floor(np.log(np.maximum(v, 1e-300)) / np.log1p(COST_TIE_SHARE)), v)


def _cost_or_gpu_hours(res: dict) -> np.ndarray:
    # float32: GPU-hours equal up to rounding noise across counts must tie, so the count decides.
    return np.where(np.isfinite(res["cost"]), res["cost"], res["gpu_hours"]).astype(np.float32)


def _pick_training(res: dict, best_rows: np.ndarray) -> int:
    """The best option of each accelerator competes: among those meeting the target, the cheapest
    where prices are known, else the fewest GPU-hours, then the fewest GPUs. Without any option
    meeting it: the fastest."""
    meets = res["meets"][best_rows]
    if not meets.any():
        return int(best_rows[np.argmin(res["wall"][best_rows])])
    rows = best_rows[meets]
    priced = np.isfinite(res["cost"][rows])
    if priced.any():
        rows = rows[priced]
    return int(rows[np.lexsort((res["count"][rows], _cost_or_gpu_hours(res)[rows]))[0]])


def _chosen_training_row(res: dict, cat: search.CatalogArrays, chosen: Configuration | None) -> int | None:
    """The row of the decided configuration: of its rows (accelerator, count, TP, PP), the one the
    ranking puts first (meets the deadline, then shorter wall-clock)."""
    if chosen is None:
        return None
    ids = np.array([a.id for a in cat.accelerators])[res["a"]]
    lay, li = res["layouts"], res["lay"]
    mask = (ids == chosen.accelerator_id) & (res["count"] == chosen.count)
    if chosen.tensor_parallel is not None:
        mask &= lay["tp"][li] == chosen.tensor_parallel
    if chosen.pipeline_parallel is not None:
        mask &= lay["pp"][li] == chosen.pipeline_parallel
    rows = np.flatnonzero(mask)
    if not len(rows):
        return None
    return int(rows[np.lexsort((res["wall"][rows], ~res["meets"][rows]))[0]])


def _training_rows(res: dict, cat: search.CatalogArrays, idx: np.ndarray) -> list[dict]:
    """Candidate rows for the given option indices (bulk .tolist(): no per-element numpy access)."""
    lay, li = res["layouts"], res["lay"][idx]
    cols = zip(res["a"][idx].tolist(), res["count"][idx].tolist(), lay["tp"][li].tolist(), lay["pp"][li].tolist(),
               lay["dp"][li].tolist(), lay["zero"][li].tolist(), lay["ckpt"][li].tolist(), res["mem"]["total"][li].tolist(),
               res["meets"][idx].tolist(), res["wall"][idx].tolist(), res["gpu_hours"][idx].tolist(),
               res["mfu"][idx].tolist(), res["cost"][idx].tolist(), strict=True)
    rows = []
    for a, count, tp, pp, dp, zero, ck, total, meets, wall, gh, mfu, cost in cols:
        acc = cat.accelerators[a]
        rows.append({
            "accelerator_id": acc.id, "accelerator": acc.model, "count": int(count),
            "layout": {"tensor_parallel": tp, "pipeline_parallel": pp, "data_parallel": dp, "zero_stage": zero,
                       "activation_checkpointing": search.CKPT_NAMES[ck]},
            "per_gpu_bytes": int(total), "gpu_memory_bytes": int(acc.memory_gib * GIB),
            "fits": True, "meets_target": meets, "wall_clock_hours": wall, "gpu_hours": gh, "mfu": mfu,
            "cost_usd": cost if math.isfinite(cost) else None,
        })
    return rows


def _training_calibrations(calibrations: Calibrations, accs: list[AcceleratorSpec]) -> tuple:
    out = []
    for acc in accs:
        c = calibrations.for_training(acc.id)
        if c is not None and (c.values.get("mfu") is not None or c.values.get("goodput") is not None):
            out.append((acc.id, c.values.get("mfu"), c.values.get("goodput")))
    return tuple(out)


def _searched_counts(spec: WorkloadSpec, res: dict | None = None) -> Msg:
    """The GPU counts the search really covered: the pin, or up to the largest count any layout has
    (below MAX_GPUS when the global batch caps data parallelism)."""
    if spec.hardware.count:
        return Msg("the pinned {n} GPUs (hardware.count)", n=spec.hardware.count)
    counts = res["layouts"]["count"] if res is not None and res.get("layouts") is not None else []
    top = int(counts.max()) if len(counts) else search.MAX_GPUS
    if top < search.MAX_GPUS:
        return Msg("up to {n} GPUs (more would need more sequences per step than training.global_batch_tokens "
                   "holds)", n=top)
    return Msg("up to {n} GPUs", n=search.MAX_GPUS)


def _no_layout_reason(spec: WorkloadSpec, ti: search.TrainingInputs) -> Msg:
    """Why no layout exists at all (before memory): mostly a global batch below the data-parallel degree."""
    t, hw = spec.training, spec.hardware
    max_dp = search.max_data_parallel(ti)
    if hw.count and max_dp is not None:
        tps = (1,) if ti.vision else ((t.tensor_parallel,) if t.tensor_parallel else search.TP_OPTIONS)
        pps = (1,) if ti.vision else ((t.pipeline_parallel,) if t.pipeline_parallel else search.PP_OPTIONS)
        model_par = [tp * pp * cp for tp in tps for pp in pps for cp in search.context_parallel_options(ti)
                     if hw.count % (tp * pp * cp) == 0]
        if model_par:
            min_dp = hw.count // max(model_par)
            if min_dp > max_dp and ti.vision:
                return Msg("no layout: the global batch of {n} samples (training.global_batch_size) with micro-batch "
                           "{mb} cannot feed the {dp} data-parallel ranks of {count} GPUs; raise "
                           "training.global_batch_size to >= {need:,} or use fewer GPUs",
                           n=ti.global_batch_tokens, mb=ti.micro_batch, dp=min_dp, count=hw.count,
                           need=min_dp * ti.micro_batch)
            if min_dp > max_dp:
                need = min_dp * ti.seq * ti.micro_batch
                return Msg("no layout: the global batch of {seqs} sequences (global_batch_tokens {gbt:,} / "
                           "{seq} tokens / micro-batch {mb}) cannot feed the {dp} data-parallel ranks that {n} GPUs "
                           "need at least; raise training.global_batch_tokens to >= {need:,}, use fewer GPUs, or "
                           "allow more tensor/pipeline/context parallelism",
                           seqs=max_dp * ti.micro_batch, gbt=ti.global_batch_tokens, seq=ti.seq,
                           mb=ti.micro_batch, dp=min_dp, n=hw.count, need=need)
    return Msg("no layout matches the pinned parallelism: hardware.count must be a multiple of tensor x pipeline x "
               "context parallel, and tensor parallel must divide the attention heads")


def _remedy_needs(spec, ti: search.TrainingInputs, cat, top_count: int | None) -> list[tuple[str, np.ndarray]]:
    """Each applicable remedy with the smallest per-GPU memory it reaches on every accelerator,
    from the same memory model, so the remedies can be ordered by how much they help."""
    t, hw = spec.training, spec.hardware
    trials = []
    if hw.count:
        trials.append((Msg("more GPUs (unpin hardware.count): the search then goes up to {n}", n=search.MAX_GPUS),
                       {"count_pin": None}))
    if t.zero_stage is not None and t.zero_stage < 3:
        trials.append((Msg("ZeRO-3 / FSDP to shard weights, gradients and optimizer state"), {"zero_pin": 3}))
    if t.tensor_parallel or t.pipeline_parallel:
        trials.append((Msg("let the planner choose tensor/pipeline parallelism (more GPUs with TP/PP)"),
                       {"tp_pin": None, "pp_pin": None}))
    if t.context_parallel:
        trials.append((Msg("let the planner choose context parallelism (splits the sequence's activations)"),
                       {"cp_pin": None}))
    if t.activation_checkpointing in ("none", "selective"):
        trials.append((Msg("full activation checkpointing"), {"checkpointing": "full"}))
    if t.micro_batch_size > 1:
        trials.append((Msg("a micro-batch of 1 (keep the global batch with gradient accumulation)"), {"micro_batch": 1}))
    if t.optimizer in ("adamw",) and t.optimizer_states != "int8":
        trials.append((Msg("8-bit AdamW states (adamw_8bit)"), {"optimizer": "adamw_8bit", "optimizer_states": "int8"}))
    if t.optimizer not in memory.PAGED_OPTIMIZERS and t.optimizer in ("adamw", "adamw_8bit"):
        trials.append((Msg("paged 8-bit AdamW (paged_adamw_8bit): optimizer states in host RAM"),
                       {"optimizer": "paged_adamw_8bit", "optimizer_states": "int8"}))
    if t.method == "full" and spec.kind == "finetuning":
        lora = float(memory.lora_adapter_params(spec.model, rank=t.lora_rank, targets=t.lora_targets))
        trials.append((Msg("LoRA instead of full fine-tuning"), {"method": "lora", "trainable_params": lora,
                                                                 "master_weights": "none"}))
        trials.append((Msg("QLoRA (NF4 base weights) instead of full fine-tuning"),
                       {"method": "qlora", "weights": "int4", "trainable_params": lora, "master_weights": "none"}))
    out = []
    # The least memory a layout reaches is at the largest GPU count searched (most sharding): only that
    # count is evaluated for each remedy (unless the remedy is the count itself).
    top = None if hw.count else top_count
    for label, change in trials:
        if top is not None and "count_pin" not in change:
            change = {**change, "count_pin": top}
        alt = dataclasses.replace(ti, **change)
        lay = search.training_layouts(alt)
        if not len(lay["count"]):
            continue
        total = search.training_memory(alt, lay)["total"]
        out.append((label, search._min_needed(total, lay, cat)))
    return out


def _training_not_fitting(spec, res, cat, ti=None) -> list[dict]:
    p = spec.precision
    out = []
    fits_any = res.get("fits_any")
    fitting = sorted((x for j, x in enumerate(cat.accelerators) if fits_any[j]), key=lambda x: x.memory_gib)
    fitting_mem = [x.memory_gib for x in fitting]
    top = int(res["layouts"]["count"].max()) if len(res["layouts"]["count"]) else None
    needs = _remedy_needs(spec, ti, cat, top) if ti is not None and not fits_any.all() else []
    for ai, acc in enumerate(cat.accelerators):
        if fits_any[ai]:
            continue
        if not np.isfinite(cat.peak_tflops[ai]):
            out.append({"accelerator_id": acc.id, "accelerator": acc.model,
                        "reason": Msg("no known {compute} throughput for this accelerator", compute=p.compute), "remedies": [Msg("choose another compute precision")]})
            continue
        need = float(res["min_total_per_acc"][ai])
        cap = float(cat.capacity_bytes[ai])
        # Remedies that lower the need, the most helpful first; those that make it fit say so.
        helped = sorted(((float(n[ai]), label) for label, n in needs if float(n[ai]) < need), key=lambda x: x[0])
        remedies = [Msg("{remedy} (needs {need} per GPU{fits})", remedy=label, need=_fmt_gib(n),
                        fits=Msg(": fits") if n <= cap else "") for n, label in helped]
        remedies.append(Msg("CPU/NVMe offload of parameters and optimizer state (ZeRO-Infinity), slower"))
        bigger = fitting[bisect.bisect_right(fitting_mem, acc.memory_gib):][:5]
        if bigger:
            remedies.append(Msg("a larger GPU: {ids}", ids=", ".join(x.id for x in bigger)))
        out.append({"accelerator_id": acc.id, "accelerator": acc.model,
                    "reason": Msg("needs at least {need} per GPU in the best allowed layout with {counts}, has {cap:g} GiB",
                                  need=_fmt_gib(need), counts=_searched_counts(spec, res), cap=acc.memory_gib),
                    "remedies": remedies})
    return out


def _training_efficiency_explained(spec, ti, acc, lay, cat, res, i, calibrations) -> compute.Efficiency:
    t, hw, a = spec.training, spec.hardware, spec.model
    cal = calibrations.for_training(acc.id)
    if hw.mfu is not None:
        return compute.explain_efficiency(generation="", compute_precision="", hidden_size=None, tp=1, x_attn=0.0,
                                          peak_ratio=1.0, pp=1, microbatches=1, vpp=1, method=t.method, vision=False,
                                          pinned=hw.mfu)
    if cal is not None and cal.values.get("mfu") is not None:
        return compute.explain_efficiency(generation="", compute_precision="", hidden_size=None, tp=1, x_attn=0.0,
                                          peak_ratio=1.0, pp=1, microbatches=1, vpp=1, method=t.method, vision=False,
                                          pinned=float(cal.values["mfu"]),
                                          pinned_label=Msg("team calibration: {label}", label=cal.label))
    m = float(compute.microbatches_per_pipeline(global_batch_tokens=ti.global_batch_tokens or ti.seq * ti.micro_batch,
                                                seq=ti.seq, micro_batch=ti.micro_batch, dp=lay["dp"]))
    args = dict(generation=compute.generation_of(acc.architecture), compute_precision=spec.precision.compute,
                hidden_size=compute.model_width(a), tp=lay["tp"], x_attn=compute.attention_ratio(a, seq=ti.seq),
                peak_ratio=float(cat.peak_ratio[res["a"][i]]), pp=lay["pp"], microbatches=m, vpp=lay.get("vpp", 1),
                method=t.method, vision=ti.vision,
                has_format_units=has_eight_bit_units(spec.precision.compute, cat.peak_column[res["a"][i]]))
    eff = compute.explain_efficiency(**args)
    a2a = None
    if a.is_moe and not ti.vision:  # the search applied the expert-parallel all-to-all share
        before = float(res["mfu"][i]) / float(res["a2a_factor"][i])  # the efficiency the factor was computed at
        a2a = search.moe_all_to_all(ti, cat, res["layouts"], [res["a"][i]], [res["lay"][i]], [before])
        a2a = {k: v if k == "overlapped" else (int(v[0]) if k == "ep" else float(v[0])) for k, v in a2a.items()}
        args["all_to_all"] = a2a
        eff = compute.explain_efficiency(**args)
    if t.method == "qlora" and not ti.vision and eff.value > 0:  # the search applied the dequantisation share
        eff = compute.explain_efficiency(**args, qlora=float(res["mfu"][i]) / eff.value)
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
               n=count, base=compute.GOODPUT_BASE, rate=compute.INTERRUPTIONS_PER_GPU_HOUR,
               lost=compute.LOST_HOURS_PER_INTERRUPTION, good=float(compute.default_goodput(count)))


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
                                   "micro-batch {micro_batch_size} x {sequence_length} tokens{cp_split}, first pipeline stage",
                                   ckpt_names=CKPT_TEXT[search.CKPT_NAMES[lay["ckpt"]]],
                                   sp=Msg("on") if t.sequence_parallel and lay["tp"] > 1 else Msg("off"),
                                   micro_batch_size=t.micro_batch_size, sequence_length=t.sequence_length,
                                   cp_split=Msg(" split over CP{cp}", cp=cp) if cp > 1 else "")),
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
    paged = float(res["mem"]["host_optimizer"][res["lay"][i]]) * min(count, gps)
    host = infra.host_cpu_ram(kind=spec.kind, count=count, gpus_per_server=gps, acc=acc, vision=spec.kind == "classic_training",
                              extra_ram_bytes=paged, extra_ram_why=Msg("paged optimizer states of the server's GPUs"),
                              tensor_parallel=lay["tp"])
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


# ----------------------------------------------------------------------------------- serving


def _serving(spec: WorkloadSpec, accs: list[AcceleratorSpec], warnings: list, calibrations: Calibrations, *,
             full_catalog: list[AcceleratorSpec], pinned: bool, chosen: Configuration | None = None) -> SizingResult:
    a, s = spec.model, spec.serving
    if spec.rag is not None and s.input_tokens < spec.rag.top_k * spec.rag.chunk_tokens:
        warnings.append(Msg("serving.input_tokens ({input_tokens}) is below the {top_k} x {chunk_tokens} retrieved tokens each prompt carries; raise it for a realistic sizing", input_tokens=s.input_tokens, top_k=spec.rag.top_k, chunk_tokens=spec.rag.chunk_tokens))
    if not a.has_kv_cache:
        warnings.append(Msg("{name} is not a generative decoder: serving figures assume it answers like an LLM", name=a.name))
    memory_section, compute_section, serving_section, cands, recommendation, rec_acc = ({}, {}, {}, {}, {}, None)
    if accs:
        memory_section, compute_section, serving_section, cands, recommendation, rec_acc = size_serving(
            spec, accs, warnings, calibrations, full_catalog=full_catalog, pinned=pinned, chosen=chosen)
    # Embedding ingest time is quoted on the recommended accelerator.
    rag_out = rag_section(spec, rec_acc) if spec.kind == "rag" else {}
    return SizingResult(engine_version=ENGINE_VERSION, kind=spec.kind, gpu_required=True, model=_model_section(spec),
                        memory=memory_section, compute=compute_section, serving=serving_section, rag=rag_out,
                        candidates=cands, recommendation=recommendation, warnings=tuple(warnings),
                        assumptions=ASSUMPTIONS)


# --------------------------------------------------------------------------------------- RAG


def _cpu_only(spec: WorkloadSpec, warnings: list[str]) -> SizingResult:
    s, d = spec.serving, spec.data
    rps = s.requests_per_second if s else 1.0
    rag = rag_section(spec, None) if spec.rag is not None else {}
    index = rag_index_bytes(spec)[0] if spec.rag is not None else 0.0
    emb_cores = rag.get("query_embedding_cpu_cores", {}).get("value", 0) or 0
    cores = max(4, math.ceil(rps * 0.05 / 0.5)) + emb_cores + 2
    ram = 8 * GIB + 1.3 * index + (spec.rag.embedding_model.params * 4 if spec.rag and spec.rag.embedding_model else 0)
    nvme = 100e9 + 2 * index + (rag.get("chunk_text_bytes", {}).get("value") or 0) + d.logs_gb_per_month * 1e9 * d.retention_months
    rec = {
        "gpu_needed": {"value": False, "explain": Msg("the model runs behind an external API: this server runs only the agent/RAG pipeline, vector database and queues, so CPU, RAM and NVMe suffice")},
        "cpu_cores": q(cores, "cores", Msg("orchestration ~50 ms CPU per request at {rps:g} rps and 50% load, + query embedding, + 2 for the OS", rps=rps)),
        "host_ram_bytes": q(ram, "bytes", Msg("8 GiB base + vector index x 1.3 (HNSW build/update headroom) + embedding model in fp32")),
        "nvme_bytes": q(nvme, "bytes", Msg("100 GB OS/images + 2x index (rebuild) + chunk text + logs x retention")),
        "network": {"user_traffic": Msg("10/25 GbE"), "explain": Msg("external API calls and user traffic are small")},
        "kubernetes": infra.kubernetes(servers=1, replicas=1, services=4 if spec.rag is not None else 2),
        **infra.monitoring("inference"),
    }
    return SizingResult(engine_version=ENGINE_VERSION, kind=spec.kind, gpu_required=False,
                        model=_model_section(spec) if spec.model is not None else {}, rag=rag,
                        recommendation=rec, warnings=tuple(warnings), assumptions=ASSUMPTIONS)
