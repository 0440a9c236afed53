"""Disaggregated serving: prefill and decode on separate pools of GPUs (docs/SIZING.md "Disaggregated
prefill/decode").

`workers` prefill engines of `tp` GPUs each prefill the prompts (and produce the first token: a
prefill engine is the exact-layout engine with one output token); the prompt's KV cache then moves
to one of the decode pool's engines over the network, and the decode engines run the decodes only
(the prompt is context they read, not work they do: prompt_share 0). A closed loop of C clients at
a total rate lam (requests/s) sends lam / P_workers to each prefill engine and lam / D_workers to
each decode engine:

    TTFT  = TTFT of the prefill engine at lam / P_workers + KV transfer + handoff + one decode step
    TPOT  = the decode engine's token time at lam / D_workers
    lam x (TTFT + (osl - 1) x TPOT) = C                      (Little's law, bisection on lam)
    KV transfer = isl x KV bytes per token (whole model) / (prefill engine GPUs x NIC bandwidth
                  x kv_transfer_efficiency); within an NVL72 domain over NVLink instead.
    handoff     = disagg_handoff_s, fitted per runtime and chip generation (the decode side's slot
                  pre-allocation and the transfer engine's bootstrap/notification round trips).

Output tokens/s per GPU is reported both per decode GPU (InferenceX's convention for disaggregated
runs) and per GPU deployed (prefill + decode).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .architecture import ModelArch, kv_cache_bytes_per_token, kv_fixed_bytes_per_sequence
from .calibration import NO_CALIBRATIONS, Calibrations
from .hardware import AcceleratorSpec
from .serving_constants import link
from .serving_layout import make_engine
from .serving_math import BISECT_STEPS, bisect_largest
from .serving_moe import NIC_GB_S, scale_up_domain


@dataclass(frozen=True)
class Pool:
    """One pool of a disaggregated deployment: `workers` engines of `tensor_parallel` GPUs."""

    workers: int
    tensor_parallel: int
    expert_parallel: int = 1
    data_parallel_attention: bool = False

    @property
    def gpus(self) -> int:
        return self.workers * self.tensor_parallel


def kv_transfer_s(arch: ModelArch, acc: AcceleratorSpec, *, isl, kv_precision: str, prefill: Pool, decode: Pool,
                  efficiency: float = 1.0):
    """Seconds to move one prompt's KV cache from a prefill engine to a decode engine."""
    kv = (np.asarray(isl, dtype=float) * kv_cache_bytes_per_token(arch, kv_precision=kv_precision)
          + kv_fixed_bytes_per_sequence(arch, kv_precision=kv_precision))
    if prefill.gpus + decode.gpus <= scale_up_domain(acc) and scale_up_domain(acc) > 8:
        bw = link(acc, 2)[0]  # NVL72: the pools share the NVLink domain (NIXL over NVLink)
    else:
        bw = NIC_GB_S
    return kv / (prefill.tensor_parallel * bw * 1e9 * efficiency)


