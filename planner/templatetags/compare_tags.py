"""Filters of the compare pages (h/compare)."""

from decimal import ROUND_HALF_UP, Decimal, InvalidOperation

from django import template

from .planner_tags import num

register = template.Library()


@register.filter
def whole(value):
    """An amount in whole units, rounded half up ("17 500,50" -> "17 501"; `num` alone truncates)."""
    try:
        amount = Decimal(str(value)) if value is not None and value != "" else None
    except (InvalidOperation, ValueError):
        amount = None
    return num(amount.quantize(Decimal(1), ROUND_HALF_UP) if amount is not None else None)
