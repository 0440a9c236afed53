"""Serving part of size_workload: search, ranking, the exact-layout what-if and the result sections.

The physics is in serving_model.py (engine steps, load), serving_layout.py (memory, one layout)
and serving_constants.py (runtimes, fitted constants); docs/SIZING.md explains it.
"""

from __future__ import annotations

import math

import numpy as np

from catalog.domain.messages import Msg

from . import hf_eager_memory, infra, search
from .calibration import Calibrations
from .errors import FieldError, SpecValidationError
from .hardware import AcceleratorSpec
from .rag import rag_index_bytes
from .result import Configuration, q
from .search_disagg import layout_text, search_disaggregated
from .serving_candidates import (
    _fmt_gib,
    _g,
    _memory_remedies,
    _rank,
    candidate,
    curve,
    mechanisms,
    not_fitting,
)
from .serving_constants import RUNTIME_SPECS
from .serving_fit_errors import fine_grained_moe_note
from .sizing_disagg import disagg_row, disagg_sections
from .spec import WorkloadSpec

TOP_CANDIDATES = 50
CURVES_SHOWN = 5


def serving_inputs(spec: WorkloadSpec, calibrations: Calibrations) -> search.ServingInputs:
    a, s, p, hw = spec.model, spec.serving, spec.precision, spec.hardware
    return search.ServingInputs(
        arch=a, weights=p.weights, compute_precision=p.compute, kv_precision=p.kv_cache,
        context_length=s.context_length, input_tokens=s.input_tokens, output_tokens=s.output_tokens,
        concurrency=s.concurrency, requests_per_second=s.requests_per_second, ttft_ms=s.ttft_p95_ms,
        tpot_ms=s.tpot_p95_ms, runtime=s.runtime, tp_pin=hw.tensor_parallel, pp_pin=hw.pipeline_parallel,
        count_pin=hw.count, calibrations=calibrations, expert_parallel=hw.expert_parallel,
        data_parallel_attention=hw.data_parallel_attention,
        mtp=None if s.speculative.method is None else s.speculative.method == "mtp",
        mtp_accepted=s.speculative.accepted_tokens)


# Experts per MoE layer from which the published out-of-sample rows (tests/reference/
# serving_published.csv, docs/BENCHMARKS.md "Serving: out-of-sample check") show the step model
# optimistic: DeepSeek-V3/R1 (256) and Qwen3-30B-A3B (128) are; Mixtral (8) is within 7 %.
FINE_GRAINED_MOE_EXPERTS = 64


def _fine_grained_moe_uncalibrated(spec: WorkloadSpec, accelerator_id: str, calibrations: Calibrations) -> bool:
    a = spec.model
    if a.experts < FINE_GRAINED_MOE_EXPERTS:
        return False
    return calibrations.for_serving(accelerator_id, spec.serving.runtime, spec.precision.compute) is None


def _searched(si: search.ServingInputs, accs: list[AcceleratorSpec], compute: str, pin: int | None,
              memo: list | None):
    """The catalog arrays and the candidate search for these inputs; with a ``memo`` (a list the caller
    keeps for one plan) an equal search is not run twice: sizing again with the decided configuration
    chosen reuses the first sizing's. The search's arrays are only read after it returns. The third
    value keeps what is derived from the search alone (the ranked candidates, the curves), for the same
    reuse."""
    if memo is not None:
        for m_si, m_accs, m_compute, m_pin, cat, res, derived in memo:
            if m_compute == compute and m_pin == pin and m_accs == accs and m_si == si:
                return cat, res, derived
    cat = search.catalog_arrays(accs, compute_precision=compute, gpus_per_server_pin=pin)
    res = search.search_serving(si, cat)
    derived: dict = {}
    if memo is not None:
        memo.append((si, list(accs), compute, pin, cat, res, derived))
    return cat, res, derived


