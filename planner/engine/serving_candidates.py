"""Serving candidates as the result shows them: rows, latency/throughput figures, load curves, misfits, ranking."""

from __future__ import annotations

import bisect
import math

import numpy as np

from catalog.domain.messages import Msg

from . import memory, search

GIB = memory.GIB
CURVE_POINTS = (0.05, 0.15, 0.3, 0.45, 0.6, 0.7, 0.8, 0.88, 0.94, 0.98)  # shares of the highest stable rate


def _fmt_gib(b: float) -> str:
    return Msg("{b:,.1f} GiB", b=b / GIB)


def _g(res, key, ai, li):
    return float(np.asarray(res[key])[ai, li])


def candidate(res, cat, ai: int, li: int, s) -> dict:
    acc = cat.accelerators[ai]
    op = res["op"]
    count = _g(res, "count", ai, li)
    price = cat.price_gpu_hour_usd[ai] * count
    tp, pp = int(res["tp"][li]), int(res["pp"][li])
    fin = lambda v: v if math.isfinite(v) else None  # noqa: E731
    return {
        "accelerator_id": acc.id, "accelerator": acc.model, "count": int(count) if math.isfinite(count) else None,
        "layout": {"tensor_parallel": tp, "pipeline_parallel": pp,
                   "replicas": int(_g(res, "replicas", ai, li)) if math.isfinite(_g(res, "replicas", ai, li)) else None,
                   **mechanisms(res, li)},
        "fits": bool(res["fits"][ai, li]), "meets_target": bool(res["meets"][ai, li]),
        "batch_per_replica": fin(round(float(op["n_running"][ai, li]), 1)),
        "max_concurrent_sequences_per_replica": int(min(res["n_kv"][ai, li], 1e9)),
        **latency_figures(op, ai, li),
        **throughput_figures(op, ai, li, s, tp * pp),
        "max_rps_per_replica_meeting_targets": fin(_g(res, "rate_meeting", ai, li)),
        "bottleneck": str(res["bottleneck"][ai, li]),
        "sustained_rps_per_replica": fin(float(op["rate"][ai, li])),
        "kv_bytes_per_gpu": fin(float(op["n_running"][ai, li]) * float(res["mem"]["kv_per_seq_bytes"][ai, li])),
        "kv_memory_left_bytes_per_gpu": float(res["mem"]["kv_pool_bytes"][ai, li]),
        "cost_usd_per_hour": float(price) if math.isfinite(price) else None,
    }


def mechanisms(res, li: int) -> dict:
    """The MoE mechanisms a searched layout was evaluated with (search_serving.serving_variants): expert
    parallel degree, data-parallel attention, speculative decoding ("mtp" or "none"); nothing for a
    search without them (a dense model's layouts stay TP x PP x replicas)."""
    if not res.get("with_mechanisms"):
        return {}
    return {"expert_parallel": int(res["ep"][li]), "data_parallel_attention": bool(res["dpa"][li]),
            "speculative": "mtp" if bool(res["mtp"][li]) else "none"}


def latency_figures(op, ai: int, li: int) -> dict:
    """TTFT and TPOT of one operating point in ms: mean, median, p95, p99 (None where unbounded)."""
    def ms(key):
        v = float(op[key][ai, li]) * 1e3
        return v if math.isfinite(v) else None
    return {"ttft_ms": ms("ttft"), "ttft_p50_ms": ms("ttft_p50"), "ttft_p95_ms": ms("ttft_p95"),
            "ttft_p99_ms": ms("ttft_p99"), "tpot_ms": ms("tpot"), "tpot_p50_ms": ms("tpot"), "tpot_p95_ms": ms("tpot_p95"),
            "tpot_p99_ms": ms("tpot_p99")}


def operating_point_state(rate: float, tpot_s: float, ttft_s: float, in_flight: float) -> tuple[bool, bool]:
    """(a decode step is priced, the load has a steady state). An overloaded layout's queue grows without bound: no
    finite TTFT or requests in flight, and it does not serve the offered rate, so no sustained throughput either."""
    ok = math.isfinite(rate) and math.isfinite(tpot_s) and tpot_s > 0
    return ok, ok and math.isfinite(in_flight) and math.isfinite(ttft_s)


def throughput_figures(op, ai: int, li: int, s, gpus: int) -> dict:
    """Throughput of one operating point: every replica serves the same share, so per GPU deployed =
    one replica's rate x tokens / its GPUs; per user = 1 / TPOT; in flight = rate x mean latency."""
    rate, T = float(op["rate"][ai, li]), float(op["tpot"][ai, li])
    ok, steady = operating_point_state(rate, T, float(op["ttft"][ai, li]), float(op["in_flight"][ai, li]))
    return {
        "output_tokens_per_s_per_gpu": rate * s.output_tokens / gpus if steady else None,
        "total_tokens_per_s_per_gpu": rate * (s.input_tokens + s.output_tokens) / gpus if steady else None,
        "output_tokens_per_s_per_user": 1.0 / T if ok else None,
        "in_flight_requests_per_replica": float(op["in_flight"][ai, li]) if steady else None,
        "load_model": ("closed_loop" if float(op["closed_loop"][ai, li]) == 1.0 else "open_loop") if ok else None,
    }


