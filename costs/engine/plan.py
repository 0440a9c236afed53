"""Cost one sized workload: every deployment option, its cash flow, break-even, uncertainty.

Entry point: ``cost_plan(inputs=CostInputs) -> CostResult``. Pure and deterministic: the same
inputs (and seed) give the same result, to the cent.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, replace
from decimal import Decimal
from functools import cached_property
from itertools import accumulate

from catalog.domain.messages import Msg, figure, with_structured

from . import analysis, decision
from .cloud import MODE_TEXT
from .errors import CostValidationError, FieldError
from .inputs import HOURS_PER_MONTH, CostInputs, Rate, ServerPrice, Workload
from .lines import RISK_ROW
from .model import (
    ROWS,
    Context,
    Line,
    OptionCost,
    api_option,
    cloud_option,
    dedicated_option,
    holds_tp_group,
    hybrid_option,
    month_dates,
    onprem_option,
    usage,
)
from .money import CENT, ONE, ZERO, cents
from .options import check_options_for_service, downtime_cost_given, validate_options
from .rates import apply_overrides, missing_rates

ENGINE_VERSION = "costs-2.0"
UNIT_COST = Decimal("0.0001")
RENTING_BY_HOUR = ("cloud_on_demand", "cloud_spot")
OWNING = ("onprem", "hybrid")
# Comparisons (break-even, Monte Carlo, tornado) run on this many candidate configurations, the
# ones with the cheapest options: enough for a decision, and it keeps a plan within its time budget.
COMPARE_CANDIDATES = 8


@dataclass(frozen=True, kw_only=True)
class LineTotals:
    line: Line
    months_net: tuple[Decimal, ...]  # cents, months 1..N
    upfront_net: Decimal
    terminal_net: Decimal
    months_vat: tuple[Decimal, ...]
    upfront_vat: Decimal
    terminal_vat: Decimal
    uniform: bool = False  # every month has the same net and VAT amount (the common case)

    @cached_property
    def net(self) -> Decimal:
        months = self.months_net[0] * len(self.months_net) if self.uniform else sum(self.months_net, ZERO)
        return self.upfront_net + months + self.terminal_net

    @cached_property
    def vat(self) -> Decimal:
        months = self.months_vat[0] * len(self.months_vat) if self.uniform else sum(self.months_vat, ZERO)
        return self.upfront_vat + months + self.terminal_vat


@dataclass(frozen=True, kw_only=True)
class PricedOption:
    option: OptionCost
    lines: tuple[LineTotals, ...]
    utilisation: Decimal
    efficiency: Decimal
    # the user gave the cost of an hour of downtime: the risk lines are money (else hours only)
    risk_priced: bool = True

    # ``lines`` holds every line, the risk row's too (listed beside the total); the budget (net,
    # VAT, cash flow, terminal) is what will be paid: every line but the expected cost of incidents.

    @cached_property
    def budget_lines(self) -> tuple[LineTotals, ...]:
        return tuple(lt for lt in self.lines if lt.line.row != RISK_ROW)

    @cached_property
    def risk_lines(self) -> tuple[LineTotals, ...]:
        return tuple(lt for lt in self.lines if lt.line.row == RISK_ROW)

    @cached_property
    def net(self) -> Decimal:
        return sum((lt.net for lt in self.budget_lines), ZERO)

    @cached_property
    def vat(self) -> Decimal:
        return sum((lt.vat for lt in self.budget_lines), ZERO)

    @cached_property
    def risk_net(self) -> Decimal:
        """The expected cost of incidents over the horizon, net (not in the budget)."""
        return sum((lt.net for lt in self.risk_lines), ZERO)

    @cached_property
    def risk_vat(self) -> Decimal:
        return sum((lt.vat for lt in self.risk_lines), ZERO)

    @cached_property
    def outage_hours_per_year(self) -> Decimal:
        """Expected hours of outage a year, averaged over the horizon (known without a cost of an hour)."""
        n = len(self.lines[0].months_net) if self.lines else 0
        if not n:
            return ZERO
        hours = sum((lt.line.outage_hours * lt.line.months_factor(n) for lt in self.risk_lines), ZERO)
        return hours * 12 / n

    @staticmethod
    def _flow(lines, net: bool) -> tuple[Decimal, ...]:
        if net:
            upfront = sum((lt.upfront_net for lt in lines), ZERO)
            months = [sum(col, ZERO) for col in zip(*(lt.months_net for lt in lines), strict=True)]
        else:
            upfront = sum((lt.upfront_vat for lt in lines), ZERO)
            months = [sum(col, ZERO) for col in zip(*(lt.months_vat for lt in lines), strict=True)]
        return (upfront, *months)

    @cached_property
    def _flow_net(self) -> tuple[Decimal, ...]:
        return self._flow(self.budget_lines, True)

    @cached_property
    def _flow_vat(self) -> tuple[Decimal, ...]:
        return self._flow(self.budget_lines, False)

    def cash_flow(self, *, vat: bool) -> list[Decimal]:
        """Months 0..N, without the terminal amount (shown separately)."""
        if not vat:
            return list(self._flow_net)
        return [a + b for a, b in zip(self._flow_net, self._flow_vat, strict=True)]

    def terminal(self, *, vat: bool) -> Decimal:
        return sum((lt.terminal_net + (lt.terminal_vat if vat else ZERO) for lt in self.budget_lines), ZERO)

    def cumulative(self, *, vat: bool) -> list[Decimal]:
        """Cumulative cash months 0..N with the terminal amount (book value credited, commitment
        still owed) at month N, so the last value is the option's total."""
        out = list(accumulate(self.cash_flow(vat=vat)))
        out[-1] += self.terminal(vat=vat)
        return out

    def basis_total(self, basis) -> Decimal:
        """The total a decision compares: net or gross, discounted when a rate is given; the
        expected cost of downtime is added only on the risk-adjusted basis."""
        risk = basis.with_risk
        if not basis.discount_rate:
            total = self.net + (self.vat if basis.vat else ZERO)
            return total + (self.risk_net + (self.risk_vat if basis.vat else ZERO) if risk else ZERO)
        out = self.npv(basis.discount_rate, vat=basis.vat)
        if risk:
            out += self._npv(self.risk_lines, basis.discount_rate, vat=basis.vat)
        return out

    def npv(self, rate: Decimal, *, vat: bool) -> Decimal:
        return self._npv(self.budget_lines, rate, vat=vat)

    def _npv(self, lines, rate: Decimal, *, vat: bool) -> Decimal:
        flow = list(self._flow(lines, True)) if lines else [ZERO] * (len(self._flow_net))
        if vat and lines:
            flow = [a + b for a, b in zip(flow, self._flow(lines, False), strict=True)]
        n = len(flow) - 1
        factors = [ONE / (ONE + rate) ** (Decimal(m) / 12) for m in range(n + 1)]
        total = sum((v * f for v, f in zip(flow, factors, strict=True)), ZERO)
        terminal = sum((lt.terminal_net + (lt.terminal_vat if vat else ZERO) for lt in lines), ZERO)
        return total + terminal * factors[-1]


