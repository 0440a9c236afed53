"""What cost_plan reads before it prices anything: the sized configurations checked, the month
calendar (price drift, VAT by date), the rate card with the user's overrides, and how each fleet is
used (a service's running share, or a job's runs)."""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal

from catalog.domain.messages import Msg, figure

from .errors import CostValidationError, FieldError
from .inputs import HOURS_PER_MONTH, CostInputs, Rate, Workload
from .model import month_dates
from .money import ONE, ZERO
from .options import check_options_for_service, downtime_cost_given
from .rates import apply_overrides, missing_rates
from .totals import _Calendar

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
