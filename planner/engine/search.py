"""Candidate search: every accelerator x GPU count (1..1024) x parallel layout, vectorised.

Memory per GPU depends only on the layout, so it is computed once per layout and compared
against every accelerator's capacity in one broadcast; time depends on the accelerator's
peak and the efficiency preset. See docs/SIZING.md for the ranking rules.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from . import compute, memory
from .architecture import ModelArch
from .calibration import NO_CALIBRATIONS, Calibrations
from .hardware import AcceleratorSpec
from .precision import BYTES_PER_VALUE, peak_tflops, weight_bytes_per_param
from .serving_layout import bottleneck, make_engines
from .serving_model import DEFAULT_TPOT_SLACK, DEFAULT_TTFT_SLACK

GIB = memory.GIB
MAX_GPUS = 1024
COUNTS = np.array(list(range(1, 8)) + list(range(8, MAX_GPUS + 1, 8)), dtype=np.int64)
TP_OPTIONS = (1, 2, 4, 8)
PP_OPTIONS = (1, 2, 4, 8, 16, 32, 64)
SERVE_PP_OPTIONS = (1, 2, 4, 8)
DEFAULT_TRAINING_TARGET_HOURS = 30 * 24
CKPT_CODES = {"none": 0, "selective": 1, "full": 2}
CKPT_NAMES = {v: k for k, v in CKPT_CODES.items()}  # without a deadline, prefer runs of at most 30 days


def gpus_per_server(acc: AcceleratorSpec) -> int:
    """Typical GPUs per server for the form factor (HGX/OAM baseboards: 8)."""
    ff = acc.form_factor.lower()
    if "tpu" in ff:
        return 8 if "v5e" in acc.id else 4
    if "superchip" in ff:
        return 4
    return 8


@dataclass(frozen=True, kw_only=True)
class CatalogArrays:
    accelerators: tuple[AcceleratorSpec, ...]
    capacity_bytes: np.ndarray
    bandwidth_gb_s: np.ndarray
    peak_tflops: np.ndarray  # NaN where the compute format's peak is unknown
    peak_column: tuple[str, ...]
    mfu_base: np.ndarray
    mfu_base_explain: tuple[str, ...]
    gpus_per_server: np.ndarray
    price_gpu_hour_usd: np.ndarray  # NaN where unknown


def catalog_arrays(accelerators: Sequence[AcceleratorSpec], *, compute_precision: str,
                   gpus_per_server_pin: int | None = None) -> CatalogArrays:
    peaks, cols, bases, whys = [], [], [], []
    for a in accelerators:
        p, col = peak_tflops(a, compute_precision)
        peaks.append(np.nan if p is None else p)
        cols.append(col)
        base, why = compute.MFU_BASE[compute.generation_of(a.architecture)]
        bases.append(base)
        whys.append(why)
    return CatalogArrays(
        accelerators=tuple(accelerators),
        capacity_bytes=np.array([a.memory_gib * GIB for a in accelerators], dtype=float),
        bandwidth_gb_s=np.array([a.memory_bandwidth_gb_s for a in accelerators], dtype=float),
        peak_tflops=np.array(peaks, dtype=float),
        peak_column=tuple(cols),
        mfu_base=np.array(bases, dtype=float),
        mfu_base_explain=tuple(whys),
        gpus_per_server=np.array([gpus_per_server_pin or gpus_per_server(a) for a in accelerators], dtype=np.int64),
        price_gpu_hour_usd=np.array(
            [np.nan if a.cloud_price_per_gpu_hour_usd is None else a.cloud_price_per_gpu_hour_usd for a in accelerators],
            dtype=float,
        ),
    )


# ----------------------------------------------------------------------------------- training


@dataclass(frozen=True, kw_only=True)
class TrainingInputs:
    arch: ModelArch
    kind: str
    method: str
    weights: str
    compute_precision: str
    optimizer: str
    seq: int
    micro_batch: int
    global_batch_tokens: int | None
    checkpointing: str | None  # None: selective, or full where selective does not fit
    sequence_parallel: bool
    vpp: int
    tp_pin: int | None
    pp_pin: int | None
    zero_pin: int | None
    count_pin: int | None
    trainable_params: float
    model_flops: float
    deadline_hours: float | None
    mfu_pin: float | None
    vision: bool = False  # classic (non-LLM) training: vision efficiency preset


def training_layouts(t: TrainingInputs) -> dict[str, np.ndarray]:
    """All (count, tp, pp, zero) combinations, in preference order inside each count:
    least model parallelism first, then lowest ZeRO stage (less communication)."""
    a = t.arch
    counts = np.array([t.count_pin]) if t.count_pin else COUNTS
    tps = (t.tp_pin,) if t.tp_pin else TP_OPTIONS
    pps = (t.pp_pin,) if t.pp_pin else PP_OPTIONS
    zeros = (t.zero_pin,) if t.zero_pin is not None else (0, 1, 2, 3)
    ckpts = (CKPT_CODES[t.checkpointing],) if t.checkpointing else (CKPT_CODES["selective"], CKPT_CODES["full"])
    if not a.is_transformer:
        tps, pps = (1,), (1,)
        ckpts = ckpts[:1]
    max_dp = None
    if t.global_batch_tokens:
        max_dp = max(1, t.global_batch_tokens // (t.seq * t.micro_batch))
    rows = []
    for c in counts.tolist():
        opts = []
        for tp in tps:
            if a.is_transformer and a.attention_heads % tp:
                continue
            for pp in pps:
                if c % (tp * pp) or (a.is_transformer and pp > a.layers):
                    continue
                dp = c // (tp * pp)
                if max_dp is not None and dp > max_dp:
                    continue
                for z in zeros:
                    if z > 0 and dp == 1 and t.zero_pin is None:
                        continue  # ZeRO shards across data-parallel ranks: nothing to shard
                    for ck in ckpts:
                        # Megatron practice: more parallelism before full recomputation (+33 % compute).
                        opts.append((ck, tp * pp, z, tp, c, pp, dp))
        opts.sort()
        rows.extend((c, tp, pp, dp, z, ck) for ck, _, z, tp, c, pp, dp in opts)
    arr = np.array(rows, dtype=np.int64).reshape(-1, 6)
    return {"count": arr[:, 0], "tp": arr[:, 1], "pp": arr[:, 2], "dp": arr[:, 3], "zero": arr[:, 4],
            "ckpt": arr[:, 5]}


def training_memory(t: TrainingInputs, lay: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    a = t.arch
    tp, pp, dp, zero = (lay[k].astype(float) for k in ("tp", "pp", "dp", "zero"))
    if a.is_transformer:
        params_gpu = memory.params_per_gpu(a, tp=tp, pp=pp)
        trainable_gpu = params_gpu if t.method == "full" else t.trainable_params / (tp * pp)
    else:
        params_gpu = np.full_like(tp, float(a.params))
        trainable_gpu = params_gpu
    frozen_pp = weight_bytes_per_param(t.weights)
    train_w_pp = BYTES_PER_VALUE[t.weights] if t.method == "full" else 2.0  # adapters in bf16
    grad_pp = memory.grad_bytes_per_param(weights=t.weights if t.method == "full" else "bf16")
    opt_pp = memory.optimizer_bytes_per_param(optimizer=t.optimizer, weights=t.weights if t.method == "full" else "bf16")
    w, g, o = memory.training_model_state_bytes(
        params_gpu=params_gpu, trainable_gpu=trainable_gpu, frozen_weight_bytes_pp=frozen_pp,
        trainable_weight_bytes_pp=train_w_pp, grad_bytes_pp=grad_pp, optimizer_bytes_pp=opt_pp,
        zero_stage=zero, dp=dp,
    )
    adapters = np.zeros_like(w)
    if t.method != "full":
        # Report adapter states separately; they were counted in w/g/o as the trainable part.
        adapters = trainable_gpu * (train_w_pp + grad_pp / np.where(zero >= 2, dp, 1.0)
                                    + opt_pp / np.where(zero >= 1, dp, 1.0))
        base_frozen = (params_gpu - trainable_gpu) * frozen_pp
        w = np.where(zero >= 3, base_frozen / dp, base_frozen)
        g = np.zeros_like(w)
        o = np.zeros_like(w)
    if a.is_transformer:
        act = np.zeros_like(tp)
        for code in np.unique(lay["ckpt"]).tolist():
            here = lay["ckpt"] == code
            act = np.where(here, memory.training_activation_bytes(
                a, seq=t.seq, micro_batch=t.micro_batch, tp=tp, pp=pp, vpp=t.vpp, checkpointing=CKPT_NAMES[code],
                sequence_parallel=t.sequence_parallel, compute_precision=t.compute_precision,
            ), act)
    else:
        # Vision nets: activations ~ proportional to forward FLOPs; ~1 byte per 25 FLOPs per sample
        # is an assumption that gives ~0.3 GiB/image for ResNet-50 at 224 px in fp16.
        act = np.full_like(tp, (a.flops_per_sample or 0.0) / 25.0 * t.micro_batch)
    act = np.broadcast_to(act, tp.shape).astype(float)
    tensors = w + g + o + adapters + act
    over = memory.overhead_bytes(tensors=tensors, mode="training")
    return {"weights": w, "gradients": g, "optimizer": o, "adapters": adapters, "activations": act,
            "overhead": over, "total": tensors + over}


def _first_fit_per_count(total: np.ndarray, tp: np.ndarray, starts: np.ndarray, cat: CatalogArrays) -> np.ndarray:
    """Index of the first layout (in preference order) that fits, per accelerator and count; -1 if none.

    Within one count the first layout with memory <= capacity is where the running minimum of
    memory first drops to <= capacity; the running minimum never increases, so a binary search
    answers all accelerators at once without materialising the accelerators x layouts matrix.
    """
    n_acc = len(cat.accelerators)
    ends = np.append(starts[1:], len(total))
    first = np.full((n_acc, len(starts)), -1, dtype=np.int64)
    usable = np.isfinite(cat.peak_tflops)
    for g in np.unique(cat.gpus_per_server):
        rows = np.nonzero((cat.gpus_per_server == g) & usable)[0]
        if not len(rows):
            continue
        mem = np.where(tp <= g, total, np.inf)
        neg_cap = -cat.capacity_bytes[rows]
        for c, (s, e) in enumerate(zip(starts, ends, strict=True)):
            running_min = np.minimum.accumulate(mem[s:e])
            j = np.searchsorted(-running_min, neg_cap, side="left")
            first[rows, c] = np.where(j < e - s, s + j, -1)
    return first


def search_training(t: TrainingInputs, cat: CatalogArrays) -> dict:
    lay = training_layouts(t)
    n_lay = len(lay["count"])
    if n_lay == 0:
        return {"layouts": lay, "mem": None, "evaluated": 0, "pairs": []}
    mem = training_memory(t, lay)
    counts_in, starts = np.unique(lay["count"], return_index=True)
    first = _first_fit_per_count(mem["total"], lay["tp"], starts, cat)  # A x C
    a_idx, c_idx = np.nonzero(first >= 0)
    lay_idx = first[a_idx, c_idx]
    count = counts_in[c_idx].astype(float)
    size_f = 1.0 if t.vision else compute.size_factor(t.arch.params)
    method_f = compute.METHOD_FACTOR[t.method] * (compute.VISION_FACTOR if t.vision else 1.0)
    if t.mfu_pin is not None:
        mfu = np.full(count.shape, t.mfu_pin)
    else:
        mfu = cat.mfu_base[a_idx] * size_f * method_f * compute.cluster_factor(count)
    factor = np.array([compute.recompute_factor(checkpointing=CKPT_NAMES[c], method=t.method) for c in range(3)])
    executed = t.model_flops * factor[lay["ckpt"][lay_idx]]
    wall = compute.hours(flops=executed, gpus=count, peak_tflops=cat.peak_tflops[a_idx], efficiency=mfu)
    gpu_hours = wall * count
    cost = gpu_hours * cat.price_gpu_hour_usd[a_idx]
    target = t.deadline_hours or DEFAULT_TRAINING_TARGET_HOURS
    meets = wall <= target
    return {"layouts": lay, "mem": mem, "evaluated": n_lay * len(cat.accelerators), "a": a_idx, "lay": lay_idx, "count": count,
            "mfu": mfu, "executed": executed, "wall": wall, "gpu_hours": gpu_hours, "cost": cost, "meets": meets, "target_hours": target,
            "fits_any": (first >= 0).any(axis=1), "min_total_per_acc": _min_needed(mem["total"], lay, cat)}


def _min_needed(total: np.ndarray, lay: dict, cat: CatalogArrays) -> np.ndarray:
    """Smallest per-GPU need over the layouts each accelerator can run (tp <= GPUs per server)."""
    by_g = {g: np.where(lay["tp"] <= g, total, np.inf).min() for g in np.unique(cat.gpus_per_server).tolist()}
    return np.array([by_g[g] for g in cat.gpus_per_server.tolist()], dtype=float)


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


def serving_layouts(s: ServingInputs) -> tuple[np.ndarray, np.ndarray]:
    a = s.arch
    tps = [tp for tp in TP_OPTIONS if not a.is_transformer or a.attention_heads % tp == 0]
    if s.tp_pin:
        tps = [s.tp_pin]
    pps = (s.pp_pin,) if s.pp_pin else SERVE_PP_OPTIONS
    rows = [(tp, pp) for tp in tps for pp in pps if not a.is_transformer or pp <= a.layers]
    if s.count_pin:
        rows = [(tp, pp) for tp, pp in rows if tp * pp <= s.count_pin] or rows
    arr = np.array(rows, dtype=np.int64).reshape(-1, 2)
    return arr[:, 0], arr[:, 1]


def _needs_pp(fits: np.ndarray, tp_l: np.ndarray, pp_l: np.ndarray) -> np.ndarray:
    keep = np.ones_like(fits, dtype=bool)
    index = {(int(t), int(p)): j for j, (t, p) in enumerate(zip(tp_l, pp_l, strict=True))}
    for j, (t, p) in enumerate(zip(tp_l.tolist(), pp_l.tolist(), strict=True)):
        half = index.get((t, p // 2)) if p > 1 else None
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


def _compress(eng, idx, shape):
    """The engine restricted to the (accelerator, layout) pairs at `idx` (1-D arrays)."""
    return type(eng)(**{f: np.broadcast_to(np.asarray(getattr(eng, f), dtype=float), shape)[idx]
                        for f in eng.__dataclass_fields__})


def _operating_point(e, s: ServingInputs, replicas, max_stable) -> dict:
    """Open loop at rps / replicas and closed loop at concurrency / replicas: the worse of each figure."""
    rps = s.requests_per_second
    op_open = e.steady(rps / replicas)
    op_closed = e.closed_loop(np.ceil(s.concurrency / replicas), cap=max_stable)
    op = {k: np.maximum(op_open[k], op_closed[k]) for k in ("T", "ttft", "ttft_p95", "tpot_p95", "n_running")}
    heavier = op_open["T"] >= op_closed["T"]
    for k in ("compute_s", "memory_s", "comm_s"):
        op[k] = np.where(heavier, op_open[k], op_closed[k])
    op["queued_s"] = op_closed["queued_s"]
    op["rate"] = np.maximum(op_closed["rate"], rps / replicas)
    op["ok"] = np.isfinite(op["T"]) & np.isfinite(op["ttft_p95"]) & op_open["stable"]
    return op


def search_serving(s: ServingInputs, cat: CatalogArrays) -> dict:
    """Every accelerator x (TP, PP) layout: does one replica fit, how fast a request rate it sustains
    within the p95 targets, how many replicas the stated load needs, and the operating point."""
    a = s.arch
    tp_l, pp_l = serving_layouts(s)
    eng, mem, notes = make_engines(arch=a, accs=cat.accelerators, runtime=s.runtime, weights=s.weights,
                                   compute=s.compute_precision, kv_precision=s.kv_precision, tp=tp_l, pp=pp_l,
                                   isl=float(s.input_tokens), osl=float(s.output_tokens), calibrations=s.calibrations)
    tp = tp_l[None, :].astype(float)
    pp = pp_l[None, :].astype(float)
    shape = (len(cat.accelerators), len(tp_l))
    mem = {k: np.broadcast_to(np.asarray(v, dtype=float), shape) if k != "fits" else np.broadcast_to(v, shape)
           for k, v in mem.items()}
    ctx_seq = memory.kv_bytes_per_sequence(a, tokens=s.context_length, kv_precision=s.kv_precision)
    kv_split = memory.kv_split(a, tp)
    fits = (mem["fits"] & (mem["kv_pool_bytes"] >= ctx_seq / (kv_split * pp))
            & (tp <= cat.gpus_per_server[:, None]) & np.isfinite(eng.flops_s))
    if not (s.pp_pin or s.tp_pin):
        fits = fits & _needs_pp(fits, tp_l, pp_l)
    idx = np.nonzero(fits)
    e = _compress(eng, idx, shape)  # only layouts that fit are evaluated
    tp_e, pp_e = np.broadcast_to(tp, shape)[idx], np.broadcast_to(pp, shape)[idx]
    rps = s.requests_per_second
    with np.errstate(invalid="ignore", divide="ignore", over="ignore"):
        ttft1, tpot1 = e.unloaded()
        ttft_t, tpot_t, stated = serving_targets(s, ttft1, tpot1)
        max_stable = e.max_stable_rate()
        lam = e.rate_meeting(ttft_t, tpot_t, hi=max_stable * 1.000001)  # open loop, per replica, within targets
        lam_c = e.rate_meeting(ttft_t, tpot_t, closed=True, hi=max_stable * 1.000001)
        at = e.steady(lam_c, parts=False)
        clients_max = lam_c * (at["ttft"] + (s.output_tokens - 1) * at["T"])  # closed-loop clients within targets
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
        op = _operating_point(e, s, replicas, max_stable)
        if not s.count_pin:
            # Rounding to whole clients per replica can still miss by a hair: one more replica there.
            short = meets & ((op["ttft_p95"] > ttft_t * (1 + 1e-6)) | (op["tpot_p95"] > tpot_t * (1 + 1e-6)))
            if short.any():
                replicas = np.where(short, replicas + 1.0, replicas)
                op = _operating_point(e, s, replicas, max_stable)
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
    return {"tp": tp_l, "pp": pp_l, "fits": fits, "n_kv": mem["n_max"], "replicas": replicas, "count": count,
            "meets": meets, "usable": usable, "engine": eng, "mem": mem, "notes": notes, "op": op,
            "bottleneck": neck, "ttft1": ttft1, "tpot1": tpot1, "ttft_target": ttft_t,
            "tpot_target": tpot_t, "targets_stated": stated, "rate_meeting": lam, "max_stable_rate": max_stable,
            "kv_seq": ctx_seq, "weights_bytes": memory.inference_weight_bytes(a, weights=s.weights),
            "evaluated": int(fits.size)}
