"""The options comparison (procurement's main screen): 2-4 deployment options of one plan version.

Everything is read from the version's stored result (never recomputed), in the active language:

- one **basis** for every money figure that is not labelled otherwise: with VAT (gross) when the
  plan's totals include VAT, else net of VAT; the chart, CAPEX, OPEX, P50 and the break-even are
  on it and say so. The totals are shown three times, each labelled: net, VAT, gross.
- **CAPEX** = what is paid up front (the lines' ``upfront_net``: servers bought, setup);
  **OPEX** = the rest of the total spread over the horizon (average per month); the residual value
  at the end (a resale, negative) closes the sum: CAPEX + OPEX x months + residual = total.
- the **cumulative-cost chart** is an SVG drawn on the server (options_compare_chart: the same
  picture on the page and in the PDF, no script needed), one colour per option from the Okabe-Ito
  palette (safe for colour-blind readers), with a dash pattern as well; the legend is an HTML list
  under it (it cannot overlap).
- the **break-even** is said in words: which option is cheapest from which month on
  ("after month 9 cheaper: <option>"), and marked on the chart.
- exports (XLSX, PDF; options_compare_export) and a read-only share link (``CompareShareLink``;
  options_compare_share) of the same comparison.
"""

from __future__ import annotations

from decimal import ROUND_HALF_UP, Decimal, InvalidOperation

from django.utils.translation import gettext as _

from costs.cash_flow import cumulative as cumulative_cost

from .engine.result import candidate_id
from .options_compare_chart import BASIS_LABELS, DASHES, OKABE_ITO, cumulative_svg

MIN_OPTIONS, MAX_OPTIONS = 2, 4


def _dec(value) -> Decimal | None:
    if value is None or value == "":
        return None
    try:
        return Decimal(str(value))
    except (InvalidOperation, ValueError):
        return None


def _date(value):
    import datetime as dt

    try:
        return dt.date.fromisoformat(value) if isinstance(value, str) else None
    except ValueError:
        return None


# --- one option ------------------------------------------------------------------------------


def short_label(option: dict) -> str:
    """"Cloud, on demand · AWS g6.xlarge × 3": what tells options apart, in a few words."""
    from .presentation import OPTION_KINDS

    d, kind = option.get("detail") or {}, option.get("kind")
    kind_label = str(OPTION_KINDS.get(kind, kind or ""))
    if kind == "api":
        what = " ".join(str(x) for x in (d.get("provider"), d.get("model")) if x)
    elif d.get("instance_type"):
        what = f"{d.get('provider', '')} {d['instance_type']} × {d.get('instances', 1)}".strip()
    elif d.get("gpus") and d.get("accelerator"):
        what = f"{d['gpus']} × {d['accelerator']}"
    else:
        what = ""
    return f"{kind_label} · {what}" if what else kind_label


def _lines_in_total(option: dict):
    for row in option.get("rows") or []:
        if row.get("in_total") is False or row.get("row") == "downtime_risk":
            continue  # the expected cost of incidents is beside the total, not in it
        yield from row.get("lines") or []


def capex_opex(option: dict, *, horizon: int, vat_rates: list, one_off: bool = False) -> dict:
    """{capex, opex_month, residual} net and gross, and the check that they add up to the total."""
    rate0 = _dec(vat_rates[0]) if vat_rates else Decimal(0)
    rate_end = _dec(vat_rates[-1]) if vat_rates else Decimal(0)
    capex_net = capex_gross = residual_net = residual_gross = Decimal(0)
    for line in _lines_in_total(option):
        up, end = _dec(line.get("upfront_net")) or Decimal(0), _dec(line.get("terminal_net")) or Decimal(0)
        vat = line.get("vat_applies", True) is not False
        capex_net += up
        capex_gross += up * (1 + (rate0 or 0)) if vat else up
        residual_net += end
        residual_gross += end * (1 + (rate_end or 0)) if vat else end
    totals = option.get("totals") or {}
    net, gross = _dec(totals.get("net")), _dec(totals.get("gross"))
    months = Decimal(horizon or 1)
    job = bool(option.get("job"))
    opex_net = net - capex_net - residual_net if net is not None else None
    opex_gross = gross - capex_gross - residual_gross if gross is not None else None
    per_month = not (job and one_off)  # a one-off job's cost does not grow with the months
    return {
        "capex": {"net": capex_net, "gross": capex_gross},
        "opex_total": {"net": opex_net, "gross": opex_gross},
        "opex_month": {
            "net": opex_net / months if opex_net is not None and per_month else None,
            "gross": opex_gross / months if opex_gross is not None and per_month else None,
        },
        "residual": {"net": residual_net, "gross": residual_gross},
        "job": job,
    }


