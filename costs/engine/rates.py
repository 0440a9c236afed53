"""The rate-card schema: every rate the cost model reads, with its unit and valid range.

The database rate card (costs.models.RateCard) and user overrides are validated against this,
so a typo in a key or a PUE of 0.5 is an error with the key in its path, not a silent default.
A key may carry a scope after "@" (e.g. ``egress_per_gb@dedicated``, ``cloud_storage_per_gb_month.object@GCP``);
the scoped value wins over the plain one where the model asks for that scope.
"""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal

from catalog.domain.messages import Msg

from .errors import CostValidationError, FieldError
from .inputs import Rate

ENGINEERING_KINDS = ("cloud", "dedicated", "onprem", "hybrid", "api")
ROLES = ("mlops", "infra")
ROLE_TEXT = {"mlops": Msg("MLOps engineer"), "infra": Msg("infrastructure engineer")}
KIND_TEXT = {"cloud": Msg("cloud"), "dedicated": Msg("dedicated servers"), "onprem": Msg("on-prem"),
             "hybrid": Msg("hybrid"), "api": Msg("external API")}
TIER_TEXT = {"nvme": "NVMe", "ssd": "SSD", "hdd": "HDD", "object": Msg("object (S3)")}
REDUNDANCY_TEXT = {"n_plus_1": Msg("N+1 spare server"), "multi_zone": Msg("a second zone")}


@dataclass(frozen=True)
class RateSpec:
    unit: str
    kind: str  # fraction (0..1) | money (>= 0, needs a currency) | number (>= 0) | min1 (>= 1)
    help: str


