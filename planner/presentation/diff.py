"""The diff of two versions: which inputs changed and how each option's total moved."""

from __future__ import annotations

from decimal import Decimal

from django.utils.translation import gettext_lazy as _

from .. import humanize  # h/form
from .costs import option_totals

# --- diff ------------------------------------------------------------------------------


def flatten(value, prefix: str = "") -> dict[str, object]:
    """{"a": {"b": 1}} -> {"a.b": 1}; lists stay whole values."""
    if isinstance(value, dict):
        out: dict[str, object] = {}
        for k, v in value.items():
            out.update(flatten(v, f"{prefix}.{k}" if prefix else str(k)))
        return out
    return {prefix: value}



def input_path_label(path: str) -> str:
    """ "costs.horizon_months" -> "Horizon": a frozen input's path as the form names it."""
    from ..forms import FIELD_BY_PATH, CostOptionsForm

    if path == "prices_as_of":
        return str(_("Prices as of"))
    head, _sep, rest = path.partition(".")
    if head == "spec" and rest in FIELD_BY_PATH:
        field = FIELD_BY_PATH[rest].make()
        return str(field.label)
    if head == "spec" and rest == "kind":
        return str(_("Kind"))
    if head == "costs" and rest in CostOptionsForm.base_fields:
        return str(CostOptionsForm.base_fields[rest].label)
    return rest or path


def version_diff(*, old, new) -> dict:
    """Which inputs changed between two versions and how each option's total moved."""
    a = {**flatten(old.inputs), "prices_as_of": old.as_of.isoformat()}
    b = {**flatten(new.inputs), "prices_as_of": new.as_of.isoformat()}
    inputs = [
        {"path": path, "label": input_path_label(path), "old": humanize.input_value_text(path, a.get(path)),
         "new": humanize.input_value_text(path, b.get(path))}
        for path in sorted(set(a) | set(b))
        if a.get(path) != b.get(path)
    ]
    old_totals, new_totals = option_totals(old.full_result), option_totals(new.full_result)
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
    # h/form: options priced in one version only (e.g. left out by data residency in the other) are
    # one line each way with the list on demand, not rows of "unknown"
    only_old = [r for r in totals if r["old"] is not None and r["new"] is None]
    only_new = [r for r in totals if r["old"] is None and r["new"] is not None]
    totals = [r for r in totals if r not in only_old and r not in only_new]
    return {"inputs": inputs, "totals": totals, "only_old": only_old, "only_new": only_new,
            "residency_changed": a.get("costs.data_residency") != b.get("costs.data_residency")}