def curve(res, ai: int, li: int, s) -> list[dict]:
    """Throughput-latency points of one replica as load grows to its highest stable rate."""
    eng = res["engine"]
    lam_max = _g(res, "max_stable_rate", ai, li)
    if not (lam_max > 0 and math.isfinite(lam_max)):
        return []
    def pick(x):
        x = np.asarray(x, dtype=float)
        if x.ndim == 0:
            return x
        if x.ndim == 1:  # a layouts-only array broadcasts along the last axis
            return x[min(li, x.shape[0] - 1)]
        return x[min(ai, x.shape[0] - 1), min(li, x.shape[1] - 1)]
    one = {f: pick(getattr(eng, f)) for f in eng.__dataclass_fields__ if getattr(eng, f) is not None}
    e1 = type(eng)(**one)
    lam = lam_max * np.array(CURVE_POINTS)
    st = e1.steady(lam)
    gpus = int(res["tp"][li]) * int(res["pp"][li])
    return [{"rps_per_replica": round(float(lam[k]), 4),
             "output_tokens_per_s_per_gpu": round(float(lam[k]) * s.output_tokens / gpus, 2),
             "ttft_p95_ms": round(float(st["ttft_p95"][k]) * 1e3, 2), "tpot_p50_ms": round(float(st["tpot"][k]) * 1e3, 3),
             "tpot_p95_ms": round(float(st["tpot_p95"][k]) * 1e3, 3)} for k in range(len(lam))
            if np.isfinite(st["ttft_p95"][k])]


def not_fitting(spec, res, cat) -> list[dict]:
    p = spec.precision
    out = []
    fits_any = res["fits"].any(axis=1)
    need_one = res["weights_bytes"] + res["kv_seq"]
    fitting = sorted((x for j, x in enumerate(cat.accelerators) if fits_any[j]), key=lambda x: x.memory_gib)
    fitting_mem = [x.memory_gib for x in fitting]
    for ai, acc in enumerate(cat.accelerators):
        if fits_any[ai]:
            continue
        if not np.isfinite(cat.peak_tflops[ai]):
            out.append({"accelerator_id": acc.id, "accelerator": acc.model,
                        "reason": Msg("no known {compute} throughput", compute=p.compute),
                        "remedies": [Msg("choose another compute precision")]})
            continue
        out.append({"accelerator_id": acc.id, "accelerator": acc.model,
                    "reason": Msg("weights + one {ctx}-token sequence need {need} (+ runtime overhead); the layouts "
                                  "tried (tensor parallel <= {gps} per server, pipeline <= 8) of {mem:g} GiB GPUs "
                                  "cannot hold them", ctx=spec.serving.context_length, need=_fmt_gib(need_one),
                                  gps=search.gpus_per_server(acc), mem=acc.memory_gib),
                    "remedies": _memory_remedies(spec, fitting, fitting_mem, acc)})
    return out


def _memory_remedies(spec, fitting, fitting_mem, acc) -> list:
    p = spec.precision
    remedies = []
    if p.weights in ("fp32", "bf16", "fp16"):
        remedies.append(Msg("quantise weights to fp8, int8 or int4 (AWQ/GPTQ)"))
    elif p.weights in ("fp8", "int8"):
        remedies.append(Msg("quantise weights to int4 (or fp4 on Blackwell)"))
    if p.kv_cache in ("fp32", "bf16", "fp16"):
        remedies.append(Msg("fp8 KV cache"))
    remedies.append(Msg("a shorter context_length"))
    remedies.append(Msg("more GPUs: tensor parallel within a server, pipeline parallel across servers"))
    bigger = fitting[bisect.bisect_right(fitting_mem, acc.memory_gib):][:5]
    if bigger:
        remedies.append(Msg("a larger GPU: {ids}", ids=", ".join(x.id for x in bigger)))
    return remedies


# latencies closer than this are the same to a user: the simpler layout (fewer mechanisms) wins
LATENCY_TIE_S = 1e-4


def _rank(res, cat, output_tokens: int):
    """Candidates ordered by: meets the targets, price, GPUs, then the time a request takes to
    complete (TTFT + output tokens x TPOT: what a user waits for, where TTFT + TPOT let a layout
    with a slow decode, e.g. TP1 x PP8, win by a prefill a few ms shorter), then the fewest
    mechanisms (DPA, MTP) among layouts that are equally fast."""
    ai, li = np.nonzero(res["usable"] & res["fits"])
    if not len(ai):
        return ai, li, None, None
    op = res["op"]
    latency = op["ttft"][ai, li] + max(output_tokens, 1) * op["tpot"][ai, li]
    latency = np.where(np.isfinite(latency), np.round(latency / LATENCY_TIE_S), np.inf)
    mechanisms = res["dpa"][li].astype(int) + res["mtp"][li].astype(int)
    count = np.where(np.isfinite(res["count"][ai, li]), res["count"][ai, li], 1e12)
    price = cat.price_gpu_hour_usd[ai] * count
    meets = res["meets"][ai, li]
    price_key = np.where(np.isfinite(price), price, np.inf)
    order = np.lexsort((mechanisms, latency, count, price_key, ~meets))
    priced = np.isfinite(price)
    rec_key = np.lexsort((mechanisms, latency, price_key, count, ~priced, ~meets))
    return ai, li, order, rec_key