def size_serving(spec: WorkloadSpec, accs: list[AcceleratorSpec], warnings: list, calibrations: Calibrations, *,
                 full_catalog: list[AcceleratorSpec], pinned: bool, chosen: Configuration | None = None,
                 search_memo: list | None = None):
    """(memory, compute, serving, candidates, recommendation, recommended accelerator) sections."""
    a, s, p, hw = spec.model, spec.serving, spec.precision, spec.hardware
    si = serving_inputs(spec, calibrations)
    cat, res, derived = _searched(si, accs, p.compute, hw.gpus_per_server, search_memo)
    if "rank" not in derived:
        derived["rank"] = _rank(res, cat, s.output_tokens)
    ai, li, order, rec_key = derived["rank"]
    candidates, best, curves, rec = [], [], [], None
    if order is not None:
        if "ranked" not in derived:
            derived["ranked"] = [candidate(res, cat, int(ai[k]), int(li[k]), s) for k in order[:TOP_CANDIDATES]]
            derived["best"], seen = [], set()
            for k in order:
                if int(ai[k]) not in seen:
                    seen.add(int(ai[k]))
                    derived["best"].append(candidate(res, cat, int(ai[k]), int(li[k]), s))
        candidates, best = derived["ranked"], derived["best"]
        rec = _chosen(res, cat, ai, li, order, chosen) or (int(ai[rec_key[0]]), int(li[rec_key[0]]))
        shown = [rec] + [(int(ai[k]), int(li[k])) for k in order[:CURVES_SHOWN * 3]]
        done = set()
        points = derived.setdefault("curves", {})
        for x in shown:
            if x in done or len(done) >= CURVES_SHOWN:
                continue
            done.add(x)
            if x not in points:
                points[x] = curve(res, x[0], x[1], s)
            curves.append({"accelerator_id": cat.accelerators[x[0]].id, "accelerator": cat.accelerators[x[0]].model,
                           "layout": {"tensor_parallel": int(res["tp"][x[1]]), "pipeline_parallel": int(res["pp"][x[1]]),
                                      **mechanisms(res, x[1])},
                           "points": points[x]})
    # disaggregated candidates (search_disagg.py): priced beside the aggregated ones; the plan describes one
    # when the decision chose it, or when serving.disaggregation states the layout
    if "disagg" not in derived:
        derived["disagg"] = search_disaggregated(si, cat, res, stated=s.disaggregation)
        derived["disagg_rows"] = [disagg_row(c, s, bool(res.get("with_mechanisms"))) for c in derived["disagg"]]
    disagg, disagg_rows = derived["disagg"], derived["disagg_rows"]
    pick = _disagg_pick(disagg, chosen, stated=s.disaggregation is not None)
    if pick is not None and s.disaggregation is not None:
        candidates, best = disagg_rows, disagg_rows  # the stated layout is the plan's candidate, per accelerator
    if pick is not None:
        _disagg_warnings(spec, pick, warnings)
    else:
        if rec is None and pinned and hw.count:
            _refuse_pin(spec, res, cat, full_catalog, calibrations)
        if rec is None and not np.isfinite(cat.peak_tflops).any():
            names = ", ".join(acc.model for acc in cat.accelerators)
            warnings.append(Msg("{accelerators}: no published tensor peak for {compute} compute in the catalog, so the serving "
                                "model cannot time it (memory alone is not checked here)", accelerators=names, compute=p.compute))
        elif rec is None:
            warnings.append(Msg("the model does not fit on any catalog accelerator with up to 8-way tensor and 8-way "
                                "pipeline parallelism"))
        elif not res["meets"][rec]:
            warnings.append(_not_meeting(spec, res, cat, rec, full_catalog, calibrations, pinned=pinned))
    rec_ai = pick.ai if pick is not None else rec[0] if rec is not None else None
    if rec_ai is not None and _fine_grained_moe_uncalibrated(spec, cat.accelerators[rec_ai].id, calibrations):
        warnings.append(fine_grained_moe_note(
            experts=a.experts, k=a.experts_per_token, runtime=spec.serving.runtime,
            runtime_label=RUNTIME_SPECS[spec.serving.runtime].label,
            architecture=cat.accelerators[rec_ai].architecture, model=a.preset_id))
    fl_tok = 2.0 * a.active_params
    compute_section = {
        "flops_per_output_token": q(fl_tok, "FLOP", Msg("2 x {active_params:,} active parameters (plus attention over the context)", active_params=a.active_params)),
        "prefill_flops_per_request": q(fl_tok * s.input_tokens, "FLOP", Msg("2 x active params x {input_tokens} input tokens", input_tokens=s.input_tokens)),
    }
    memory_section, serving_section, recommendation = {}, {}, {}
    if pick is not None:
        memory_section, serving_section, recommendation = _disagg_details(
            spec, pick, cat, targets_stated=res["targets_stated"], gpus_per_server=chosen and chosen.gpus_per_server,
            as_instances=bool(chosen and chosen.as_instances), weights_bytes=res["weights_bytes"])
    elif rec is not None:
        memory_section, serving_section, recommendation = _details(spec, res, cat, rec, warnings, calibrations,
                                                                   gpus_per_server=chosen and chosen.gpus_per_server,
                                                                   as_instances=bool(chosen and chosen.as_instances))
    cands = {
        "evaluated": res["evaluated"],
        "ranking": Msg("fits, then meets the p95 latency targets at the stated load, then lower price per hour (GPU count "
                       "where prices are unknown), then lower request latency"),
        "ranked": candidates, "best_per_accelerator": best, "not_fitting": not_fitting(spec, res, cat),
        "curves": curves,
    }
    if disagg_rows:
        cands["disaggregated"] = disagg_rows
    acc = cat.accelerators[rec_ai] if rec_ai is not None else None
    if s.disaggregation is not None and pick is None:
        warnings.append(Msg("serving.disaggregation: the stated pools (prefill {pw} x TP{pt}, decode {dw} x TP{dt}) do "
                            "not fit on any accelerator tried, or {runtime} runs no disaggregated pools; the plan shows "
                            "aggregated replicas", pw=s.disaggregation.prefill.workers,
                            pt=s.disaggregation.prefill.tensor_parallel, dw=s.disaggregation.decode.workers,
                            dt=s.disaggregation.decode.tensor_parallel, runtime=RUNTIME_SPECS[s.runtime].label))
    return memory_section, compute_section, serving_section, cands, recommendation, acc


