"""Cost one sized workload: every deployment option, its cash flow, break-even, uncertainty.

Entry point: ``cost_plan(inputs=CostInputs) -> CostResult``. Pure and deterministic: the same
inputs (and seed) give the same result, to the cent.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from decimal import Decimal

from catalog.domain.messages import Msg

from . import analysis, decision
from .cloud import MODE_TEXT
from .inputs import HOURS_PER_MONTH, CostInputs, ServerPrice, Workload
from .model import (
    Context,
    OptionCost,
    api_option,
    cloud_option,
    dedicated_option,
    holds_tp_group,
    hybrid_option,
    onprem_option,
    usage,
)
from .money import ZERO
from .options import downtime_cost_given, validate_options
from .plan_inputs import (
    _calendar,
    _check_service_utilisation,
    _Job,
    _job,
    _rates_with_options,
    _validate_workloads,
)
from .result import CostResult
from .serialise import _inputs_used, option_to_dict
from .shortlist import COMPARE_CANDIDATES, _cheapest_per_provider, _compared, _shortlist, _unique_labels
from .totals import LineTotals, PricedOption, _linear, _price

__all__ = ["ENGINE_VERSION", "CostResult", "LineTotals", "PricedOption", "cost_plan", "option_to_dict"]

ENGINE_VERSION = "costs-2.0"
RENTING_BY_HOUR = ("cloud_on_demand", "cloud_spot")


def cost_plan(*, inputs: CostInputs) -> CostResult:
    o = inputs.options
    validate_options(o)
    _validate_workloads(inputs.workloads)
    _check_service_utilisation(inputs)
    notes: list[str] = []
    rates = _rates_with_options(inputs, notes)
    cal = _calendar(inputs, rates, notes)
    ctx = Context(
        currency=o.currency,
        country=o.country,
        as_of=o.as_of,
        horizon_months=o.horizon_months,
        prices=inputs.prices,
        rates=rates,
        redundancy=o.redundancy,
        drift_factors=cal.drift,
        include_vat=o.include_vat,
        support_lines=o.support_lines,
    )
    e = o.efficiency if o.efficiency is not None else rates["efficiency_default"].value
    n = o.horizon_months
    downtime_priced = downtime_cost_given(o)

    priced: list[PricedOption] = []
    recipes: dict[str, Callable[[Decimal], OptionCost | None]] = {}
    built: dict[str, OptionCost] = {}
    jobs: dict[str, _Job] = {}
    skipped: list[dict] = []
    api_prices = inputs.prices.api_prices + o.user_api_prices
    line_memo: dict = {}
    uses: dict = {}
    inter_zone = o.inter_zone_gb_per_month or ZERO
    if o.redundancy == "multi_zone" and o.inter_zone_gb_per_month is None:
        notes.append(
            Msg(
                "multi-zone redundancy: traffic between zones is not priced; give "
                "costs.inter_zone_gb_per_month to price it"
            )
        )

    def add(recipe: Callable[[Decimal], OptionCost | None], job: _Job, w: Workload) -> None:
        opt = recipe(job.u)
        if opt is not None:
            priced.append(_price(opt, cal, job.u, e, line_memo, risk_priced=downtime_priced))
            recipes[opt.option_id] = recipe
            built[opt.option_id] = opt  # as built (before _unique_labels relabels): _linear reads its lines
            jobs[opt.option_id] = job

    workloads = inputs.workloads
    if o.egress_gb_per_month is not None:
        workloads = tuple(replace(w, egress_gb_per_month=o.egress_gb_per_month) for w in workloads)
    for w in workloads:
        if not w.accelerator_id or w.gpu_count == 0:
            skipped.append({"candidate": w.candidate_id, "kind": "gpu options", "reason": Msg("no GPU needed")})
            continue
        job = _job(w, o, rates, e, notes)

        def use_of(uu: Decimal, job=job):
            # one Usage per running share and kind of use: the offers share it (and the lines built from it)
            key = (str(uu), job.one_off, job.job)
            if key not in uses:
                uses[key] = usage(u=uu, n=n, one_off=job.one_off, job=job.job)
            return uses[key]

        all_offers = [x for x in inputs.prices.cloud_offers if x.accelerator_id == w.accelerator_id]
        # a tensor-parallel group cannot span separate instances (1.): only hosts that hold whole groups
        offers = [x for x in all_offers if holds_tp_group(w, x.gpus_per_instance)]
        too_small = _tp_reason(w, len(all_offers) - len(offers), "instance")
        for kind in ("cloud_on_demand", "cloud_spot", "cloud_commit_1y", "cloud_commit_3y"):
            if kind not in o.options:
                continue
            before = len(priced)
            for offer in offers:
                add(
                    lambda uu, w=w, offer=offer, kind=kind, use_of=use_of: cloud_option(
                        ctx, w, offer, kind, use=use_of(uu), e=e, inter_zone_gb=inter_zone
                    ),
                    job,
                    w,
                )
            if len(priced) == before:
                skipped.append(
                    {
                        "candidate": w.candidate_id,
                        "kind": kind,
                        "reason": too_small or Msg(
                            "no {mode} price for {accelerator_id} in the catalog",
                            mode=Msg(MODE_TEXT[kind]) if kind in MODE_TEXT else kind,
                            accelerator_id=_accelerator_text(w),
                        ),
                    }
                )
        if "dedicated" in o.options:
            all_ded = [x for x in inputs.prices.dedicated_offers if x.accelerator_id == w.accelerator_id]
            ded = [x for x in all_ded if holds_tp_group(w, x.gpus_per_server)]
            for offer in ded:
                add(
                    lambda uu, w=w, offer=offer, use_of=use_of: dedicated_option(
                        ctx, w, offer, use=use_of(uu), e=e, inter_zone_gb=inter_zone
                    ),
                    job,
                    w,
                )
            if not ded:
                skipped.append(
                    {
                        "candidate": w.candidate_id,
                        "kind": "dedicated",
                        "reason": _tp_reason(w, len(all_ded), "server")
                        or Msg("no dedicated server offer with {accelerator_id}", accelerator_id=_accelerator_text(w)),
                    }
                )
        # an accelerator rented only as one cloud's instances is never bought (owned or hybrid)
        not_sold = w.sold_only_in_cloud and Msg("sold only as {provider} instances", provider=w.sold_only_in_cloud)
        all_servers = [] if not_sold else _servers_for(inputs.prices.servers, o.user_servers, w)
        servers = [sp for sp in all_servers if holds_tp_group(w, sp.gpus_per_server)]
        if "onprem" in o.options:
            for sp in servers:
                add(
                    lambda uu, w=w, sp=sp, use_of=use_of: onprem_option(
                        ctx, w, sp, use=use_of(uu), e=e, inter_zone_gb=inter_zone
                    ),
                    job,
                    w,
                )
            if not servers:
                skipped.append(
                    {
                        "candidate": w.candidate_id,
                        "kind": "onprem",
                        "reason": not_sold or _tp_reason(w, len(all_servers), "server")
                        or Msg("no purchase price of a server with {accelerator_id}; enter a quote in costs.server_prices", accelerator_id=_accelerator_text(w)),
                    }
                )
        if "hybrid" in o.options and w.is_training:
            # one synchronous job cannot span own servers and a cloud region: its gradients cross every
            # GPU each step, over one fabric (a service's replicas can be split; a training run cannot)
            skipped.append({"candidate": w.candidate_id, "kind": "hybrid", "reason": Msg(
                "a training run cannot be split between own servers and the cloud: its GPUs exchange "
                "gradients every step over one network")})
        elif "hybrid" in o.options:
            od = [x for x in offers if x.on_demand is not None]
            best = min(
                od, key=lambda x: ctx.net(x.on_demand, path="prices") / x.gpus_per_instance, default=None
            )
            made = False
            if servers and best is not None:
                before = len(priced)
                add(
                    lambda uu, w=w, sp=servers[0], best=best, use_of=use_of: hybrid_option(
                        ctx, w, sp, best, owned_share=o.hybrid.owned_share, use=use_of(uu), e=e
                    ),
                    job,
                    w,
                )
                made = len(priced) > before
            if not made:
                skipped.append(
                    {
                        "candidate": w.candidate_id,
                        "kind": "hybrid",
                        "reason": not_sold or Msg("needs a server price, an on-demand offer and at least two servers to split"),
                    }
                )
    if "api" in o.options:
        w0 = workloads[0]
        api_w = Workload(
            candidate_id="api",
            accelerator_id=None,
            gpu_count=0,
            tokens_in_per_month=w0.tokens_in_per_month,
            tokens_out_per_month=w0.tokens_out_per_month,
            storage_gb=w0.storage_gb,
            egress_gb_per_month=w0.egress_gb_per_month,
            cpu_cores_needed=w0.cpu_cores_needed,
            host_ram_gib_needed=w0.host_ram_gib_needed,
        )
        api_job = _Job(u=ZERO, job=False, one_off=False, runs=ZERO, efficiency_driven=False)
        if not api_prices:
            skipped.append(
                {
                    "candidate": "api",
                    "kind": "api",
                    "reason": Msg("no model API prices: enter them in costs.api_prices"),
                }
            )
        elif api_w.tokens_in_per_month is None and api_w.tokens_out_per_month is None:
            skipped.append({"candidate": "api", "kind": "api", "reason": Msg("the workload has no token volume")})
        for api in api_prices:
            add(lambda uu, api=api, api_w=api_w: api_option(ctx, api_w, api), api_job, api_w)

    offers_priced = len([p for p in priced if p.option.kind != "api"])
    priced = _cheapest_per_provider(priced)
    _unique_labels(priced)
    basis = decision.Basis(
        vat=o.include_vat and not o.vat_recoverable,
        discount_rate=o.discount_rate,
        horizon_months=n,
        recoverable=o.vat_recoverable,
        rule=o.decision_basis,
        downtime_priced=downtime_priced,
        job_runs=(o.runs or 1) if workloads and all(w.is_training for w in workloads) and o.runs_per_month is None
        else None,
    )
    by_workload = {w.candidate_id: w for w in workloads}
    picks = decision.pick(priced=priced, workloads=by_workload, basis=basis, model_preset=inputs.model_preset,
                           model_name=inputs.model_name)
    shortlist = _shortlist(
        priced,
        recommended=workloads[0].candidate_id if workloads else None,
        must=decision.picked_ids(picks),
    )
    compared = _compared(shortlist, {p.option.option_id: p for p in priced}, must=decision.picked_ids(picks))
    compared_ids = {i for ids in compared.values() for i in ids}
    short = [p for p in priced if p.option.option_id in compared_ids]
    linear = {
        p.option.option_id: {
            **_linear(recipes[p.option.option_id], cal, p.utilisation, at_u0=built[p.option.option_id]),
            "efficiency_driven": jobs[p.option.option_id].efficiency_driven,
        }
        for p in short
    }
    result_analysis = analysis.analyse(
        priced=short,
        linear=linear,
        shortlist=compared,
        rates=rates,
        options=o,
        calendar_drift=cal.drift,
        vat=basis.vat,
        extra_pairs=decision.pairs(picks),
    )
    result_analysis["compared_candidates"] = list(compared)
    result_analysis["decision"] = decision.summary(
        picks=picks,
        priced=priced,
        workloads=by_workload,
        basis=basis,
        analysis=result_analysis,
        linear=linear,
        jobs={i: {"runs": j.runs, "job": j.job, "u": j.u} for i, j in jobs.items()},
        skipped=skipped,
        options=o,
        efficiency=e,
    )
    if len(compared) < len(shortlist):
        notes.append(
            Msg("Break-even, Monte Carlo and sensitivity cover the {compare_candidates} candidate configurations with the cheapest options (and the API); every candidate has its cost table.", compare_candidates=COMPARE_CANDIDATES)
        )
    if any(p.option.unknowns for p in priced):
        notes.append(
            Msg("Some options have unknown inputs (see each option's 'unknowns'); their totals leave those items out.")
        )
    meta = {
        "engine_version": ENGINE_VERSION,
        "currency": o.currency,
        "as_of": o.as_of.isoformat(),
        "horizon_months": o.horizon_months,
        "country": o.country,
        "include_vat": o.include_vat,
        "vat_recoverable": o.vat_recoverable,
        "discount_rate": str(o.discount_rate),
        "comparison_basis": basis.to_dict(),
        "hours_per_month": str(HOURS_PER_MONTH),
        "efficiency": str(e),
        "redundancy": o.redundancy,
        "vat_rates_by_month": [str(v) for v in cal.vat],
        # every matching offer is priced; the result keeps the cheapest per provider (3.)
        "offers_priced": offers_priced,
    }
    mine_servers = {s.accelerator_id for s in o.user_servers}
    mine_api = {(a.provider, a.model) for a in o.user_api_prices}
    user_priced = frozenset(
        p.option.option_id for p in priced
        if (p.option.kind in ("onprem", "hybrid") and by_workload[p.option.candidate_id].accelerator_id in mine_servers)
        or (p.option.kind == "api" and ((p.option.detail or {}).get("provider"), (p.option.detail or {}).get("model")) in mine_api)
    )
    return CostResult(
        user_priced=user_priced,
        options=tuple(priced),
        shortlist=shortlist,
        analysis=result_analysis,
        inputs_used=_inputs_used(inputs, rates, cal),
        skipped=tuple(skipped),
        notes=tuple(notes),
        meta=meta,
        jobs={i: j.runs for i, j in jobs.items() if j.job},
        basis=basis,
    )


def _servers_for(
    catalog: tuple[ServerPrice, ...], user: tuple[ServerPrice, ...], w: Workload
) -> list[ServerPrice]:
    """The user's own quote wins over a catalog price for the same accelerator; then the buyable
    shape chosen for this layout (a catalog system that includes the GPUs, e.g. DGX, before one
    built from the GPU's price), then any catalog system that holds the tensor-parallel group."""
    mine = [s for s in user if s.accelerator_id == w.accelerator_id]
    if mine:
        return mine[-1:]
    hits = [s for s in catalog if s.accelerator_id == w.accelerator_id]
    for group in (
        # the sold shape the sizing shows (e.g. a 4-GPU HGX board for 3 GPUs), a listed system first
        [s for s in hits if s.price.basis != "derived" and s.gpus_per_server in w.buyable_gpus_per_server],
        [s for s in hits if s.gpus_per_server in w.buyable_gpus_per_server],
        [s for s in hits if s.price.basis != "derived" and holds_tp_group(w, s.gpus_per_server)],
        [s for s in hits if s.gpus_per_server == w.gpus_per_server],
        [s for s in hits if holds_tp_group(w, s.gpus_per_server)],
        hits,
    ):
        if group:
            return group[:1]
    return []


def _accelerator_text(w) -> str:
    """The accelerator as a reason names it to the user: its catalog name ("A10G"), never the id
    ("nvidia-a10g-24gb") unless the name is unknown."""
    return w.accelerator_name or w.accelerator_id or ""


def _tp_reason(w: Workload, excluded: int, host: str) -> str | None:
    if not excluded:
        return None
    return (
        Msg("{excluded} server {excluded:plural:offer|offers} with {accelerator_id} hold fewer GPUs than the tensor-parallel group (TP{tensor_parallel}) or not a multiple of it: a TP group cannot span separate servers", excluded=excluded, accelerator_id=_accelerator_text(w), tensor_parallel=w.tensor_parallel)
        if host == "server" else
        Msg("{excluded} instance {excluded:plural:offer|offers} with {accelerator_id} hold fewer GPUs than the tensor-parallel group (TP{tensor_parallel}) or not a multiple of it: a TP group cannot span separate instances", excluded=excluded, accelerator_id=_accelerator_text(w), tensor_parallel=w.tensor_parallel)
    )

