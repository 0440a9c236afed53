"""Comparisons over the shortlisted options: break-even month and utilisation, a seeded
vectorised Monte Carlo, and tornado sensitivity.

Monte Carlo and sensitivity use each option's linear model: per line, a + b x u through the
option's own utilisation and utilisation 1 (exact at both; totals._linear; in between, billing
granularity makes cloud cost a step function this ignores). Floats are fine here: they rank
and spread totals; reported money is rounded back to Decimal cents.
"""

from __future__ import annotations

from decimal import Decimal
from itertools import combinations

import numpy as np

Z90 = 1.2815515655446004  # the 90th percentile of the standard normal: P10/P90 bands
# Spans of the price factors that have no rate-card spread of their own (assumptions, documented
# in docs/COSTS.md, "Monte Carlo spreads"): hourly engineering rate, power tariff, equipment
# prices. Each is the factor's P10/P90 distance from 1 in the tornado and in the Monte Carlo.
TAG_SPANS = {"engineering": 0.25, "power": 0.25, "capex": 0.15}
TAG_CLASSES = tuple(TAG_SPANS)  # line tags with a price spread; group class 0 is "no tag spread"
# A price factor's Monte Carlo draw is cut at this many spans either side of 1 (a normal tail
# would otherwise give a price below 0 in a long run of samples).
TAG_CUT_SPANS = 2.0
# Utilisation of a service varies by mc_utilisation_sd (absolute) but by at most this share of
# the planned utilisation either side: a service planned for 4 h a day runs 2-6 h, not 0 h
# (the absolute spread alone, cut at u0, ran a 1-hour-a-day service for no hours at all).
UTILISATION_MAX_REL = 0.5
# Efficiency of a job varies by mc_efficiency_sd (absolute) but by at most this share of its base
# either side, and never above 1: the job's hours are work / efficiency, so at the default 0.8
# the hours range over 0.8/1.0-0.8/0.6 = 0.8-1.33 x base.
EFFICIENCY_MAX_REL = 0.5
GROUPS = 8 * (1 + len(TAG_CLASSES))  # (market, foreign, downtime) x tag class


def _money(x: float) -> str:
    return str(Decimal(repr(round(float(x), 2))).quantize(Decimal("0.01")))


PERCENTILES = (10.0, 50.0, 90.0)


def _ranks(n: int, qs: tuple[float, ...] = PERCENTILES) -> list[tuple[int, int, float]]:
    """For each percentile, the two order statistics np.percentile's default (linear) method
    interpolates between, and the weight: (lo, hi, t)."""
    out = []
    for q in qs:
        pos = q / 100.0 * (n - 1)
        lo = int(np.floor(pos))
        out.append((lo, min(lo + 1, n - 1), pos - lo))
    return out


def _percentiles(rows: np.ndarray, qs: tuple[float, ...] = PERCENTILES) -> np.ndarray:
    """P10/P50/P90 of each row: np.percentile's default (linear) method, term for term, on one
    partition of each row at the order statistics it reads (a partition at those six ranks costs
    about half a full sort of 10 000 samples, and a third of np.percentile's own partitions)."""
    ranks = _ranks(rows.shape[1], qs)
    part = np.partition(rows, sorted({r for lo, hi, _ in ranks for r in (lo, hi)}), axis=1)
    out = np.empty((len(qs), rows.shape[0]))
    for j, (lo, hi, t) in enumerate(ranks):
        a, b = part[:, lo], part[:, hi]
        diff = b - a
        # numpy's _lerp: from the nearer end, so t = 1 gives b exactly
        out[j] = b - diff * (1.0 - t) if t >= 0.5 else a + diff * t
    return out


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


def _tag_class(tag: str) -> int:
    return TAG_CLASSES.index(tag) + 1 if tag in TAG_CLASSES else 0


