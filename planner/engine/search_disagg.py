"""Disaggregated serving candidates (issue 22, Build 4): a prefill pool and a decode pool per
accelerator, sized against the plan's p95 targets and peak load (docs/SIZING.md "Disaggregated
candidates").

Which layouts are tried (few, and only where a pool split can pay):
  * the runtime runs disaggregated pools (serving_moe.DISAGG_RUNTIMES: vLLM behind NVIDIA Dynamo or
    llm-d, SGLang, TensorRT-LLM; not ATOM or eager Transformers);
  * no aggregated pin (hardware.count, tensor_parallel, pipeline_parallel describe replicas);
  * on an accelerator of a platform with one RDMA NIC per GPU (rdma_platform: SXM/OAM baseboards,
    superchips), the fabric the KV transfer is timed on;
  * on an accelerator whose best aggregated layout needs at least MIN_AGGREGATED_REPLICAS replicas or
    misses the targets (a split needs the load of two engines: one per pool; below that it only
    adds GPUs);
  * pool shapes from t0, the smallest tensor-parallel group (PP 1) that holds the model and one
    context on that accelerator: prefill TP x decode TP in (t0, t0), (t0, 2 t0), (2 t0, 2 t0), each
    within a server (a prefill pool wider than its decode pool is not tried: prefill scales by workers).

A stated serving.disaggregation is the one layout tried, on every accelerator that holds it.

Each pool runs what the runtime runs at its TP (search_serving._mechanism_options): expert parallel
over the group; data-parallel attention in the decode pool where the KV cache gains from it (MLA or
fewer KV heads than TP), never in the prefill pool unless pinned; MTP in the decode pool as the best
aggregated layout on the accelerator runs it (or as stated).

Sizing: a decode worker serves lam_d, the highest rate whose p95 TPOT meets the target; a prefill
worker lam_p, the highest rate whose p95 TTFT meets the target less the KV transfer, the handoff and
one decode step (serving_disagg.py). The load to serve is max(peak rps, concurrency / cycle at the
targets); workers = ceil(load / lam) per pool. The operating point is then evaluated as the
aggregated one (the binding one of the open loop at the peak and the closed loop of the stated
clients); a pool that misses its target at the sized load gets one worker more (at most EXTRA_WORKER_STEPS
times) before that.
Nothing is assumed met: meets_target is the evaluated operating point's.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field

import numpy as np

from catalog.domain.messages import Msg

from . import memory
from .architecture import kv_cache_bytes_per_token, kv_fixed_bytes_per_sequence
from .search_catalog import MAX_GPUS, TP_OPTIONS, CatalogArrays
from .search_serving import DEFAULT_TPOT_SLACK, DEFAULT_TTFT_SLACK, ServingInputs, _compress
from .serving_constants import link
from .serving_layout import make_engines
from .serving_math import bisect_largest
from .serving_moe import DISAGG_RUNTIMES, NIC_GB_S, RUNTIME_MECHANISMS, scale_up_domain

MIN_AGGREGATED_REPLICAS = 2
_RDMA_FORM = re.compile(r"\b(sxm|oam|superchip)", re.IGNORECASE)
EXTRA_WORKER_STEPS = 3
ACCELERATORS_TRIED = 8  # the accelerators whose aggregated picks rank first (costs/adapters prices 4 of these)


@dataclass
class DisaggCandidate:
    """One evaluated disaggregated layout on one accelerator (figures in seconds, rates per second)."""

    ai: int
    accelerator_id: str
    accelerator: str
    prefill: dict  # {workers, tensor_parallel, expert_parallel, data_parallel_attention}
    decode: dict
    speculative: str
    count: int
    meets: bool
    op: dict  # ttft, ttft_p50, ttft_p95, ttft_p99, tpot, tpot_p95, tpot_p99, rate, kv_transfer, handoff, ...
    targets: tuple[float, float]
    price_per_hour: float | None
    memory: dict = field(default_factory=dict)  # per pool: weights, kv pool, activations, workspace bytes per GPU
    notes: dict = field(default_factory=dict)  # the accelerator's serving notes (constants, peak)

    @property
    def pools(self) -> tuple[tuple[int, int], tuple[int, int]]:
        """((prefill workers, TP), (decode workers, TP)), as result.pools_of reads a layout."""
        return ((self.prefill["workers"], self.prefill["tensor_parallel"]),
                (self.decode["workers"], self.decode["tensor_parallel"]))


def rdma_platform(acc) -> bool:
    """Is the accelerator built into a platform with one RDMA NIC per GPU (serving_moe.NIC_GB_S: DGX/HGX
    baseboards, OAM platforms, Grace superchips and NVL72 racks), the fabric the KV transfer between the
    pools assumes and the engines' transfer libraries (NIXL, Mooncake, MoRI) use? PCIe cards (cloud
    G5/G6-class instances: 10-100 Gb/s Ethernet, no GPUDirect RDMA) and TPU/Gaudi parts (no disaggregated
    mode in the runtimes) are not tried by the search; a stated layout is evaluated anyway."""
    # Volta's DGX-1 shares 4 NICs among 8 GPUs (and the transfer libraries need GPUDirect RDMA per GPU)
    return (acc.vendor.lower() in ("nvidia", "amd") and bool(_RDMA_FORM.search(acc.form_factor or ""))
            and not (acc.architecture or "").lower().startswith("volta"))


def _tp_list(s: ServingInputs) -> list[int]:
    a = s.arch
    return [tp for tp in TP_OPTIONS if not a.is_transformer or not a.attention_heads or a.attention_heads % tp == 0]


def _pool_mechanisms(s: ServingInputs, tp: int, role: str) -> tuple[int, bool]:
    a = s.arch
    can = RUNTIME_MECHANISMS.get(s.runtime, frozenset()) if a.is_moe else frozenset()
    if s.expert_parallel is not None:
        ep = min(s.expert_parallel, tp)
    else:
        ep = tp if "ep" in can and tp > 1 and a.experts % tp == 0 else 1
    if s.data_parallel_attention is not None:
        dpa = bool(s.data_parallel_attention) and tp > 1
    else:
        kv_short = a.is_mla or (a.kv_heads or 0) < tp
        dpa = role == "decode" and "dpa" in can and a.is_transformer and tp > 1 and kv_short
    return ep, dpa


def search_disaggregated(s: ServingInputs, cat: CatalogArrays, agg: dict, stated=None) -> list[DisaggCandidate]:
    """The disaggregated candidates of a serving search: per accelerator, its best pool split (or the
    stated one), evaluated at the stated load; [] where none is tried (module docstring)."""
    if s.runtime not in DISAGG_RUNTIMES:
        return []
    if stated is None and (s.count_pin or s.tp_pin or s.pp_pin):
        return []
    a = s.arch
    accs = cat.accelerators
    n = len(accs)
    if stated is not None:
        pre_tps = [stated.prefill.tensor_parallel]
        dec_tps = [stated.decode.tensor_parallel]
    else:
        pre_tps = dec_tps = _tp_list(s)
    can_mtp = "mtp" in RUNTIME_MECHANISMS.get(s.runtime, frozenset()) and a.is_moe and bool(a.mtp_layers)
    mtps = (bool(s.mtp),) if s.mtp is not None else ((False, True) if can_mtp else (False,))
    # the best aggregated layout per accelerator: which accelerators are tried, MTP, the default targets
    best = _best_aggregated(agg, cat)
    if stated is None:
        tried = [ai for ai in _accelerator_order(agg, best, cat) if rdma_platform(accs[ai])
                 and (not agg["meets"][best[ai]] or agg["replicas"][best[ai]] >= MIN_AGGREGATED_REPLICAS)
                 ][:ACCELERATORS_TRIED]
    else:
        tried = list(range(n))
    if not tried:
        return []
    n = len(tried)  # engines are built for the accelerators tried only (local index li, catalog index ai)
    common = dict(arch=a, accs=[accs[ai] for ai in tried], runtime=s.runtime, weights=s.weights, compute=s.compute_precision,
                  kv_precision=s.kv_precision, isl=float(s.input_tokens), calibrations=s.calibrations,
                  disaggregated=True)
    p_ep, p_dpa = zip(*(_pool_mechanisms(s, tp, "prefill") for tp in pre_tps), strict=True)
    if stated is not None:
        p_ep, p_dpa = (min(stated.prefill.expert_parallel, pre_tps[0]),), (stated.prefill.data_parallel_attention,)
    pre, pmem, notes = make_engines(**common, tp=np.array(pre_tps), pp=np.ones(len(pre_tps)), osl=1.0,
                                    ep=np.array(p_ep), dpa=np.array(p_dpa, dtype=bool))
    d_rows = [(tp, m) for tp in dec_tps for m in mtps]
    d_ep, d_dpa = zip(*(_pool_mechanisms(s, tp, "decode") for tp, _m in d_rows), strict=True)
    if stated is not None:
        d_ep = tuple(min(stated.decode.expert_parallel, tp) for tp, _m in d_rows)
        d_dpa = tuple(stated.decode.data_parallel_attention for _ in d_rows)
    dec, dmem, _ = make_engines(**common, tp=np.array([r[0] for r in d_rows]), pp=np.ones(len(d_rows)),
                                osl=float(s.output_tokens), ep=np.array(d_ep), dpa=np.array(d_dpa, dtype=bool),
                                mtp=np.array([r[1] for r in d_rows], dtype=bool), mtp_accepted=s.mtp_accepted,
                                prompt_share=0.0)
    ctx_seq = memory.kv_bytes_per_sequence(a, tokens=s.context_length, kv_precision=s.kv_precision)
    gps = cat.gpus_per_server[tried]

    def fits(mem, tps, dpas):
        tp = np.array(tps, dtype=float)[None, :]
        split = np.where(np.array(dpas, dtype=bool)[None, :], 1.0, memory.kv_split(a, tp))
        shape = (n, len(tps))
        ok = np.broadcast_to(mem["fits"], shape) & (np.broadcast_to(mem["kv_pool_bytes"], shape) >= ctx_seq / split)
        if stated is None:
            ok = ok & (tp <= gps[:, None])
        return ok & np.isfinite(np.broadcast_to(np.asarray(pre.flops_s if mem is pmem else dec.flops_s), shape))

    p_fit = fits(pmem, pre_tps, p_dpa)
    d_fit = fits(dmem, [r[0] for r in d_rows], d_dpa)
    # candidate (accelerator, prefill layout index, decode layout index) triples
    ai_l, li_l, ip_l, id_l = [], [], [], []
    for li, ai in enumerate(tried):
        mtp = s.mtp if s.mtp is not None else (bool(agg["mtp"][best[ai][1]]) if best[ai] is not None and can_mtp
                                               else False)
        if stated is not None:
            pairs = [(0, d_rows.index((dec_tps[0], mtp)))]
        else:
            fit_tps = [tp for j, tp in enumerate(pre_tps) if p_fit[li, j]]
            dec_ok = [tp for j, (tp, m) in enumerate(d_rows) if m == mtp and d_fit[li, j]]
            if not fit_tps or not dec_ok:
                continue
            t0 = min(min(fit_tps), min(dec_ok))
            shapes = [(t0, t0), (t0, 2 * t0), (2 * t0, 2 * t0)]
            pairs = [(pre_tps.index(p), d_rows.index((d, mtp))) for p, d in shapes
                     if p in fit_tps and d in dec_ok]
        for ip, jd in pairs:
            if p_fit[li, ip] and d_fit[li, jd]:
                ai_l.append(ai)
                li_l.append(li)
                ip_l.append(ip)
                id_l.append(jd)
    if not ai_l:
        return []
    ai_k, li_k, ip_k, id_k = np.array(ai_l), np.array(li_l), np.array(ip_l), np.array(id_l)
    e_p = _compress(pre, (li_k, ip_k), (n, len(pre_tps)))
    e_d = _compress(dec, (li_k, id_k), (n, len(d_rows)))
    tp_p = np.array(pre_tps, dtype=float)[ip_k]
    tp_d = np.array([d_rows[j][0] for j in id_k], dtype=float)
    osl = float(s.output_tokens)
    consts = lambda key, default: np.array([notes[li]["constants_values"].get(key, default) for li in li_k],  # noqa: E731
                                           dtype=float)
    handoff = consts("disagg_handoff_s", 0.0)
    eff = consts("kv_transfer_efficiency", 1.0)
    kv = (s.input_tokens * kv_cache_bytes_per_token(a, kv_precision=s.kv_precision)
          + kv_fixed_bytes_per_sequence(a, kv_precision=s.kv_precision))
    domain = np.array([scale_up_domain(accs[ai]) for ai in ai_k], dtype=float)
    nvlink_bw = np.array([link(accs[ai], 2)[0] for ai in ai_k], dtype=float)

    def xfer(gpus):
        bw = np.where((domain > 8) & (gpus <= domain), nvlink_bw, NIC_GB_S)
        return kv / (tp_p * bw * 1e9 * eff)

    with np.errstate(invalid="ignore", divide="ignore", over="ignore"):
        ttft1_p, _ = e_p.unloaded()
        _, tpot1 = e_d.unloaded()
        step1 = e_d.steady(np.zeros_like(tp_d), parts=False)["T"]
        x0 = xfer(np.where(domain > 8, 0.0, np.inf))  # before sizing: within the domain where there is one
        if s.ttft_ms or s.tpot_ms:
            ttft_t = np.full_like(tp_p, s.ttft_ms / 1e3 if s.ttft_ms else np.inf)
            tpot_t = np.full_like(tp_p, s.tpot_ms / 1e3 if s.tpot_ms else np.inf)
        else:
            # the targets the accelerator's best aggregated layout is held to (one plan, one bar); a
            # stated layout on an accelerator without one: the defaults on its own unloaded latencies
            ref = [best[ai] for ai in ai_k]
            ttft_t = np.array([agg["ttft_target"][r] if r is not None else np.nan for r in ref])
            tpot_t = np.array([agg["tpot_target"][r] if r is not None else np.nan for r in ref])
            ttft_t = np.where(np.isfinite(ttft_t), ttft_t, DEFAULT_TTFT_SLACK * (ttft1_p + x0 + handoff + step1))
            tpot_t = np.where(np.isfinite(tpot_t), tpot_t, DEFAULT_TPOT_SLACK * tpot1)
        lam_d = e_d.rate_meeting(np.full_like(tp_d, np.inf), tpot_t)
        step_d = e_d.steady(lam_d, parts=False)["T"]
        budget = ttft_t - x0 - handoff - np.where(np.isfinite(step_d), step_d, step1)
        lam_p = e_p.rate_meeting(budget, np.full_like(tp_p, np.inf))
        rps, clients = float(s.requests_per_second), float(s.concurrency)
        cycle_t = (np.where(np.isfinite(ttft_t), ttft_t, ttft1_p + x0 + handoff + step1)
                   + (osl - 1.0) * np.where(np.isfinite(tpot_t), tpot_t, tpot1))
        load = np.maximum(rps, clients / cycle_t)
        sized = (lam_p > 0) & (lam_d > 0)
        P = np.where(sized, np.maximum(np.ceil(load / np.where(sized, lam_p, 1.0)), 1.0), 1.0)
        D = np.where(sized, np.maximum(np.ceil(load / np.where(sized, lam_d, 1.0)), 1.0), 1.0)
        if stated is not None:
            P = np.full_like(P, float(stated.prefill.workers))
            D = np.full_like(D, float(stated.decode.workers))
        for _ in range(EXTRA_WORKER_STEPS if stated is None else 0):
            # at the sized load (open loop): a pool still above its target gets one worker more
            chk = _at(e_p, e_d, load, P, D, xfer(P * tp_p + D * tp_d), handoff, osl)
            short_p = sized & ~((chk["ttft_p95"] <= ttft_t * (1 + 1e-6)) & chk["prefill_stable"])
            short_d = sized & ~((chk["tpot_p95"] <= tpot_t * (1 + 1e-6)) & chk["decode_stable"])
            if not (short_p | short_d).any():
                break
            P, D = P + short_p, D + short_d
        x_final = xfer(P * tp_p + D * tp_d)
        cycle1 = ttft1_p + x_final + handoff + step1 + (osl - 1.0) * tpot1  # one request alone
        op = _operating_point(e_p, e_d, P, D, x_final, handoff, osl, rps, clients, ttft_t, tpot_t, cycle1)
        count = P * tp_p + D * tp_d
        meets = (sized | (stated is not None)) & op["ok"] & (op["ttft_p95"] <= ttft_t * (1 + 1e-6)) \
            & (op["tpot_p95"] <= tpot_t * (1 + 1e-6)) & (count <= MAX_GPUS)
    out = []
    pre_mem, dec_mem = _mem_grid(pmem, n, len(pre_tps)), _mem_grid(dmem, n, len(d_rows))
    for k, (ai, li) in enumerate(zip(ai_k.tolist(), li_k.tolist(), strict=True)):
        if not math.isfinite(count[k]) or (stated is None and (count[k] > MAX_GPUS or not sized[k])):
            continue  # searched, a split no pool of which meets its target at any rate has no size to offer
        ip, jd = int(ip_k[k]), int(id_k[k])
        price = float(cat.price_gpu_hour_usd[ai]) * count[k]
        out.append(DisaggCandidate(
            ai=ai, accelerator_id=accs[ai].id, accelerator=accs[ai].model,
            prefill={"workers": int(P[k]), "tensor_parallel": int(tp_p[k]), "expert_parallel": int(p_ep[ip]),
                     "data_parallel_attention": bool(p_dpa[ip])},
            decode={"workers": int(D[k]), "tensor_parallel": int(tp_d[k]), "expert_parallel": int(d_ep[jd]),
                    "data_parallel_attention": bool(d_dpa[jd])},
            speculative="mtp" if d_rows[jd][1] else "none", count=int(count[k]), meets=bool(meets[k]),
            op={key: float(v[k]) for key, v in op.items()}, targets=(float(ttft_t[k]), float(tpot_t[k])),
            price_per_hour=price if math.isfinite(price) else None,
            memory={"prefill": {k: float(v[li, ip]) for k, v in pre_mem.items()},
                    "decode": {k: float(v[li, jd]) for k, v in dec_mem.items()}},
            notes=notes[li]))
    if stated is not None:
        return sorted(out, key=_order)
    return _best_per_accelerator([c for c in out if _beats_aggregated(c, best, agg)])


def _beats_aggregated(c: DisaggCandidate, best: list, agg: dict) -> bool:
    """A split is worth pricing only where it needs fewer GPUs of its accelerator than the aggregated pick
    meeting the same targets, or where that pick misses them: with as many GPUs or more of one accelerator
    it costs as much or more by the hour, with a second pool, a router and a KV transfer on top."""
    b = best[c.ai]
    if b is None or not agg["meets"][b]:
        return True
    return c.count < float(agg["count"][b])


MEMORY_KEYS = ("weights_bytes", "kv_pool_bytes", "kv_per_seq_bytes", "activations_bytes", "workspace_bytes", "n_max",
               "memory_fraction")


def _mem_grid(mem: dict, n: int, width: int) -> dict:
    """The memory figures a candidate reports, each as an (n, width) grid (broadcast once, read per candidate)."""
    return {k: np.broadcast_to(np.asarray(mem[k], dtype=float), (n, width)) for k in MEMORY_KEYS if k in mem}


def _order(c: DisaggCandidate):
    latency = c.op["ttft"] + c.op["tpot"] * 1.0  # request latency ties broken below by GPUs
    return (not c.meets, c.price_per_hour if c.price_per_hour is not None else math.inf, c.count, latency)


def _best_per_accelerator(cands: list[DisaggCandidate]) -> list[DisaggCandidate]:
    best: dict[int, DisaggCandidate] = {}
    for c in cands:
        if c.ai not in best or _order(c) < _order(best[c.ai]):
            best[c.ai] = c
    return sorted(best.values(), key=_order)


def _accelerator_order(agg: dict, best: list, cat: CatalogArrays) -> list[int]:
    """Accelerators with a fitting layout, in the order of their aggregated picks (meets the targets,
    then price per hour where known, then GPUs): the first ACCELERATORS_TRIED are tried."""
    rows = [b for b in best if b is not None]
    def price(b):
        p = float(cat.price_gpu_hour_usd[b[0]]) * float(agg["count"][b])
        return p if math.isfinite(p) else math.inf
    rows.sort(key=lambda b: (not agg["meets"][b], price(b), agg["count"][b]))
    return [b[0] for b in rows]


def _best_aggregated(agg: dict, cat: CatalogArrays) -> list:
    """Per accelerator the (accelerator, layout) index of its aggregated pick: the fewest GPUs meeting the
    targets, else the fewest GPUs that keep the queue stable; None where no layout fits."""
    usable = agg["usable"] & agg["fits"]
    out = []
    for ai in range(len(cat.accelerators)):
        cols = np.nonzero(usable[ai])[0]
        if not len(cols):
            out.append(None)
            continue
        meets = agg["meets"][ai, cols]
        pool = cols[meets] if meets.any() else cols
        j = pool[np.argmin(agg["count"][ai, pool])]
        out.append((ai, int(j)))
    return out


def _closed(e_p, e_d, P, D, x, h, osl, clients, hi):
    """Closed loop of `clients`: the rate with rate x (TTFT + (osl - 1) x TPOT) = clients (bisection)."""
    def fewer(lam):
        p = e_p.steady(lam / P, parts=False)
        d = e_d.steady(lam / D, parts=False)
        cycle = p["ttft"] + x + h + d["T"] + (osl - 1.0) * d["tpot"]
        return p["stable"] & d["stable"] & (lam * cycle <= clients)
    return bisect_largest(fewer, hi)


def _at(e_p, e_d, lam, P, D, x, h, osl, queued=0.0):
    p = e_p.steady(lam / P)
    d = e_d.steady(lam / D)
    tail = x + h + d["T"]
    return {"ttft": p["ttft"] + tail + queued, "ttft_p50": p["ttft_p50"] + tail + queued,
            "ttft_p95": p["ttft_p95"] + tail + queued, "ttft_p99": p["ttft_p99"] + tail + queued,
            "tpot": d["tpot"], "tpot_p95": d["tpot_p95"], "tpot_p99": d["tpot_p99"], "T": d["T"],
            "rate": lam + 0.0 * d["T"], "stable": p["stable"] & d["stable"],
            "prefill_stable": p["stable"], "decode_stable": d["stable"],
            "n_running": d["n_running"], "prefill_n_running": p["n_running"],
            "compute_s": d["compute_s"], "memory_s": d["memory_s"], "comm_s": d["comm_s"],
            "prefill_compute_s": p["compute_s"], "prefill_memory_s": p["memory_s"]}


def _operating_point(e_p, e_d, P, D, x, h, osl, rps, clients, ttft_t, tpot_t, cycle1) -> dict:
    """The binding one of the open loop at the peak rate and the closed loop of the stated clients,
    as search_serving._operating_point chooses for aggregated replicas."""
    o = _at(e_p, e_d, np.full_like(P, rps), P, D, x, h, osl)
    if (clients / cycle1 <= rps).all():
        # the clients cannot send faster than at unloaded latencies: a closed loop at or below the peak
        # rate is lighter on every figure, so the open loop binds (no bisection needed)
        c = None
    else:
        c = _closed_point(e_p, e_d, P, D, x, h, osl, clients)
    score = lambda z: np.where(np.isnan(s := np.maximum(z["ttft_p95"] / ttft_t, z["tpot_p95"] / tpot_t)),  # noqa: E731
                               0.0, s)
    so = np.where(o["stable"], score(o), np.inf)
    if c is None:
        closed = np.zeros_like(so, dtype=bool)
        op = dict(o)
    else:
        sc = np.where(c["stable"], score(c), np.inf)
        closed = (sc > so) | ((sc == so) & (c["rate"] >= o["rate"]))
        op = {k: np.where(closed, c[k], o[k]) for k in o}
    op["closed_loop"] = closed.astype(float)
    op["kv_transfer"] = x + 0.0 * P
    op["handoff"] = h + 0.0 * P
    op["prefill_workers"], op["decode_workers"] = P + 0.0, D + 0.0
    op["in_flight"] = op["rate"] * (op["ttft"] + (osl - 1.0) * op["tpot"])
    op["ok"] = o["stable"] & np.isfinite(op["ttft_p95"]) & np.isfinite(op["tpot_p95"])
    return op


def _closed_point(e_p, e_d, P, D, x, h, osl, clients) -> dict:
    """The closed loop's operating point, with the wait of clients the pools cannot admit (Little's law);
    bracketed by the pools' highest stable rates, as serving_disagg.evaluate_disaggregated does."""
    hi = np.minimum(P * e_p.max_stable_rate(), D * e_d.max_stable_rate())
    lam_c = _closed(e_p, e_d, P, D, x, h, osl, clients, hi)
    c0 = _at(e_p, e_d, lam_c, P, D, x, h, osl)
    cycle = c0["ttft"] + (osl - 1.0) * c0["tpot"]
    queued = np.maximum(clients / np.maximum(lam_c, 1e-12) - cycle, 0.0)
    queued = np.where(queued > 1e-3 * cycle, queued, 0.0)
    c = _at(e_p, e_d, lam_c, P, D, x, h, osl, queued)
    c["stable"] = c["stable"] & (lam_c > 0)
    return c


