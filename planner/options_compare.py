"""The options comparison (procurement's main screen): 2-4 deployment options of one plan version.

Everything is read from the version's stored result (never recomputed), in the active language:

- one **basis** for every money figure that is not labelled otherwise: with VAT (gross) when the
  plan's totals include VAT, else net of VAT; the chart, CAPEX, OPEX, P50 and the break-even are
  on it and say so. The totals are shown three times, each labelled: net, VAT, gross.
- **CAPEX** = what is paid up front (the lines' ``upfront_net``: servers bought, setup);
  **OPEX** = the rest of the total spread over the horizon (average per month); the residual value
  at the end (a resale, negative) closes the sum: CAPEX + OPEX x months + residual = total.
- the **cumulative-cost chart** is an SVG drawn here (the same picture on the page and in the PDF,
  no script needed), one colour per option from the Okabe-Ito palette (safe for colour-blind
  readers), with a dash pattern as well; the legend is an HTML list under it (it cannot overlap).
- the **break-even** is said in words: which option is cheapest from which month on
  ("after month 9 cheaper: <option>"), and marked on the chart.
- exports (XLSX, PDF) and a read-only share link (``CompareShareLink``) of the same comparison.
"""

from __future__ import annotations

import hashlib
import secrets
from decimal import ROUND_HALF_UP, Decimal, InvalidOperation
from html import escape

from django.utils import timezone
from django.utils.safestring import mark_safe
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy

from costs.cash_flow import cumulative as cumulative_cost

# Okabe & Ito (2008), "Color Universal Design": distinguishable with any colour vision. Yellow
# (#F0E442) is left out: too pale for a line on white.
OKABE_ITO = ["#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9", "#000000"]
DASHES = ["", "6 3", "2 2", "8 3 2 3", "4 4", "1 3", "10 4"]
MIN_OPTIONS, MAX_OPTIONS = 2, 4

BASIS_LABELS = {"gross": gettext_lazy("with VAT"), "net": gettext_lazy("net of VAT")}


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
    for c in (sizing.get("candidates") or {}).get("ranked") or []:
        if c.get("accelerator_id") and c.get("count") is not None:
            out[f"{c['accelerator_id']} x{c['count']}"] = c
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

    result = localise(version.result or {})
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


# --- the chart (SVG) ---------------------------------------------------------------------------


def nice_step(span: float, ticks: int = 5) -> float:
    """A round tick step (1, 2, 2.5 or 5 x 10^k) giving about ``ticks`` ticks over ``span``."""
    import math

    if span <= 0:
        return 1.0
    raw = span / ticks
    power = 10 ** math.floor(math.log10(raw))
    for m in (1, 2, 2.5, 5, 10):
        if raw <= m * power:
            return m * power
    return 10 * power


def _short_money(value: float) -> str:
    from .templatetags.planner_tags import num

    for limit, unit in ((1e9, _("bn")), (1e6, _("M")), (1e3, _("k"))):
        if abs(value) >= limit:
            digits = 0 if value % limit == 0 else 1
            return f"{num(value / limit, digits)} {unit}"
    return str(num(value))