def _disagg_pick(disagg: list, chosen: Configuration | None, *, stated: bool):
    """The disaggregated candidate the plan describes: the decided one (chosen), else with a stated
    serving.disaggregation the first (meets the targets, then cheapest, then fewest GPUs); None: aggregated."""
    if chosen is not None:
        if chosen.disaggregated is None:
            return None
        return next((c for c in disagg if chosen.accelerator_id == c.accelerator_id and chosen.count == c.count
                     and chosen.disaggregated == c.pools), None)
    return disagg[0] if stated and disagg else None


def _disagg_warnings(spec: WorkloadSpec, c, warnings: list) -> None:
    if c.meets:
        return
    warnings.append(Msg("the disaggregated layout ({layout}) does not meet the p95 targets at the stated load: TTFT p95 "
                        "{ttft:.0f} ms (target {tt:.0f} ms), TPOT p95 {tpot:.1f} ms (target {tpt:.1f} ms)",
                        layout=layout_text(c), ttft=c.op["ttft_p95"] * 1e3, tt=c.targets[0] * 1e3,
                        tpot=c.op["tpot_p95"] * 1e3, tpt=c.targets[1] * 1e3))


def _disagg_details(spec: WorkloadSpec, c, cat, *, targets_stated: bool, gpus_per_server: int | None,
                    as_instances: bool, weights_bytes: float):
    """(memory, serving, recommendation) of a disaggregated layout: both pools, all their GPUs."""
    rt = RUNTIME_SPECS[spec.serving.runtime]
    memory_section, serving_section = disagg_sections(spec, c, targets_stated=targets_stated, rt=rt)
    layout = memory_section["layout"]
    why = (Msg("the stated disaggregated layout (serving.disaggregation), evaluated at the stated load")
           if spec.serving.disaggregation is not None else
           Msg("a disaggregated layout: prefill and decode pools sized for the p95 targets at the stated load"))
    recommendation = _recommendation(
        spec, cat.accelerators[c.ai], count=c.count, tp=layout["tensor_parallel"], replicas=layout["replicas"],
        weights_bytes=weights_bytes, layout={k: v for k, v in layout.items() if k != "count"}, why=why,
        gps=gpus_per_server or int(cat.gpus_per_server[c.ai]), as_instances=as_instances)
    return memory_section, serving_section, recommendation