def bottleneck_of(c: DisaggCandidate) -> str:
    """What limits the decode pool (the pool the throughput comes from) at the operating point."""
    comp, mem, comm = c.op["compute_s"], c.op["memory_s"], c.op["comm_s"]
    if comm > max(comp, mem):
        return "interconnect"
    return "compute" if comp >= mem else "memory_bandwidth"


def layout_of(c: DisaggCandidate, with_mechanisms: bool) -> dict:
    """The layout a disaggregated candidate shows (the API's `layout`): both pools under
    `disaggregated`; tensor_parallel is the widest pool's group (what a server must hold) and replicas
    the engines of both pools."""
    mech = ({"expert_parallel": c.decode["expert_parallel"],
             "data_parallel_attention": c.decode["data_parallel_attention"], "speculative": c.speculative}
            if with_mechanisms else {})
    return {"tensor_parallel": max(c.prefill["tensor_parallel"], c.decode["tensor_parallel"]),
            "pipeline_parallel": 1, "replicas": c.prefill["workers"] + c.decode["workers"], **mech,
            "disaggregated": {"prefill": dict(c.prefill), "decode": dict(c.decode)}}


def layout_text(c: DisaggCandidate) -> Msg:
    p, d = c.prefill, c.decode
    return Msg("disaggregated: prefill {pw} x TP{pt} + decode {dw} x TP{dt}", pw=p["workers"], pt=p["tensor_parallel"],
               dw=d["workers"], dt=d["tensor_parallel"])
