"""Chart axes people read: "nice" ticks (0, 10 M, 20 M; never 22 898 557) and a colour-blind-safe
palette (Okabe & Ito, "Color Universal Design", 2008), for the charts drawn server-side as SVG."""

from __future__ import annotations

import math

from django.utils.formats import number_format
from django.utils.translation import gettext as _

# Okabe-Ito, in an order that keeps the first colours far apart; yellow (hard to see on white) last.
OKABE_ITO = ["#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9", "#000000", "#F0E442"]
# A second cue besides the colour: the n-th line's dash pattern (solid first).
DASHES = ["", "6 3", "2 2", "8 3 2 3", "4 4", "1 3", "10 2", "3 6"]


def nice_step(span: float, target_ticks: int = 5) -> float:
    """The step of 1, 2, 2.5 or 5 x 10^k that cuts `span` into about `target_ticks` intervals."""
    if span <= 0 or not math.isfinite(span):
        return 1.0
    raw = span / max(target_ticks, 1)
    power = 10 ** math.floor(math.log10(raw))
    for m in (1, 2, 2.5, 5, 10):
        if m * power >= raw:
            return m * power
    return 10 * power


def nice_ticks(peak: float, target_ticks: int = 5) -> list[float]:
    """Ticks from 0 to the first multiple of a nice step at or above `peak`: 0, 10 M, 20 M, 30 M."""
    if peak <= 0 or not math.isfinite(peak):
        return [0.0, 1.0]
    step = nice_step(peak, target_ticks)
    n = math.ceil(peak / step - 1e-9)
    return [round(step * k, 10) for k in range(n + 1)]


def tick_label(value: float, top: float) -> str:
    """A tick in the unit of the axis' top, in the active locale: "20 M" / "20 млн", "2,5 k" / "2,5 тыс."."""
    for scale, unit in ((1e9, _("bn")), (1e6, _("M")), (1e3, _("k"))):
        if top >= scale:
            scaled = value / scale
            digits = 0 if abs(scaled - round(scaled)) < 1e-9 else 1
            return f"{number_format(scaled, digits, use_l10n=True, force_grouping=True)}\u00a0{unit}" if value else "0"
    digits = 0 if abs(value - round(value)) < 1e-9 else 1
    return number_format(value, digits, use_l10n=True, force_grouping=True)
