"""Page 1 of the PDF: the decision, the cost table (net, VAT, gross), VAT and FX with their
dates, the price sources, a static chart of the cumulative cost (SVG, drawn here: the PDF runs
no scripts) and the export date, all on one A4 landscape page (two columns; the chart's lines
are numbered and coloured as the table's rows, so the table is its legend). Reads the version's
stored result only."""

from __future__ import annotations

from decimal import Decimal, InvalidOperation
from html import escape

from django.utils import timezone
from django.utils.safestring import mark_safe
from django.utils.translation import gettext as _

from .templatetags.planner_tags import num

PALETTE = ["#2f5fd0", "#d0602f", "#1b7f3b", "#8a2fd0", "#b25b00", "#0f8a8a", "#c0306a", "#5b6475"]
# Page 1 holds this many options (the table and the chart; all of them are in the XLSX) and
# sources: what fits one A4 landscape page next to the decision (tests/functional/test_exports_for_procurement.py).
TABLE_ROWS = 6
SOURCES_MAX = 6


def _dec(value):
    try:
        return Decimal(str(value)) if value is not None else None
    except (InvalidOperation, ValueError):
        return None


def pdf_summary(version, view: dict) -> dict:
    from costs.exports import _fx_lines, _vat_text, decision_order

    from .i18n import localise
    from .presentation import _localised, meets_by_candidate, risk_view

    result = localise(version.result or {})
    costs = result.get("costs") or {}
    include_vat = bool(costs.get("include_vat"))
    meets = meets_by_candidate(result.get("sizing") or {})
    ordered = [_localised(o) for o in decision_order(costs, meets)]
    chosen = ordered[0] if ordered else None
    rows = [{
        "rank": i, "label": o.get("label"), "kind": o.get("kind"),
        "net": _dec((o.get("totals") or {}).get("net")), "vat": _dec((o.get("totals") or {}).get("vat")),
        "gross": _dec((o.get("totals") or {}).get("gross")),
        "meets": meets.get(o.get("candidate")), "color": PALETTE[(i - 1) % len(PALETTE)],
        # the expected cost of incidents, beside the total and not in it
        "risk": risk_view(o, include_vat),
    } for i, o in enumerate(ordered[:TABLE_ROWS], start=1)]
    return {
        "exported_on": timezone.localdate(),
        "chosen": rows[0] if rows else None,
        "chosen_option": chosen,
        "rows": rows, "options_total": len(ordered),
        "currency": costs.get("currency", ""), "include_vat": include_vat,
        "vat": _vat_text(costs) if costs else "",
        "fx": [{"pair": p, "text": t, "on": on, "source": s} for p, t, on, s in _fx_lines(costs)] if costs else [],
        "sources": price_sources(ordered[:3]),
        "chart": cumulative_svg(ordered[:TABLE_ROWS], costs.get("currency", ""), include_vat=include_vat),
        "uncertainty": uncertainty_svg(ordered[:TABLE_ROWS], (costs.get("monte_carlo") or {}).get("options") or {},
                                       costs.get("currency", ""), include_vat=include_vat),
        "uncertainty_basis": _uncertainty_basis(costs, include_vat),
    }


def _uncertainty_basis(costs: dict, include_vat: bool) -> str:
    """"with VAT"/"without VAT": the basis the page's P10/P50/P90 are on (that of the totals)."""
    from costs.labels import mc_range

    for stats in ((costs.get("monte_carlo") or {}).get("options") or {}).values():
        q = mc_range(stats, gross=include_vat)
        if q:
            return q["basis_label"]
    return ""


def price_sources(options: list[dict]) -> list[str]:
    """The sources of the prices the top options are built from, each once."""
    seen: dict[str, None] = {}
    for o in options:
        for row in o.get("rows") or []:
            for line in row.get("lines") or []:
                for rate in (line.get("inputs") or {}).get("rates") or []:
                    if rate.get("currency") and rate.get("source"):
                        seen.setdefault(str(rate["source"]), None)
                for item in line.get("breakdown") or []:  # quantity x unit price x months, with its source
                    if item.get("source"):
                        seen.setdefault(str(item["source"]), None)
    return list(seen)[:SOURCES_MAX]


