"""Comparisons over the shortlisted options: break-even month and utilisation, a seeded
vectorised Monte Carlo, and tornado sensitivity.

Monte Carlo and sensitivity use each option's linear model: per line, a + b x u through the
option's own utilisation and utilisation 1 (exact at both; plan._linear; in between, billing
granularity makes cloud cost a step function this ignores). Floats are fine here: they rank
and spread totals; reported money is rounded back to Decimal cents.
"""

from __future__ import annotations

from decimal import Decimal
from itertools import combinations

import numpy as np

Z90 = 1.2815515655446004  # the 90th percentile of the standard normal: P10/P90 bands
# Spans of the tornado factors that have no Monte Carlo spread of their own (assumptions,
# documented in docs/COSTS.md): hourly engineering rate, power tariff, equipment prices.
TAG_SPANS = {"engineering": 0.25, "power": 0.25, "capex": 0.15}


def _money(x: float) -> str:
    return str(Decimal(repr(round(float(x), 2))).quantize(Decimal("0.01")))


def _pairs(shortlist: dict[str, list[str]]) -> list[tuple[str, str]]:
    pairs = []
    api = shortlist.get("api", [])
    for cand, ids in shortlist.items():
        if cand == "api":
            continue
        pairs += list(combinations(ids, 2))
        pairs += [(i, a) for i in ids for a in api]
    pairs += list(combinations(api, 2))
    return pairs


def break_even_month(cum_a: list, cum_b: list) -> dict:
    """The month from which one option's cumulative cost stays at or below the other's."""
    diff = [a - b for a, b in zip(cum_a, cum_b, strict=True)]
    if all(d <= 0 for d in diff):
        return {"month": None, "cheaper_after": "a", "state": "a_never_more_expensive"}
    if all(d >= 0 for d in diff):
        return {"month": None, "cheaper_after": "b", "state": "b_never_more_expensive"}
    last = diff[-1]
    winner_neg = last <= 0
    month = len(diff) - 1
    while month > 0 and ((diff[month - 1] <= 0) if winner_neg else (diff[month - 1] >= 0)):
        month -= 1
    return {"month": month, "cheaper_after": "a" if winner_neg else "b", "state": "crossing"}


def break_even_utilisation(*, own: dict, rent: dict) -> dict:
    """Utilisation above which owning beats renting, from totals linear in utilisation."""
    den = rent["b"] - own["b"]
    num = own["a"] - rent["a"]
    if den <= 0:
        if num <= 0:
            return {"utilisation": "0.000", "state": "owning_cheaper_at_any_utilisation"}
        return {"utilisation": None, "state": "renting_cheaper_at_any_utilisation"}
    u = num / den
    if u <= 0:
        return {"utilisation": "0.000", "state": "owning_cheaper_at_any_utilisation"}
    if u > 1:
        return {"utilisation": None, "state": "renting_cheaper_at_any_utilisation"}
    return {"utilisation": f"{u:.3f}", "state": "crossing"}


class _Model:
    """One option's lines as a linear model: total = sum((a + b*u) * multipliers of the line)."""

    def __init__(self, lin: dict, currency: str, u0: float, efficiency_driven: bool = False):
        self.u0 = u0
        self.efficiency_driven = efficiency_driven
        self.lines = [
            (
                ln["a"],
                ln["b"],
                ln["market"],
                ln["origin_currency"] not in ("", currency),
                ln["downtime"],
                ln["tag"],
            )
            for ln in lin["lines"]
        ]
        # the 8 multiplier groups (market, foreign, downtime) for the vectorised Monte Carlo
        self.group_a = np.zeros(8)
        self.group_b = np.zeros(8)
        for a, b, market, foreign, downtime, _tag in self.lines:
            g = 4 * market + 2 * foreign + downtime
            self.group_a[g] += a
            self.group_b[g] += b
        self.tags = {ln[5] for ln in self.lines}

    def total(
        self,
        *,
        u: float,
        drift: float = 1.0,
        fx: float = 1.0,
        inc: float = 1.0,
        tag_mult: dict[str, float] | None = None,
    ) -> float:
        out = 0.0
        for a, b, market, foreign, downtime, tag in self.lines:
            m = (drift if market else 1.0) * (fx if foreign else 1.0) * (inc if downtime else 1.0)
            if tag_mult and tag in tag_mult:
                m *= tag_mult[tag]
            out += (a + b * u) * m
        return out


def _group_multipliers(drift: np.ndarray, fx: np.ndarray, inc: np.ndarray) -> np.ndarray:
    """(8, samples): the multiplier of each (market, foreign, downtime) group in each sample."""
    one = np.ones_like(drift)
    rows = []
    for g in range(8):
        market, foreign, downtime = g & 4, g & 2, g & 1
        rows.append((drift if market else one) * (fx if foreign else one) * (inc if downtime else one))
    return np.vstack(rows)


