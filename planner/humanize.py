"""Values as people read them (issue 21): country names for ISO codes, the serving bottleneck in
words, stored inputs (lists, booleans) as text, and the offers a data-residency rule left out
gathered into one line.

Stored values keep their codes ("RU", "memory_bandwidth"); only what a page shows is translated.
"""

from __future__ import annotations

from django.utils.formats import number_format
from django.utils.translation import gettext
from django.utils.translation import gettext_lazy as _

# The jurisdictions a catalog names (provider seats and regions), plus the usual neighbours.
COUNTRY_NAMES = {
    "RU": _("Russia"), "US": _("United States"), "DE": _("Germany"), "NL": _("Netherlands"),
    "CN": _("China"), "FI": _("Finland"), "FR": _("France"), "GB": _("United Kingdom"), "IE": _("Ireland"),
    "SE": _("Sweden"), "KZ": _("Kazakhstan"), "BY": _("Belarus"), "AM": _("Armenia"), "AE": _("United Arab Emirates"),
    "IN": _("India"), "JP": _("Japan"), "SG": _("Singapore"), "KR": _("South Korea"), "CA": _("Canada"),
    "CH": _("Switzerland"), "PL": _("Poland"), "TR": _("Turkey"), "UZ": _("Uzbekistan"), "EU": _("European Union"),
}

BOTTLENECK_LABELS = {
    "memory_bandwidth": _("memory bandwidth"),
    "compute": _("compute"),
    "interconnect": _("interconnect between GPUs"),
    "overhead": _("per-step overhead"),
    "kv_capacity": _("KV cache capacity"),
}

RESIDENCY_TEMPLATES = ("{what} is in {jurisdiction}, outside the chosen jurisdictions ({allowed})",
                       "{what}: jurisdiction unknown, so it cannot be shown to be inside {allowed}")


def country_name(code) -> str:
    """ "RU" -> "Russia" in the active language; an unknown code stays as it is."""
    name = COUNTRY_NAMES.get(str(code or "").upper())
    return str(name) if name is not None else str(code or "")


def country_choices(codes) -> list[tuple[str, str]]:
    """[(code, localised name)] sorted by name: the stored value stays the ISO code."""
    return sorted(((c, country_name(c)) for c in codes), key=lambda pair: pair[1])


def bottleneck_label(value) -> str:
    label = BOTTLENECK_LABELS.get(str(value))
    return str(label) if label is not None else str(value)


def input_value_text(path: str, value) -> object:
    """A frozen input as the diff page shows it: ["RU", "US"] -> "Russia, United States",
    True -> "yes", a dict as "key: value" pairs; numbers and None pass through."""
    if isinstance(value, bool):
        return gettext("yes") if value else gettext("no")
    if isinstance(value, list | tuple):
        if path.endswith("data_residency"):
            return ", ".join(country_name(v) for v in value)
        return ", ".join(str(input_value_text(path, v)) for v in value)
    if isinstance(value, dict):
        return "; ".join(f"{k}: {input_value_text(path, v)}" for k, v in value.items())
    if isinstance(value, float):
        return number_format(value, use_l10n=True)
    return value


def is_residency_skip(skip: dict) -> bool:
    """A skipped entry that a data-residency rule left out (not a missing price)."""
    return bool(skip.get("jurisdiction")) or (skip.get("reason_i18n") or {}).get("template") in RESIDENCY_TEMPLATES


def residency_summary(skipped, data_residency) -> dict | None:
    """The offers the residency rule left out, as one line and its details:
    {"count": offers, "allowed": "Russia", "entries": [{"what", "country"}]}; None without a rule."""
    left_out = list((data_residency or {}).get("left_out") or [])
    if not left_out:
        left_out = [s for s in skipped or [] if is_residency_skip(s)]
    if not left_out and not data_residency:
        return None
    entries: dict[str, dict] = {}
    for s in left_out:
        params = (s.get("reason_i18n") or {}).get("params") or {}
        what = params.get("what") or " ".join(str(x) for x in (s.get("provider"), s.get("region")) if x)
        code = s.get("jurisdiction") or params.get("jurisdiction")
        entry = entries.setdefault(what, {"what": what, "offers": 0,
                                          "country": country_name(code) if code else str(_("jurisdiction unknown"))})
        entry["offers"] += int(s.get("offers") or 1)
    entries = list(entries.values())
    allowed = (data_residency or {}).get("jurisdictions") or []
    count = sum(e["offers"] for e in entries)
    return {"count": count, "providers": len(entries), "entries": entries,
            "allowed": ", ".join(country_name(c) for c in allowed)}