def cumulative_svg(options: list[dict], currency: str, *, include_vat: bool = False,
                   width: int = 400, height: int = 190) -> str:
    """Cumulative cost by month (with VAT when the totals are, else net), one line per option,
    each numbered at its end with the option's place in the table (whose # cell has its colour)."""
    key = "cumulative_gross" if include_vat else "cumulative_net"
    series = [[float(v) for v in (o.get("cash_flow") or {}).get(key) or []] for o in options]
    if not any(series):
        return ""
    left, right, top, bottom = 62, 18, 8, 28
    months = max(len(s) for s in series) - 1 or 1
    peak = max(max(s) for s in series if s) or 1.0
    x = lambda m: left + (width - left - right) * m / months  # noqa: E731
    y = lambda v: top + (height - top - bottom) * (1 - v / peak)  # noqa: E731
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
             f'viewBox="0 0 {width} {height}" font-family="DejaVu Sans" font-size="8">',
             f'<line x1="{left}" y1="{height - bottom}" x2="{width - right}" y2="{height - bottom}" stroke="#888"/>',
             f'<line x1="{left}" y1="{top}" x2="{left}" y2="{height - bottom}" stroke="#888"/>']
    for k in range(5):
        v = peak * k / 4
        parts.append(f'<text x="{left - 4}" y="{y(v) + 3:.1f}" text-anchor="end">{escape(str(num(v)))}</text>')
    for m in sorted({0, months // 2, months}):
        parts.append(f'<text x="{x(m):.1f}" y="{height - bottom + 11}" text-anchor="middle">{m}</text>')
    vat = _("with VAT") if include_vat else _("net of VAT")
    parts.append(f'<text x="{(left + width) / 2:.0f}" y="{height - 4}" text-anchor="middle">'
                 f'{escape(_("month"))} · {escape(currency)}, {escape(vat)}</text>')
    ends = []
    for i, s in enumerate(series):
        if not s:
            continue
        color = PALETTE[i % len(PALETTE)]
        points = " ".join(f"{x(m):.1f},{y(v):.1f}" for m, v in enumerate(s))
        parts.append(f'<polyline fill="none" stroke="{color}" stroke-width="1.4" points="{points}"/>')
        ends.append([y(s[-1]) + 3, x(len(s) - 1) + 3, color, i + 1])
    ends.sort()
    for a, b in zip(ends, ends[1:], strict=False):  # close line ends: the numbers one under another
        b[0] = max(b[0], a[0] + 8)
    for ly, lx, color, rank in ends:
        parts.append(f'<text x="{lx:.1f}" y="{ly:.1f}" fill="{color}">{rank}</text>')
    parts.append("</svg>")
    return mark_safe("".join(parts))  # noqa: S308 - every text in it is escaped above


def uncertainty_svg(options: list[dict], mc: dict, currency: str, *, include_vat: bool = False, width: int = 1000,
                    row_px: int = 22) -> str:
    """P10-P90 of each option's total as a bar with a P50 tick, on the basis of the totals (gross
    with VAT, else net; the axis says which), numbered as the page-1 table's rows, each with its
    three figures written out."""
    from costs.labels import mc_range

    rows = [(i, mc_range(mc[o["id"]], gross=include_vat)) for i, o in enumerate(options, start=1)
            if mc.get(o.get("id"))]
    rows = [(i, m) for i, m in rows if m]
    basis = rows[0][1]["basis_label"] if rows else ""
    rows = [(i, [_dec(m.get(k)) for k in ("p10", "p50", "p90")]) for i, m in rows]
    rows = [(i, v) for i, v in rows if None not in v]
    if not rows:
        return ""
    left, right, top, axis = 24, 330, 6, 26
    peak = float(max(v[2] for _i, v in rows)) or 1.0
    x = lambda v: left + (width - left - right) * float(v) / peak  # noqa: E731
    height = top + row_px * len(rows) + axis
    base = top + row_px * len(rows)
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
             f'viewBox="0 0 {width} {height}" font-family="DejaVu Sans" font-size="8">',
             f'<line x1="{left}" y1="{base}" x2="{width - right}" y2="{base}" stroke="#888"/>']
    for k in range(5):
        v = peak * k / 4
        parts.append(f'<text x="{x(v):.1f}" y="{base + 11}" text-anchor="middle">{escape(str(num(v)))}</text>')
    parts.append(f'<text x="{(left + width - right) / 2:.0f}" y="{height - 3}" text-anchor="middle">'
                 f'{escape(currency)}, {escape(str(basis))}</text>')
    for row, (i, (p10, p50, p90)) in enumerate(rows):
        color = PALETTE[(i - 1) % len(PALETTE)]
        cy = top + row_px * row + row_px / 2
        parts.append(f'<text x="{left - 6}" y="{cy + 3:.1f}" text-anchor="end" fill="{color}">{i}</text>'
                     f'<rect x="{x(p10):.1f}" y="{cy - 5:.1f}" width="{max(x(p90) - x(p10), 1):.1f}" height="10" '
                     f'fill="{color}" fill-opacity="0.35"/>'
                     f'<line x1="{x(p50):.1f}" y1="{cy - 7:.1f}" x2="{x(p50):.1f}" y2="{cy + 7:.1f}" stroke="{color}" '
                     f'stroke-width="2"/>')
        figures = f"P10 {num(p10)} · P50 {num(p50)} · P90 {num(p90)}"
        parts.append(f'<text x="{width - right + 8}" y="{cy + 3:.1f}">{escape(figures)}</text>')
    parts.append("</svg>")
    return mark_safe("".join(parts))  # noqa: S308 - every text in it is escaped above
