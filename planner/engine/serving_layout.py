"""One serving layout evaluated exactly: a model on `tp x pp` GPUs of one accelerator, one runtime.

`evaluate_layout(...)` is the public pure function the plan's what-if, the calibration app, the
measured-data replay (serving_replay.py) and the peer benchmark call: give it a measured row's
inputs and it returns the predicted TTFT/TPOT. Arrays are accepted for the numeric inputs
(tp, pp, isl, osl, concurrency), so many rows of one model/accelerator/runtime run in one call.
"""

from __future__ import annotations

from dataclasses import fields, replace

import numpy as np

from . import compressed_attention, hf_eager_memory, memory
from .architecture import (
    ModelArch,
    kv_cache_bytes_per_token,
    kv_fixed_bytes_per_sequence,
    linear_state_bytes_per_sequence,
)
from .calibration import NO_CALIBRATIONS, Calibrations
from .hardware import AcceleratorSpec, generation_of
from .precision import weight_part_bytes
from .serving_build import build_engine
from .serving_constants import (
    MIB,
    RUNTIME_SPECS,
    compute_format,
    kernel_factor,
    resolve_constants,
    sglang_launch_cuda_graph_max_bs,
    sglang_mem_fraction_static,
)
from .serving_model import Engine
from .serving_moe import (
    DP_BALANCING_RUNTIMES,
    MTP_ACCEPTED_DEFAULT,
    MTP_DRAFT_TOKENS,
    MTP_DRAFT_TOKENS_BY_RUNTIME,
    PER_RANK_BUDGET_RUNTIMES,
    attention_weight_params,
    dispatch_bytes_per_value,
    group_link,
    moe_gathers,
    mtp_draft_tokens,
)

GIB = memory.GIB