@dataclass(frozen=True, kw_only=True)
class CostResult:
    options: tuple[PricedOption, ...]
    shortlist: dict[str, list[str]]
    analysis: dict
    inputs_used: dict
    skipped: tuple[dict, ...]
    notes: tuple[str, ...]
    meta: dict = field(default_factory=dict)
    jobs: dict = field(default_factory=dict)  # option id -> runs over the horizon (jobs only)
    basis: object = None

    def option(self, option_id: str) -> PricedOption:
        return next(p for p in self.options if p.option.option_id == option_id)

    def to_dict(self) -> dict:
        short = {i for ids in self.shortlist.values() for i in ids}
        cache: dict = {}
        return with_structured({
            **self.meta,
            "options": [
                option_to_dict(
                    p,
                    detailed=p.option.option_id in short,
                    line_cache=cache,
                    runs=self.jobs.get(p.option.option_id),
                    basis=self.basis,
                    currency=self.meta.get("currency"),
                )
                for p in self.options
            ],
            "shortlist": self.shortlist,
            **self.analysis,
            "inputs_used": self.inputs_used,
            "skipped": list(self.skipped),
            "notes": list(self.notes),
        })


# ---- totals ----------------------------------------------------------------------------------


@dataclass(frozen=True, kw_only=True)
class _Calendar:
    n: int
    drift: tuple[Decimal, ...]  # months 1..N
    vat: tuple[Decimal, ...]  # months 0..N, as fractions

    @cached_property
    def has_drift(self) -> bool:
        return any(f != ONE for f in self.drift)

    @cached_property
    def vat_uniform(self) -> bool:
        return len(set(self.vat[1:])) == 1


