"""Sizing result -> cost-engine workloads: configurations to price, serving volume, storage, CPU needs."""

from __future__ import annotations

import math
from decimal import Decimal

from catalog.domain.messages import Msg, figure
from costs.engine.inputs import (
    HOURS_PER_MONTH,
    Rate,
    Workload,
)
from planner.engine.result import candidate_id
from planner.engine.shapes import server_shape, sold_only_in_cloud

from .common import (
    GB,
    SERVING_KINDS,
    TRAINING_KINDS,
    _accelerators,
    _d,
    _form_kind,
    _val,
)
from .site import _site_limit

# ---- sizing result -> workloads --------------------------------------------------------------


def _gpus_per_server(acc) -> int:
    from planner.engine.hardware import gpus_per_server

    return int(gpus_per_server(acc))


def _storage_gb(rec: dict, servers: int) -> dict[str, Decimal]:
    st = rec.get("storage") or {}

    def gb(*keys) -> Decimal:
        return sum((Decimal(str(_val(st.get(k)) or 0)) for k in keys), Decimal(0)) / GB

    out = {
        # weights and caches on the GPU servers' NVMe (an API option hosts no weights)
        "nvme": (Decimal(str(_val(st.get("nvme_per_server_bytes")) or 0)) * servers) / GB,
        "ssd": gb("checkpoints_bytes", "vector_index_bytes"),
        "object": gb("datasets_bytes", "model_registry_bytes", "logs_bytes"),
    }
    if "nvme_bytes" in rec:  # CPU-only recommendation
        out["nvme"] += Decimal(str(_val(rec["nvme_bytes"]) or 0)) / GB
    return {k: v.quantize(Decimal("0.001")) for k, v in out.items() if v > 0}


def _serving_volume(spec) -> tuple[Decimal | None, Decimal | None, Decimal | None]:
    """Tokens in/out per month and the fleet's share of hours from the workload's serving section.

    The tokens follow the volume (serving.requests_per_day, else the peak x the average-to-peak
    ratio), not the peak that sizes the fleet: a peak held around the clock would overstate
    token-priced options and egress (docs/COSTS.md "Peak and volume")."""
    s = getattr(spec, "serving", None) if spec is not None else None
    if s is None:
        return None, None, None
    # a month of the cost engine: HOURS_PER_MONTH / 24 = 30.4166... days (multiplied first: exact where it can be)
    requests = _requests_per_day(s) * HOURS_PER_MONTH / 24
    return requests * s.input_tokens, requests * s.output_tokens, Decimal(str(s.hours_per_day)) / 24


def _requests_per_day(s) -> Decimal:
    """serving.requests_per_day, else peak x 3600 x hours_per_day x AVERAGE_TO_PEAK_RATIO (in Decimal)."""
    from planner.engine.spec import AVERAGE_TO_PEAK_RATIO

    if s.requests_per_day is not None:
        return Decimal(str(s.requests_per_day))
    peak = Decimal(str(s.requests_per_second)) * 3600 * Decimal(str(s.hours_per_day))
    return peak * Decimal(str(AVERAGE_TO_PEAK_RATIO))


def _load_share(s) -> Decimal | None:
    """Average load over the serving hours / the peak: the volume against the peak held all day."""
    peak = Decimal(str(s.requests_per_second)) * 3600 * Decimal(str(s.hours_per_day))
    if peak <= 0:
        return None
    return min(Decimal(1), _requests_per_day(s) / peak)


def _volume_note(spec) -> Msg | None:
    """The plan states the volume it prices and, without serving.requests_per_day, the assumption."""
    from planner.engine.spec import AVERAGE_TO_PEAK_RATIO

    s = getattr(spec, "serving", None) if spec is not None else None
    if s is None:
        return None
    if s.requests_per_day is not None:
        return Msg(
            "volume: {volume:,.15g} requests a day (serving.requests_per_day) prices model-API tokens, egress and the "
            "useful share; the peak of {rps} requests/s sizes capacity",
            volume=figure(Decimal(str(s.requests_per_day))), rps=figure(Decimal(str(s.requests_per_second))),
        )
    return Msg(
        "volume assumed: {volume:,.15g} requests a day = peak {rps} requests/s x 3600 x {hours} h x {ratio} "
        "(average-to-peak ratio of a business-hours service); give serving.requests_per_day to price "
        "model-API tokens, egress and the useful share on the real volume",
        volume=figure(_requests_per_day(s).quantize(Decimal(1))),
        rps=figure(Decimal(str(s.requests_per_second))), hours=figure(Decimal(str(s.hours_per_day))),
        ratio=figure(Decimal(str(AVERAGE_TO_PEAK_RATIO))),
    )


