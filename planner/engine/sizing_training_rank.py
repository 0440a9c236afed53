"""Training results: ranking the searched rows (cost ties, one per accelerator) and saying why nothing fits."""

from __future__ import annotations

import bisect
import dataclasses
import math

import numpy as np

from catalog.domain.messages import Msg

from . import memory, search
from .result import Configuration
from .sizing_common import GIB, _fmt_gib
from .spec import WorkloadSpec


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


def _one_server_rows(res: dict, cat: search.CatalogArrays, best_rows: np.ndarray) -> np.ndarray:
    """Per accelerator, the cheapest option (else the fewest GPU-hours) on one server that meets the
    deadline, and the cheapest on one full server, where these are not already its best. The sizing's
    cost is GPU time alone; the cost engine also charges what grows with the servers (each node's disks,
    a cluster's setup, whole instances paid while part of them works), so it gets these to choose from:
    a QLoRA that 352 GPUs finish in an hour costs more than 8 for three days."""
    per_server = cat.gpus_per_server[res["a"]]
    rows = []
    for on_one in (res["count"] <= per_server, res["count"] == per_server):
        idx = np.flatnonzero(on_one & res["meets"])
        if len(idx):
            rows.append(idx[_first_per_accelerator(res["a"][idx], _cost_or_gpu_hours(res)[idx], res["count"][idx])])
    return np.setdiff1d(np.concatenate(rows), best_rows) if rows else np.array([], dtype=int)


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