def memory_plan(*, arch: ModelArch, capacity_bytes, runtime: str, weights: str, compute: str, kv_precision: str,
                tp, pp, isl, osl, dpa=False, mtp=False, launch_batch=None) -> dict:
    """Per-GPU memory of a layout under the runtime's budget, and the sequences its KV pool holds.

    dpa (data-parallel attention): attention weights on every rank, the KV split by sequences.
    The budget follows what each engine's memory fraction bounds (Runtime.budget_rule):
    "total" (vLLM, ATOM): weights + activations + workspace + KV <= fraction x capacity;
    "free" (TensorRT-LLM): KV = fraction x (capacity - weights - activations - workspace);
    "static" (SGLang): weights + KV <= mem_fraction_static x capacity, the fraction computed as
    SGLang computes it (sglang_mem_fraction_static: GPU memory, TP, DP attention, MTP draft, and the CUDA
    graphs of a server launched for `launch_batch` concurrent requests, sglang_launch_cuda_graph_max_bs;
    None: SGLang's default graphs) and the rest left to activations and CUDA graphs, never beyond the chip
    (KV <= capacity - all else)."""
    rt = RUNTIME_SPECS[runtime]
    tp, pp = np.asarray(tp, dtype=float), np.asarray(pp, dtype=float)
    dpa = np.asarray(dpa, dtype=bool)
    isl, osl = np.asarray(isl, dtype=float), np.asarray(osl, dtype=float)
    cap = np.asarray(capacity_bytes, dtype=float)
    w_gpu = memory.inference_weight_bytes(arch, weights=weights) / (tp * pp)
    w_gpu = w_gpu + np.where(dpa, weight_part_bytes(weights, rest_params=attention_weight_params(arch), expert_params=0.0)[0]
                             * (1.0 - 1.0 / tp) / pp, 0.0)
    chunk = np.minimum(rt.step_token_budget, np.maximum(isl, 512.0)) if rt.continuous_batching else isl
    act = memory.inference_activation_bytes(arch, tokens_in_flight=chunk, tp=tp, compute_precision=compute)
    if rt.logits_all_positions:
        act = act + 4.0 * (arch.vocab_size or 0) * isl / tp  # fp32 logits for every prompt position
    eager = np.zeros_like(tp)
    if runtime in hf_eager_memory.EAGER_ATTENTION_RUNTIMES:  # the prompt's s x s scores (hf_eager_memory.py)
        eager = hf_eager_memory.eager_attention_bytes(arch, tokens=isl, tp=tp, compute_precision=compute)
        act = act + eager
    workspace = rt.workspace_gib * GIB + memory.CUDA_CONTEXT_BYTES["inference"]
    physical = cap - w_gpu - act - workspace  # everything but the KV pool, on the chip
    if rt.budget_rule == "static":
        graph_bs = sglang_launch_cuda_graph_max_bs(cap / MIB, tp=tp, launch_batch=launch_batch)
        frac = sglang_mem_fraction_static(cap / MIB, tp=tp, pp=pp, chunked_prefill_size=rt.step_token_budget,
                                          cuda_graph_max_bs=graph_bs, dp_attention=dpa, speculative=mtp)
        budget = cap * frac
        pool = np.minimum(budget - w_gpu, physical)
    elif rt.budget_rule == "free":
        frac = np.full_like(cap * tp, rt.gpu_memory_fraction)
        budget = cap * frac
        pool = np.where(physical > 0, rt.gpu_memory_fraction * physical, physical)
    else:
        frac = np.full_like(cap * tp, rt.gpu_memory_fraction)
        budget = cap * frac
        pool = budget - w_gpu - act - workspace
    kvpt = kv_cache_bytes_per_token(arch, kv_precision=kv_precision)
    kv_split = np.ones_like(tp) if arch.is_mla else np.minimum(tp, float(arch.kv_heads or 1))
    kv_split = np.where(dpa, tp, kv_split)
    kvpt_gpu = kvpt / (kv_split * pp)
    reserve = isl + osl if rt.kv_reservation == "full" else isl + osl / 2.0
    # + the fixed state of linear-attention layers (hybrid models), split like the heads and layers
    # (compressed attention: + the full windows and compressor state, split like the KV)
    per_seq = (kvpt_gpu * reserve + linear_state_bytes_per_sequence(arch) / (tp * pp)
               + kv_fixed_bytes_per_sequence(arch, kv_precision=kv_precision) / (kv_split * pp))
    if runtime in hf_eager_memory.EAGER_ATTENTION_RUNTIMES:  # DynamicCache's torch.cat: one layer twice
        per_seq = per_seq * (1.0 + hf_eager_memory.dynamic_cache_transient_share(arch))
    n_kv = np.where(per_seq > 0, np.floor(np.maximum(pool, 0.0) / np.where(per_seq > 0, per_seq, 1.0)),
                    np.where(pool > 0, 1e9, 0.0))
    # Data-parallel attention: every attention rank runs its own scheduler with its own cap (SGLang's
    # max_running_requests and TensorRT-LLM's max_batch_size are per DP rank), so the replica admits tp x cap.
    n_max = np.minimum(n_kv, float(rt.max_running_seqs) * np.where(dpa, tp, 1.0))
    return {"capacity_bytes": cap, "budget_bytes": budget, "memory_fraction": frac, "weights_bytes": w_gpu, "activations_bytes": act,
            "workspace_bytes": workspace, "kv_pool_bytes": pool, "kv_bytes_per_token_gpu": kvpt_gpu,
            "kv_per_seq_bytes": per_seq, "eager_attention_bytes": eager, "n_kv": n_kv, "n_max": n_max, "fits": (pool > 0) & (n_kv >= 1)}


