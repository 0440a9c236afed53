"""Turns stored plan versions into what the pages, the diff, compare and exports show.

Reads only the version's stored JSON (never today's catalog): an old version renders with
the prices it was computed with (R6.4). Missing figures stay None and show as "unknown".
"""

from __future__ import annotations

from decimal import Decimal, InvalidOperation

from .forms import FIELDS


def preset_architecture_fields(preset_id: str) -> dict[str, str]:
    """Form values of a preset's architecture, so choosing a preset fills those fields."""
    from planner.engine.presets import get_preset

    preset = get_preset(preset_id) if preset_id else None
    if preset is None:
        return {}
    out = {}
    for f in FIELDS:
        if not f.path.startswith("model.architecture."):
            continue
        key = f.path.rsplit(".", 1)[1]
        value = preset.row.get(key if key != "params" else "total_params", "")
        if value in ("", None):
            continue
        if key in ("gated_ffn", "tied_embeddings"):
            value = "true" if str(value).lower() == "true" else "false"
        out[f.name] = str(value)
    return out


# --- diff ------------------------------------------------------------------------------


def flatten(value, prefix: str = "") -> dict[str, object]:
    """{"a": {"b": 1}} -> {"a.b": 1}; lists stay whole values."""
    if isinstance(value, dict):
        out: dict[str, object] = {}
        for k, v in value.items():
            out.update(flatten(v, f"{prefix}.{k}" if prefix else str(k)))
        return out
    return {prefix: value}


def _decimal(value) -> Decimal | None:
    if value is None or isinstance(value, bool):
        return None
    if isinstance(value, dict) and "amount" in value:
        value = value["amount"]
    try:
        return Decimal(str(value))
    except (InvalidOperation, ValueError):
        return None


def version_view(version) -> dict:
    """What the plan page shows of a version (the result sections are read in the template)."""
    result = version.result or {}
    return {"sizing": result.get("sizing") or {}, "costs": result.get("costs") or {}}


def option_totals(result: dict | None) -> dict[str, dict]:
    """{option_id: {"label", "total" (Decimal|None), "currency"}} from a stored cost result."""
    costs = (result or {}).get("costs") or {}
    currency = costs.get("currency", "")
    out = {}
    for option in costs.get("options") or []:
        total = option.get("totals", {}).get("total") if isinstance(option.get("totals"), dict) else option.get("total")
        out[str(option.get("option_id") or option.get("id"))] = {
            "label": option.get("label") or option.get("option_id"),
            "total": _decimal(total),
            "currency": currency,
        }
    return out


def version_diff(*, old, new) -> dict:
    """Which inputs changed between two versions and how each option's total moved."""
    a = {**flatten(old.inputs), "prices_as_of": old.as_of.isoformat()}
    b = {**flatten(new.inputs), "prices_as_of": new.as_of.isoformat()}
    inputs = [
        {"path": path, "old": a.get(path), "new": b.get(path)}
        for path in sorted(set(a) | set(b))
        if a.get(path) != b.get(path)
    ]
    old_totals, new_totals = option_totals(old.result), option_totals(new.result)
    totals = []
    for option_id in list(dict.fromkeys([*old_totals, *new_totals])):
        o, n = old_totals.get(option_id, {}), new_totals.get(option_id, {})
        before, after = o.get("total"), n.get("total")
        same_currency = o.get("currency") == n.get("currency")
        totals.append({
            "option_id": option_id,
            "label": n.get("label") or o.get("label"),
            "old": before, "old_currency": o.get("currency", ""),
            "new": after, "new_currency": n.get("currency", ""),
            "delta": after - before if before is not None and after is not None and same_currency else None,
            "pct": ((after - before) / before * 100).quantize(Decimal("0.1"))
            if before and after is not None and same_currency else None,
        })
    return {"inputs": inputs, "totals": totals}