def _line_totals(line: Line, cal: _Calendar) -> LineTotals:
    drifting = (line.market and cal.has_drift) or line.schedule is not None
    if line.schedule is not None:
        drift = cal.drift if line.market else (ONE,) * cal.n
        months = tuple(cents(line.monthly * s * f) for s, f in zip(line.schedule, drift, strict=True))
    elif drifting:
        months = tuple(cents(line.monthly * f) for f in cal.drift)
    else:
        months = (cents(line.monthly),) * cal.n
    up, term = cents(line.upfront), cents(line.terminal)
    if line.vat:
        if drifting:
            m_vat = tuple(cents(m * v) for m, v in zip(months, cal.vat[1:], strict=True))
        elif cal.vat_uniform:
            m_vat = (cents(months[0] * cal.vat[1]),) * cal.n
        else:
            by_rate = {v: cents(months[0] * v) for v in set(cal.vat[1:])}
            m_vat = tuple(by_rate[v] for v in cal.vat[1:])
        up_vat, term_vat = cents(up * cal.vat[0]), cents(term * cal.vat[-1])
    else:
        m_vat, up_vat, term_vat = (ZERO,) * cal.n, ZERO, ZERO
    return LineTotals(
        line=line,
        months_net=months,
        upfront_net=up,
        terminal_net=term,
        months_vat=m_vat,
        upfront_vat=up_vat,
        terminal_vat=term_vat,
        uniform=bool(months) and not drifting and (cal.vat_uniform or not line.vat),
    )


def _price(
    option: OptionCost, cal: _Calendar, u: Decimal, e: Decimal, memo: dict | None = None, risk_priced: bool = True
) -> PricedOption:
    """``memo`` shares the totals of line objects that several options reuse (engineering,
    storage, outage lines are built once per plan); the option keeps the lines alive."""
    if memo is None:
        memo = {}
    totals = []
    for ln in option.lines:
        lt = memo.get(id(ln))
        if lt is None or lt.line is not ln:
            lt = memo[id(ln)] = _line_totals(ln, cal)
        totals.append(lt)
    return PricedOption(option=option, lines=tuple(totals), utilisation=u, efficiency=e, risk_priced=risk_priced)


def _line_net(ln: Line, cal: _Calendar, drift_sum: Decimal) -> Decimal:
    """A line's net total without rounding (for the linear model)."""
    if ln.schedule is not None:
        drift = cal.drift if ln.market else (ONE,) * cal.n
        months = sum((s * f for s, f in zip(ln.schedule, drift, strict=True)), ZERO)
    else:
        months = drift_sum if ln.market else Decimal(cal.n)
    return ln.upfront + ln.monthly * months + ln.terminal


def _line_vat_share(ln: Line, cal: _Calendar, net: Decimal) -> float:
    """A line's VAT as a share of its net total (0 for a line without VAT): the Monte Carlo's
    gross totals scale each line's simulated net by 1 + this share. VAT is proportional to each
    month's net, so the share is exact unless the VAT rate changes within the horizon, where it
    weighs the rates by the base case's months."""
    if not ln.vat or not net:
        return 0.0
    vat_months = cal.vat[1:]
    if ln.schedule is not None:
        drift = cal.drift if ln.market else (ONE,) * cal.n
        months = sum((s * f * v for s, f, v in zip(ln.schedule, drift, vat_months, strict=True)), ZERO)
    elif ln.market and cal.has_drift:
        months = sum((f * v for f, v in zip(cal.drift, vat_months, strict=True)), ZERO)
    else:
        months = sum(vat_months, ZERO)
    vat = ln.upfront * cal.vat[0] + ln.monthly * months + ln.terminal * cal.vat[-1]
    return float(vat / net)