def make_engines(*, arch: ModelArch, accs, runtime: str, weights: str, compute: str, kv_precision: str,
                 tp, pp, isl, osl, calibrations: Calibrations = NO_CALIBRATIONS, consts: dict | None = None,
                 ep=1, dpa=False, mtp=False, mtp_accepted=None, prompt_share=1.0, async_scheduling=False,
                 launch_batch=None, disaggregated=False):
    """(Engine, memory plan, notes per accelerator) with arrays of shape (accelerators,) + shape(tp).

    ep, dpa: expert parallel and data-parallel attention inside the tp group; mtp: MTP speculative
    decoding with `mtp_accepted` tokens per step at the runtime's reference draft count (None: the runtime's
    constant), carried by serving_moe.accepted_at to the drafts the launch runs (serving_moe.mtp_draft_tokens);
    ep, dpa and mtp broadcast with tp (the search's variants of one layout); prompt_share 0: a
    decode-only worker (serving_disagg.py); async_scheduling: the engine schedules the next step while the
    GPU runs this one (serving_constants.ASYNC_STEP_OVERHEAD_FROM); launch_batch: the concurrent requests the
    server is launched for (memory_plan; None: unknown); disaggregated: the engine is a pool of a disaggregated
    deployment (the MoE all-to-all backend launched there, serving_moe.moe_a2a_backend)."""
    tp = np.asarray(tp, dtype=float)
    pp = np.asarray(pp, dtype=float)
    shape = np.broadcast_shapes(tp.shape, pp.shape, np.shape(isl), np.shape(osl))
    n = len(accs)
    lead = (n,) + (1,) * len(shape)
    peaks, kernels, notes, vals = [], [], [], []
    tp_b = np.broadcast_to(tp, shape)
    tps = np.unique(tp_b).tolist() if tp.size else []
    # Accelerators of one chip/interconnect share everything but capacity and bandwidth: computed once.
    memo: dict = {}
    link_rows = []
    attn_rates = []
    dispatch = []
    gathers = []
    modules: dict = {}  # generation -> (decode module s per pass, prefill module s per token)
    for acc in accs:
        cal = calibrations.for_serving(acc.id, runtime, compute) if calibrations else None
        key = (acc.architecture, acc.model, acc.fp32_tflops, acc.tf32_tflops_dense, acc.bf16_tflops_dense,
               acc.fp16_tflops_dense, acc.fp8_tflops_dense, acc.fp4_tflops_dense, acc.int8_tops_dense,
               acc.interconnect, acc.interconnect_gb_s, acc.pcie_gen, acc.id if cal is not None else None)
        if key not in memo:
            peak, fmt, peak_note = compute_format(acc, weights=weights, compute=compute)
            # decode attention in the KV cache's format where the chip has its units (fp8), else 16-bit
            attn_peak = compute_format(acc, weights=kv_precision, compute="fp8" if kv_precision == "fp8" else "bf16")[0]
            values, source = resolve_constants(acc, runtime, compute, calibrations, async_scheduling=async_scheduling,
                                               arch=arch)
            if consts:
                values = {**values, **consts}
            low_bit = fmt in ("fp8", "fp4", "int8")
            values = {**values, "compute_factor": values["low_bit_gemm_factor"] if low_bit else 1.0}
            links = [group_link(acc, int(t)) for t in tps]
            kinds = ", ".join(sorted({lk[2] for t, lk in zip(tps, links, strict=True) if t > 1}))
            attn_rate = attn_peak / peak if peak and attn_peak else 1.0
            memo[key] = (np.nan if peak is None else peak, kernel_factor(weights=weights, compute_fmt=fmt), values,
                         {"peak": peak_note, "constants": source, "constants_values": values, "compute_format": fmt,
                          "peak_tflops": peak, "link": kinds},
                         [lk[0] for lk in links], [np.nan if lk[1] is None else lk[1] for lk in links], attn_rate)
        peak, kern, values, note, bws, lats, attn_rate = memo[key]
        attn_rates.append(attn_rate)
        dispatch.append(dispatch_bytes_per_value(arch, runtime=runtime, weights=weights,
                                                 compute_fmt=note["compute_format"]))
        gathers.append(moe_gathers(runtime, acc, disaggregated))
        if arch.is_compressed_attention and generation_of(acc.architecture) not in modules:
            modules[generation_of(acc.architecture)] = _attention_modules(arch, runtime, generation_of(acc.architecture),
                                                                          tp=tp, dpa=dpa, isl=isl, osl=osl, shape=shape)
        peaks.append(peak)
        kernels.append(kern)
        vals.append(values)
        notes.append(note)
        link_rows.append((bws, lats))
    col = lambda xs: np.array(xs, dtype=float).reshape(lead)  # noqa: E731
    consts_arr = {k: col([v[k] for v in vals]) for k in vals[0]} if vals else {}
    if tps:
        pos = np.searchsorted(np.array(tps, dtype=float), tp_b)
        bw_tab = np.array([r[0] for r in link_rows], dtype=float)  # accelerators x distinct TP
        lat_tab = np.array([r[1] for r in link_rows], dtype=float)
        link_bw, link_lat = bw_tab[:, pos], lat_tab[:, pos]
    else:
        link_bw = np.ones((n,) + shape)
        link_lat = np.full((n,) + shape, np.nan)
    mem = memory_plan(arch=arch, capacity_bytes=col([a.memory_gib * GIB for a in accs]), runtime=runtime,
                      weights=weights, compute=compute, kv_precision=kv_precision, tp=tp, pp=pp, isl=isl, osl=osl,
                      dpa=dpa, mtp=mtp, launch_batch=launch_batch)
    rt = RUNTIME_SPECS[runtime]
    mtp = np.asarray(mtp, dtype=bool)
    if mtp.any() and mtp_accepted is None:
        # each accelerator's own constant (fitted per runtime and chip generation, serving_constants_ix)
        mtp_accepted = consts_arr.get("mtp_accepted_tokens", MTP_ACCEPTED_DEFAULT)
    drafts = mtp_draft_tokens(runtime, dpa, decode_only=bool(np.all(np.asarray(prompt_share) == 0.0)))
    eng = build_engine(arch=arch, weights=weights, kv_precision=kv_precision, isl=isl, osl=osl, tp=tp, pp=pp,
                       peak_tflops=col(peaks), bandwidth_gb_s=col([a.memory_bandwidth_gb_s for a in accs]),
                       consts=consts_arr, kernel=col(kernels), link_gb_s=link_bw, link_latency_s=link_lat,
                       budget=rt.step_token_budget if rt.continuous_batching else 1e9, n_max=mem["n_max"],
                       ep=ep, dpa=dpa, mtp_accepted=mtp_accepted if mtp.any() else None, mtp_on=mtp,
                       prompt_share=prompt_share,
                       mtp_draft=drafts, mtp_reference_drafts=MTP_DRAFT_TOKENS_BY_RUNTIME.get(runtime, MTP_DRAFT_TOKENS),
                       dp_balance=runtime in DP_BALANCING_RUNTIMES, dec_attn_rate=col(attn_rates),
                       per_rank_budget=runtime in PER_RANK_BUDGET_RUNTIMES,
                       dispatch_bytes=col(dispatch), moe_gather=col(gathers).astype(bool),
                       **({} if not modules else {
                           "attn_module_s": np.array([modules[generation_of(a.architecture)][0] for a in accs]),
                           "attn_prefill_module_s": np.array([modules[generation_of(a.architecture)][1] for a in accs])}))
    return eng, mem, notes


