"""Filters of the calibration pages."""

from django import template
from django.utils.formats import number_format

register = template.Library()


@register.filter
def signed_pct(value, digits=0):
    """+0.123 -> '+12 %' (a prediction above the measurement), None -> '—'."""
    if value is None:
        return "—"
    sign = "+" if value > 0 else ("−" if value < 0 else "")
    return f"{sign}{number_format(abs(value) * 100, int(digits), use_l10n=True)} %"


@register.filter
def abs_pct(value, digits=0):
    if value is None:
        return "—"
    return f"{number_format(abs(value) * 100, int(digits), use_l10n=True)} %"


@register.filter
def fixed(value, digits=2):
    if value is None:
        return "—"
    return number_format(value, int(digits), use_l10n=True)