def check_pinned_fit(spec: WorkloadSpec, accelerators, calibrations: Calibrations | None = None) -> None:
    """For edges that validate before computing (the web form): raise the field error size_workload
    would raise when a pinned accelerator cannot hold the model within the pinned count."""
    from .calibration import NO_CALIBRATIONS  # noqa: PLC0415
    from .resolve import resolve_accelerator  # noqa: PLC0415

    hw = spec.hardware
    if spec.kind not in ("inference", "rag") or not hw.accelerator or not hw.count or spec.model is None:
        return
    if spec.kind == "rag" and spec.rag is not None and spec.rag.generator == "external_api":
        return
    accs = list(accelerators)
    acc, _ = resolve_accelerator(hw.accelerator, accs)
    cal = calibrations or NO_CALIBRATIONS
    cat = search.catalog_arrays([acc], compute_precision=spec.precision.compute, gpus_per_server_pin=hw.gpus_per_server)
    res = search.search_serving(serving_inputs(spec, cal), cat)
    if not (res["usable"] & res["fits"]).any():
        _refuse_pin(spec, res, cat, accs, cal)


def _refuse_pin(spec, res, cat, full_catalog, calibrations) -> None:
    """A pinned accelerator that cannot hold the weights at any layout within the count: a field error."""
    from dataclasses import replace  # noqa: PLC0415

    hw = spec.hardware
    acc = cat.accelerators[0]
    need = res["weights_bytes"] + res["kv_seq"]
    free = replace(spec, hardware=replace(hw, accelerator=None, count=None, tensor_parallel=None, pipeline_parallel=None))
    full = search.catalog_arrays(full_catalog, compute_precision=spec.precision.compute)
    fres = search.search_serving(serving_inputs(free, calibrations), full)
    fit_any = fres["fits"].any(axis=1)
    fitting = sorted((x for j, x in enumerate(full.accelerators) if fit_any[j]), key=lambda x: x.memory_gib)
    tips = [str(r) for r in _memory_remedies(spec, fitting, [x.memory_gib for x in fitting], acc)]
    same = fres["fits"][[j for j, x in enumerate(full.accelerators) if x.id == acc.id]]
    if same.size and same.any():
        j = int(np.nonzero(same[0])[0][0])
        tips.insert(0, str(Msg("{n} x {acc} (TP{tp} × PP{pp})", n=int(fres["tp"][j] * fres["pp"][j]), acc=acc.model,
                               tp=int(fres["tp"][j]), pp=int(fres["pp"][j]))))
    if spec.serving.runtime in hf_eager_memory.EAGER_ATTENTION_RUNTIMES:
        eager = float(hf_eager_memory.eager_attention_bytes(spec.model, tokens=spec.serving.input_tokens, tp=1,
                                                            compute_precision=spec.precision.compute))
        raise SpecValidationError([FieldError(field="hardware.accelerator", message=Msg(
            "{acc} cannot hold the weights, one {ctx}-token sequence and the eager attention scores of its "
            "{isl}-token prompt ({need} + {eager} in all, split by tensor parallelism) at any layout within {count} "
            "GPUs; what would: {tips}", acc=acc.model, ctx=spec.serving.context_length, isl=spec.serving.input_tokens,
            need=_fmt_gib(need), eager=_fmt_gib(eager), count=hw.count, tips="; ".join(tips)))])
    raise SpecValidationError([FieldError(field="hardware.accelerator", message=Msg(
        "{acc} cannot hold the weights and one {ctx}-token sequence ({need}) at any layout within {count} GPUs; "
        "what would: {tips}", acc=acc.model, ctx=spec.serving.context_length, need=_fmt_gib(need), count=hw.count,
        tips="; ".join(tips)))])