def _rack_units(price_snapshot: dict, *, acc_id: str, acc, gps: int) -> int:
    """Height of a catalog server platform for this accelerator (0: unknown)."""
    kind = _form_kind(acc.form_factor) if acc is not None else ""
    for p in price_snapshot.get("server_platforms", []):
        fits = p.get("included_accelerator") == acc_id or (
            not p.get("included_accelerator")
            and p.get("gpu_form_factor_kind") == kind
            and p.get("gpu_slots") == gps
        )
        if fits and p.get("rack_units"):
            return int(p["rack_units"])
    return 0


MAX_CONFIGURATIONS = 16  # the recommendation + one per fitting accelerator, bounded
MAX_DISAGGREGATED = 4  # disaggregated layouts priced beside them (the sizing lists them best first)


def configurations_to_price(sizing: dict) -> list[dict]:
    """The recommendation's configuration first, then ``candidates.best_per_accelerator`` (one
    per fitting accelerator, chosen by the recommendation rule) and, for training,
    ``one_server_per_accelerator``. Not ``ranked``: for training it
    favours the biggest, fastest clusters, which is not what a budget compares."""
    rec = sizing.get("recommendation") or {}
    cands = sizing.get("candidates") or {}
    best = cands.get("best_per_accelerator")
    best = [b for b in best if isinstance(b, dict)] if isinstance(best, list) else []
    out = []
    if rec.get("accelerator_id") and rec.get("count"):
        # the matching row carries gpu_hours (training) and the accelerator's name
        same = [
            r
            for r in best + list(cands.get("ranked") or []) + list(cands.get("disaggregated") or [])
            if candidate_id(r) == candidate_id(rec)
        ]
        row = dict(same[0]) if same else {"accelerator_id": rec["accelerator_id"], "count": rec["count"]}
        row.setdefault("accelerator", rec.get("accelerator"))
        row["layout"] = row.get("layout") or rec.get("layout") or (sizing.get("memory") or {}).get("layout")
        if row.get("gpu_hours") is None:
            row["gpu_hours"] = _val((sizing.get("compute") or {}).get("gpu_hours"))
        row["fits"] = True
        out.append(row)
    out += best
    if not out:  # an older sizing result without best_per_accelerator
        out = [r for r in cands.get("ranked") or [] if r.get("fits", True)][:MAX_CONFIGURATIONS]
    out = out[:MAX_CONFIGURATIONS]
    # serving: the best disaggregated layouts (prefill + decode pools, planner.engine.search_disagg), a few
    out += [r for r in cands.get("disaggregated") or [] if isinstance(r, dict)][:MAX_DISAGGREGATED]
    # training: also each of these accelerators' best on one server (the sizing's best is chosen on GPU
    # time alone; what grows with the servers, only the cost engine prices)
    kept = {r.get("accelerator_id") for r in out}
    seen = {candidate_id(r) for r in out}
    extra = [r for r in cands.get("one_server_per_accelerator") or [] if isinstance(r, dict)
             and r.get("accelerator_id") in kept and candidate_id(r) not in seen]
    return out + extra


def _user_egress_gb(tokens_out: Decimal | None, rates: dict[str, Rate] | None) -> Decimal:
    """User traffic from the serving load: generated tokens x bytes sent per token (streamed)."""
    if not tokens_out or not rates or "egress_bytes_per_output_token" not in rates:
        return Decimal(0)
    return (tokens_out * rates["egress_bytes_per_output_token"].value / GB).quantize(Decimal("0.001"))