def cumulative_svg(options: list[dict], segments: list[dict], *, currency: str, basis: str,
                   width: int = 760, height: int = 300) -> str:
    """Cumulative cost by month, one line per option (colour and dash of the option), the months
    where the cheapest option changes marked with a dashed rule and the month number."""
    series = [[float(v) for v in o["cumulative"]] for o in options]
    if not any(series):
        return ""
    left, right, top, bottom = 78, 16, 22, 40
    months = max(len(s) for s in series) - 1 or 1
    step = nice_step(max(max(s) for s in series if s))
    peak = step * max(1, -(-max(max(s) for s in series if s) // step))
    x = lambda m: left + (width - left - right) * m / months  # noqa: E731
    y = lambda v: top + (height - top - bottom) * (1 - v / peak)  # noqa: E731
    title = _("Cumulative cost by month, %(currency)s, %(basis)s") % {
        "currency": currency, "basis": BASIS_LABELS[basis]}
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" class="compare-chart" role="img" '
             f'aria-label="{escape(title)}" viewBox="0 0 {width} {height}" width="{width}" height="{height}" '
             f'font-family="DejaVu Sans, sans-serif" font-size="11">']
    v = 0.0
    while v <= peak + step / 2:
        parts.append(f'<line x1="{left}" y1="{y(v):.1f}" x2="{width - right}" y2="{y(v):.1f}" stroke="#e3e6ec"/>'
                     f'<text x="{left - 6}" y="{y(v) + 4:.1f}" text-anchor="end" fill="#333">'
                     f'{escape(_short_money(v))}</text>')
        v += step
    month_step = max(1, round(nice_step(months, 6)))
    for m in range(0, months + 1, month_step):
        parts.append(f'<text x="{x(m):.1f}" y="{height - bottom + 15}" text-anchor="middle" fill="#333">{m}</text>')
    parts.append(f'<line x1="{left}" y1="{height - bottom}" x2="{width - right}" y2="{height - bottom}" stroke="#888"/>')
    parts.append(f'<text x="{(left + width - right) / 2:.0f}" y="{height - 6}" text-anchor="middle" fill="#333">'
                 f'{escape(_("month"))}</text>')
    parts.append(f'<text x="{left}" y="{top - 8}" fill="#333">{escape(currency)}, {escape(str(BASIS_LABELS[basis]))}</text>')
    for s in segments[1:]:
        mx = x(s["from_month"])
        parts.append(f'<line class="break-even" x1="{mx:.1f}" y1="{top}" x2="{mx:.1f}" y2="{height - bottom}" '
                     f'stroke="#333" stroke-dasharray="3 3"/>'
                     f'<text x="{mx + 4:.1f}" y="{top + 10}" fill="#333">'
                     f'{escape(_("month %(m)s") % {"m": s["from_month"]})} → {s["n"]}</text>')
    for o, s in zip(options, series, strict=True):
        if not s:
            continue
        points = " ".join(f"{x(m):.1f},{y(val):.1f}" for m, val in enumerate(s))
        dash = f' stroke-dasharray="{o["dash"]}"' if o["dash"] else ""
        parts.append(f'<polyline fill="none" stroke="{o["color"]}" stroke-width="2.5"{dash} points="{points}"/>')
    parts.append("</svg>")
    return mark_safe("".join(parts))  # noqa: S308 - every text in it is escaped above


# --- share links -------------------------------------------------------------------------------


def share_link_create(*, version, option_ids: list[str], user, expires_at=None):
    """A read-only link to this comparison: (link, token); only the token's sha256 is stored."""
    from .compare_models import CompareShareLink
    from .selectors import hash_share_token

    if expires_at is not None and expires_at <= timezone.now():
        raise ValueError("expiry in the past")
    token = secrets.token_urlsafe(32)
    link = CompareShareLink.objects.create(
        plan=version.plan, version=version, options=list(option_ids), token_hash=hash_share_token(token),
        token_prefix=token[:6], created_by=user if getattr(user, "is_authenticated", False) else None,
        expires_at=expires_at)
    return link, token


def share_link_resolve(*, token: str):
    """The live link for a token, or None when unknown, revoked or expired."""
    import hmac

    from .compare_models import CompareShareLink

    if not token or len(token) > 200:
        return None
    digest = hashlib.sha256(token.encode("utf-8")).hexdigest()
    link = (CompareShareLink.objects.select_related("plan", "plan__team", "version")
            .filter(token_hash=digest).first())
    if link is None or not hmac.compare_digest(link.token_hash, digest):
        return None
    if link.revoked_at is not None or (link.expires_at is not None and link.expires_at <= timezone.now()):
        return None
    return link


# --- exports ---------------------------------------------------------------------------------------


def export_filename(plan_name: str, number: int, fmt: str) -> str:
    """"агент-на-api-сравнение-вариантов-v1.xlsx": the plan's title, then what the file is."""
    from .downloads import export_filename as plan_filename

    return plan_filename(f"{plan_name} {_('options compared')}", number, fmt)


def _rows(table: dict) -> list[tuple[str, str, list]]:
    """(label, kind, values per option): the table of the page, kind "money"/"count"/"text"."""
    basis = table["basis_label"]
    o = table["options"]
    rows = [
        (_("Option"), "text", [x["short"] for x in o]),
        (_("Full description"), "text", [x["label"] for x in o]),
        (_("Kind"), "text", [str(x["kind_label"]) for x in o]),
        (_("CAPEX (upfront), %(basis)s") % {"basis": basis}, "money", [x["split"]["capex"].get(table["basis"]) for x in o]),
        (_("OPEX, average per month, %(basis)s") % {"basis": basis}, "money",
         [x["split"]["opex_month"].get(table["basis"]) for x in o]),
        (_("OPEX over the horizon, %(basis)s") % {"basis": basis}, "money",
         [x["split"]["opex_total"].get(table["basis"]) for x in o]),
        (_("Residual value at the end (resale), %(basis)s") % {"basis": basis}, "money",
         [x["split"]["residual"].get(table["basis"]) for x in o]),
        (_("Total, net of VAT"), "money", [x["net"] for x in o]),
        (_("VAT"), "money", [x["vat"] for x in o]),
        (_("Total, with VAT"), "money", [x["gross"] for x in o]),
        (_("P50 of the total, %(basis)s") % {"basis": basis}, "money", [x["p50"] for x in o]),
        (_("GPUs"), "count", [x["hw"]["gpus"] for x in o]),
        (_("Servers or cloud instances"), "count", [x["hw"]["servers"] for x in o]),
        (_("Power, kW"), "number", [x["hw"]["power_kw"] for x in o]),
        (_("Time to first token p95, ms"), "number", [x["hw"]["ttft_p95_ms"] for x in o]),
        (_("Time per output token p95, ms"), "number", [x["hw"]["tpot_p95_ms"] for x in o]),
        (_("Run time, hours"), "number", [x["hw"]["run_hours"] for x in o]),
    ]
    return [r for r in rows if any(v not in (None, "") for v in r[2])]


def xlsx(table: dict, *, plan_name: str, version_number: int) -> bytes:
    """The comparison as a workbook: the table (amounts with kopecks/cents as numbers with the
    currency format), the cumulative cost month by month (net and gross), the break-even in words."""
    import io

    from openpyxl import Workbook
    from openpyxl.styles import Alignment, Font

    from costs.exports_xlsx import _fit_widths, _money_format, xlsx_value

    money_format = _money_format(table["currency"])
    wb = Workbook()
    ws = wb.active
    ws.title = _("Comparison")[:31]
    head = [
        (_("Plan"), plan_name), (_("Version"), version_number),
        (_("Exported on"), timezone.localdate().isoformat()), (_("Prices as of"), table["as_of"] or ""),
        (_("Horizon, months"), table["horizon_months"]), (_("Currency"), table["currency"]),
        (_("Basis of CAPEX, OPEX, P50 and the chart"), str(table["basis_label"])),
    ]
    for label, value in head:
        ws.append([xlsx_value(label), xlsx_value(value)])
        ws.cell(ws.max_row, 1).font = Font(bold=True)
    ws.append([])
    ws.append([_("Break-even")] + [xlsx_value(x) for x in sentences(table)])
    ws.cell(ws.max_row, 1).font = Font(bold=True)
    ws.append([])
    ws.append([""] + [f"{x['n']}" for x in table["options"]])
    for label, kind, values in _rows(table):
        ws.append([label] + [float(v) if isinstance(v, Decimal) else xlsx_value(v) for v in values])
        ws.cell(ws.max_row, 1).font = Font(bold=True)
        for col in range(2, 2 + len(values)):
            cell = ws.cell(ws.max_row, col)
            if kind == "money":
                cell.number_format = money_format
            elif kind == "number":
                cell.number_format = "#,##0.0"
            cell.alignment = Alignment(wrap_text=kind == "text", vertical="top")
    _fit_widths(ws, maximum=60)

    flow = wb.create_sheet(_("Cumulative cost")[:31])
    options = table["options"]
    flow.append([_("Month")] + [xlsx_value(f"{x['n']}. {x['short']}, {_('net of VAT')}") for x in options]
                + [xlsx_value(f"{x['n']}. {x['short']}, {_('with VAT')}") for x in options])
    series = {}
    for x in options:
        series[x["id"]] = (cumulative_cost(x, "net"), cumulative_cost(x, "gross"))
    months = max((len(n) for n, _g in series.values()), default=0)
    for m in range(months):
        row = [m]
        for x in options:
            net = series[x["id"]][0]
            row.append(float(net[m]) if m < len(net) and net[m] is not None else None)
        for x in options:
            gross = series[x["id"]][1]
            row.append(float(gross[m]) if m < len(gross) and gross[m] is not None else None)
        flow.append(row)
        for col in range(2, len(row) + 1):
            flow.cell(flow.max_row, col).number_format = money_format
    for cell in flow[1]:
        cell.font = Font(bold=True)
        cell.alignment = Alignment(wrap_text=True, vertical="top")
    _fit_widths(flow, first_row=2, minimum=14, maximum=24)
    out = io.BytesIO()
    wb.save(out)
    return out.getvalue()


def render_pdf(table: dict, *, plan, version, request=None) -> bytes:
    from django.template.loader import render_to_string
    from weasyprint import HTML

    html = render_to_string("planner/options_compare_pdf.html", {
        "plan": plan, "version": version, "table": table, "sentences": sentences(table),
        "rows": _rows(table), "exported_on": timezone.localdate()}, request=request)
    return HTML(string=html).write_pdf()  # no base_url: the template loads nothing over the network


EXPORT_TYPES = {
    "xlsx": "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
    "pdf": "application/pdf",
}


def export(table: dict, *, plan, version, fmt: str, request=None) -> tuple[bytes, str, str]:
    from django.http import Http404

    if fmt not in EXPORT_TYPES:
        raise Http404("unknown export format")
    filename = export_filename(plan.name, version.number, fmt)
    if fmt == "pdf":
        content = render_pdf(table, plan=plan, version=version, request=request)
    else:
        content = xlsx(table, plan_name=plan.name, version_number=version.number)
    return content, EXPORT_TYPES[fmt], filename