def _not_meeting(spec, res, cat, rec, full_catalog, calibrations, *, pinned: bool) -> Msg:
    """Why the recommended (or pinned) layout misses the targets, and what would meet them."""
    ai, li = rec
    op = res["op"]
    tips = []
    if pinned and spec.hardware.count:
        free = _sub_search(spec, [cat.accelerators[ai]], calibrations, keep_count=False)
        if free is not None:
            tips.append(Msg("{count} x {acc} ({layout})", count=free["count"], acc=free["accelerator"],
                            layout=Msg("TP{tensor_parallel} × PP{pipeline_parallel} × DP{replicas}", tensor_parallel=free['layout']['tensor_parallel'], pipeline_parallel=free['layout']['pipeline_parallel'], replicas=free['layout']['replicas'])))
    if pinned:
        other = _sub_search(spec, full_catalog, calibrations, keep_count=False, keep_acc=False)
        if other is not None and other["accelerator_id"] != cat.accelerators[ai].id:
            tips.append(Msg("{count} x {acc}", count=other["count"], acc=other["accelerator"]))
    if spec.precision.weights in ("bf16", "fp16", "fp32"):
        tips.append(Msg("lower precision (fp8 on chips with FP8 units, or int4 weights)"))
    if not np.isfinite(op["ttft_p95"][ai, li]):
        return Msg("{what} cannot sustain the stated load: {rps:g} requests/s per replica exceed the {cap:.3g} it "
                   "serves before its queue grows without bound (limited by {neck}). What would: {tips}",
                   what=Msg("the pinned layout") if pinned else Msg("no layout within 1024 GPUs; the closest"),
                   rps=spec.serving.requests_per_second / max(_g(res, "replicas", ai, li), 1.0),
                   cap=_g(res, "max_stable_rate", ai, li), neck=str(res["bottleneck"][ai, li]),
                   tips="; ".join(tips) or Msg("more replicas"))
    return Msg("{what} does not meet the p95 targets at the stated load: TTFT p95 {ttft:.0f} ms (target {tt:.0f} ms), "
               "TPOT p95 {tpot:.1f} ms (target {tpt:.1f} ms); limited by {neck}. What would: {tips}",
               what=Msg("the pinned layout") if pinned else Msg("no layout within 1024 GPUs; the closest"),
               ttft=float(op["ttft_p95"][ai, li]) * 1e3, tt=float(res["ttft_target"][ai, li]) * 1e3,
               tpot=float(op["tpot_p95"][ai, li]) * 1e3, tpt=float(res["tpot_target"][ai, li]) * 1e3,
               neck=str(res["bottleneck"][ai, li]), tips="; ".join(tips) or Msg("more replicas"))


def _sub_search(spec, accs, calibrations, *, keep_count: bool, keep_acc: bool = True):
    """The best layout meeting the targets when a pin is relaxed (None if none does)."""
    from dataclasses import replace  # noqa: PLC0415

    hw = spec.hardware
    s2 = replace(spec, hardware=replace(hw, count=hw.count if keep_count else None, tensor_parallel=None,
                                        pipeline_parallel=None))
    si = serving_inputs(s2, calibrations)
    cat = search.catalog_arrays(accs, compute_precision=spec.precision.compute, gpus_per_server_pin=hw.gpus_per_server)
    res = search.search_serving(si, cat)
    ai, li, order, rec_key = _rank(res, cat, spec.serving.output_tokens)
    if rec_key is None:
        return None
    k = rec_key[0]
    if not res["meets"][ai[k], li[k]]:
        return None
    return candidate(res, cat, int(ai[k]), int(li[k]), spec.serving)


def _chosen(res, cat, ai, li, order, chosen: Configuration | None) -> tuple[int, int] | None:
    """(accelerator, layout) of the decided configuration: its first entry in the ranking."""
    if chosen is None:
        return None
    for k in order:
        a, lay = int(ai[k]), int(li[k])
        count = _g(res, "count", a, lay)
        if math.isfinite(count) and chosen.matches(cat.accelerators[a].id, int(count), int(res["tp"][lay]),
                                                  int(res["pp"][lay]), mechanisms(res, lay)):
            return a, lay
    return None