class _Model:
    """One option's lines as a linear model: total = sum((a + b*u) * multipliers of the line);
    gross: the same x (1 + the line's VAT share of its net at the base)."""

    def __init__(self, lin: dict, currency: str, u0: float, efficiency_driven: bool = False, e0: float = 1.0):
        self.u0 = u0
        self.e0 = e0
        self.efficiency_driven = efficiency_driven
        self.lines = [
            (
                ln["a"],
                ln["b"],
                ln["market"],
                ln["origin_currency"] not in ("", currency),
                ln["downtime"],
                ln["tag"],
                1.0 + ln.get("vat_share", 0.0),
            )
            for ln in lin["lines"]
        ]
        # the multiplier groups (market, foreign, downtime, tag class) for the vectorised Monte Carlo
        self.group_a = np.zeros(GROUPS)
        self.group_b = np.zeros(GROUPS)
        self.group_a_gross = np.zeros(GROUPS)
        self.group_b_gross = np.zeros(GROUPS)
        for a, b, market, foreign, downtime, tag, gross in self.lines:
            g = 4 * market + 2 * foreign + downtime + 8 * _tag_class(tag)
            self.group_a[g] += a
            self.group_b[g] += b
            self.group_a_gross[g] += a * gross
            self.group_b_gross[g] += b * gross
        self.tags = {ln[5] for ln in self.lines}

    def total(
        self,
        *,
        u: float,
        drift: float = 1.0,
        fx: float = 1.0,
        inc: float = 1.0,
        tag_mult: dict[str, float] | None = None,
        gross: bool = False,
    ) -> float:
        out = 0.0
        for a, b, market, foreign, downtime, tag, g in self.lines:
            m = (drift if market else 1.0) * (fx if foreign else 1.0) * (inc if downtime else 1.0)
            if tag_mult and tag in tag_mult:
                m *= tag_mult[tag]
            out += (a + b * u) * m * (g if gross else 1.0)
        return out


def _group_multipliers(
    drift: np.ndarray,
    fx: np.ndarray,
    inc: np.ndarray,
    tags: dict[str, np.ndarray] | None = None,
    groups: list[int] | None = None,
) -> np.ndarray:
    """(groups, samples): the multiplier of each (market, foreign, downtime, tag class) group in
    each sample; ``groups`` (default all GROUPS) lists the groups some option has lines in."""
    one = np.ones_like(drift)
    tags = tags or {}
    rows = []
    for g in range(GROUPS) if groups is None else groups:
        cls, market, foreign, downtime = g // 8, g & 4, g & 2, g & 1
        m = (drift if market else one) * (fx if foreign else one) * (inc if downtime else one)
        if cls:
            m = m * tags.get(TAG_CLASSES[cls - 1], one)
        rows.append(m)
    return np.vstack(rows) if rows else np.ones((0, len(drift)))


def utilisation_room(u0: float, sd: float, z: float = Z90) -> float:
    """How far a service's utilisation moves at z standard deviations (cut as in the Monte Carlo)."""
    return min(z * sd, u0 * UTILISATION_MAX_REL, 1.0 - u0)


def efficiency_room(e0: float) -> float:
    """The largest move of efficiency either side of its base (symmetric, so the mean stays e0)."""
    return max(0.0, min(e0 * EFFICIENCY_MAX_REL, 1.0 - e0))


def _drift_multiplier(drift_per_year: np.ndarray, drift0: float, months: int) -> np.ndarray:
    """Mean price level over the horizon relative to the deterministic drift."""
    return _monthly_level_sum(np.clip(drift_per_year, -0.95, None), months) / _monthly_level_sum(
        np.array([drift0], dtype=float), months)[0]


