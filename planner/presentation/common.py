"""Small helpers every presentation module shares."""

from __future__ import annotations

from decimal import Decimal, InvalidOperation

from django.utils.translation import gettext_lazy as _
from django.utils.translation import npgettext, pgettext_lazy


def _decimal(value) -> Decimal | None:
    if value is None or isinstance(value, bool):
        return None
    if isinstance(value, dict) and "amount" in value:
        value = value["amount"]
    try:
        return Decimal(str(value))
    except (InvalidOperation, ValueError):
        return None


# Units the engine writes. SI symbols take the language's letters (Russian writes кВт, мс, ГБ/с,
# as the engine's own Russian texts do: "15 кВт"); GiB, TFLOP/s and FLOP stay as they are. Counted
# units agree with their number ("1 server", "2 servers"; Russian: 1 сервер, 2 сервера, 5 серверов).
UNIT_LABELS = {
    "tokens/s": _("tokens/s"), "requests/s": _("requests/s"), "bytes": _("bytes"),
    "kW": pgettext_lazy("unit symbol", "kW"), "W": pgettext_lazy("unit symbol", "W"),
    "ms": pgettext_lazy("unit symbol", "ms"), "s": pgettext_lazy("unit symbol", "s"),
    "h": pgettext_lazy("unit symbol", "h"), "GB/s": pgettext_lazy("unit symbol", "GB/s"),
    "Gbit/s": pgettext_lazy("unit symbol", "Gbit/s"), "tokens/param": _("tokens per parameter"),
}
UNIT_PLURALS = {
    "servers": lambda n: npgettext("unit", "server", "servers", n),
    "GPUs": lambda n: npgettext("unit", "GPU", "GPUs", n),
    "cores": lambda n: npgettext("unit", "core", "cores", n),
    "racks": lambda n: npgettext("unit", "rack", "racks", n),
    "replicas": lambda n: npgettext("unit", "replica", "replicas", n),
    "sequences": lambda n: npgettext("unit", "sequence", "sequences", n),
    "requests": lambda n: npgettext("unit", "request", "requests", n),
    "params": lambda n: npgettext("unit", "parameter", "parameters", n),
    "hours": lambda n: npgettext("unit", "hour", "hours", n),
    "GPU-hours": lambda n: npgettext("unit", "GPU-hour", "GPU-hours", n),
    "core-hours": lambda n: npgettext("unit", "core-hour", "core-hours", n),
    "tokens": lambda n: npgettext("unit", "token", "tokens", n),
    "months": lambda n: npgettext("unit", "month", "months", n),
    "chunks": lambda n: npgettext("unit", "chunk", "chunks", n),
}


def unit_label(unit: str, value) -> str:
    """The unit in the active language, in the form its value takes."""
    if unit not in UNIT_PLURALS:
        # a result already localised (planner.i18n) carries the unit as one translated word
        # ("серверов"): back to its key, so the form still follows the value ("1 сервер")
        from django.utils.translation import gettext

        unit = {gettext(key): key for key in UNIT_PLURALS}.get(unit, unit)
    if unit in UNIT_PLURALS:
        return UNIT_PLURALS[unit](_plural_count(value))
    return str(UNIT_LABELS.get(unit, unit))


def _plural_count(value) -> int:
    # Whole numbers pick their own form; fractions and unknowns read like 2 (English "1.5 hours",
    # Russian "1,5 часа").
    try:
        number = float(value)
    except (TypeError, ValueError):
        return 2
    return int(abs(number)) if number.is_integer() and abs(number) < 2**63 else 2

VALUE_LABELS = {
    "none": _("none"), "selective": _("selective"), "full": _("full"), "decoder": _("decoder"),
    "encoder": _("encoder"), "vision": _("vision model"), "encoder_decoder": _("encoder-decoder"),
    "n_plus_1": _("N+1 spare server"), "multi_zone": _("a second zone"), "preset": _("preset"),
    "architecture": _("architecture"), "hf_config": _("Hugging Face config.json"),
}

def value_label(value):
    if isinstance(value, str) and value in VALUE_LABELS:
        return str(VALUE_LABELS[value])
    return value

def _is_quantity(value) -> bool:
    return isinstance(value, dict) and "value" in value and set(value) <= {
        "value", "unit", "explain", "source", "low", "high"}
