"""The cumulative-cost chart of the options comparison (planner.options_compare): an SVG drawn on
the server, so the page and the PDF show the same picture without a script. Its palette and dash
patterns give each option its colour in the table too; BASIS_LABELS names the money basis in the
chart's caption and on the page.
"""

from __future__ import annotations

from html import escape

from django.utils.safestring import mark_safe
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy

# Okabe & Ito (2008), "Color Universal Design": distinguishable with any colour vision. Yellow
# (#F0E442) is left out: too pale for a line on white.
OKABE_ITO = ["#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9", "#000000"]
DASHES = ["", "6 3", "2 2", "8 3 2 3", "4 4", "1 3", "10 4"]

BASIS_LABELS = {"gross": gettext_lazy("with VAT"), "net": gettext_lazy("net of VAT")}


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
