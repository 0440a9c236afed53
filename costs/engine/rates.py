"""The rate-card schema: every rate the cost model reads, with its unit and valid range.

The database rate card (costs.models.RateCard) and user overrides are validated against this,
so a typo in a key or a PUE of 0.5 is an error with the key in its path, not a silent default.
A key may carry a scope after "@" (e.g. ``egress_per_gb@dedicated``, ``cloud_storage_per_gb_month.object@GCP``);
the scoped value wins over the plain one where the model asks for that scope.
"""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal

from planner.engine.messages import Msg

from .errors import CostValidationError, FieldError
from .inputs import Rate

ENGINEERING_KINDS = ("cloud", "dedicated", "onprem", "hybrid", "api")
ROLES = ("mlops", "infra")


@dataclass(frozen=True)
class RateSpec:
    unit: str
    kind: str  # fraction (0..1) | money (>= 0, needs a currency) | number (>= 0) | min1 (>= 1)
    help: str


def _build() -> dict[str, RateSpec]:
    s: dict[str, RateSpec] = {
        "utilisation_default": RateSpec("share of calendar hours", "fraction", "GPUs running work"),
        "efficiency_default": RateSpec(
            "share of running hours", "fraction", "running hours doing useful work"
        ),
        "pue": RateSpec("ratio", "min1", "facility power / IT power"),
        "amortisation_years": RateSpec("years", "number", "straight-line amortisation period"),
        "residual_value_share": RateSpec("share of capex", "fraction", "value left after amortisation"),
        "support_share_per_year": RateSpec("share of capex per year", "fraction", "vendor support contracts"),
        "spares_share": RateSpec("share of server capex", "fraction", "spare parts bought with the servers"),
        "idle_power_share": RateSpec("share of full IT load", "fraction", "power drawn by an idle server"),
        "colocation_per_kw_month": RateSpec("per kW of IT load per month", "money", "rack space, cooling"),
        "colocation_per_u_month": RateSpec("per rack unit per month", "money", "rack space priced per U"),
        "network_capex_per_server": RateSpec("per server", "money", "NICs, switch ports, cables"),
        "server_host_capex_per_gpu_slot": RateSpec(
            "per GPU slot", "money", "chassis, CPUs, RAM, PSUs when only the GPU price is known"
        ),
        "egress_per_gb": RateSpec("per GB", "money", "internet egress"),
        "power_tariff_per_kwh": RateSpec("per kWh", "money", "electricity, if the catalog has no tariff"),
        "downtime_cost_per_hour": RateSpec("per hour of outage", "money", "business cost of an outage"),
        "sla_penalty_per_incident": RateSpec("per incident", "money", "contractual penalty"),
        "training_runs_per_month": RateSpec(
            "runs per month", "number", "training runs the fleet does each month"
        ),
        "spot_interruptions_per_month": RateSpec("per instance-month of running", "number", "spot reclaims"),
        "price_drift_per_year": RateSpec("share per year", "number", "expected change of rental prices"),
        "commit_discount_1y": RateSpec(
            "share off on-demand", "fraction", "used when an offer lists no 1y price"
        ),
        "commit_discount_3y": RateSpec(
            "share off on-demand", "fraction", "used when an offer lists no 3y price"
        ),
        "mc_utilisation_sd": RateSpec("absolute", "fraction", "Monte Carlo spread of utilisation"),
        "mc_efficiency_sd": RateSpec("absolute", "fraction", "Monte Carlo spread of efficiency"),
        "mc_price_drift_sd": RateSpec("per year", "fraction", "Monte Carlo spread of price drift"),
        "mc_fx_sd": RateSpec("log-normal sigma", "fraction", "Monte Carlo spread of FX over the horizon"),
        "mc_incident_sd": RateSpec("log-normal sigma", "number", "Monte Carlo spread of the incident rate"),
    }
    for tier in ("nvme", "ssd", "hdd", "object"):
        s[f"cloud_storage_per_gb_month.{tier}"] = RateSpec("per GB-month", "money", Msg("rented {tier} storage", tier=tier))
        s[f"onprem_storage_capex_per_gb.{tier}"] = RateSpec("per GB", "money", Msg("bought {tier} storage", tier=tier))
    for role in ROLES:
        s[f"engineering_rate_per_hour.{role}"] = RateSpec(
            "per hour", "money", Msg("loaded hourly cost of {role}", role=role)
        )
    for kind in ENGINEERING_KINDS:
        for role in ROLES:
            s[f"setup_hours.{kind}.{role}"] = RateSpec("hours, once", "number", Msg("{role} setup of {kind}", role=role, kind=kind))
            s[f"ops_hours_per_month.{kind}.{role}"] = RateSpec(
                "hours per month", "number", Msg("{role} ops of {kind}", role=role, kind=kind)
            )
        s[f"incidents_per_year.{kind}"] = RateSpec("per year", "number", Msg("outages of {kind}", kind=kind))
        s[f"mttr_hours.{kind}"] = RateSpec("hours", "number", Msg("mean time to recover, {kind}", kind=kind))
    for red in ("n_plus_1", "multi_zone"):
        s[f"redundancy_reduction.{red}"] = RateSpec("share of downtime avoided", "fraction", red)
    return s


RATE_SCHEMA: dict[str, RateSpec] = _build()


def base_key(key: str) -> str:
    return key.split("@", 1)[0]


def validate_rate(key: str, value: Decimal, currency: str | None, *, path: str) -> list[FieldError]:
    spec = RATE_SCHEMA.get(base_key(key))
    if spec is None:
        return [FieldError(path=path, message=Msg("unknown rate {key}", key=repr(key)))]
    if not value.is_finite():
        return [FieldError(path=path, message=Msg("must be a finite number"))]
    if spec.kind == "fraction" and not (0 <= value <= 1):
        return [FieldError(path=path, message=Msg("must be between 0 and 1"))]
    if spec.kind == "min1" and value < 1:
        return [FieldError(path=path, message=Msg("must be at least 1"))]
    if spec.kind in ("number", "money") and value < 0 and base_key(key) != "price_drift_per_year":
        return [FieldError(path=path, message=Msg("must not be negative"))]
    if spec.kind == "money" and not currency:
        return [FieldError(path=path, message=Msg("a money rate needs a currency"))]
    return []


def apply_overrides(rates: dict[str, Rate], overrides: dict[str, Decimal], *, path: str) -> dict[str, Rate]:
    """User overrides keep the unit and currency of the rate they replace; source says so."""
    errors: list[FieldError] = []
    out = dict(rates)
    for key, value in overrides.items():
        current = rates.get(key) or rates.get(base_key(key))
        currency = current.currency if current else None
        errs = validate_rate(key, value, currency, path=f"{path}.{key}")
        if not errs and current is None:
            errs = [
                FieldError(path=f"{path}.{key}", message=Msg("no rate-card value to override (unknown currency)"))
            ]
        errors += errs
        if not errs:
            out[key] = Rate(
                value=value, unit=current.unit, currency=currency, source="user override", valid_from=None
            )
    if errors:
        raise CostValidationError(errors)
    return out


def lookup(rates: dict[str, Rate], key: str, *, scope: str | None = None) -> Rate:
    if scope and f"{key}@{scope}" in rates:
        return rates[f"{key}@{scope}"]
    if key not in rates:
        raise CostValidationError([FieldError(path=f"rates.{key}", message=Msg("missing from the rate card"))])
    return rates[key]


def missing_rates(rates: dict[str, Rate]) -> list[str]:
    return [k for k in RATE_SCHEMA if k not in rates]
