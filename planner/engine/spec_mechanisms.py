"""Reading and checking the serving mechanisms of a spec (issue 22): hardware.expert_parallel,
hardware.data_parallel_attention, serving.speculative, serving.disaggregation and the ATOM runtime.
Each refusal is a field error that says why (docs/WORKLOADSPEC.md)."""

from __future__ import annotations

import re
from collections.abc import Mapping

from catalog.domain.messages import Msg

from .serving_constants import RUNTIME_VENDORS
from .serving_moe import MTP_DRAFT_TOKENS, MTP_DRAFT_TOKENS_BY_RUNTIME
from .spec_reader import _Reader
from .spec_types import DisaggregationSpec, HardwareSpec, PoolSpec, ServingSpec, SpeculativeSpec

SPECULATIVE = ("none", "mtp")
POOL_FIELDS = ("workers", "tensor_parallel", "expert_parallel", "data_parallel_attention")
_AMD = re.compile(r"\b(amd|instinct|mi\d{3})", re.IGNORECASE)


def read_speculative(r: _Reader, value, *, runtime: str | None) -> SpeculativeSpec:
    P = "serving.speculative"
    if value is None:
        return SpeculativeSpec()
    if isinstance(value, str):
        value = {"method": value}
    if not isinstance(value, Mapping):
        r.err(P, Msg("\"none\", \"mtp\" or an object {{method, accepted_tokens}}"))
        return SpeculativeSpec()
    r.keys(value, P, ("method", "accepted_tokens"))
    method = r.choice(value, "method", P, SPECULATIVE)
    drafts = MTP_DRAFT_TOKENS_BY_RUNTIME.get(runtime or "", MTP_DRAFT_TOKENS)
    acc = r.number(value, "accepted_tokens", P, minimum=1.0, maximum=1.0 + drafts)
    if acc is not None and method != "mtp":
        r.err(f"{P}.accepted_tokens", Msg("only with method mtp"))
    return SpeculativeSpec(method=method, accepted_tokens=acc)


def _read_pool(r: _Reader, value, path: str) -> PoolSpec | None:
    if not isinstance(value, Mapping):
        r.err(path, Msg("required: an object with workers, tensor_parallel, expert_parallel, data_parallel_attention"))
        return None
    r.keys(value, path, POOL_FIELDS)
    n0 = len(r.errors)
    workers = r.integer(value, "workers", path, default=1, minimum=1, maximum=4096)
    tp = r.integer(value, "tensor_parallel", path, default=1, minimum=1, maximum=1024)
    ep = r.integer(value, "expert_parallel", path, default=1, minimum=1, maximum=1024)
    dpa = r.boolean(value, "data_parallel_attention", path, default=False)
    if len(r.errors) > n0:
        return None
    return PoolSpec(workers=workers, tensor_parallel=tp, expert_parallel=ep, data_parallel_attention=bool(dpa))


def read_disaggregation(r: _Reader, value) -> DisaggregationSpec | None:
    P = "serving.disaggregation"
    if value is None:
        return None
    if not isinstance(value, Mapping):
        r.err(P, Msg("an object {{prefill: {{...}}, decode: {{...}}}}"))
        return None
    r.keys(value, P, ("prefill", "decode"))
    pre = _read_pool(r, value.get("prefill"), f"{P}.prefill")
    dec = _read_pool(r, value.get("decode"), f"{P}.decode")
    return DisaggregationSpec(prefill=pre, decode=dec) if pre and dec else None


def _check_ep(r: _Reader, field: str, ep: int, group: int, model) -> None:
    if ep <= 1:
        return
    if model is not None and not model.is_moe:
        r.err(field, Msg("only for mixture-of-experts models; {name} has no routed experts", name=model.name))
        return
    if model is not None and model.experts % ep:
        r.err(field, Msg("must divide the model's experts ({experts}), got {ep}", experts=model.experts, ep=ep))
    if group and group % ep:
        r.err(field, Msg("must divide the GPUs of the group it splits the experts over ({group}), got {ep}",
                         group=group, ep=ep))


def check_mechanisms(r: _Reader, hw: HardwareSpec, serving: ServingSpec | None, *, kind: str, model) -> None:
    """Cross-field checks once the hardware section is read."""
    serving_kind = kind in ("inference", "rag")
    if (hw.expert_parallel or hw.data_parallel_attention) and not serving_kind:
        field = "hardware.expert_parallel" if hw.expert_parallel else "hardware.data_parallel_attention"
        r.err(field, Msg("serving layouts only (kind inference or rag)"))
        return
    if hw.expert_parallel:
        group = hw.tensor_parallel or hw.count or 0
        _check_ep(r, "hardware.expert_parallel", hw.expert_parallel, group, model)
        if hw.count and hw.expert_parallel > hw.count:
            r.err("hardware.expert_parallel", Msg("exceeds hardware.count ({count}), got {ep}", count=hw.count,
                                                  ep=hw.expert_parallel))
    if hw.data_parallel_attention and model is not None and not model.is_transformer:
        r.err("hardware.data_parallel_attention", Msg("only for transformer models (attention layers)"))
    if serving is None:
        return
    if serving.speculative.method == "mtp" and model is not None and not model.mtp_layers:
        r.err("serving.speculative", Msg("{name} has no multi-token-prediction layers (its config lists none): "
                                         "MTP needs a checkpoint that ships them", name=model.name))
    vendor = RUNTIME_VENDORS.get(serving.runtime)
    # before the catalog is read only a name that says its vendor is judged (sizing judges the rest)
    if vendor and hw.accelerator and (vendor == "AMD") != bool(_AMD.search(hw.accelerator)):
        r.err("serving.runtime", Msg("{runtime} runs on {vendor} GPUs only; hardware.accelerator is {acc}",
                                     runtime=serving.runtime, vendor=vendor, acc=hw.accelerator))
    d = serving.disaggregation
    if d is None:
        return
    if not hw.count:
        r.err("hardware.count", Msg("required with serving.disaggregation: the GPUs of both pools"))
    elif d.prefill.gpus + d.decode.gpus != hw.count:
        r.err("serving.disaggregation", Msg(
            "the pools hold {pre} prefill + {dec} decode GPUs (workers x tensor_parallel) = {total}, but "
            "hardware.count is {count}: they must add up", pre=d.prefill.gpus, dec=d.decode.gpus,
            total=d.prefill.gpus + d.decode.gpus, count=hw.count))
    for name, pool in (("prefill", d.prefill), ("decode", d.decode)):
        _check_ep(r, f"serving.disaggregation.{name}.expert_parallel", pool.expert_parallel, pool.tensor_parallel, model)
    if hw.tensor_parallel or hw.pipeline_parallel:
        r.err("hardware.tensor_parallel", Msg("with serving.disaggregation each pool states its tensor_parallel; "
                                              "remove hardware.tensor_parallel / pipeline_parallel"))