def _attention_modules(arch, runtime, generation, *, tp, dpa, isl, osl, shape):
    """DeepSeek-V4's measured attention modules (compressed_attention.py) at the layout's heads per GPU (all heads
    with DPA): (seconds per forward pass at the mean decode context, prefill seconds per prompt token), shape."""
    heads_gpu = np.where(np.asarray(dpa, dtype=bool), float(arch.attention_heads or 0), (arch.attention_heads or 0) / tp)
    ctx_decode = np.asarray(isl, dtype=float) + np.asarray(osl, dtype=float) / 2.0
    decode = compressed_attention.module_floor_s(arch, runtime=runtime, generation=generation,
                                                 heads_per_gpu=heads_gpu, ctx=ctx_decode)
    prefill = compressed_attention.prefill_module_s_per_token(arch, runtime=runtime, generation=generation,
                                                              heads_per_gpu=heads_gpu, tp=tp, dpa=dpa)
    full = np.broadcast_shapes(np.shape(heads_gpu), np.shape(ctx_decode), shape)  # the same for every generation
    return np.broadcast_to(decode, full).astype(float), np.broadcast_to(prefill, full).astype(float)


def make_engine(*, arch: ModelArch, acc: AcceleratorSpec, runtime: str, weights: str, compute: str, kv_precision: str,
                tp, pp, isl, osl, calibrations: Calibrations = NO_CALIBRATIONS, consts: dict | None = None,
                **mechanisms):
    """(Engine, memory plan, notes) for one accelerator; `consts` overrides the presets (used by the fit);
    `mechanisms`: ep, dpa, mtp, mtp_accepted, prompt_share, async_scheduling of make_engines."""
    eng, mem, notes = make_engines(arch=arch, accs=[acc], runtime=runtime, weights=weights, compute=compute,
                                   kv_precision=kv_precision, tp=tp, pp=pp, isl=isl, osl=osl,
                                   calibrations=calibrations, consts=consts, **mechanisms)
    given = [f.name for f in fields(eng) if getattr(eng, f.name) is not None]  # None: the linear-attention default
    full = np.broadcast_shapes(*(np.shape(getattr(eng, k)) for k in given))
    eng = replace(eng, **{k: np.broadcast_to(np.asarray(getattr(eng, k), dtype=float), full)[0] for k in given})
    mshape = np.broadcast_shapes(*(np.shape(v) for v in mem.values()))
    mem = {k: np.broadcast_to(np.asarray(v), mshape)[0] for k, v in mem.items()}
    return eng, mem, notes[0]


