"""The plan's figures for a disaggregated serving layout (issue 22, Build 4): a candidate row as the
cost engine prices it and, when the plan decides on it (or serving.disaggregation states it), the
memory, serving and recommendation sections that describe both pools (search_disagg.py,
serving_disagg.py; docs/SIZING.md "Disaggregated candidates")."""

from __future__ import annotations

import math

from catalog.domain.messages import Msg

from .result import q
from .search_disagg import DisaggCandidate, bottleneck_of, layout_of, layout_text
from .serving_candidates import operating_point_state
from .spec import WorkloadSpec


def _fin(v: float):
    return v if math.isfinite(v) else None


def disagg_row(c: DisaggCandidate, s, with_mechanisms: bool) -> dict:
    """A sizing candidate row (the keys of serving_candidates.candidate) for a disaggregated layout."""
    op = c.op
    ms = lambda k: _fin(op[k] * 1e3)  # noqa: E731
    ok, steady = operating_point_state(op["rate"], op["tpot"], op["ttft"], op["in_flight"])
    rate = op["rate"]
    return {
        "accelerator_id": c.accelerator_id, "accelerator": c.accelerator, "count": c.count,
        "layout": layout_of(c, with_mechanisms), "fits": True, "meets_target": c.meets,
        "batch_per_replica": _fin(round(op["n_running"], 1)),
        "max_concurrent_sequences_per_replica": int(min(c.memory["decode"].get("n_max", 0.0), 1e9)),
        "ttft_ms": ms("ttft"), "ttft_p50_ms": ms("ttft_p50"), "ttft_p95_ms": ms("ttft_p95"), "ttft_p99_ms": ms("ttft_p99"),
        "tpot_ms": ms("tpot"), "tpot_p50_ms": ms("tpot"), "tpot_p95_ms": ms("tpot_p95"), "tpot_p99_ms": ms("tpot_p99"),
        "output_tokens_per_s_per_gpu": rate * s.output_tokens / c.count if steady else None,
        "total_tokens_per_s_per_gpu": rate * (s.input_tokens + s.output_tokens) / c.count if steady else None,
        "output_tokens_per_s_per_user": 1.0 / op["tpot"] if ok else None,
        "max_rps_per_replica_meeting_targets": None,
        "bottleneck": bottleneck_of(c),
        "sustained_rps_per_replica": _fin(rate),
        "kv_bytes_per_gpu": _fin(op["n_running"] * c.memory["decode"].get("kv_per_seq_bytes", math.nan)),
        "kv_memory_left_bytes_per_gpu": c.memory["decode"].get("kv_pool_bytes"),
        "cost_usd_per_hour": c.price_per_hour,
        "in_flight_requests_per_replica": _fin(op["in_flight"]) if steady else None,
        "load_model": ("closed_loop" if op["closed_loop"] == 1.0 else "open_loop") if ok else None,
    }