def _details(spec, res, cat, rec, warnings, calibrations, *, gpus_per_server: int | None = None,
             as_instances: bool = False):
    s, p = spec.serving, spec.precision
    ai, li = rec
    acc = cat.accelerators[ai]
    tp, pp = int(res["tp"][li]), int(res["pp"][li])
    replicas = int(_g(res, "replicas", ai, li))
    count = replicas * tp * pp
    op, mem = res["op"], res["mem"]
    running = float(op["n_running"][ai, li])
    kv_gpu = min(running, float(res["n_kv"][ai, li])) * float(mem["kv_per_seq_bytes"][ai, li])
    w_gpu = float(np.broadcast_to(mem["weights_bytes"], np.shape(res["fits"]))[ai, li])
    act = float(np.broadcast_to(mem["activations_bytes"], np.shape(res["fits"]))[ai, li])
    work = float(mem["workspace_bytes"][ai, li])
    per_gpu = w_gpu + kv_gpu + act + work
    rt = RUNTIME_SPECS[s.runtime]
    note = res["notes"][ai]
    layout_txt = Msg("TP{tp} × PP{pp}, {replicas} {replicas:plural:replica|replicas}", tp=tp, pp=pp, replicas=replicas)
    memory_section = {
        "per_gpu_bytes": q(per_gpu, "bytes", Msg("weights + KV cache of {running:.1f} running sequences + activations + runtime workspace ({layout_txt})", running=running, layout_txt=layout_txt)),
        "total_bytes": q(per_gpu * count, "bytes", Msg("per GPU x {count} GPUs", count=count)),
        "layout": {"count": count, "tensor_parallel": tp, "pipeline_parallel": pp, "replicas": replicas,
                   **mechanisms(res, li)},
        "components": {
            "weights_bytes": q(w_gpu, "bytes", Msg("{weights} weights split over TP{tp} × PP{pp}", weights=getattr(p.weights, "text", p.weights), tp=tp, pp=pp)),
            "kv_cache_bytes": q(kv_gpu, "bytes", Msg(
                "{n:.1f} running sequences x {tokens:g} tokens reserved each ({how}) of {kv} KV; the pool holds {cap:g}",
                n=running, tokens=float(s.input_tokens + (s.output_tokens if rt.kv_reservation == "full" else s.output_tokens / 2)),
                how=Msg("whole context at admission") if rt.kv_reservation == "full" else Msg("paged: prompt + half the answer on average"),
                kv=p.kv_cache, cap=float(res["n_kv"][ai, li]))),
            "activations_bytes": q(act, "bytes", _activations_explain(spec, mem, ai, li, tp, rt)),
            "gradients_bytes": q(0, "bytes", Msg("no gradients in inference")),
            "optimizer_bytes": q(0, "bytes", Msg("no optimizer in inference")),
            "adapter_bytes": q(0, "bytes", Msg("no adapters")),
            "overhead_bytes": q(work, "bytes", Msg("CUDA context + {rt} workspace (CUDA graphs, sampler); the engine uses "
                                                   "{frac:.0%} of GPU memory", rt=rt.label,
                                                   frac=float(np.broadcast_to(mem["memory_fraction"], np.shape(res["fits"]))[ai, li]))),
        },
    }
    T = float(op["tpot"][ai, li])  # time per output token (the step / MTP accepted tokens)
    gpus = tp * pp
    rate = float(op["rate"][ai, li])
    lam_t = _g(res, "rate_meeting", ai, li)
    targets = Msg("stated targets") if res["targets_stated"] else Msg(
        "no targets stated: planner defaults of {a:g}x the unloaded TTFT and {b:g}x the unloaded TPOT",
        a=search.DEFAULT_TTFT_SLACK, b=search.DEFAULT_TPOT_SLACK)
    consts = note["constants_values"]
    serving_section = {
        "runtime": rt.label,
        "precision_on_hardware": note["peak"],  # a Msg: translated at the edges
        "constants": Msg("{src}: prefill_efficiency {pe:.3f}, decode_bandwidth_efficiency {be:.3f}, step_overhead_s "
                         "{so:.4f}", src=note["constants"], pe=consts["prefill_efficiency"],
                         be=consts["decode_bandwidth_efficiency"], so=consts["step_overhead_s"]),
        "single_stream_tokens_per_s": q(1.0 / float(res["tpot1"][ai, li]), "tokens/s",
                                        Msg("one sequence alone: weights / (bandwidth x efficiency) + step overheads")),
        "prefill_ms": q((float(res["ttft1"][ai, li]) - float(consts["request_overhead_s"])) * 1e3, "ms",
                        Msg("one {n}-token prompt alone, inside the engine (no HTTP/tokenisation): max(its FLOPs at "
                            "the efficiency, one weight read) + step overheads", n=s.input_tokens)),
        "ttft_ms": q(float(op["ttft"][ai, li]) * 1e3, "ms", Msg(
            "mean at the stated load: the running step, this prompt's prefill in the next step, queueing for the "
            "step token budget ({budget}) and for a free slot, + {ro:.0f} ms per-request overhead",
            budget=int(np.broadcast_to(res["engine"].step_budget, np.shape(op["ttft"]))[ai, li]),
            ro=float(consts["request_overhead_s"]) * 1e3)),
        "ttft_p50_ms": q(float(op["ttft_p50"][ai, li]) * 1e3, "ms", Msg(
            "median at the stated load: half a running step, the exponential queue waits at ln 2 of their means")),
        "ttft_p95_ms": q(float(op["ttft_p95"][ai, li]) * 1e3, "ms", Msg("95th percentile at the stated load")),
        "ttft_p99_ms": q(float(op["ttft_p99"][ai, li]) * 1e3, "ms", Msg(
            "99th percentile at the stated load: the whole running step, the prompts sharing it at +2.33 sd, the "
            "queue waits at ln 100 of their means")),
        "tpot_ms": q(T * 1e3, "ms", Msg("mean engine step with {n:.1f} sequences running: decodes plus the prompt chunks "
                                        "of arriving requests", n=running)),
        "tpot_p50_ms": q(T * 1e3, "ms", Msg("median time per output token: a request's mean over its steps is "
                                            "near-normal, so its median is the mean step")),
        "tpot_p95_ms": q(float(op["tpot_p95"][ai, li]) * 1e3, "ms", Msg("95th percentile: steps vary with the prompts they carry")),
        "tpot_p99_ms": q(float(op["tpot_p99"][ai, li]) * 1e3, "ms", Msg("99th percentile, the same variation at +2.33 sd")),
        "output_tokens_per_s_per_gpu": q(rate * s.output_tokens / gpus, "tokens/s", Msg(
            "per GPU deployed at the stated load: {rate:.3g} requests/s per replica x {osl} output tokens / {g} GPUs per "
            "replica", rate=rate, osl=s.output_tokens, g=gpus)),
        "total_tokens_per_s_per_gpu": q(rate * (s.input_tokens + s.output_tokens) / gpus, "tokens/s", Msg(
            "input + output tokens per GPU deployed at the stated load")),
        "output_tokens_per_s_per_user": q(1.0 / T, "tokens/s", Msg("one user's streaming speed (1 / TPOT)")),
        "in_flight_requests_per_replica": q(float(op["in_flight"][ai, li]), "requests", Msg(
            "requests in flight per replica at this operating point (Little's law: requests/s x (TTFT + (output "
            "tokens - 1) x TPOT)); the {load} binds", load=Msg("closed loop of {c:g} clients per replica",
                                                                c=s.concurrency / replicas)
            if float(op["closed_loop"][ai, li]) == 1.0 else Msg("open loop of {r:.3g} requests/s per replica",
                                                                r=s.requests_per_second / replicas))),
        "max_rps_per_replica_meeting_targets": q(lam_t, "requests/s", Msg("highest Poisson rate one replica serves within the "
                                                                           "p95 targets ({targets})", targets=targets)),
        "max_stable_rps_per_replica": q(_g(res, "max_stable_rate", ai, li), "requests/s",
                                        Msg("beyond this the queue grows without bound")),
        "bottleneck": str(res["bottleneck"][ai, li]),
        "max_concurrent_sequences": q(float(min(res["n_kv"][ai, li], 1e9)), "sequences",
                                      Msg("sequences the KV pool and the {rt} scheduler (max {m}) run at once per replica",
                                          rt=rt.label, m=rt.max_running_seqs)),
        "batch_per_replica": q(running, "sequences", Msg("sequences running per replica at the stated load (Little's law)")),
        "replicas": q(float(replicas), "replicas", Msg(
            "max({rps:g} rps / {lam:.3g} rps per replica, {c} closed-loop clients / clients per replica within the "
            "targets){pin}", rps=s.requests_per_second, lam=lam_t, c=s.concurrency,
            pin=Msg("; pinned: hardware.count / (TP x PP)") if spec.hardware.count else "")),
        "meets_targets": bool(res["meets"][ai, li]),
    }
    if s.ttft_p95_ms and np.isfinite(op["ttft_p95"][ai, li]) and float(op["ttft_p95"][ai, li]) * 1e3 > s.ttft_p95_ms:
        warnings.append(Msg("TTFT p95 {ttft:.0f} ms exceeds the {target:g} ms target", ttft=float(op["ttft_p95"][ai, li]) * 1e3,
                            target=s.ttft_p95_ms))
    why = (Msg("the pinned layout, evaluated exactly at the stated load") if spec.hardware.accelerator and spec.hardware.count
           else Msg("meets the p95 targets on a priced accelerator where one does, with the fewest GPUs, then the cheapest "
                    "per hour, then the lowest latency"))
    recommendation = _recommendation(spec, acc, count=count, tp=tp, replicas=replicas, weights_bytes=res["weights_bytes"],
                                     layout={"tensor_parallel": tp, "pipeline_parallel": pp, "replicas": replicas,
                                             **mechanisms(res, li)}, why=why,
                                     gps=gpus_per_server or int(cat.gpus_per_server[ai]), as_instances=as_instances)
    return memory_section, serving_section, recommendation