def bottleneck(eng: Engine, s: dict) -> np.ndarray:
    """What limits the operating point: kv_capacity, compute, memory_bandwidth, interconnect or overhead."""
    kv_bound = (np.asarray(s.get("queued_s", 0.0)) > 0.0) | (s["n_running"] >= 0.97 * eng.n_max)
    comm, comp, mem = s["comm_s"], s["compute_s"], s["memory_s"]
    over = eng.overhead_s
    out = np.where(comp >= mem, "compute", "memory_bandwidth")
    out = np.where((comm > np.maximum(comp, mem)) & (comm > over), "interconnect", out)
    out = np.where((over > np.maximum(comp, mem)) & (over >= comm), "overhead", out)
    return np.where(kv_bound, "kv_capacity", out)


def evaluate_layout(*, arch: ModelArch, accelerator: AcceleratorSpec, tensor_parallel=1, pipeline_parallel=1,
                    runtime: str = "vllm", weights: str = "bf16", compute: str | None = None, kv_cache: str | None = None,
                    input_tokens=1024, output_tokens=256, concurrency=None, requests_per_second=None,
                    ttft_p95_ms: float | None = None, tpot_p95_ms: float | None = None,
                    calibrations: Calibrations = NO_CALIBRATIONS, consts: dict | None = None,
                    expert_parallel=1, data_parallel_attention=False, speculative: str = "none",
                    mtp_accepted_tokens=None, async_scheduling: bool = False) -> dict:
    """Predict how exactly this layout serves the load (one replica of tp x pp GPUs).

    Load: `concurrency` clients in a closed loop (as benchmark tools run) or `requests_per_second`
    Poisson arrivals (open loop); with both, both are evaluated and the worse p95 is reported.
    Numeric inputs may be arrays of one shape (rows of a replay). Times are in ms.
    expert_parallel / data_parallel_attention: inside the tensor-parallel group (serving_moe.py);
    speculative "mtp": multi-token prediction with `mtp_accepted_tokens` per step (None: the runtime's
    fitted constant); async_scheduling: the engine overlaps scheduling with the GPU step (vLLM
    --async-scheduling). Disaggregated prefill/decode: serving_disagg.evaluate_disaggregated."""
    compute = compute or weights
    kv_cache = kv_cache or ("bf16" if weights in ("int4", "int8") else weights)
    eng, mem, notes = make_engine(arch=arch, acc=accelerator, runtime=runtime, weights=weights, compute=compute,
                                  kv_precision=kv_cache, tp=tensor_parallel, pp=pipeline_parallel,
                                  isl=input_tokens, osl=output_tokens, calibrations=calibrations, consts=consts,
                                  ep=expert_parallel, dpa=data_parallel_attention, mtp=speculative == "mtp",
                                  mtp_accepted=mtp_accepted_tokens, async_scheduling=async_scheduling,
                                  launch_batch=concurrency)
    ttft1, tpot1 = eng.unloaded()
    gpus = np.asarray(tensor_parallel, dtype=float) * np.asarray(pipeline_parallel, dtype=float)
    out = {"fits": mem["fits"], "n_max": mem["n_max"], "memory": mem, "notes": notes,
           "unloaded_ttft_ms": ttft1 * 1e3, "unloaded_tpot_ms": tpot1 * 1e3, "gpus": gpus}
    results = []
    if concurrency is not None:
        results.append(("closed", eng.closed_loop(concurrency)))
    if requests_per_second is not None:
        s = eng.steady(np.asarray(requests_per_second, dtype=float))
        s["rate"] = np.asarray(requests_per_second, dtype=float) + 0.0 * s["T"]
        s["queued_s"] = np.zeros_like(s["T"])
        results.append(("open", s))
    if not results:
        results.append(("closed", eng.closed_loop(1.0)))
    # Report the worse of the load models.
    s = results[0][1]
    for _, other in results[1:]:
        worse = other["ttft_p95"] > s["ttft_p95"]
        # keys both load models report (a closed loop also counts its clients, an open one does not)
        s = {k: np.where(worse, other[k], s[k]) for k in s if k in other}
    ok = mem["fits"] & np.isfinite(s["T"])
    ms = lambda key: np.where(ok, s[key] * 1e3, np.inf)  # noqa: E731
    osl = np.asarray(output_tokens, dtype=float)
    out.update({
        "ttft_ms": ms("ttft"), "ttft_p50_ms": ms("ttft_p50"), "ttft_p95_ms": ms("ttft_p95"), "ttft_p99_ms": ms("ttft_p99"),
        "tpot_ms": ms("tpot"), "tpot_p50_ms": ms("tpot"), "tpot_p95_ms": ms("tpot_p95"), "tpot_p99_ms": ms("tpot_p99"),
        "throughput_rps": np.where(ok, s["rate"], 0.0),
        # requests in flight per replica (Little's law: rate x mean latency; a closed loop's clients)
        "in_flight_requests": np.where(ok, s["rate"] * (s["ttft"] + (osl - 1.0) * s["tpot"]), 0.0),
        "output_tokens_per_s_per_gpu": np.where(ok, s["rate"] * osl / gpus, 0.0),
        "total_tokens_per_s_per_gpu": np.where(
            ok, s["rate"] * (osl + np.asarray(input_tokens, dtype=float)) / gpus, 0.0),
        "output_tokens_per_s_per_user": np.where(ok, 1.0 / np.maximum(s["tpot"], 1e-12), 0.0),
        "running_sequences": np.where(ok, s["n_running"], 0.0),
        "queued_ms": np.where(ok, s["queued_s"] * 1e3, np.inf),
        "stable": ok & s["stable"] | (ok & (concurrency is not None)),
        "bottleneck": bottleneck(eng, s),
        "compute_s": s["compute_s"], "memory_s": s["memory_s"], "comm_s": s["comm_s"], "step_s": s["T"],
    })
    if ttft_p95_ms or tpot_p95_ms:
        lam = eng.rate_meeting((ttft_p95_ms or np.inf) / 1e3, (tpot_p95_ms or np.inf) / 1e3)
        out["max_rps_meeting_targets"] = np.where(mem["fits"], lam, 0.0)
    out["max_stable_rps"] = np.where(mem["fits"], eng.max_stable_rate(), 0.0)
    out["engine"] = eng
    return out