def _build() -> dict[str, RateSpec]:
    s: dict[str, RateSpec] = {
        "utilisation_default": RateSpec(Msg("share of calendar hours"), "fraction", Msg("GPUs running work")),
        "efficiency_default": RateSpec(
            Msg("share of running hours"), "fraction", Msg("running hours doing useful work")
        ),
        "pue": RateSpec(Msg("ratio"), "min1", Msg("facility power / IT power")),
        "amortisation_years": RateSpec(Msg("years"), "number", Msg("straight-line amortisation period")),
        "residual_value_share": RateSpec(Msg("share of capex"), "fraction", Msg("value left after amortisation")),
        "support_share_per_year": RateSpec(Msg("share of capex per year"), "fraction", Msg("vendor support contracts")),
        "spares_share": RateSpec(Msg("share of server capex"), "fraction", Msg("spare parts bought with the servers")),
        "idle_power_share": RateSpec(Msg("share of full IT load"), "fraction", Msg("power drawn by an idle server")),
        "colocation_per_kw_month": RateSpec(Msg("per kW of IT load per month"), "money", Msg("rack space, cooling")),
        "colocation_per_u_month": RateSpec(Msg("per rack unit per month"), "money", Msg("rack space priced per U")),
        "network_capex_per_server": RateSpec(Msg("per server"), "money", Msg("NICs, switch ports, cables")),
        "server_host_capex_per_gpu_slot": RateSpec(
            Msg("per GPU slot"), "money", Msg("chassis, CPUs, RAM, PSUs when only the GPU price is known")
        ),
        "egress_per_gb": RateSpec(Msg("per GB"), "money", Msg("internet egress")),
        "inter_zone_per_gb": RateSpec(Msg("per GB"), "money", Msg("traffic between availability zones")),
        "egress_bytes_per_output_token": RateSpec(
            Msg("bytes per output token"), "number", Msg("bytes sent to users per generated token (streamed)")
        ),
        "gpu_failures_per_gpu_year": RateSpec(
            Msg("per GPU per year"), "number", Msg("job-interrupting hardware failures per GPU of a fleet")
        ),
        "power_tariff_per_kwh": RateSpec(Msg("per kWh"), "money", Msg("electricity, if the catalog has no tariff")),
        "downtime_cost_per_hour": RateSpec(Msg("per hour of outage"), "money", Msg("business cost of an outage")),
        "sla_penalty_per_incident": RateSpec(Msg("per incident"), "money", Msg("contractual penalty")),
        "training_runs_per_month": RateSpec(
            Msg("runs per month"), "number", Msg("training runs the fleet does each month")
        ),
        "spot_interruptions_per_month": RateSpec(Msg("per instance-month of running"), "number", Msg("spot reclaims")),
        "price_drift_per_year": RateSpec(Msg("share per year"), "number", Msg("expected change of rental prices")),
        "commit_discount_1y": RateSpec(
            Msg("share off on-demand"), "fraction", Msg("used when an offer lists no 1y price")
        ),
        "commit_discount_3y": RateSpec(
            Msg("share off on-demand"), "fraction", Msg("used when an offer lists no 3y price")
        ),
        "mc_utilisation_sd": RateSpec(Msg("absolute"), "fraction", Msg("Monte Carlo spread of utilisation")),
        "mc_efficiency_sd": RateSpec(Msg("absolute"), "fraction", Msg("Monte Carlo spread of efficiency")),
        "mc_price_drift_sd": RateSpec(Msg("per year"), "fraction", Msg("Monte Carlo spread of price drift")),
        "mc_fx_sd": RateSpec(Msg("log-normal sigma"), "fraction", Msg("Monte Carlo spread of FX over the horizon")),
        "mc_incident_sd": RateSpec(Msg("log-normal sigma"), "number", Msg("Monte Carlo spread of the incident rate")),
    }
    for tier in ("nvme", "ssd", "hdd", "object"):
        s[f"cloud_storage_per_gb_month.{tier}"] = RateSpec(Msg("per GB-month"), "money", Msg("rented {tier} storage", tier=TIER_TEXT[tier]))
        s[f"onprem_storage_capex_per_gb.{tier}"] = RateSpec(Msg("per GB"), "money", Msg("bought {tier} storage", tier=TIER_TEXT[tier]))
    for role in ROLES:
        s[f"engineering_rate_per_hour.{role}"] = RateSpec(
            Msg("per hour"), "money", Msg("loaded hourly cost of {role}", role=ROLE_TEXT[role])
        )
    for kind in ENGINEERING_KINDS:
        for role in ROLES:
            s[f"setup_hours.{kind}.{role}"] = RateSpec(Msg("hours, once"), "number", Msg("{role} setup of {kind}", role=ROLE_TEXT[role], kind=KIND_TEXT[kind]))
            s[f"ops_hours_per_month.{kind}.{role}"] = RateSpec(
                Msg("hours per month"), "number", Msg("{role} ops of {kind}", role=ROLE_TEXT[role], kind=KIND_TEXT[kind])
            )
            if kind != "api":  # the fleet-size part: hours per server (or instance)
                s[f"setup_hours_per_server.{kind}.{role}"] = RateSpec(
                    Msg("hours per server, once"), "number", Msg("{role} setup of each {kind} server", role=ROLE_TEXT[role], kind=KIND_TEXT[kind])
                )
                s[f"ops_hours_per_server_month.{kind}.{role}"] = RateSpec(
                    Msg("hours per server per month"), "number", Msg("{role} ops of each {kind} server", role=ROLE_TEXT[role], kind=KIND_TEXT[kind])
                )
        s[f"incidents_per_year.{kind}"] = RateSpec(Msg("per year"), "number", Msg("outages of {kind}", kind=KIND_TEXT[kind]))
        s[f"mttr_hours.{kind}"] = RateSpec(Msg("hours"), "number", Msg("mean time to recover, {kind}", kind=KIND_TEXT[kind]))
    for red in ("n_plus_1", "multi_zone"):
        s[f"redundancy_reduction.{red}"] = RateSpec(Msg("share of downtime avoided"), "fraction", REDUNDANCY_TEXT[red])
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
                value=value, unit=current.unit, currency=currency, source=Msg("user override"), valid_from=None
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