def _monthly_level_sum(drift_per_year: np.ndarray, months: int) -> np.ndarray:
    """sum over k < months of (1 + drift)^(k/12): a geometric series in r = (1 + drift)^(1/12),
    summed in closed form (one power per sample instead of one per sample and month)."""
    r = np.power(1.0 + drift_per_year, 1.0 / 12.0)
    flat = np.abs(r - 1.0) < 1e-9  # no drift: every month at level 1
    safe = np.where(flat, 2.0, r)
    return np.where(flat, float(months), (np.power(safe, months) - 1.0) / (safe - 1.0))


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
        i: _Model(
            linear[i],
            currency,
            float(by_id[i].utilisation),
            linear[i].get("efficiency_driven", False),
            float(by_id[i].efficiency),
        )
        for i in linear
    }
    pairs = [(a, b) for a, b in _pairs(shortlist) if a in by_id and b in by_id]
    pairs += [(a, b) for a, b in extra_pairs if a in by_id and b in by_id and (a, b) not in pairs]

    # break-even months on cumulative cash (capex at month 0; the terminal amounts, book value
    # credited and commitment still owed, at month N: the last value is the total), net or gross
    # as the decision compares; in whole cents (exact, and integer comparisons are cheap)
    cum = {i: [int(v * 100) for v in by_id[i].cumulative(vat=vat)] for i in {i for pair in pairs for i in pair}}
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

    # Monte Carlo: common random numbers for every option, so comparisons are paired; each option
    # responds only to its own uncertain inputs (docs/COSTS.md, "Monte Carlo spreads"): a service's
    # utilisation, a job's efficiency (its work is fixed: hours = work / efficiency), the price
    # drift of its market-priced lines, FX on its lines priced in another currency, the incident
    # rate on its downtime lines, and the engineering, power and equipment prices of its lines
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
    n = options.monte_carlo_samples
    rng = np.random.default_rng(options.seed)
    z_u = rng.standard_normal(n)
    z_e = rng.standard_normal(n)
    drift_s = v["price_drift_per_year"] + rng.normal(0.0, v["mc_price_drift_sd"], n)
    fx_s = np.exp(rng.normal(0.0, v["mc_fx_sd"], n))
    inc_s = np.exp(rng.normal(-(v["mc_incident_sd"] ** 2) / 2, v["mc_incident_sd"], n))
    tag_s = {
        tag: 1.0 + np.clip(rng.standard_normal(n) * span / Z90, -TAG_CUT_SPANS * span, TAG_CUT_SPANS * span)
        for tag, span in TAG_SPANS.items()
    }
    dm = _drift_multiplier(drift_s, v["price_drift_per_year"], months)

    ids = list(models)
    k = len(ids)
    # net a, net b, gross a, gross b of every option (4k x GROUPS): one product with the
    # multipliers of the groups some option has lines in
    coef = np.array(
        [models[i].group_a for i in ids]
        + [models[i].group_b for i in ids]
        + [models[i].group_a_gross for i in ids]
        + [models[i].group_b_gross for i in ids]
    ).reshape(4 * k, GROUPS)
    used = [int(g) for g in np.flatnonzero(np.any(coef != 0.0, axis=0))]
    mults = _group_multipliers(dm, fx_s, inc_s, tag_s, groups=used)
    # one BLAS product (config/__init__.py keeps BLAS on one thread: a worker's threads would only
    # contend for the same cores); np.einsum's plain loop took four times as long
    prod = coef[:, used] @ mults
    u0 = np.array([models[i].u0 for i in ids])
    e0 = np.array([models[i].e0 for i in ids])
    driven = np.array([models[i].efficiency_driven for i in ids], dtype=bool)
    is_api = np.array([by_id[i].option.kind == "api" for i in ids], dtype=bool)
    # services: utilisation varies symmetrically around u0 (a 24/7 fleet stays at 1: one-sided
    # clipping biased every total low), by at most UTILISATION_MAX_REL of u0 (never to 0 hours)
    room_u = np.where(driven | is_api, 0.0, np.minimum(u0 * UTILISATION_MAX_REL, 1.0 - u0))
    u_s = u0[:, None] + np.clip(v["mc_utilisation_sd"] * z_u[None, :], -room_u[:, None], room_u[:, None])
    # jobs: the work is fixed, so lower efficiency means running longer to do it (more hours);
    # each job's efficiency varies around its own base
    if driven.any():  # (a service plan has no job: its rows keep u_s)
        room_e = np.array([efficiency_room(e) for e in e0])
        e_s = e0[:, None] + np.clip(v["mc_efficiency_sd"] * z_e[None, :], -room_e[:, None], room_e[:, None])
        u_s = np.where(driven[:, None], u0[:, None] * e0[:, None] / np.maximum(e_s, 1e-9), u_s)
    u_eff = np.clip(u_s, 0.0, 1.0)
    totals = prod[:k] + prod[k : 2 * k] * u_eff
    totals_gross = prod[2 * k : 3 * k] + prod[3 * k :] * u_eff
    row = {i: k for k, i in enumerate(ids)}
    mc_options = {}
    if ids:
        qs, qg = _percentiles(totals), _percentiles(totals_gross)
        means, means_g = totals.mean(axis=1), totals_gross.mean(axis=1)
        base_net = np.array([models[i].total(u=models[i].u0) for i in ids])
        base_gross = np.array([models[i].total(u=models[i].u0, gross=True) for i in ids])
        # where the deterministic total (the headline) sits in the simulated spread: the share of
        # samples at or below it, on the basis the decision compares
        at_most = np.count_nonzero(totals_gross <= base_gross[:, None] if vat else totals <= base_net[:, None],
                                   axis=1) / n
        for k, i in enumerate(ids):
            mc_options[i] = {
                "p10_net": _money(qs[0, k]),
                "p50_net": _money(qs[1, k]),
                "p90_net": _money(qs[2, k]),
                "mean_net": _money(means[k]),
                "p10_gross": _money(qg[0, k]),
                "p50_gross": _money(qg[1, k]),
                "p90_gross": _money(qg[2, k]),
                "mean_gross": _money(means_g[k]),
                "base_percentile": round(float(at_most[k]) * 100, 1),
            }
    # paired comparisons on the basis the decision compares (gross when VAT is a cost)
    compared_totals = totals_gross if vat else totals
    p_cheaper = [
        {"a": a, "b": b,
         "p_a_cheaper": round(np.count_nonzero(compared_totals[row[a]] < compared_totals[row[b]]) / n, 4)}
        for a, b in pairs
    ]

    # tornado: each factor at its P10 and P90 (or its documented span), the others at base
    sensitivity = {}
    d0 = v["price_drift_per_year"]
    d_lo, d_hi = d0 - Z90 * v["mc_price_drift_sd"], d0 + Z90 * v["mc_price_drift_sd"]
    # the same price levels for every option
    dm_lo, dm_hi = (_drift_multiplier(np.array([d]), d0, months)[0] for d in (d_lo, d_hi))
    for i, m in models.items():
        is_api = by_id[i].option.kind == "api"
        u0 = 0.0 if is_api else m.u0

        def tot(*, u=None, drift=1.0, fx=1.0, inc=1.0, tag_mult=None, m=m, u0=u0):
            return m.total(u=u0 if u is None else u, drift=float(drift), fx=fx, inc=inc, tag_mult=tag_mult)

        base = tot()
        sd = v
        factors = []
        if not is_api and not m.efficiency_driven:
            room_u = utilisation_room(u0, sd["mc_utilisation_sd"])
            lo_u, hi_u = u0 - room_u, u0 + room_u
            factors.append(("utilisation", f"{lo_u:.3f}", f"{hi_u:.3f}", tot(u=lo_u), tot(u=hi_u)))
        if not is_api and m.efficiency_driven:
            e_base = m.e0
            room_e = min(Z90 * sd["mc_efficiency_sd"], efficiency_room(e_base))
            lo_e, hi_e = e_base - room_e, e_base + room_e
            factors.append(
                (
                    "efficiency",
                    f"{lo_e:.3f}",
                    f"{hi_e:.3f}",
                    tot(u=min(1.0, u0 * e_base / lo_e)) if lo_e > 0 else tot(u=1.0),
                    tot(u=min(1.0, u0 * e_base / hi_e)),
                )
            )
        factors.append(("price_drift_per_year", f"{d_lo:.3f}", f"{d_hi:.3f}", tot(drift=dm_lo), tot(drift=dm_hi)))
        f_lo, f_hi = float(np.exp(-Z90 * sd["mc_fx_sd"])), float(np.exp(Z90 * sd["mc_fx_sd"]))
        factors.append(("fx", f"{f_lo:.3f}", f"{f_hi:.3f}", tot(fx=f_lo), tot(fx=f_hi)))
        # the expected cost of incidents is not in the budget; the incident rate moves a budget only
        # through billed work redone after failures (training on hourly cloud): shown where it does
        if any(ln[4] for ln in m.lines):
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
            "on": "net and gross budget totals over the horizon (the expected cost of downtime is not in them)",
            "compared_on": "gross" if vat else "net",
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
