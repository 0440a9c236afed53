"""Formatting helpers for plan pages: money and figures per the active locale, None as "unknown"."""

from decimal import ROUND_HALF_UP, Decimal, InvalidOperation

from django import template
from django.utils.formats import number_format
from django.utils.html import format_html
from django.utils.translation import gettext as _

register = template.Library()


def _unknown():
    return format_html('<span class="unknown">{}</span>', _("unknown"))


def _dec(value):
    if value is None or value == "":
        return None
    try:
        return Decimal(str(value))
    except (InvalidOperation, ValueError):
        return None


def _half_up(amount: Decimal, digits: int) -> Decimal:
    """Rounded half up to `digits` places: Django's number_format cuts the digits it does not show,
    so 28 436 971.92 would print as 28 436 971 in one table and 28 436 972 in the headline."""
    if not amount.is_finite():
        return amount
    return amount.quantize(Decimal(1).scaleb(-digits), rounding=ROUND_HALF_UP)


@register.filter
def money(value, currency=""):
    """'12345.6' -> '12,345.60 USD' (en) / '12 345,60 USD' (ru); None -> unknown."""
    amount = _dec(value)
    if amount is None:
        return _unknown()
    text = number_format(_half_up(amount, 2), 2, use_l10n=True, force_grouping=True)
    return f"{text} {currency}".strip()


@register.filter
def num(value, digits=0):
    """A figure with grouping per locale; None -> unknown."""
    amount = _dec(value)
    if amount is None:
        return _unknown()
    return number_format(_half_up(amount, int(digits)), int(digits), use_l10n=True, force_grouping=True)


@register.filter
def gib(value_bytes):
    """Bytes as GiB with one decimal (2^30 bytes: the unit GPU memory is quoted in)."""
    amount = _dec(value_bytes)
    if amount is None:
        return _unknown()
    return f"{number_format(_half_up(amount / (1 << 30), 1), 1, use_l10n=True, force_grouping=True)} GiB"


@register.filter
def size(value_bytes):
    """Bytes in the binary unit that fits: 'KV cache per token 160.0 KiB', not '0.0 GiB'."""
    amount = _dec(value_bytes)
    if amount is None:
        return _unknown()
    if amount == 0:
        return "0 GiB"
    for unit, power in (("TiB", 40), ("GiB", 30), ("MiB", 20), ("KiB", 10)):
        if abs(amount) >= (1 << power):
            return f"{number_format(_half_up(amount / (1 << power), 1), 1, use_l10n=True, force_grouping=True)} {unit}"
    return f"{number_format(amount, 0, use_l10n=True, force_grouping=True)} B"


@register.filter
def pct(value, digits=0):
    amount = _dec(value)
    if amount is None:
        return _unknown()
    return f"{number_format(_half_up(amount * 100, int(digits)), int(digits), use_l10n=True)} %"


@register.filter
def get(mapping, key):
    return mapping.get(key) if isinstance(mapping, dict) else None


@register.filter
def figure(value):
    """An engine figure per locale: integers grouped, other numbers with up to 2 decimals
    (3 significant digits below 1); text passes through unchanged."""
    if isinstance(value, bool) or not isinstance(value, int | float | Decimal):
        return value
    if isinstance(value, int) or float(value).is_integer():
        return number_format(int(value), 0, use_l10n=True, force_grouping=True)
    digits = 2 if abs(value) >= 1 else 3
    return number_format(round(Decimal(str(value)), digits), digits, use_l10n=True, force_grouping=True)


@register.filter
def status_label(value):
    """A version status code ("done") as its label in the active language ("Готов")."""
    from planner.choices import VersionStatus

    try:
        return VersionStatus(value).label
    except ValueError:
        return value


@register.filter
def msg(value):
    """An engine text (Msg, its stored {"template", "params"} form, or a plain string) in the
    active language, with the language's number separators and plural forms (planner.i18n)."""
    from planner.i18n import render

    return render(value)


@register.filter
def decimal_figure(value):
    """A stored decimal string or number ("0.60", 0.8) in the page's language ("0,60", "0,8"),
    its digits kept; text that is not a number passes through."""
    from decimal import Decimal as D
    from decimal import InvalidOperation

    if isinstance(value, bool) or value is None or value == "":
        return value
    try:
        number = D(str(value))
    except (InvalidOperation, ValueError):
        return value
    places = max(0, -number.as_tuple().exponent)
    if places > 4 and number:  # a computed share ("0.0002729875296520143169710806697"): 3 significant digits
        places = max(0, 3 - number.adjusted() - 1)
        number = round(number, places)
        number = number.normalize() if places else number
        places = max(0, -number.as_tuple().exponent)
    return number_format(number, places, use_l10n=True, force_grouping=True)


@register.filter
def share_pct(value):
    """A share (0.4167, "0.0000611") as a percentage with 3 significant digits, at most one decimal
    from 1 % up ("41,7 %", "80 %", "0,00611 %": a short job's utilisation over a horizon)."""
    amount = _dec(value)
    if amount is None:
        return _unknown()
    percent = amount * 100
    places = 1 if abs(percent) >= 1 or not percent else max(1, 2 - percent.adjusted())
    text = number_format(_half_up(percent, places).normalize(), None, use_l10n=True)
    return f"{text} %"


# == whole-unit money for headlines (h/card) ==
@register.filter
def money_whole(value, currency=""):
    """'40123456.78' -> '40 123 457 RUB': whole roubles/dollars (half up) for headlines and the
    ten-second card; kopecks and cents stay in the detail tables and the XLSX. None -> unknown."""
    from decimal import ROUND_HALF_UP

    amount = _dec(value)
    if amount is None:
        return _unknown()
    amount = Decimal(amount).quantize(Decimal(1), rounding=ROUND_HALF_UP)
    text = number_format(amount, 0, use_l10n=True, force_grouping=True)
    return f"{text} {currency}".strip()


@register.filter
def signed_money_whole(value, currency=""):
    """A difference to the decision: '+1 234 RUB', '−56 RUB', '0 RUB'."""
    amount = _dec(value)
    if amount is None:
        return _unknown()
    text = money_whole(abs(amount), currency)
    return ("+" if amount > 0 else "−" if amount < 0 else "") + text


@register.filter
def dash_css(dash):
    """A chart line's dash ([6, 3]) as a legend swatch's CSS border style."""
    return "dashed" if dash else "solid"


@register.filter
def money_range_short(low, high):
    """A P10-P90 range in a narrow table cell: '12,1 – 24,1 млн' / '914 тыс. – 1,34 млн' (three significant
    digits, millions or thousands); the exact figures stay in the cell's title, the chart and the XLSX."""
    parts = [_short_amount(_dec(v)) for v in (low, high)]
    if None in parts:
        return _unknown()
    (lo, lo_unit), (hi, hi_unit) = parts
    return f"{lo} – {hi} {hi_unit}".strip() if lo_unit == hi_unit else f"{lo} {lo_unit} – {hi} {hi_unit}".strip()


def _short_amount(amount):
    if amount is None:
        return None
    for scale, unit in ((Decimal(10) ** 9, _("bn")), (Decimal(10) ** 6, _("M")), (Decimal(10) ** 3, _("k"))):
        if abs(amount) >= scale:
            scaled = amount / scale
            places = max(0, 2 - scaled.copy_abs().adjusted())
            return number_format(_half_up(scaled, places), places, use_l10n=True, force_grouping=True), unit
    return number_format(_half_up(amount, 0), 0, use_l10n=True, force_grouping=True), ""
