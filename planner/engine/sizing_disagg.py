"""The plan's figures for a stated disaggregated deployment (serving.disaggregation, issue 22):
the stated prefill and decode pools evaluated at the stated closed loop on the plan's accelerator
(planner/engine/serving_disagg.py; docs/SIZING.md "MoE serving mechanisms")."""

from __future__ import annotations

from catalog.domain.messages import Msg

from .calibration import Calibrations
from .hardware import AcceleratorSpec
from .result import q
from .serving_disagg import Pool, evaluate_disaggregated
from .spec import WorkloadSpec


def disaggregated_section(spec: WorkloadSpec, acc: AcceleratorSpec, calibrations: Calibrations) -> dict:
    s, p = spec.serving, spec.precision
    d = s.disaggregation
    pre = Pool(d.prefill.workers, d.prefill.tensor_parallel, d.prefill.expert_parallel, d.prefill.data_parallel_attention)
    dec = Pool(d.decode.workers, d.decode.tensor_parallel, d.decode.expert_parallel, d.decode.data_parallel_attention)
    r = evaluate_disaggregated(arch=spec.model, accelerator=acc, prefill=pre, decode=dec, runtime=s.runtime,
                               weights=p.weights, compute=p.compute, kv_cache=p.kv_cache,
                               input_tokens=float(s.input_tokens), output_tokens=float(s.output_tokens),
                               concurrency=float(s.concurrency), speculative=s.speculative.method,
                               mtp_accepted_tokens=s.speculative.accepted_tokens, calibrations=calibrations)
    f = lambda k: float(r[k])  # noqa: E731
    return {
        "accelerator_id": acc.id,
        "prefill": {"workers": pre.workers, "tensor_parallel": pre.tensor_parallel,
                    "expert_parallel": pre.expert_parallel, "data_parallel_attention": pre.data_parallel_attention},
        "decode": {"workers": dec.workers, "tensor_parallel": dec.tensor_parallel,
                   "expert_parallel": dec.expert_parallel, "data_parallel_attention": dec.data_parallel_attention},
        "fits": bool(r["fits"]),
        "ttft_p50_ms": q(f("ttft_p50_ms"), "ms", Msg("the prefill pool's TTFT at its share of the load, the KV "
                                                      "transfer to the decode pool and one decode step")),
        "tpot_p50_ms": q(f("tpot_p50_ms"), "ms", Msg("the decode pool's time per output token at its share of the load")),
        "kv_transfer_ms": q(f("kv_transfer_ms"), "ms", Msg("one prompt's KV cache over the network (NVLink within an "
                                                            "NVL72 domain) at the line rate")),
        "output_tokens_per_s_per_gpu": q(f("output_tokens_per_s_per_gpu"), "tokens/s", Msg(
            "output tokens/s over every GPU of both pools ({gpus})", gpus=pre.gpus + dec.gpus)),
        "output_tokens_per_s_per_decode_gpu": q(f("output_tokens_per_s_per_decode_gpu"), "tokens/s", Msg(
            "output tokens/s per decode GPU ({gpus})", gpus=dec.gpus)),
        "requests_per_s": q(f("throughput_rps"), "requests/s", Msg(
            "the closed loop of {clients} clients: rate x (TTFT + (osl - 1) x TPOT) = clients", clients=s.concurrency)),
    }
