"""Money in whole units for headlines and summaries (issue 21: no kopecks on a 40-million total;
the XLSX keeps them). Kept apart from planner_tags so it can live beside a card-level filter."""

from decimal import ROUND_HALF_UP, Decimal, InvalidOperation

from django import template
from django.utils.formats import number_format
from django.utils.html import format_html
from django.utils.translation import gettext as _

register = template.Library()


@register.filter
def money_units(value, currency=""):
    """'40123456.78' -> '40 123 457 RUB' (ru) / '40,123,457 RUB' (en), rounded half up; None -> unknown."""
    try:
        amount = Decimal(str(value)) if value not in (None, "") else None
    except (InvalidOperation, ValueError):
        amount = None
    if amount is None:
        return format_html('<span class="unknown">{}</span>', _("unknown"))
    whole = amount.quantize(Decimal(1), rounding=ROUND_HALF_UP)
    return f"{number_format(whole, 0, use_l10n=True, force_grouping=True)} {currency}".strip()