def evaluate_disaggregated(*, arch: ModelArch, accelerator: AcceleratorSpec, prefill: Pool, decode: Pool,
                           runtime: str, weights: str, compute: str | None = None, kv_cache: str | None = None,
                           input_tokens=1024, output_tokens=256, concurrency=1, speculative: str = "none",
                           mtp_accepted_tokens=None, calibrations: Calibrations = NO_CALIBRATIONS,
                           consts: dict | None = None, async_scheduling: bool = False) -> dict:
    """Predict a disaggregated deployment under a closed loop of `concurrency` clients (times in ms)."""
    compute = compute or weights
    kv_cache = kv_cache or ("bf16" if weights in ("int4", "int8") else weights)
    isl = np.asarray(input_tokens, dtype=float)
    osl = np.asarray(output_tokens, dtype=float)
    clients = np.asarray(concurrency, dtype=float)
    common = dict(arch=arch, acc=accelerator, runtime=runtime, weights=weights, compute=compute,
                  kv_precision=kv_cache, pp=1, calibrations=calibrations, consts=consts,
                  async_scheduling=async_scheduling, launch_batch=clients, disaggregated=True)
    pre, pmem, pnotes = make_engine(**common, tp=prefill.tensor_parallel, isl=isl, osl=np.ones_like(osl),
                                    ep=prefill.expert_parallel, dpa=prefill.data_parallel_attention)
    dec, dmem, dnotes = make_engine(**common, tp=decode.tensor_parallel, isl=isl, osl=osl,
                                    ep=decode.expert_parallel, dpa=decode.data_parallel_attention,
                                    mtp=speculative == "mtp", mtp_accepted=mtp_accepted_tokens, prompt_share=0.0)
    eff = float(np.mean(pnotes["constants_values"].get("kv_transfer_efficiency", 1.0)))
    handoff = float(np.mean(dnotes["constants_values"].get("disagg_handoff_s", 0.0)))
    xfer = kv_transfer_s(arch, accelerator, isl=isl, kv_precision=kv_cache, prefill=prefill, decode=decode,
                         efficiency=eff)

    def point(lam):
        p = pre.steady(lam / prefill.workers, parts=False)
        d = dec.steady(lam / decode.workers, parts=False)
        ttft = p["ttft"] + xfer + handoff + d["T"]
        return p, d, ttft

    def fewer(lam):
        p, d, ttft = point(lam)
        return p["stable"] & d["stable"] & (lam * (ttft + (osl - 1.0) * d["tpot"]) <= clients)

    hi = np.minimum(prefill.workers * pre.max_stable_rate(), decode.workers * dec.max_stable_rate())
    hi = np.broadcast_to(hi, np.broadcast_shapes(np.shape(hi), clients.shape, isl.shape)).astype(float)
    resolution = hi / 2.0 ** BISECT_STEPS  # the bisection's step: lam may sit up to this below the loop's rate
    lam = bisect_largest(fewer, hi)
    p, d, ttft = point(lam)
    # median: the prefill engine's median TTFT (its queue waits at their medians), the rest deterministic
    ttft_p50 = ttft - p["ttft"] + p["ttft_p50"]
    cycle = ttft + (osl - 1.0) * d["tpot"]
    queued = np.maximum(clients / np.maximum(lam, 1e-12) - cycle, 0.0)
    # a residue within the bisection's resolution is not a queue (clients / lam - cycle ~ cycle x step / lam)
    queued = np.where(queued > cycle * np.maximum(1e-3, 2.0 * resolution / np.maximum(lam, 1e-12)), queued, 0.0)
    fits = pmem["fits"] & dmem["fits"]
    ok = fits & np.isfinite(d["T"]) & (lam > 0)
    ms = lambda x: np.where(ok, x * 1e3, np.inf)  # noqa: E731
    gpus = float(prefill.gpus + decode.gpus)
    out_rate = lam * osl
    return {
        "fits": fits, "ttft_ms": ms(ttft + queued), "ttft_p50_ms": ms(ttft_p50 + queued), "tpot_ms": ms(d["tpot"]),
        "tpot_p50_ms": ms(d["tpot"]), "kv_transfer_ms": xfer * 1e3, "throughput_rps": np.where(ok, lam, 0.0),
        "output_tokens_per_s_per_gpu": np.where(ok, out_rate / gpus, 0.0),
        "output_tokens_per_s_per_decode_gpu": np.where(ok, out_rate / decode.gpus, 0.0),
        "input_tokens_per_s_per_prefill_gpu": np.where(ok, lam * isl / prefill.gpus, 0.0),
        "gpus": gpus, "prefill_notes": pnotes, "decode_notes": dnotes, "memory": {"prefill": pmem, "decode": dmem},
        "prefill_engine": pre, "decode_engine": dec,
    }