def _candidates(sizing: dict) -> dict[str, dict]:
    out = {}
    cands = sizing.get("candidates") or {}
    for c in [*(cands.get("ranked") or []), *(cands.get("disaggregated") or [])]:
        if c.get("accelerator_id") and c.get("count") is not None:
            out[candidate_id(c)] = c
    return out


def hardware(option: dict, candidate: dict | None) -> dict:
    """GPUs, servers (or cloud instances), power and latency (or run time) of one option."""
    d, kind = option.get("detail") or {}, option.get("kind")
    servers = d.get("servers") if d.get("servers") is not None else d.get("instances")
    power_w = _dec(d.get("server_power_w"))
    power_kw = (power_w * servers / 1000).quantize(Decimal("0.1"), ROUND_HALF_UP) if power_w is not None and servers else None
    c = candidate or {}
    return {
        "api": kind == "api",
        "gpus": d.get("gpus"),
        "servers": servers,
        "servers_are_instances": d.get("servers") is None and d.get("instances") is not None,
        "power_kw": power_kw,
        "power_in_price": power_kw is None and kind not in ("api", "onprem"),
        "ttft_p95_ms": c.get("ttft_p95_ms"), "tpot_p95_ms": c.get("tpot_p95_ms"),
        "run_hours": c.get("wall_clock_hours") if isinstance(c.get("wall_clock_hours"), int | float) else None,
        "meets": c.get("meets_target", c.get("meets_targets")) if c else None,
    }


# --- break-even in words -----------------------------------------------------------------------


def leaders(series: list[list[Decimal]]) -> list[dict]:
    """The cheapest option month by month, as segments [{option (index), from_month}]: each
    segment's option is at or below every other from its first month until the next segment.
    A tie keeps the option that led before (no flicker); options tied where none led yet (all at
    0 in month 0) are told apart by the months that follow."""
    months = min((len(s) for s in series if s), default=0)
    segments: list[dict] = []
    current = None
    for m in range(months):
        values = [s[m] for s in series]
        low = min(values)
        if current is None or values[current] > low:
            # among options tied at the minimum, the one cheaper in the months that follow
            tied = [i for i, v in enumerate(values) if v == low]
            current = min(tied, key=lambda i: [s[k] for s in (series[i],) for k in range(m, months)])
            segments.append({"option": current, "from_month": m})
    return segments


# --- the comparison ------------------------------------------------------------------------------