def _recommendation(spec, acc, *, count: int, tp: int, replicas: int, weights_bytes: float, layout: dict, why,
                    gps: int, as_instances: bool) -> dict:
    """The recommendation block (hardware, servers and power, host, storage, network, Kubernetes, software)."""
    s, d = spec.serving, spec.data
    sp = infra.servers_and_power(acc=acc, count=count, gpus_per_server=gps, tensor_parallel=tp,
                                 as_instances=as_instances)
    servers = sp["servers"]["value"]

    index_ram = spec.kind == "rag" and rag_index_bytes(spec)[0] or 0.0
    host = infra.host_cpu_ram(kind=spec.kind, per_server=sp["gpus_per_server"]["value"], acc=acc, vision=False,
                              extra_ram_bytes=index_ram)
    storage = {
        "nvme_per_server_bytes": q(2 * weights_bytes + 200e9, "bytes", Msg("model weights x 2 (current + next version) + 200 GB images/caches")),
        "model_registry_bytes": q(3 * weights_bytes, "bytes", Msg("object storage: 3 model versions")),
        "logs_bytes": q(d.logs_gb_per_month * 1e9 * d.retention_months, "bytes", Msg("request/response logs x retention months")),
        "datasets_bytes": q(d.dataset_gb * 1e9 + d.growth_gb_per_month * 1e9 * d.retention_months, "bytes", Msg("data.dataset_gb + growth")),
    }
    if spec.kind == "rag":
        idx, idx_why = rag_index_bytes(spec)
        storage["vector_index_bytes"] = q(idx, "bytes", idx_why + " (on NVMe, loaded into RAM)")
    return {
        "accelerator_id": acc.id, "accelerator": acc.model, "count": count, "why": why,
        "layout": layout,
        **sp,
        "nvlink_needed": infra.nvlink_needed(acc=acc, tp=tp, kind=spec.kind, count=count),
        **host,
        "storage": storage,
        "network": infra.network(kind=spec.kind, servers=servers, required_inter_node_gb_s=None, rps=s.requests_per_second),
        "kubernetes": infra.kubernetes(servers=servers, replicas=replicas, services=4 if spec.kind == "rag" else 1),
        "software": infra.software_stack(acc),
        **infra.monitoring(spec.kind),
    }


def _activations_explain(spec, mem, ai, li, tp, rt) -> Msg:
    """What the activations are: a forward pass of the step's token budget, or with plain Hugging Face
    transformers the prompt's forward pass with eager attention (hf_eager_memory.py)."""
    if spec.serving.runtime not in hf_eager_memory.EAGER_ATTENTION_RUNTIMES:
        return Msg("one forward pass of the step's token budget ({budget} tokens)", budget=rt.step_token_budget)
    a, isl = spec.model, spec.serving.input_tokens
    eager = float(np.broadcast_to(mem["eager_attention_bytes"], np.shape(mem["fits"]))[ai, li])
    return Msg("the prompt's forward pass ({isl} tokens) with eager attention (transformers, attn_implementation "
               "eager): one layer's {heads:g} heads x {isl} x {isl} scores at their peak of {bpe:g} B each (product, "
               "masked copy, fp32 softmax and its cast back), the repeated K/V and the causal mask = {eager}; plus "
               "fp32 logits of every prompt position and the layer's working tensors",
               isl=isl, heads=(a.attention_heads or 0) / tp,
               bpe=hf_eager_memory.score_bytes_per_element(spec.precision.compute), eager=_fmt_gib(eager))