def _fast_total(option: OptionCost, cal: _Calendar) -> Decimal:
    """Net budget total without VAT (risk lines left out, as in PricedOption.net), for the u = 0
    and u = 1 evaluations of the linear model."""
    drift_sum = sum(cal.drift, ZERO)
    return sum((_line_net(ln, cal, drift_sum) for ln in option.lines if ln.row != RISK_ROW), ZERO)


# ---- validation ------------------------------------------------------------------------------


def _validate_workloads(workloads: tuple[Workload, ...]) -> None:
    errors: list[FieldError] = []
    if not workloads:
        errors.append(FieldError(path="workloads", message=Msg("at least one sized configuration is needed")))
    for i, w in enumerate(workloads):
        p = f"workloads[{i}]"
        for name in ("gpu_count", "server_count", "gpus_per_server", "server_rack_units"):
            if getattr(w, name) < 0:
                errors.append(FieldError(path=f"{p}.{name}", message=Msg("must not be negative")))
        if w.gpus_per_server < 1:
            errors.append(FieldError(path=f"{p}.gpus_per_server", message=Msg("must be at least 1")))
        for name in (
            "server_power_w",
            "training_gpu_hours_per_run",
            "tokens_in_per_month",
            "tokens_out_per_month",
            "egress_gb_per_month",
            "checkpoint_interval_hours",
            "restart_hours",
        ):
            v = getattr(w, name)
            if v is not None and v < 0:
                errors.append(FieldError(path=f"{p}.{name}", message=Msg("must not be negative")))
        for tier, gb in w.storage_gb.items():
            if gb < 0:
                errors.append(FieldError(path=f"{p}.storage_gb.{tier}", message=Msg("must not be negative")))
        for name in ("utilisation", "load_share"):
            v = getattr(w, name)
            if v is not None and not 0 <= v <= 1:
                errors.append(FieldError(path=f"{p}.{name}", message=Msg("must be between 0 and 1")))
    if errors:
        raise CostValidationError(errors)


# ---- the plan --------------------------------------------------------------------------------


def _calendar(inputs: CostInputs, rates, notes: list) -> _Calendar:
    o = inputs.options
    drift = rates["price_drift_per_year"].value
    factors = tuple((ONE + drift) ** (Decimal(m) / 12) if drift else ONE for m in range(o.horizon_months))
    dates = month_dates(as_of=o.as_of, horizon_months=o.horizon_months)
    has_table = any(r.country == o.country for r in inputs.prices.vat.rates)
    if not has_table and not o.include_vat:
        # VAT is not wanted and not known for this country: totals are net, VAT zero (said so)
        notes.append(
            Msg(
                "no VAT table for country {country}: VAT is not computed (include_vat is off)",
                country=o.country,
            )
        )
        vat = (ZERO,) * len(dates)
    else:
        vat = tuple(inputs.prices.vat.rate(country=o.country, on=d, path="costs.country") for d in dates)
    return _Calendar(n=o.horizon_months, drift=factors, vat=vat)


def _rates_with_options(inputs: CostInputs, notes: list) -> dict[str, Rate]:
    o = inputs.options
    rates = apply_overrides(inputs.rates, o.overrides, path="costs.overrides")
    if o.downtime_cost_per_hour is not None:
        rates["downtime_cost_per_hour"] = Rate(
            value=o.downtime_cost_per_hour,
            unit="per hour of outage",
            currency=o.currency,
            source="user input: costs.downtime_cost_per_hour",
        )
    elif not downtime_cost_given(o):
        # no hidden default: without the user's cost of an hour of downtime the risk lines count
        # hours, not money (each option's risk says what pricing them needs)
        rates["downtime_cost_per_hour"] = Rate(
            value=ZERO,
            unit="per hour of outage",
            currency=o.currency,
            source="not given: costs.downtime_cost_per_hour (downtime is not priced)",
            valid_from=o.as_of,  # the plan date: as of it, no value is given
        )
    missing = missing_rates(rates)
    if missing:
        raise CostValidationError(
            [FieldError(path=f"rates.{k}", message=Msg("missing from the rate card")) for k in missing]
        )
    return rates