def build(version, option_ids: list[str]) -> dict | None:
    """The comparison of ``option_ids`` (in that order) of a done version; None if an id is not an
    option of it."""
    from costs.labels import mc_range

    from .i18n import localise
    from .presentation import OPTION_KINDS, _localised, risk_view

    result = localise(version.full_result or {})
    costs = result.get("costs") or {}
    by_id = {o.get("id"): o for o in costs.get("options") or []}
    if not option_ids or any(i not in by_id for i in option_ids):
        return None
    include_vat = bool(costs.get("include_vat"))
    basis = "gross" if include_vat else "net"
    horizon = int(costs.get("horizon_months") or 0)
    vat_rates = costs.get("vat_rates_by_month") or []
    mc = (costs.get("monte_carlo") or {}).get("options") or {}
    candidates = _candidates(result.get("sizing") or {})
    # a training job priced as a fixed number of runs (not runs per month): OPEX is for its runs
    one_off = ((version.inputs or {}).get("costs") or {}).get("runs_per_month") in (None, "")
    options = []
    for n, oid in enumerate(option_ids, start=1):
        o = _localised(by_id[oid])
        totals = o.get("totals") or {}
        cumulative = cumulative_cost(o, basis)
        p = mc_range(mc.get(oid), gross=include_vat) or {}
        options.append({
            "n": n, "id": oid, "label": o.get("label"), "short": short_label(o), "kind": o.get("kind"),
            "kind_label": OPTION_KINDS.get(o.get("kind"), o.get("kind")),
            "color": OKABE_ITO[(n - 1) % len(OKABE_ITO)], "dash": DASHES[(n - 1) % len(DASHES)],
            "net": _dec(totals.get("net")), "vat": _dec(totals.get("vat")), "gross": _dec(totals.get("gross")),
            "total": _dec(totals.get(basis)),
            "per_month": _dec((o.get("per_month_average") or {}).get(basis)),
            "p10": _dec(p.get("p10")), "p50": _dec(p.get("p50")), "p90": _dec(p.get("p90")),
            "p_basis": p.get("basis"),
            "split": capex_opex(o, horizon=horizon, vat_rates=vat_rates, one_off=one_off),
            "hw": hardware(o, candidates.get(o.get("candidate"))),
            "risk": risk_view(o, include_vat),
            "cumulative": cumulative, "cash_flow": o.get("cash_flow") or {},
        })
    # Options outside the result's shortlist carry totals only (no month-by-month cash flow, no
    # lines): they are left out of the chart and the break-even, and the page says so.
    detailed = [o for o in options if o["cumulative"]]
    for o in options:
        o["detailed"] = bool(o["cumulative"])
        if not o["detailed"]:
            o["split"] = {"capex": {}, "opex_month": {}, "opex_total": {}, "residual": {}, "job": o["split"]["job"]}
    segments = leaders([o["cumulative"] for o in detailed]) if len(detailed) >= 2 else []
    for s in segments:
        s["option"] = options.index(detailed[s["option"]])
        s["label"] = options[s["option"]]["short"]
        s["n"] = options[s["option"]]["n"]
        s["color"] = options[s["option"]]["color"]
    return {
        "currency": costs.get("currency", ""), "include_vat": include_vat, "basis": basis,
        "basis_label": BASIS_LABELS[basis], "horizon_months": horizon, "as_of": costs.get("as_of"),
        "as_of_date": _date(costs.get("as_of")),
        "options": options, "segments": segments, "without_months": [f"{o['n']}. {o['short']}" for o in options if not o["detailed"]],
        "final": segments[-1] if segments else None,
        "chart": cumulative_svg(options, segments, currency=costs.get("currency", ""), basis=basis),
    }


def sentences(table: dict) -> list[str]:
    """The break-even in words, one sentence per change of the cheapest option."""
    out = []
    horizon = table["horizon_months"]
    segments = table["segments"]
    if not segments:  # no month-by-month figures to compare: the totals over the horizon
        priced = [o for o in table["options"] if o["total"] is not None]
        if priced:
            best = min(priced, key=lambda o: o["total"])
            out.append(_("Cheapest in total over %(h)s months: %(option)s") % {
                "h": horizon, "option": f"{best['n']}. {best['short']}"})
        return out
    for i, s in enumerate(segments):
        if i == 0 and len(segments) == 1:
            out.append(_("Cheapest over the whole horizon (%(h)s months): %(option)s") % {
                "h": horizon, "option": f"{s['n']}. {s['label']}"})
        elif i == 0:
            out.append(_("Cheapest at first: %(option)s") % {"option": f"{s['n']}. {s['label']}"})
        else:
            out.append(_("after month %(m)s cheaper: %(option)s") % {
                "m": s["from_month"], "option": f"{s['n']}. {s['label']}"})
    return out
