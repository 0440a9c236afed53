"""Serving candidate search: layouts x replicas per accelerator and count against the latency targets."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from . import memory
from .architecture import ModelArch
from .calibration import NO_CALIBRATIONS, Calibrations
from .search_catalog import (
    MAX_GPUS,
    SERVE_PP_OPTIONS,
    TP_OPTIONS,
    CatalogArrays,
)
from .serving_layout import bottleneck, make_engines
from .serving_model import DEFAULT_TPOT_SLACK, DEFAULT_TTFT_SLACK
from .serving_moe import MECHANISM_VENDORS, RUNTIME_MECHANISMS

# ------------------------------------------------------------------------------------ serving


@dataclass(frozen=True, kw_only=True)
class ServingInputs:
    arch: ModelArch
    weights: str
    compute_precision: str
    kv_precision: str
    context_length: int
    input_tokens: int
    output_tokens: int
    concurrency: int
    requests_per_second: float
    ttft_ms: float | None
    tpot_ms: float | None
    runtime: str = "vllm"
    tp_pin: int | None = None
    pp_pin: int | None = None
    count_pin: int | None = None
    calibrations: Calibrations = NO_CALIBRATIONS
    # MoE mechanisms (serving_moe.py): expert parallel and data-parallel attention inside each
    # layout's TP group, MTP speculative decoding (accepted None: the runtime's constant).
    # None: not pinned, the search tries what the runtime runs (serving_variants).
    expert_parallel: int | None = 1
    data_parallel_attention: bool | None = False
    mtp: bool | None = False
    mtp_accepted: float | None = None


def serving_layouts(s: ServingInputs) -> tuple[np.ndarray, np.ndarray]:
    a = s.arch
    # heads unknown (a custom architecture may give layers and width only): no divisibility rule
    tps = [tp for tp in TP_OPTIONS if not a.is_transformer or not a.attention_heads or a.attention_heads % tp == 0]
    if s.tp_pin:
        tps = [s.tp_pin]
    pps = (s.pp_pin,) if s.pp_pin else SERVE_PP_OPTIONS
    rows = [(tp, pp) for tp in tps for pp in pps if not a.is_transformer or pp <= a.layers]
    if s.count_pin:
        rows = [(tp, pp) for tp, pp in rows if tp * pp <= s.count_pin] or rows
    arr = np.array(rows, dtype=np.int64).reshape(-1, 2)
    return arr[:, 0], arr[:, 1]


def _mechanism_options(s: ServingInputs, tp: int) -> tuple[tuple[int, ...], tuple[bool, ...], tuple[bool, ...]]:
    """(EP, DPA, MTP) values tried for one TP degree: a pinned one alone; an open one, for a MoE model,
    what the runtime runs (serving_moe.RUNTIME_MECHANISMS): EP over the whole TP group as the engines
    run it (when it divides the experts), DPA off and on where the KV cache gains from it (MLA's latent
    KV or fewer KV heads than TP: TP cannot split them), MTP off and on where the checkpoint has MTP
    layers. The plain variant comes first, so it wins a tie."""
    a = s.arch
    can = RUNTIME_MECHANISMS.get(s.runtime, frozenset()) if a.is_moe else frozenset()
    if s.expert_parallel is not None:
        eps = (min(s.expert_parallel, tp),)
    else:
        eps = (tp,) if "ep" in can and tp > 1 and a.experts % tp == 0 else (1,)
    if s.data_parallel_attention is not None:
        dpas = (bool(s.data_parallel_attention) and tp > 1,)
    else:
        kv_short = a.is_mla or (a.kv_heads or 0) < tp
        dpas = (False, True) if "dpa" in can and a.is_transformer and tp > 1 and kv_short else (False,)
    if s.mtp is not None:
        mtps = (bool(s.mtp),)
    else:
        mtps = (False, True) if "mtp" in can and a.mtp_layers else (False,)
    return eps, dpas, mtps


def serving_variants(s: ServingInputs) -> dict[str, np.ndarray]:
    """The search's layout axis: every (TP, PP) of serving_layouts with each mechanism variant of it
    (tp, pp, ep int arrays; dpa, mtp bool arrays, one entry per evaluated layout)."""
    tp_l, pp_l = serving_layouts(s)
    rows = []
    for tp, pp in zip(tp_l.tolist(), pp_l.tolist(), strict=True):
        eps, dpas, mtps = _mechanism_options(s, tp)
        rows += [(tp, pp, ep, dpa, mtp) for ep in eps for dpa in dpas for mtp in mtps]
    arr = np.array(rows, dtype=np.int64).reshape(-1, 5)
    return {"tp": arr[:, 0], "pp": arr[:, 1], "ep": arr[:, 2], "dpa": arr[:, 3].astype(bool),
            "mtp": arr[:, 4].astype(bool)}


def _needs_pp(fits: np.ndarray, v: dict[str, np.ndarray]) -> np.ndarray:
    """A layout with PP p is kept only where the same layout with PP p / 2 does not fit."""
    keep = np.ones_like(fits, dtype=bool)
    keys = list(zip(*(v[k].tolist() for k in ("tp", "pp", "ep", "dpa", "mtp")), strict=True))
    index = {key: j for j, key in enumerate(keys)}
    for j, (t, p, ep, dpa, mtp) in enumerate(keys):
        half = index.get((t, p // 2, ep, dpa, mtp)) if p > 1 else None
        if half is not None:
            keep[:, j] = ~fits[:, half]
    return keep


def serving_targets(s: ServingInputs, ttft1: np.ndarray, tpot1: np.ndarray) -> tuple[np.ndarray, np.ndarray, bool]:
    """p95 targets in seconds: the stated ones, else the documented defaults relative to the unloaded
    latencies (serving_model.DEFAULT_TTFT_SLACK / DEFAULT_TPOT_SLACK)."""
    stated = bool(s.ttft_ms or s.tpot_ms)
    ttft = np.full_like(ttft1, s.ttft_ms / 1e3) if s.ttft_ms else (np.inf if stated else DEFAULT_TTFT_SLACK * ttft1)
    tpot = np.full_like(tpot1, s.tpot_ms / 1e3) if s.tpot_ms else (np.inf if stated else DEFAULT_TPOT_SLACK * tpot1)
    return np.broadcast_to(ttft, ttft1.shape), np.broadcast_to(tpot, tpot1.shape), stated


def _reference_unloaded(ttft1, tpot1, idx, shape, v):
    """The unloaded latencies the default targets are relative to: a layout's mechanism variants share
    those of its first variant (plain: no DPA, no MTP) on the same accelerator, so MTP's faster
    unloaded step does not tighten its own target; a variant whose plain one does not fit keeps its own."""
    key = v["tp"] * 1000 + v["pp"]
    first = np.unique(key, return_index=True)[1]
    base = first[np.searchsorted(key[first], key)]  # each variant's first row of its (tp, pp) group
    if np.array_equal(base, np.arange(len(key))):
        return ttft1, tpot1
    out = []
    for x in (ttft1, tpot1):
        grid = np.full(shape, np.nan)
        grid[idx] = x
        ref = grid[idx[0], base[idx[1]]]
        out.append(np.where(np.isfinite(ref), ref, x))
    return out


def _compress(eng, idx, shape):
    """The engine restricted to the (accelerator, layout) pairs at `idx` (1-D arrays)."""
    return type(eng)(**{f: np.broadcast_to(np.asarray(getattr(eng, f), dtype=float), shape)[idx]
                        for f in eng.__dataclass_fields__ if getattr(eng, f) is not None})  # None: linear default


OP_KEYS = ("T", "tpot", "ttft", "ttft_p50", "ttft_p95", "ttft_p99", "tpot_p95", "tpot_p99", "n_running", "compute_s",
           "memory_s", "comm_s", "rate", "queued_s", "in_flight")


def _operating_point(e, s: ServingInputs, replicas, max_stable, ttft_t, tpot_t) -> dict:
    """The one operating point a plan reports: the binding one of the two stated loads.

    Both loads are evaluated per replica (replicas share them evenly, as a load balancer spreads
    them): the open loop at rps / replicas and the closed loop of concurrency / replicas clients.
    The binding load is the one nearer its p95 targets (max of TTFT p95 / target and TPOT p95 /
    target; on a tie the higher rate); every figure (step time, latencies and their percentiles,
    rate, running batch, bottleneck parts) comes from it, so they agree with each other by Little's
    law. The other load is lighter on the targets: a binding load that meets them means both do."""
    rps = s.requests_per_second
    op_open = e.steady(rps / replicas)
    op_open["rate"] = rps / replicas + 0.0 * op_open["T"]
    op_open["queued_s"] = np.zeros_like(op_open["T"])
    op_closed = e.closed_loop(s.concurrency / replicas, cap=max_stable)
    with np.errstate(invalid="ignore", divide="ignore", over="ignore"):
        for o in (op_open, op_closed):
            o["in_flight"] = o["rate"] * (o["ttft"] + (s.output_tokens - 1.0) * o["tpot"])  # Little's law
            o["score"] = np.maximum(np.where(np.isfinite(o["ttft_p95"]), o["ttft_p95"] / ttft_t, np.inf),
                                    np.where(np.isfinite(o["tpot_p95"]), o["tpot_p95"] / tpot_t, np.inf))
            o["score"] = np.where(np.isnan(o["score"]), 0.0, o["score"])
    # requests_per_second 0 states no open-loop load (docs/WORKLOADSPEC.md: a plan for `concurrency` clients alone):
    # an idle open loop must not bind, though its unloaded p95 can exceed a busy closed loop's (TensorRT-LLM's
    # attention-DP balancing waits for its timeout when no other rank has a prompt)
    no_open = rps <= 0
    closed = no_open | (op_closed["score"] > op_open["score"]) | (
        (op_closed["score"] == op_open["score"]) & (op_closed["rate"] >= op_open["rate"]))
    op = {k: np.where(closed, op_closed[k], op_open[k]) for k in OP_KEYS}
    op["closed_loop"] = closed
    op["ok"] = np.isfinite(op["T"]) & np.isfinite(op["ttft_p95"]) & (op_open["stable"] | no_open)
    return op


def _at(x, at):
    """x at the positions `at` of a 1-D layout array, or x itself where it is one value for all."""
    return x[at] if np.ndim(x) else x


def search_serving(s: ServingInputs, cat: CatalogArrays) -> dict:
    """Every accelerator x (TP, PP) layout: does one replica fit, how fast a request rate it sustains
    within the p95 targets, how many replicas the stated load needs, and the operating point."""
    a = s.arch
    v = serving_variants(s)
    tp_l, pp_l = v["tp"], v["pp"]
    eng, mem, notes = make_engines(arch=a, accs=cat.accelerators, runtime=s.runtime, weights=s.weights,
                                   compute=s.compute_precision, kv_precision=s.kv_precision, tp=tp_l, pp=pp_l,
                                   isl=float(s.input_tokens), osl=float(s.output_tokens), calibrations=s.calibrations,
                                   ep=v["ep"], dpa=v["dpa"], mtp=v["mtp"], mtp_accepted=s.mtp_accepted)
    tp = tp_l[None, :].astype(float)
    pp = pp_l[None, :].astype(float)
    shape = (len(cat.accelerators), len(tp_l))
    mem = {k: np.broadcast_to(np.asarray(v, dtype=float), shape) if k != "fits" else np.broadcast_to(v, shape)
           for k, v in mem.items()}
    ctx_seq = memory.kv_bytes_per_sequence(a, tokens=s.context_length, kv_precision=s.kv_precision)
    # one whole context must fit: TP splits its KV by heads; with DPA it lives on one rank unsplit
    kv_split = np.where(v["dpa"][None, :], 1.0, memory.kv_split(a, tp))
    fits = (mem["fits"] & (mem["kv_pool_bytes"] >= ctx_seq / (kv_split * pp))
            & (tp <= cat.gpus_per_server[:, None]) & np.isfinite(eng.flops_s))
    if not (s.pp_pin or s.tp_pin):
        fits = fits & _needs_pp(fits, v)
    # a mechanism the search opened (not one the spec pinned) only where the engine's build runs it
    opened = ((v["ep"] > 1) & (s.expert_parallel is None)) | (v["dpa"] & (s.data_parallel_attention is None)) \
        | (v["mtp"] & (s.mtp is None))
    runs_mechanisms = np.array([acc.vendor.lower() in MECHANISM_VENDORS for acc in cat.accelerators])
    fits = fits & (~opened[None, :] | runs_mechanisms[:, None])
    idx = np.nonzero(fits)
    e = _compress(eng, idx, shape)  # only layouts that fit are evaluated
    tp_e, pp_e = np.broadcast_to(tp, shape)[idx], np.broadcast_to(pp, shape)[idx]
    rps = s.requests_per_second
    with np.errstate(invalid="ignore", divide="ignore", over="ignore"):
        ttft1, tpot1 = e.unloaded()
        ttft_t, tpot_t, stated = serving_targets(s, *_reference_unloaded(ttft1, tpot1, idx, shape, v))
        max_stable = e.max_stable_rate()
        lam = e.rate_meeting(ttft_t, tpot_t, hi=max_stable * 1.000001)  # open loop, per replica, within targets
        lam_c = e.rate_meeting(ttft_t, tpot_t, closed=True, hi=max_stable * 1.000001)
        at = e.steady(lam_c, parts=False)
        clients_max = lam_c * (at["ttft"] + (s.output_tokens - 1) * at["tpot"])  # closed-loop clients within targets
        need = np.maximum(np.ceil(rps / np.where(lam > 0, lam, np.nan)) if rps > 0 else 1.0,
                          np.ceil(s.concurrency / np.where(clients_max >= 1, clients_max, np.nan)))
        meets = np.isfinite(need) & (lam > 0)
        need = np.where(meets, np.maximum(need, 1.0), np.inf)
        # Where no rate meets the targets, the closest plan is the one that keeps the queue stable.
        stable_need = np.ceil(rps / np.where(max_stable > 0, max_stable, np.nan)) if rps > 0 else np.ones_like(lam)
        stable_need = np.where(np.isfinite(stable_need), np.maximum(stable_need, 1.0), np.inf)
        replicas = np.where(meets, need, stable_need)
        if s.count_pin:
            meets = meets & (replicas * tp_e * pp_e <= s.count_pin)
            replicas = np.maximum(np.floor(s.count_pin / (tp_e * pp_e)), 1.0)
        op = _operating_point(e, s, replicas, max_stable, ttft_t, tpot_t)
        if not s.count_pin:
            # Rounding to whole clients per replica can still miss by a hair: one more replica there.
            short = meets & ((op["ttft_p95"] > ttft_t * (1 + 1e-6)) | (op["tpot_p95"] > tpot_t * (1 + 1e-6)))
            if short.any():
                # only the layouts that missed are evaluated again (the rest keep their point)
                replicas = np.where(short, replicas + 1.0, replicas)
                redo = np.nonzero(short)
                again = _operating_point(_compress(e, redo, short.shape), s, replicas[redo], max_stable[redo],
                                         _at(ttft_t, redo), _at(tpot_t, redo))
                for key, value in again.items():
                    op[key] = np.array(op[key], copy=True)
                    op[key][redo] = value
        count = replicas * tp_e * pp_e
        meets = (meets & (count <= MAX_GPUS) & op["ok"] & (op["ttft_p95"] <= ttft_t * (1 + 1e-6))
                 & (op["tpot_p95"] <= tpot_t * (1 + 1e-6)))
        neck = bottleneck(e, op)

    def full(x, fill=np.inf, dtype=float):
        out = np.full(shape, fill, dtype=dtype)
        out[idx] = x
        return out

    replicas_f, count_f = full(replicas), full(count)
    op = {k: full(v) for k, v in op.items() if k != "ok"}
    ttft1, tpot1, ttft_t, tpot_t = full(ttft1), full(tpot1), full(ttft_t), full(tpot_t)
    lam, max_stable = full(lam, 0.0), full(max_stable, 0.0)
    meets = full(meets, False, bool)
    neck = full(neck, "", object)
    replicas, count = replicas_f, count_f
    usable = fits & np.isfinite(count) & (np.where(np.isfinite(count), count, np.inf) <= MAX_GPUS)
    return {"tp": tp_l, "pp": pp_l, "ep": v["ep"], "dpa": v["dpa"], "mtp": v["mtp"], "fits": fits, "n_kv": mem["n_max"], "replicas": replicas, "count": count,
            "meets": meets, "usable": usable, "engine": eng, "mem": mem, "notes": notes, "op": op,
            "bottleneck": neck, "ttft1": ttft1, "tpot1": tpot1, "ttft_target": ttft_t,
            "tpot_target": tpot_t, "targets_stated": stated, "rate_meeting": lam, "max_stable_rate": max_stable,
            "kv_seq": ctx_seq, "weights_bytes": memory.inference_weight_bytes(a, weights=s.weights),
            "evaluated": int(fits.size),
            "with_mechanisms": bool(a.is_moe or v["dpa"].any() or v["mtp"].any() or (v["ep"] > 1).any())}