@dataclass(frozen=True, kw_only=True)
class _Job:
    """How a workload's fleet is used: the running share u and whether it is a job."""

    u: Decimal
    job: bool
    one_off: bool
    runs: Decimal  # over the horizon (jobs)
    efficiency_driven: bool  # the running hours follow from fixed work / efficiency


def _job(w: Workload, o, rates, e: Decimal, notes: list) -> _Job:
    n = o.horizon_months
    is_job = bool(w.is_training and w.training_gpu_hours_per_run and w.gpu_count)
    if o.utilisation is not None:
        return _Job(u=o.utilisation, job=is_job, one_off=False, runs=ZERO, efficiency_driven=False)
    if is_job:
        runs = o.runs_per_month * n if o.runs_per_month is not None else Decimal(o.runs or 1)
        # the fleet runs the useful GPU-hours / efficiency: lower efficiency, more hours, more money
        need = runs * w.training_gpu_hours_per_run / e / (w.gpu_count * HOURS_PER_MONTH * n)
        if need > 1:
            notes.append(
                Msg(
                    "{candidate}: {runs} run(s) need {need_pct}% of the horizon's hours on this fleet; "
                    "priced at 100% (the rest does not fit in {months} months)",
                    candidate=w.candidate_id,
                    runs=figure(runs),
                    need_pct=figure((need * 100).quantize(ONE)),
                    months=n,
                )
            )
        return _Job(
            u=min(ONE, need), job=True, one_off=o.runs_per_month is None, runs=runs, efficiency_driven=True
        )
    u = w.utilisation if w.utilisation is not None else rates["utilisation_default"].value
    return _Job(u=u, job=False, one_off=False, runs=ZERO, efficiency_driven=False)