def _drift_multiplier(drift_per_year: np.ndarray, drift0: float, months: int) -> np.ndarray:
    """Mean price level over the horizon relative to the deterministic drift."""
    exps = np.arange(months, dtype=float) / 12.0
    base = np.power(1.0 + drift0, exps).sum()
    return np.power(1.0 + np.clip(drift_per_year, -0.95, None)[:, None], exps[None, :]).sum(axis=1) / base


def analyse(
    *,
    priced,
    linear: dict,
    shortlist: dict[str, list[str]],
    rates,
    options,
    calendar_drift,
    vat: bool = False,
    extra_pairs: list[tuple[str, str]] = (),
) -> dict:
    by_id = {p.option.option_id: p for p in priced}
    months = len(calendar_drift)
    currency = options.currency
    models = {
        i: _Model(linear[i], currency, float(by_id[i].utilisation), linear[i].get("efficiency_driven", False))
        for i in linear
    }
    pairs = [(a, b) for a, b in _pairs(shortlist) if a in by_id and b in by_id]
    pairs += [(a, b) for a, b in extra_pairs if a in by_id and b in by_id and (a, b) not in pairs]

    # break-even months on cumulative cash (capex at month 0; the terminal amounts, book value
    # credited and commitment still owed, at month N: the last value is the total), net or gross
    # as the decision compares; in whole cents (exact, and integer comparisons are cheap)
    cum = {i: [int(v * 100) for v in p.cumulative(vat=vat)] for i, p in by_id.items()}
    be_months = [
        {"a": a, "b": b, "on": "gross" if vat else "net", **break_even_month(cum[a], cum[b])} for a, b in pairs
    ]

    be_util = []
    for cand, ids in shortlist.items():
        owns = [i for i in ids if by_id[i].option.kind in ("onprem", "hybrid")]
        rents = [i for i in ids if by_id[i].option.kind in ("cloud_on_demand", "cloud_spot")]
        for own in owns:
            for rent in rents:
                be_util.append(
                    {
                        "candidate": cand,
                        "own": own,
                        "rent": rent,
                        **break_even_utilisation(own=linear[own], rent=linear[rent]),
                    }
                )

    # Monte Carlo: common random numbers for every option, so comparisons are paired
    v = {
        k: float(rates[k].value)
        for k in (
            "mc_utilisation_sd",
            "mc_efficiency_sd",
            "mc_price_drift_sd",
            "mc_fx_sd",
            "mc_incident_sd",
            "price_drift_per_year",
        )
    }
    e0 = float(by_id[next(iter(by_id))].efficiency) if by_id else 1.0
    n = options.monte_carlo_samples
    rng = np.random.default_rng(options.seed)
    du = rng.normal(0.0, v["mc_utilisation_sd"], n)
    # efficiency varies symmetrically around e0: the spread is cut at the same distance on both
    # sides (clipping one side only, at 1, biased the mean)
    e_room = max(0.0, min(e0 - 0.05, 1.0 - e0))
    e_s = e0 + np.clip(rng.normal(0.0, v["mc_efficiency_sd"], n), -e_room, e_room)
    drift_s = v["price_drift_per_year"] + rng.normal(0.0, v["mc_price_drift_sd"], n)
    fx_s = np.exp(rng.normal(0.0, v["mc_fx_sd"], n))
    inc_s = np.exp(rng.normal(-(v["mc_incident_sd"] ** 2) / 2, v["mc_incident_sd"], n))
    dm = _drift_multiplier(drift_s, v["price_drift_per_year"], months)

    ids = list(models)
    mults = _group_multipliers(dm, fx_s, inc_s)
    a_mat = np.array([models[i].group_a for i in ids]).reshape(len(ids), 8)
    b_mat = np.array([models[i].group_b for i in ids]).reshape(len(ids), 8)
    u0 = np.array([models[i].u0 for i in ids])  # API options: slope 0, utilisation has no effect
    driven = np.array([models[i].efficiency_driven for i in ids], dtype=bool)
    # utilisation varies symmetrically around u0 within [0, 1] (a 24/7 fleet stays at 1: at full
    # utilisation one-sided clipping biased every total low)
    room = np.minimum(u0, 1.0 - u0)
    u_s = u0[:, None] + np.clip(du[None, :], -room[:, None], room[:, None])
    # jobs: the work is fixed, so lower efficiency means running longer to do it (more hours)
    u_s = np.where(driven[:, None], u_s * (e0 / e_s)[None, :], u_s)
    u_eff = np.clip(u_s, 0.0, 1.0)
    totals = a_mat @ mults + (b_mat @ mults) * u_eff
    row = {i: k for k, i in enumerate(ids)}
    mc_options = {}
    if ids:
        qs = np.percentile(totals, [10, 50, 90], axis=1)
        means = totals.mean(axis=1)
        for k, i in enumerate(ids):
            base = models[i].total(u=models[i].u0)
            mc_options[i] = {
                "p10": _money(qs[0, k]),
                "p50": _money(qs[1, k]),
                "p90": _money(qs[2, k]),
                "mean": _money(means[k]),
                # where the deterministic total (the headline) sits in the simulated spread
                "base_percentile": round(float(np.mean(totals[k] <= base)) * 100, 1),
            }
    p_cheaper = [
        {"a": a, "b": b, "p_a_cheaper": round(float(np.mean(totals[row[a]] < totals[row[b]])), 4)}
        for a, b in pairs
    ]

    # tornado: each factor at its P10 and P90 (or its documented span), the others at base
    sensitivity = {}
    for i, m in models.items():
        is_api = by_id[i].option.kind == "api"
        u0 = 0.0 if is_api else m.u0

        def tot(*, u=None, drift=1.0, fx=1.0, inc=1.0, tag_mult=None, m=m, u0=u0):
            return m.total(u=u0 if u is None else u, drift=float(drift), fx=fx, inc=inc, tag_mult=tag_mult)

        base = tot()
        sd = v
        factors = []
        if not is_api:
            room_u = min(Z90 * sd["mc_utilisation_sd"], u0, 1.0 - u0)
            lo_u, hi_u = u0 - room_u, u0 + room_u
            factors.append(("utilisation", f"{lo_u:.3f}", f"{hi_u:.3f}", tot(u=lo_u), tot(u=hi_u)))
            lo_e, hi_e = (
                max(0.05, e0 - Z90 * sd["mc_efficiency_sd"]),
                min(1.0, e0 + Z90 * sd["mc_efficiency_sd"]),
            )
            if m.efficiency_driven:
                factors.append(
                    (
                        "efficiency",
                        f"{lo_e:.3f}",
                        f"{hi_e:.3f}",
                        tot(u=min(1.0, u0 * e0 / lo_e)),
                        tot(u=min(1.0, u0 * e0 / hi_e)),
                    )
                )
        d0 = sd["price_drift_per_year"]
        d_lo, d_hi = d0 - Z90 * sd["mc_price_drift_sd"], d0 + Z90 * sd["mc_price_drift_sd"]
        factors.append(
            (
                "price_drift_per_year",
                f"{d_lo:.3f}",
                f"{d_hi:.3f}",
                tot(drift=_drift_multiplier(np.array([d_lo]), d0, months)[0]),
                tot(drift=_drift_multiplier(np.array([d_hi]), d0, months)[0]),
            )
        )
        f_lo, f_hi = float(np.exp(-Z90 * sd["mc_fx_sd"])), float(np.exp(Z90 * sd["mc_fx_sd"]))
        factors.append(("fx", f"{f_lo:.3f}", f"{f_hi:.3f}", tot(fx=f_lo), tot(fx=f_hi)))
        i_lo, i_hi = float(np.exp(-Z90 * sd["mc_incident_sd"])), float(np.exp(Z90 * sd["mc_incident_sd"]))
        factors.append(
            (
                "incident_rate",
                f"{i_lo:.3f}",
                f"{i_hi:.3f}",
                tot(inc=i_lo),
                tot(inc=i_hi),
            )
        )
        for tag, span in TAG_SPANS.items():
            if tag in m.tags:
                factors.append(
                    (
                        f"{tag}_prices",
                        f"{1 - span:.2f}",
                        f"{1 + span:.2f}",
                        tot(tag_mult={tag: 1 - span}),
                        tot(tag_mult={tag: 1 + span}),
                    )
                )
        rows = [
            {
                "factor": f,
                "low_value": lo_v,
                "high_value": hi_v,
                "total_at_low": _money(t_lo),
                "total_at_high": _money(t_hi),
                "swing": _money(abs(t_hi - t_lo)),
            }
            for f, lo_v, hi_v, t_lo, t_hi in factors
        ]
        rows.sort(key=lambda r: -float(r["swing"]))
        sensitivity[i] = {"base_total_net": _money(base), "factors": rows}

    return {
        "break_even_months": be_months,
        "break_even_utilisation": be_util,
        "monte_carlo": {
            "samples": n,
            "seed": options.seed,
            "on": "net totals over the horizon",
            "symmetric": "utilisation and efficiency vary by the same amount either side of the base value",
            "spreads": {
                k: str(rates[k].value)
                for k in (
                    "mc_utilisation_sd",
                    "mc_efficiency_sd",
                    "mc_price_drift_sd",
                    "mc_fx_sd",
                    "mc_incident_sd",
                )
            },
            "options": mc_options,
            "p_cheaper": p_cheaper,
        },
        "sensitivity": sensitivity,
    }