def workloads_from_sizing(
    sizing: dict, *, price_snapshot: dict, spec=None, rates: dict[str, Rate] | None = None, **_ignored
) -> tuple[list[Workload], list[str]]:
    notes: list[str] = []
    kind = sizing.get("kind", "")
    rec = sizing.get("recommendation") or {}
    tokens_in, tokens_out, serving_share = _serving_volume(spec)
    volume_note = _volume_note(spec)
    if volume_note is not None:
        notes.append(volume_note)
    # serving loses no training progress on an interruption, only the restart time
    ckpt_hours = (
        Decimal(str(getattr(getattr(spec, "training", None), "checkpoint_every_hours", 2.0) or 2.0))
        if kind in TRAINING_KINDS
        else Decimal(0)
    )
    is_training = kind in TRAINING_KINDS
    egress = _user_egress_gb(tokens_out, rates)
    sizing_rec = candidate_id(rec)
    if not sizing.get("gpu_required", True):
        notes.append(
            Msg("no GPU needed: the plan prices the model API's tokens and the CPU server the agent runs on")
        )
        cores, ram_gib = _cpu_needs(rec)
        return [
            Workload(
                candidate_id="no-gpu",
                accelerator_id=None,
                gpu_count=0,
                tokens_in_per_month=tokens_in,
                tokens_out_per_month=tokens_out,
                storage_gb=_storage_gb(rec, 1),
                egress_gb_per_month=egress,
                cpu_cores_needed=cores,
                host_ram_gib_needed=ram_gib,
            )
        ], notes
    accs = _accelerators(price_snapshot)
    latency_target = bool(
        getattr(getattr(spec, "serving", None), "ttft_p95_ms", None)
        or getattr(getattr(spec, "serving", None), "tpot_p95_ms", None)
    )
    seen, out = set(), []
    for c in configurations_to_price(sizing):
        acc_id, count = c.get("accelerator_id"), int(c.get("count") or 0)
        cid = candidate_id(c)
        if not acc_id or count < 1 or not c.get("fits", True) or cid in seen:
            continue
        seen.add(cid)
        acc = accs.get(acc_id)
        layout = c.get("layout") or {}
        tp = max(1, int(layout.get("tensor_parallel") or 1))
        pp = max(1, int(layout.get("pipeline_parallel") or 1))
        per_server = _gpus_per_server(acc) if acc is not None else 8
        # the shape the sizing's infrastructure block shows (planner.engine.shapes): whole
        # tensor-parallel groups per server, SXM/OAM rounded up to a sold board, PCIe cards as needed
        shape = server_shape(form_factor=acc.form_factor if acc is not None else "", count=count,
                             max_per_server=per_server, tensor_parallel=tp)
        if shape.buyable:
            gps, servers = shape.gpus_per_server, shape.servers
        else:
            gps = min(count, per_server)
            if gps > tp and gps % tp:
                gps -= gps % tp  # a server smaller than a TP group stays so: on-prem is then skipped
            servers = math.ceil(count / gps)
        power_w = None
        if acc is not None:
            from planner.engine.infra import servers_and_power

            kw = _val(servers_and_power(acc=acc, count=count, gpus_per_server=per_server, tensor_parallel=tp)
                      .get("server_power_kw"))
            power_w = None if kw is None else Decimal(str(kw)) * 1000
        site_limit = _site_limit(getattr(spec, "hardware", None), servers=servers, power_w=power_w)
        gpu_hours = _d(c.get("gpu_hours"))
        utilisation = None
        share = None
        if kind in SERVING_KINDS and serving_share is not None:
            utilisation = serving_share  # the serving fleet runs the hours a day it serves
            share = _load_share(spec.serving)  # ... sized on the peak, filled by the volume
        out.append(
            Workload(
                candidate_id=cid,
                accelerator_id=acc_id,
                accelerator_name=str(c.get("accelerator") or getattr(acc, "model", "") or acc_id),
                tensor_parallel=tp,
                pipeline_parallel=pp,
                pools=_pools(layout.get("disaggregated")),
                latency_target=latency_target and kind in SERVING_KINDS,
                gpu_count=count,
                gpus_per_server=gps,
                server_count=servers,
                server_power_w=power_w,
                server_rack_units=_rack_units(price_snapshot, acc_id=acc_id, acc=acc, gps=gps),
                is_training=is_training,
                training_gpu_hours_per_run=gpu_hours if is_training else None,
                tokens_in_per_month=tokens_in,
                tokens_out_per_month=tokens_out,
                storage_gb=_storage_gb(rec, servers),
                checkpoint_interval_hours=ckpt_hours,
                utilisation=utilisation,
                load_share=share,
                egress_gb_per_month=egress,
                meets_targets=c.get("meets_target") if isinstance(c.get("meets_target"), bool) else None,
                sizing_recommended=cid == sizing_rec,
                buyable_gpus_per_server=(shape.gpus_per_server,) if shape.buyable else (),
                sold_only_in_cloud=sold_only_in_cloud(acc_id),
                site_limit=site_limit,
            )
        )
    if not out:
        notes.append("the sizing found no fitting GPU configuration: nothing to price")
    return out, notes



def _cpu_needs(rec: dict) -> tuple[int | None, Decimal | None]:
    """Physical cores and RAM (GiB, 2 decimals up) of the CPU-only sizing's server; None: not stated."""
    cores = (rec.get("cpu_cores") or {}).get("value")
    ram = (rec.get("host_ram_bytes") or {}).get("value")
    if cores is None or ram is None:
        return None, None
    ram_gib = (Decimal(str(ram)) / Decimal(2**30)).quantize(Decimal("0.01"), rounding="ROUND_CEILING")
    return int(math.ceil(float(cores))), ram_gib



def _pools(pools) -> tuple[int, int, int, int] | None:
    """(prefill workers, prefill TP, decode workers, decode TP) of a disaggregated layout; None otherwise."""
    if not isinstance(pools, dict) or not all(isinstance(pools.get(k), dict) for k in ("prefill", "decode")):
        return None
    pre, dec = pools["prefill"], pools["decode"]
    return (int(pre.get("workers") or 1), int(pre.get("tensor_parallel") or 1),
            int(dec.get("workers") or 1), int(dec.get("tensor_parallel") or 1))
