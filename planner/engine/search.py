"""Candidate search: every accelerator x GPU count (1..1024) x parallel layout, vectorised.

Memory per GPU depends only on the layout, so it is computed once per layout and compared
against every accelerator's capacity in one broadcast; time depends on the accelerator's
peak and the efficiency preset. See docs/SIZING.md for the ranking rules.

The grid and catalog arrays are in ``search_catalog``, the serving search in ``search_serving``;
this module holds the training search and re-exports both (the old import path).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from . import compute, memory, moe_comm, moe_memory, training_flops, training_goodput
from .architecture import ModelArch
from .hardware import AcceleratorSpec, gpus_per_server  # noqa: F401 (re-exported: search.gpus_per_server)
from .precision import BYTES_PER_VALUE, peak_tflops, weight_bytes_per_param
from .search_catalog import (
    CKPT_CODES,
    CKPT_NAMES,
    COUNTS,
    DEFAULT_TRAINING_TARGET_HOURS,
    GIB,
    MAX_GPUS,
    PP_OPTIONS,
    SERVE_PP_OPTIONS,
    TP_OPTIONS,
    CatalogArrays,
    catalog_arrays,
)
from .search_serving import (
    OP_KEYS,
    ServingInputs,
    search_serving,
    serving_layouts,
    serving_targets,
    serving_variants,
)
from .serving_model import DEFAULT_TPOT_SLACK, DEFAULT_TTFT_SLACK

__all__ = [
    "CKPT_CODES",
    "CKPT_NAMES",
    "COUNTS",
    "CP_OPTIONS",
    "CatalogArrays",
    "DEFAULT_TPOT_SLACK",
    "DEFAULT_TRAINING_TARGET_HOURS",
    "DEFAULT_TTFT_SLACK",
    "GIB",
    "MAX_GPUS",
    "MIN_TOKENS_PER_CP_RANK",
    "OP_KEYS",
    "PP_OPTIONS",
    "SERVE_PP_OPTIONS",
    "ServingInputs",
    "TP_OPTIONS",
    "TrainingInputs",
    "VPP_OPTIONS",
    "catalog_arrays",
    "context_parallel_options",
    "gpus_per_server",
    "layout_speed",
    "max_data_parallel",
    "moe_all_to_all",
    "peak_tflops",
    "search_serving",
    "search_training",
    "serving_layouts",
    "serving_variants",
    "serving_targets",
    "trainable_bytes_per_param",
    "training_efficiency_and_goodput",
    "training_layouts",
    "training_memory",
]


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
    vpp: int | None  # None: searched (1, and the deepest of 8/4/2 the layers allow)
    tp_pin: int | None
    pp_pin: int | None
    zero_pin: int | None
    count_pin: int | None
    trainable_params: float
    model_flops: float
    deadline_hours: float | None
    mfu_pin: float | None
    vision: bool = False  # classic (non-LLM) training: vision efficiency preset
    cp_pin: int | None = None
    optimizer_states: str = "fp32"
    master_weights: str = "fp32"
    adapter_precision: str = "bf16"
    double_quant: bool = True
    goodput_pin: float | None = None
    attention: str = "fused"  # fused (FlashAttention/SDPA) or eager: eager stores the s x s attention scores
    expert_overlap: bool = False  # MoE: the expert-parallel all-to-all overlapped with compute
    ep_pin: int | None = None  # MoE: training.expert_parallel (exact layout); None: moe_comm's rule
    # Team calibrations by accelerator id: {"mfu": ..., "goodput": ...} (either may be absent).
    calibrated: tuple[tuple[str, float | None, float | None], ...] = ()


CP_OPTIONS = (1, 2, 4, 8, 16, 32)
VPP_OPTIONS = (8, 4, 2)  # interleaved 1F1B depths: the deepest the layers allow is searched, with plain 1F1B
MIN_TOKENS_PER_CP_RANK = 4096  # context parallelism splits long sequences only (NeMo/Megatron practice)


def context_parallel_options(t: TrainingInputs) -> tuple[int, ...]:
    if t.cp_pin:
        return (t.cp_pin,)
    if not t.arch.is_transformer:
        return (1,)
    return tuple(c for c in CP_OPTIONS if c == 1 or (t.seq % (2 * c) == 0 and t.seq // c >= MIN_TOKENS_PER_CP_RANK))


def max_data_parallel(t: TrainingInputs) -> int | None:
    """Sequences per step bound the data-parallel degree (each rank needs >= 1 micro-batch)."""
    if not t.global_batch_tokens:
        return None
    return max(1, t.global_batch_tokens // (t.seq * t.micro_batch))


def training_layouts(t: TrainingInputs) -> dict[str, np.ndarray]:
    """All (count, tp, pp, cp, zero, ckpt, vpp) combinations, in preference order inside each count:
    fastest first (layout_speed), then least model parallelism, then lowest ZeRO stage."""
    a = t.arch
    counts = np.array([t.count_pin], dtype=np.int64) if t.count_pin else COUNTS
    tps = (t.tp_pin,) if t.tp_pin else TP_OPTIONS
    pps = (t.pp_pin,) if t.pp_pin else PP_OPTIONS
    cps = context_parallel_options(t)
    zeros = (t.zero_pin,) if t.zero_pin is not None else (0, 1, 2, 3)
    ckpts = (CKPT_CODES[t.checkpointing],) if t.checkpointing else (CKPT_CODES["selective"], CKPT_CODES["full"])
    if t.vision:
        tps, pps = (1,), (1,)
    if t.method == "qlora" and not t.tp_pin:
        # QLoRA's 4-bit base weights (bitsandbytes) run under data parallel with the frozen weights
        # sharded (FSDP / ZeRO-3: HF PEFT and Accelerate docs, "FSDP-QLoRA"; axolotl, Answer.AI
        # fsdp_qlora) or split by layers; no tensor-parallel QLoRA stack exists to launch
        tps = (1,)
    if not a.is_transformer:
        ckpts = ckpts[:1]
    max_dp = max_data_parallel(t)
    if a.is_transformer:
        tps = tuple(tp for tp in tps if not a.attention_heads or a.attention_heads % tp == 0)
        pps = tuple(pp for pp in pps if pp <= a.layers)
    # Vectorised Cartesian product: (count, tp, pp, cp) first, then x ZeRO x checkpointing x interleaving.
    c, tp, pp, cp = (x.ravel() for x in np.meshgrid(counts, np.array(tps, dtype=np.int64), np.array(pps, dtype=np.int64),
                                                    np.array(cps, dtype=np.int64), indexing="ij"))
    ok = c % (tp * pp * cp) == 0
    c, tp, pp, cp = c[ok], tp[ok], pp[ok], cp[ok]
    dp = c // (tp * pp * cp)
    if max_dp is not None:
        ok = dp <= max_dp
        c, tp, pp, cp, dp = c[ok], tp[ok], pp[ok], cp[ok], dp[ok]
    # Interleaving depth per (count, tp, pp, cp) row: pinned, else the deepest of 8/4/2 at which every
    # virtual stage keeps a layer (pipeline stages only: the smallest bubble, and the least memory of
    # the interleaved depths) and 1 (plain 1F1B, the least activation memory).
    if t.vpp:
        v = np.full(len(c), t.vpp, dtype=np.int64)
    else:
        layers = a.layers if a.is_transformer else 0
        deepest = np.ones(len(c), dtype=np.int64)
        for depth in sorted(VPP_OPTIONS):
            deepest = np.where((pp > 1) & (layers >= pp * depth), depth, deepest)
        two = deepest > 1
        idx = np.concatenate([np.arange(len(c)), np.nonzero(two)[0]])
        v = np.concatenate([np.ones(len(c), dtype=np.int64), deepest[two]])
        c, tp, pp, cp, dp = c[idx], tp[idx], pp[idx], cp[idx], dp[idx]
    zc = [x.ravel() for x in np.meshgrid(np.array(zeros, dtype=np.int64), np.array(ckpts, dtype=np.int64), indexing="ij")]
    n, k = len(c), len(zc[0])
    c, tp, pp, cp, dp, v = (np.repeat(x, k) for x in (c, tp, pp, cp, dp, v))
    z, ck = (np.tile(x, n) for x in zc)
    if t.zero_pin is None:  # ZeRO shards across data-parallel ranks: with none there is nothing to shard
        keep = ~((z > 0) & (dp * cp == 1))
        c, tp, pp, cp, dp, v, z, ck = (x[keep] for x in (c, tp, pp, cp, dp, v, z, ck))
    lay = {"count": c, "tp": tp, "pp": pp, "dp": dp, "zero": z, "ckpt": ck, "cp": cp, "vpp": v}
    # Preference inside each count: the fastest layout first (the efficiency model's layout terms and
    # the recomputation cost, the same on every accelerator), then the least model parallelism, the
    # lowest ZeRO stage (less communication). The search keeps the first layout that fits. One packed
    # int64 key (count | speed | parallelism | ZeRO | TP | CP | VPP) sorts it in one pass.
    slow = np.clip(np.round((1.0 - layout_speed(t, lay)) * 1000), 0, 1023).astype(np.int64)
    par = np.minimum(tp * pp * cp, 65535)
    key = (((((((c << 10) | slow) << 16 | par) << 2 | z) << 4 | np.minimum(tp, 15)) << 6 | np.minimum(cp, 63)) << 4
           | np.minimum(v, 15))
    order = np.argsort(key, kind="stable")
    return {k: x[order] for k, x in lay.items()}


def layout_speed(t: TrainingInputs, lay: dict[str, np.ndarray]) -> np.ndarray:
    """Relative step speed of each layout: GEMM width x pipeline bubble / recomputation."""
    recompute = np.array([training_flops.recompute_factor(checkpointing=CKPT_NAMES[c], method=t.method) for c in range(3)])
    if t.vision:
        return 1.0 / recompute[lay["ckpt"]]
    m = compute.microbatches_per_pipeline(global_batch_tokens=t.global_batch_tokens or t.seq * t.micro_batch, seq=t.seq,
                                          micro_batch=t.micro_batch, dp=lay["dp"])
    return (compute.width_factor(compute.model_width(t.arch) / lay["tp"]) * compute.bubble_factor(lay["pp"], m, lay["vpp"])
            * compute.stage_balance(stage_layers(t.arch), lay["pp"]) / recompute[lay["ckpt"]])


def stage_layers(a) -> int | None:
    """The layer count pipeline stages split (None: no layer structure, stages taken as even)."""
    return a.layers if a.is_transformer and a.layers else None


def trainable_bytes_per_param(t: TrainingInputs) -> dict[str, float]:
    """Bytes per trainable parameter: weights, gradients, master copy, optimizer states."""
    wp = t.weights if t.method == "full" else t.adapter_precision
    states = memory.optimizer_state_bytes_per_param(optimizer=t.optimizer, states=t.optimizer_states)
    return {"weights": BYTES_PER_VALUE[wp], "gradients": memory.grad_bytes_per_param(weights=wp),
            "master": memory.master_bytes_per_param(master=t.master_weights, weights=wp), "states": states}


def training_memory(t: TrainingInputs, lay: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    a = t.arch
    tp, pp, dp, zero = (lay[k].astype(float) for k in ("tp", "pp", "dp", "zero"))
    cp = lay["cp"].astype(float) if "cp" in lay else np.ones_like(tp)
    vpp = lay["vpp"].astype(float) if "vpp" in lay else np.full_like(tp, float(t.vpp or 1))
    shard = dp * cp  # ZeRO / distributed optimizer shards over the data- and context-parallel ranks
    if a.is_transformer:
        params_gpu = memory.params_per_gpu(a, tp=tp, pp=pp)
        trainable_gpu = params_gpu if t.method == "full" else t.trainable_params / (tp * pp)
    else:  # parameter count only (or a vision net, tp = pp = 1): parameters split evenly
        params_gpu = float(a.params) / (tp * pp)
        trainable_gpu = params_gpu if t.method == "full" else t.trainable_params / (tp * pp)
    bpp = trainable_bytes_per_param(t)
    paged = t.optimizer in memory.PAGED_OPTIMIZERS
    states_pp = 0.0 if paged else bpp["states"]
    w, g, o = memory.training_model_state_bytes(
        params_gpu=params_gpu, trainable_gpu=trainable_gpu, frozen_weight_bytes_pp=weight_bytes_per_param(t.weights),
        trainable_weight_bytes_pp=bpp["weights"], grad_bytes_pp=bpp["gradients"],
        optimizer_bytes_pp=bpp["master"] + states_pp, zero_stage=zero, dp=shard,
    )
    host_states = trainable_gpu * bpp["states"] / np.where(zero >= 1, shard, 1.0) if paged else np.zeros_like(tp)
    adapters = np.zeros_like(w)
    if t.method != "full":
        # Adapter weights, gradients, master copy and states at their own precision, apart from the frozen base.
        adapters = trainable_gpu * (bpp["weights"] + bpp["gradients"] / np.where(zero >= 2, shard, 1.0)
                                    + (bpp["master"] + states_pp) / np.where(zero >= 1, shard, 1.0))
        frozen_params = params_gpu - trainable_gpu
        if t.method == "qlora":
            base_frozen = memory.qlora_frozen_bytes(a, params=frozen_params, double_quant=t.double_quant)
        else:
            base_frozen = frozen_params * weight_bytes_per_param(t.weights)
        w = np.where(zero >= 3, base_frozen / shard, base_frozen)
        g = np.zeros_like(w)
        o = np.zeros_like(w)
    if t.ep_pin and t.ep_pin > 1 and a.is_moe:  # the routed experts split over the pinned EP ranks
        dw, dg, do = moe_memory.expert_parallel_saving(
            a, method=t.method, weights=t.weights, double_quant=t.double_quant, bpp=bpp, states_pp=states_pp,
            tp=tp, pp=pp, ep=t.ep_pin, zero=zero)
        w, g, o = w - dw, g - dg, o - do
    grads_transient = g + (trainable_gpu * bpp["gradients"] / np.where(zero >= 2, shard, 1.0) if t.method != "full" else 0.0)
    if a.is_transformer:
        act = np.zeros_like(tp)
        m = compute.microbatches_per_pipeline(global_batch_tokens=t.global_batch_tokens or t.seq * t.micro_batch,
                                              seq=t.seq, micro_batch=t.micro_batch, dp=dp)
        for code in np.unique(lay["ckpt"]).tolist():
            here = lay["ckpt"] == code
            act = np.where(here, memory.training_activation_bytes(
                a, seq=t.seq, micro_batch=t.micro_batch, tp=tp, pp=pp, vpp=vpp, checkpointing=CKPT_NAMES[code],
                sequence_parallel=t.sequence_parallel, compute_precision=t.compute_precision,
                cross_entropy=memory.cross_entropy_path(t.kind), attention=t.attention, microbatches=m,
            ), act)
        act = act / cp  # context parallelism splits every activation along the sequence
    else:
        # Vision nets: activations ~ proportional to forward FLOPs; ~1 byte per 25 FLOPs per sample
        # is an assumption that gives ~0.3 GiB/image for ResNet-50 at 224 px in fp16.
        act = np.full_like(tp, (a.flops_per_sample or 0.0) / 25.0 * t.micro_batch)
    act = np.broadcast_to(act, tp.shape).astype(float)
    tensors = w + g + o + adapters + act
    over = memory.overhead_bytes(tensors=act + grads_transient, mode="training")
    return {"weights": w, "gradients": g, "optimizer": o, "adapters": adapters, "activations": act,
            "overhead": over, "total": tensors + over, "host_optimizer": np.broadcast_to(host_states, tp.shape).astype(float)}


def _first_fit_per_count(total: np.ndarray, tp: np.ndarray, starts: np.ndarray, cat: CatalogArrays) -> np.ndarray:
    """Index of the first layout (in preference order) that fits, per accelerator and count; -1 if none.

    Within one count the first layout with memory <= capacity is where the running minimum of
    memory first drops to <= capacity; the running minimum never increases, so a binary search
    answers all accelerators at once without materialising the accelerators x layouts matrix.
    All counts are searched in one pass: count k's memory is lowered by k x BIG (BIG larger than
    any memory or capacity), so one running minimum over all layouts restarts at every count and
    stays non-increasing, and capacity - k x BIG is the target inside count k.
    """
    n_acc, n_c = len(cat.accelerators), len(starts)
    ends = np.append(starts[1:], len(total))
    first = np.full((n_acc, n_c), -1, dtype=np.int64)
    usable = np.isfinite(cat.peak_tflops)
    finite = total[np.isfinite(total)]
    big = 2.0 * max(float(finite.max()) if len(finite) else 0.0, float(cat.capacity_bytes.max(initial=0.0))) + 1.0
    seg = np.repeat(np.arange(n_c, dtype=float), ends - starts)
    for g in np.unique(cat.gpus_per_server):
        rows = np.nonzero((cat.gpus_per_server == g) & usable)[0]
        if not len(rows):
            continue
        running_min = np.minimum.accumulate(np.where(tp <= g, total, np.inf) - seg * big)
        target = cat.capacity_bytes[rows][:, None] - np.arange(n_c, dtype=float)[None, :] * big  # rows x counts
        j = np.searchsorted(-running_min, -target.ravel(), side="left").reshape(target.shape)
        first[rows] = np.where(j < ends[None, :], j, -1)
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
    mfu, goodput, a2a_factor = training_efficiency_and_goodput(t, cat, lay, a_idx, lay_idx, count)
    factor = np.array([training_flops.recompute_factor(checkpointing=CKPT_NAMES[c], method=t.method) for c in range(3)])
    executed = t.model_flops * factor[lay["ckpt"][lay_idx]]
    wall = training_flops.hours(flops=executed, gpus=count, peak_tflops=cat.peak_tflops[a_idx], efficiency=mfu, goodput=goodput)
    gpu_hours = wall * count
    cost = gpu_hours * cat.price_gpu_hour_usd[a_idx]
    target = t.deadline_hours or DEFAULT_TRAINING_TARGET_HOURS
    meets = wall <= target
    return {"layouts": lay, "mem": mem, "evaluated": n_lay * len(cat.accelerators), "a": a_idx, "lay": lay_idx, "count": count,
            "mfu": mfu, "a2a_factor": a2a_factor, "goodput": goodput, "executed": executed, "wall": wall, "gpu_hours": gpu_hours, "cost": cost,
            "meets": meets, "target_hours": target,
            "fits_any": (first >= 0).any(axis=1), "min_total_per_acc": _min_needed(mem["total"], lay, cat)}


def training_efficiency_and_goodput(t: TrainingInputs, cat: CatalogArrays, lay: dict, a_idx, lay_idx, count):
    """Efficiency, goodput and the MoE all-to-all factor (1 without) of each (accelerator, layout) option:
    pins, then calibrations, then the model."""
    tp, pp, dp = lay["tp"][lay_idx], lay["pp"][lay_idx], lay["dp"][lay_idx]
    m = compute.microbatches_per_pipeline(global_batch_tokens=t.global_batch_tokens or t.seq * t.micro_batch,
                                          seq=t.seq, micro_batch=t.micro_batch, dp=dp)
    x = compute.attention_ratio(t.arch, seq=t.seq) / cat.attention_speedup[a_idx]
    mfu = compute.training_efficiency(base=cat.mfu_base[a_idx], hidden_size=compute.model_width(t.arch), tp=tp, x_attn=x,
                                      peak_ratio=cat.peak_ratio[a_idx], pp=pp, microbatches=m, vpp=lay["vpp"][lay_idx],
                                      layers=stage_layers(t.arch), method=t.method, vision=t.vision, compute_precision=t.compute_precision,
                                      base_16bit=cat.mfu_base_16bit[a_idx],
                                      tokens_per_gpu=compute.gemm_tokens(
                                          t.arch, t.seq * t.micro_batch / lay["cp"][lay_idx],
                                          # a pinned EP (exact layout) sets the tokens per expert, as it sets the all-to-all
                                          t.ep_pin or moe_comm.expert_parallel(t.arch, dp=dp, cp=lay["cp"][lay_idx], tp=tp,
                                                                               domain=cat.scale_up_domain[a_idx])),
                                      tp_comm=tp_comm_coefficients(t, cat, a_idx, tp))
    if t.method == "qlora" and not t.vision:
        ck = lay["ckpt"][lay_idx]
        recompute = np.array([training_flops.recompute_factor(checkpointing=CKPT_NAMES[c], method=t.method) for c in range(3)])
        per_token = (4.0 * t.arch.active_params + 6.0 * t.trainable_params) * recompute[ck]
        mfu = mfu * compute.qlora_factor(mfu, frozen_params=float(t.arch.params), peak_tflops=cat.peak_tflops[a_idx],
                                         bandwidth_gb_s=cat.bandwidth_gb_s[a_idx], exec_flops_per_token=per_token,
                                         tokens_per_microbatch=t.seq * t.micro_batch, cp=lay["cp"][lay_idx])
    a2a_factor = np.ones(np.shape(mfu))
    if t.arch.is_moe and not t.vision:
        a2a_factor = moe_all_to_all(t, cat, lay, a_idx, lay_idx, mfu)["factor"]
        mfu = mfu * a2a_factor
    goodput = training_goodput.default_goodput(count)
    ids = [acc.id for acc in cat.accelerators]
    for acc_id, c_mfu, c_good in t.calibrated:
        if acc_id not in ids:
            continue
        here = a_idx == ids.index(acc_id)
        if c_mfu is not None:
            mfu = np.where(here, c_mfu, mfu)
        if c_good is not None:
            goodput = np.where(here, c_good, goodput)
    if t.mfu_pin is not None:
        mfu = np.full(count.shape, t.mfu_pin)
    if t.goodput_pin is not None:
        goodput = np.full(count.shape, t.goodput_pin)
    return np.asarray(mfu, dtype=float), np.asarray(goodput, dtype=float), np.asarray(a2a_factor, dtype=float)


def tp_comm_coefficients(t: TrainingInputs, cat: CatalogArrays, a_idx, tp):
    """compute.tp_comm_coefficient per (accelerator, layout) option (0 where the generation overlaps TP)."""
    link = np.where(np.asarray(tp) <= 2, cat.tp_link_small_gb_s[a_idx], cat.tp_link_gb_s[a_idx])
    c = compute.tp_comm_coefficient(generation="", tp=tp, hidden_size=compute.model_width(t.arch),
                                    peak_tflops=cat.peak_tflops[a_idx], link_gb_s=link)
    return np.where(cat.tp_overlapped[a_idx], 0.0, c)


def moe_all_to_all(t: TrainingInputs, cat: CatalogArrays, lay: dict, a_idx, lay_idx, mfu) -> dict:
    """Expert-parallel all-to-all per (accelerator, layout) option (planner/engine/moe_comm.py): EP, bytes
    per token, one-way link GB/s and the step-time factor at efficiency `mfu` (before the factor)."""
    a_idx, lay_idx = np.asarray(a_idx), np.asarray(lay_idx)
    tp = lay["tp"][lay_idx]
    ep = moe_comm.expert_parallel(t.arch, dp=lay["dp"][lay_idx], cp=lay["cp"][lay_idx], tp=tp,
                                  domain=cat.scale_up_domain[a_idx])
    if t.ep_pin:
        ep = np.full(np.shape(ep), t.ep_pin, dtype=np.int64)
    ck = lay["ckpt"][lay_idx]
    nbytes = moe_comm.all_to_all_bytes_per_token(t.arch, ep=ep, full_recompute=ck == CKPT_CODES["full"])
    links = {}
    bw = np.empty(len(a_idx), dtype=float)
    for j, (ai, e) in enumerate(zip(a_idx.tolist(), ep.tolist(), strict=True)):
        key = (ai, e <= 2)
        if key not in links:
            links[key] = moe_comm.link_one_way_gb_s(cat.accelerators[ai], e)[0]
        bw[j] = links[key]
    recompute = np.array([training_flops.recompute_factor(checkpointing=CKPT_NAMES[c], method=t.method) for c in range(3)])
    flops = training_flops.training_flops(t.arch, tokens=1.0, method=t.method, trainable_params=t.trainable_params) * recompute[ck]
    factor = moe_comm.all_to_all_factor(mfu, bytes_per_token=nbytes, link_gb_s=bw, peak_tflops=cat.peak_tflops[a_idx],
                                        exec_flops_per_token=flops, overlapped=t.expert_overlap)
    factor = np.where(nbytes > 0, factor, 1.0)
    return {"ep": ep, "bytes_per_token": nbytes, "link_gb_s": bw, "factor": factor, "overlapped": t.expert_overlap}


def _min_needed(total: np.ndarray, lay: dict, cat: CatalogArrays) -> np.ndarray:
    """Smallest per-GPU need over the layouts each accelerator can run (tp <= GPUs per server)."""
    by_g = {g: np.where(lay["tp"] <= g, total, np.inf).min() for g in np.unique(cat.gpus_per_server).tolist()}
    return np.array([by_g[g] for g in cat.gpus_per_server.tolist()], dtype=float)
