"""Result serialisation: a priced option and the inputs a plan used, as JSON-ready dicts."""

from __future__ import annotations

from decimal import Context, Decimal

from catalog.domain.messages import Msg, figure

from .inputs import CostInputs
from .lines import RISK_ROW
from .model import ROWS
from .money import CENT, ZERO
from .totals import LineTotals, PricedOption, _Calendar

UNIT_COST = Decimal("0.0001")
SIX_DIGITS = Context(prec=6)
OWNING = ("onprem", "hybrid")


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
    # a job is exposed while it runs: its downtime is said per run (a year's average of a one-off
    # 70-hour run reads as none)
    hours_run = p.outage_hours_total / runs if runs is not None and runs > 0 else None
    if hours_run is not None:
        risk["expected_downtime_hours_per_run"] = str(hours_run.quantize(Decimal("0.0001")))
        # two significant figures in words: a short run's few minutes do not read as "0 hours"
        # (under 0.0001 h, a third of a second, it is 0)
        places = max(0, 1 - hours_run.adjusted()) if hours_run >= Decimal("0.0001") else 0
        hours_run = hours_run.quantize(Decimal(1).scaleb(-places)) if places or hours_run >= 1 else ZERO
    if detailed:  # the options a plan keeps in full say it in words (kept short for the others)
        if priced_risk:
            text = Msg("expected cost of incidents: not in the total")
        elif hours_run is not None:
            text = Msg("{hours} expected hours of downtime per run; enter the cost of an hour of downtime to price it",
                       hours=figure(hours_run))
        else:
            text = Msg("{hours} expected hours of downtime a year; enter the cost of an hour of downtime to price it",
                       hours=figure(hours_y))
        risk.update({
            "in_total": bool(basis is not None and basis.with_risk),
            "expected_downtime_gross": _s(p.risk_net + p.risk_vat) if priced_risk else None,
            "text": text,
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
            # the cumulative curves are the running sums with the terminal amount at month N
            # (costs.cash_flow.cumulative): not stored, a plan stays small (issue 20)
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
        # six significant digits: a share of the month's hours (a job's is hours / 730 x months)
        "utilisation": format(SIX_DIGITS.plus(p.utilisation), "f"),
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
            # all-in (GPU time, infrastructure, engineering) per GPU-hour of the configuration while it runs:
            # what a point of a throughput curve costs per token on this option
            "per_running_gpu_hour_net": _s(net / o.running_gpu_hours, UNIT_COST) if o.running_gpu_hours else None,
            "per_running_gpu_hour_gross": (_s((net + vat) / o.running_gpu_hours, UNIT_COST)
                                           if o.running_gpu_hours else None),
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