def _check_service_utilisation(inputs: CostInputs) -> None:
    served = [w.utilisation * 24 for w in inputs.workloads
              if not w.is_training and w.utilisation is not None and w.utilisation > 0]
    check_options_for_service(inputs.options, serving_hours_per_day=served[0] if served else None)


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
    jobs: dict[str, _Job] = {}
    skipped: list[dict] = []
    api_prices = inputs.prices.api_prices + o.user_api_prices
    line_memo: dict = {}
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
            return usage(u=uu, n=n, one_off=job.one_off, job=job.job)

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
        if "hybrid" in o.options:
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
            **_linear(recipes[p.option.option_id], cal, p.utilisation),
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
    return CostResult(
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


def _cheapest_per_provider(priced: list[PricedOption]) -> list[PricedOption]:
    """Per (candidate, kind, provider) only the cheapest offer: the 2nd-cheapest region of the
    same cloud adds size, not a decision (hundreds of offers made plans megabytes)."""
    best: dict[tuple, PricedOption] = {}
    for p in priced:
        o = p.option
        key = (o.candidate_id, o.kind, o.detail.get("provider") if o.kind != "api" else o.option_id)
        if key not in best or p.net < best[key].net:
            best[key] = p
    keep = {id(p) for p in best.values()}
    return [p for p in priced if id(p) in keep]


def _unique_labels(priced: list[PricedOption]) -> None:
    """No two options may read the same: a repeated label gets its option id's tail."""
    seen: dict[str, int] = {}
    for i, p in enumerate(priced):
        label = p.option.label
        if label in seen:
            tail = p.option.option_id.split("|", 2)[-1]
            priced[i] = replace(p, option=replace(p.option, label=f"{label} [{tail}]"))
        seen[priced[i].option.label] = i


def _linear(recipe: Callable[[Decimal], OptionCost | None], cal: _Calendar, u0: Decimal | None = None) -> dict:
    """Per line: net total as a + b x u, exact at the option's own utilisation u0 and at u = 1
    (the secant through both; through u = 0 and 1 when u0 is 0 or 1). Totals are not linear
    in u everywhere: a one-off job's running months and the lines billed per running month step
    up from 0 to a whole month at the first hour, so a line through u = 0 put a short job's
    headline total (u0 = its share of the horizon's hours) far from the Monte Carlo base."""
    anchor = u0 if u0 is not None and ZERO < u0 < ONE else ZERO
    at0, at1 = recipe(anchor), recipe(ONE)
    assert at0 is not None and at1 is not None
    drift_sum = sum(cal.drift, ZERO)
    span = ONE - anchor

    def total(ln: Line) -> Decimal:
        return _line_net(ln, cal, drift_sum)

    def line(t_anchor: Decimal, t_one: Decimal) -> tuple[Decimal, Decimal]:
        b = (t_one - t_anchor) / span
        return t_anchor - b * anchor, b

    ones = {ln.key: ln for ln in at1.lines}
    out = []
    for ln in at0.lines:
        if ln.row == RISK_ROW:
            continue  # the budget's model: the expected cost of incidents is not in it
        t_anchor = total(ln)
        a, b = line(t_anchor, total(ones[ln.key]) if ln.key in ones else t_anchor)
        out.append(
            {
                "key": ln.key,
                "a": float(a),
                "b": float(b),
                "vat_share": _line_vat_share(ln, cal, t_anchor),
                "market": ln.market,
                "tag": ln.tag,
                "origin_currency": ln.origin_currency,
                # incident-driven budget lines (GPU time re-run after failures) follow the incident rate
                "downtime": ln.tag == "downtime",
            }
        )
    a, b = line(_fast_total(at0, cal), _fast_total(at1, cal))
    return {"lines": out, "a": float(a), "b": float(b)}


def _compared(
    shortlist: dict[str, list[str]], by_id: dict[str, PricedOption], must: set[str] = frozenset()
) -> dict[str, list[str]]:
    """The candidates whose cheapest option is among the COMPARE_CANDIDATES cheapest, plus the API
    and the candidates of the decision summary's options."""
    gpu = [c for c in shortlist if c != "api"]
    gpu.sort(key=lambda c: min(by_id[i].net for i in shortlist[c]))
    keep = set(gpu[:COMPARE_CANDIDATES]) | ({"api"} & set(shortlist))
    keep |= {by_id[i].option.candidate_id for i in must if i in by_id}
    return {c: ids for c, ids in shortlist.items() if c in keep}


SHORTLIST_CHEAPEST = 6  # besides the cheapest per kind and the recommended configuration's


def _shortlist(
    priced: list[PricedOption], recommended: str | None = None, must: set[str] = frozenset()
) -> dict[str, list[str]]:
    """The options a plan keeps in full (lines, cash flow) and compares: the cheapest of each
    kind over all candidates, the recommended configuration's cheapest of each kind, and the
    SHORTLIST_CHEAPEST cheapest overall. Every other option keeps its row totals."""
    by_cost = sorted(priced, key=lambda p: p.net)
    chosen: dict[str, PricedOption] = {}
    kinds_seen: set[str] = set()
    rec_kinds: set[str] = set()
    for p in by_cost:
        o = p.option
        if o.kind not in kinds_seen:
            kinds_seen.add(o.kind)
            chosen[o.option_id] = p
        if o.candidate_id == recommended and o.kind not in rec_kinds:
            rec_kinds.add(o.kind)
            chosen[o.option_id] = p
    for p in by_cost[:SHORTLIST_CHEAPEST]:
        chosen[p.option.option_id] = p
    for p in priced:  # the decision summary's options are always kept in full
        if p.option.option_id in must:
            chosen[p.option.option_id] = p
    out: dict[str, list[str]] = {}
    for p in priced:  # in pricing order: candidates as the sizing listed them
        if p.option.option_id in chosen:
            out.setdefault(p.option.candidate_id, []).append(p.option.option_id)
    return out


# ---- serialisation ---------------------------------------------------------------------------


def _s(d: Decimal | None, q: Decimal = CENT) -> str | None:
    return None if d is None else str(d.quantize(q))


def _cents_str(values) -> list[str]:
    # amounts here are sums of cent-rounded Decimals, already exact to the cent
    return [str(v.quantize(CENT)) for v in values]


_LINE_MONEY = ("upfront_net", "monthly_net", "terminal_net", "total_net", "vat", "total_gross")


def _line_dict(lt: LineTotals, n: int, cache: dict) -> dict:
    # lines shared by many options (engineering, storage, outage) are serialised once
    hit = cache.get(id(lt))
    if hit is None or hit[0] is not lt:
        net, vat = lt.net, lt.vat
        hit = cache[id(lt)] = (
            lt,
            {
                "key": lt.line.key,
                "label": lt.line.label,
                "upfront_net": str(lt.upfront_net),
                "monthly_net": str(lt.months_net[0]) if n else "0.00",
                "terminal_net": str(lt.terminal_net),
                "total_net": _s(net),
                "vat": _s(vat),
                "total_gross": _s(net + vat),
                "vat_applies": lt.line.vat,
                "follows_price_drift": lt.line.market,
                "origin_currency": lt.line.origin_currency,
                # quantities; the rates now sit in the breakdown (each with its source and date)
                "inputs": {k: v for k, v in lt.line.inputs.items() if k != "rates"},
                # quantity x unit price x months = amount, each unit price with source and date
                "breakdown": list(lt.line.breakdown),
                "months_billed": str(lt.line.months_factor(n).quantize(Decimal("0.0001")).normalize()),
            },
        )
    return dict(hit[1])


def option_to_dict(
    p: PricedOption,
    *,
    detailed: bool = True,
    line_cache: dict | None = None,
    runs: Decimal | None = None,
    basis=None,
    currency: str | None = None,
) -> dict:
    """One option as JSON. ``detailed=False`` leaves out the lines and the month-by-month
    lists (a plan keeps them for its shortlisted options; every option keeps row totals, totals
    and unit costs), which keeps a plan with hundreds of offers to a size a page can load."""
    o = p.option
    line_cache = {} if line_cache is None else line_cache
    n = len(p.lines[0].months_net) if p.lines else 0
    priced_risk = p.risk_priced
    rows = []
    for row in ROWS:
        lts = [lt for lt in p.lines if lt.line.row == row]
        unpriced = row == RISK_ROW and not priced_risk
        lines = [_line_dict(lt, n, line_cache) for lt in lts] if detailed else None
        if unpriced and lines:
            # counted in hours only: no money until the user gives the cost of an hour of downtime
            # (no "0 per hour" price either: the quantities stay, the price is not given)
            lines = [{**d, **dict.fromkeys(_LINE_MONEY), "breakdown": [
                {**b, "unit_price": None, "amount": None, "price": None, "basis": "not given"}
                if b.get("rate") == "downtime_cost_per_hour" else b for b in d.get("breakdown") or []]}
                for d in lines]
        rows.append(
            {
                "row": row,
                # the risk row is listed beside the total, never in it (the other rows make the total)
                **({"in_total": False} if row == RISK_ROW else {}),
                "total_net": None if unpriced else _s(sum((lt.net for lt in lts), ZERO)),
                "total_gross": None if unpriced else _s(sum((lt.net + lt.vat for lt in lts), ZERO)),
                "lines": lines,
            }
        )
    hours_y = p.outage_hours_per_year.quantize(Decimal("0.1"))
    risk = {
        "priced": priced_risk,
        "expected_downtime_net": _s(p.risk_net) if priced_risk else None,
        "expected_downtime_hours_per_year": str(hours_y),
    }
    if detailed:  # the options a plan keeps in full say it in words (kept short for the others)
        risk.update({
            "in_total": bool(basis is not None and basis.with_risk),
            "expected_downtime_gross": _s(p.risk_net + p.risk_vat) if priced_risk else None,
            "text": Msg("expected cost of incidents: not in the total") if priced_risk else Msg(
                "{hours} expected hours of downtime a year; enter the cost of an hour of downtime to price it",
                hours=figure(hours_y)),
        })
    net, vat = p.net, p.vat
    cash_flow = None
    if detailed:
        flow_net = p.cash_flow(vat=False)
        cash_flow = {
            "net": _cents_str(flow_net),
            "gross": _cents_str(p.cash_flow(vat=True)),
            "terminal_net": _s(p.terminal(vat=False)),
            "terminal_gross": _s(p.terminal(vat=True)),
            # with the terminal amount at month N: the last value is the total
            "cumulative_net": _cents_str(p.cumulative(vat=False)),
            "cumulative_gross": _cents_str(p.cumulative(vat=True)),
        }
    useful_h = o.useful_gpu_hours_per_month * n
    tokens = (o.tokens_per_month or ZERO) * n
    out_tokens = (o.output_tokens_per_month or ZERO) * n
    job = None
    if runs is not None and runs > 0:
        owned = o.kind in OWNING or o.kind in ("dedicated", "cloud_commit_1y", "cloud_commit_3y")
        run_share = net * p.utilisation if owned else net
        job = {
            "runs": _s(runs),
            "per_run_net": _s(net / runs),
            # paid for every hour: the runs' share of the total and what the idle rest costs
            "runs_share_net": _s(run_share),
            "idle_remainder_net": _s(net - run_share),
            "running_share_of_hours": str(p.utilisation.quantize(Decimal("0.0001"))),
        }
    else:
        runs = useful_h / o.training_gpu_hours_per_run if o.training_gpu_hours_per_run else ZERO
    return {
        "id": o.option_id,
        "kind": o.kind,
        "candidate": o.candidate_id,
        "label": o.label,
        "detail": o.detail,
        "unknowns": list(o.unknowns),
        "warnings": list(o.warnings),
        "utilisation": str(p.utilisation),
        "efficiency": str(p.efficiency),
        "rows": rows,
        "risk": risk,
        "totals": {
            "net": _s(net),
            "vat": _s(vat),
            "gross": _s(net + vat),
            # what the decision compares (net or gross; NPV when a discount rate is given)
            "decision": _s(p.basis_total(basis)) if basis is not None else None,
            "npv": _s(p.basis_total(basis)) if basis is not None and basis.discount_rate else None,
            "vat_recovered": _s(vat) if basis is not None and not basis.vat and basis.recoverable else None,
        },
        "per_month_average": {"net": _s(net / n) if n else None, "gross": _s((net + vat) / n) if n else None},
        "cash_flow": cash_flow,
        "job": job,
        "unit_costs": {
            "per_useful_gpu_hour_net": _s(net / useful_h, UNIT_COST) if useful_h else None,
            "per_1m_tokens_net": _s(net / tokens * 1_000_000, UNIT_COST) if tokens else None,
            # the option's whole cost over the horizon / the output tokens served in it at the
            # stated volume (serving.requests_per_day x output_tokens): what a million answers cost
            "per_1m_output_tokens_net": _s(net / out_tokens * 1_000_000, UNIT_COST) if out_tokens else None,
            "per_1m_output_tokens_gross": _s((net + vat) / out_tokens * 1_000_000, UNIT_COST) if out_tokens else None,
            "output_tokens": str(out_tokens),
            "currency": currency,
            "per_training_run_net": _s(net / runs) if runs else None,
            "useful_gpu_hours": _s(useful_h),
            "tokens": str(tokens),
            "training_runs": _s(runs) if runs else None,
        },
    }


def _inputs_used(inputs: CostInputs, rates, cal: _Calendar) -> dict:
    o = inputs.options
    currencies = {r.currency for r in rates.values() if r.currency}
    currencies |= {x.on_demand.currency for x in inputs.prices.cloud_offers if x.on_demand}
    currencies |= {s.price.currency for s in inputs.prices.servers + o.user_servers}
    currencies |= {x.monthly.currency for x in inputs.prices.dedicated_offers}
    currencies |= {a.input_per_1m_tokens.currency for a in inputs.prices.api_prices + o.user_api_prices}
    return {
        "rates": [
            {
                "key": k,
                "value": str(r.value),
                "unit": r.unit,
                "currency": r.currency or "",
                "source": r.source,
                "valid_from": r.valid_from.isoformat() if r.valid_from else None,
            }
            for k, r in sorted(rates.items())
        ],
        "fx": inputs.prices.fx.used(currencies=currencies, quote=o.currency, on=o.as_of),
        "vat": {
            "country": o.country,
            "rates_by_month": sorted({str(v) for v in cal.vat}),
            "source": inputs.prices.vat.source(country=o.country, on=o.as_of),
        },
        "power_tariff": None
        if inputs.prices.power_tariff_per_kwh is None
        else {
            "amount": str(inputs.prices.power_tariff_per_kwh.amount),
            "currency": inputs.prices.power_tariff_per_kwh.currency,
            "source": inputs.prices.power_tariff_per_kwh.source,
        },
    }