def disagg_sections(spec: WorkloadSpec, c: DisaggCandidate, *, targets_stated: bool, rt) -> tuple[dict, dict]:
    """(memory, serving) sections of a disaggregated layout: per GPU as a decode GPU holds it (the pool
    the output comes from), the pools and the KV transfer under serving.disaggregated."""
    s = spec.serving
    op, m = c.op, c.memory["decode"]
    pre_gpus = c.prefill["workers"] * c.prefill["tensor_parallel"]
    dec_gpus = c.decode["workers"] * c.decode["tensor_parallel"]
    running = op["n_running"]
    kv_gpu = min(running, m.get("n_max", running)) * m.get("kv_per_seq_bytes", 0.0)
    per_gpu = m["weights_bytes"] + kv_gpu + m["activations_bytes"] + m["workspace_bytes"]
    text = layout_text(c)
    layout = layout_of(c, bool(spec.model.is_moe))
    memory_section = {
        "per_gpu_bytes": q(per_gpu, "bytes", Msg("a decode GPU: weights + KV cache of {running:.1f} running sequences "
                                                "per decode worker + activations + runtime workspace ({layout_txt})",
                                                running=running, layout_txt=text)),
        "total_bytes": q(per_gpu * c.count, "bytes", Msg("per GPU x {count} GPUs", count=c.count)),
        "layout": {"count": c.count, **layout},
        "components": {
            "weights_bytes": q(m["weights_bytes"], "bytes", Msg("{weights} weights split over a decode worker's TP{tp}",
                                                                weights=getattr(spec.precision.weights, "text",
                                                                                spec.precision.weights),
                                                                tp=c.decode["tensor_parallel"])),
            "kv_cache_bytes": q(kv_gpu, "bytes", Msg("{n:.1f} running sequences per decode worker", n=running)),
            "activations_bytes": q(m["activations_bytes"], "bytes", Msg("one forward pass of the step's token budget "
                                                                        "({budget} tokens)", budget=rt.step_token_budget)),
            "gradients_bytes": q(0, "bytes", Msg("no gradients in inference")),
            "optimizer_bytes": q(0, "bytes", Msg("no optimizer in inference")),
            "adapter_bytes": q(0, "bytes", Msg("no adapters")),
            "overhead_bytes": q(m["workspace_bytes"], "bytes", Msg("CUDA context + {rt} workspace (CUDA graphs, sampler); "
                                                                   "the engine uses {frac:.0%} of GPU memory", rt=rt.label,
                                                                   frac=m.get("memory_fraction", 0.0))),
        },
    }
    note = c.notes
    consts = note["constants_values"]
    rate, T = op["rate"], op["tpot"]
    load = (Msg("closed loop of {c:g} clients", c=s.concurrency) if op["closed_loop"] == 1.0
            else Msg("open loop of {r:.3g} requests/s", r=s.requests_per_second))
    targets = Msg("stated targets") if targets_stated else Msg("the targets of the accelerator's aggregated layout")
    serving_section = {
        "runtime": rt.label,
        "precision_on_hardware": note["peak"],
        "constants": Msg("{src}: prefill_efficiency {pe:.3f}, decode_bandwidth_efficiency {be:.3f}, step_overhead_s "
                         "{so:.4f}", src=note["constants"], pe=consts["prefill_efficiency"],
                         be=consts["decode_bandwidth_efficiency"], so=consts["step_overhead_s"]),
        "layout": text,
        "ttft_ms": q(op["ttft"] * 1e3, "ms", Msg(
            "mean at the stated load: a prefill worker's TTFT at its share of the load, the KV transfer to a decode "
            "worker ({x:.1f} ms), the handoff ({h:.0f} ms) and one decode step", x=op["kv_transfer"] * 1e3,
            h=op["handoff"] * 1e3)),
        "ttft_p50_ms": q(op["ttft_p50"] * 1e3, "ms", Msg("median at the stated load (the prefill worker's median)")),
        "ttft_p95_ms": q(op["ttft_p95"] * 1e3, "ms", Msg("95th percentile at the stated load")),
        "ttft_p99_ms": q(op["ttft_p99"] * 1e3, "ms", Msg("99th percentile at the stated load")),
        "tpot_ms": q(T * 1e3, "ms", Msg("a decode worker's mean time per output token with {n:.1f} sequences running "
                                        "(decodes only: the prompts are prefilled elsewhere)", n=running)),
        "tpot_p50_ms": q(T * 1e3, "ms", Msg("median time per output token of a decode worker")),
        "tpot_p95_ms": q(op["tpot_p95"] * 1e3, "ms", Msg("95th percentile at the stated load")),
        "tpot_p99_ms": q(op["tpot_p99"] * 1e3, "ms", Msg("99th percentile, the same variation at +2.33 sd")),
        "output_tokens_per_s_per_gpu": q(rate * s.output_tokens / c.count, "tokens/s", Msg(
            "per GPU deployed at the stated load: {rate:.3g} requests/s x {osl} output tokens / {g} GPUs of both pools",
            rate=rate, osl=s.output_tokens, g=c.count)),
        "total_tokens_per_s_per_gpu": q(rate * (s.input_tokens + s.output_tokens) / c.count, "tokens/s", Msg(
            "input + output tokens per GPU deployed at the stated load")),
        "output_tokens_per_s_per_user": q(1.0 / T, "tokens/s", Msg("one user's streaming speed (1 / TPOT)")),
        "in_flight_requests_per_replica": q(op["in_flight"], "requests", Msg(
            "requests in flight over both pools (Little's law: requests/s x (TTFT + (output tokens - 1) x TPOT)); the "
            "{load} binds", load=load)),
        "bottleneck": bottleneck_of(c),
        "batch_per_replica": q(running, "sequences", Msg("sequences running per decode worker at the stated load")),
        "replicas": q(float(c.prefill["workers"] + c.decode["workers"]), "replicas", Msg(
            "{pw} prefill + {dw} decode workers, each pool sized for the load within the p95 targets ({targets})",
            pw=c.prefill["workers"], dw=c.decode["workers"], targets=targets)),
        "meets_targets": c.meets,
        "disaggregated": {
            "accelerator_id": c.accelerator_id,
            "prefill": dict(c.prefill), "decode": dict(c.decode), "fits": True,
            "ttft_p50_ms": q(op["ttft_p50"] * 1e3, "ms", Msg("the prefill pool's TTFT at its share of the load, the KV "
                                                             "transfer to the decode pool and one decode step")),
            "tpot_p50_ms": q(T * 1e3, "ms", Msg("the decode pool's time per output token at its share of the load")),
            "kv_transfer_ms": q(op["kv_transfer"] * 1e3, "ms", Msg(
                "one prompt's KV cache over the network (NVLink within an NVL72 domain) at the line rate")),
            "output_tokens_per_s_per_gpu": q(rate * s.output_tokens / c.count, "tokens/s", Msg(
                "output tokens/s over every GPU of both pools ({gpus})", gpus=c.count)),
            "output_tokens_per_s_per_decode_gpu": q(rate * s.output_tokens / dec_gpus, "tokens/s", Msg(
                "output tokens/s per decode GPU ({gpus})", gpus=dec_gpus)),
            "input_tokens_per_s_per_prefill_gpu": q(rate * s.input_tokens / pre_gpus, "tokens/s", Msg(
                "prompt tokens/s per prefill GPU ({gpus})", gpus=pre_gpus)),
            "requests_per_s": q(rate, "requests/s", Msg("the rate at the binding load ({load})", load=load)),
        },
    }
    return memory_section, serving_section
