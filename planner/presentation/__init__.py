"""Turns stored plan versions into what the pages, the diff, compare and exports show.

Reads only the version's stored JSON (never today's catalog): an old version renders with
the prices it was computed with (R6.4). Missing figures stay None and show as "unknown".
"""

from __future__ import annotations

from decimal import Decimal

from ..forms import FIELDS
from .card import OKABE_ITO, break_even_matrix, card_decision, card_view, option_style, short_option_label
from .common import _decimal, value_label
from .costs import (
    OPTION_KINDS,
    _localised,
    _number_text,
    _unit_text,
    costs_view,
    input_label,
    line_inputs,
    risk_view,
    source_label,
)
from .diff import version_diff
from .sizing import (
    _layout,
    _unit_from_key,
    in_decision_order,
    meets_by_candidate,
    memory_chart,
    quantity_rows,
    serving_curve_chart,
    sizing_view,
)

# The names the pages, exports, compare and tests read from planner.presentation (the package
# splits the view model by section: costs, sizing, diff, the ten-second card).
__all__ = [
    "OKABE_ITO", "OPTION_KINDS", "_decimal", "_layout", "_localised", "_number_text", "_price_alternatives",
    "_unit_from_key", "_unit_text", "break_even_matrix", "card_decision", "card_view", "costs_view", "input_label",
    "line_inputs", "meets_by_candidate", "memory_chart", "option_style", "preset_architecture_fields",
    "quantity_rows", "risk_view", "serving_curve_chart", "short_option_label", "sizing_view", "source_label",
    "value_label", "version_diff", "version_view",
]


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



def version_view(version) -> dict:
    """What the plan page shows of a version, read from its stored result only, with every
    engine text in the active language (planner.i18n)."""
    from ..i18n import localise
    from ..launch_view import launch_view
    from ..procurement_view import version_procurement_view

    result = localise(version.full_result or {})
    sizing = result.get("sizing") or {}
    accelerators = {a.get("id"): a for a in (version.price_snapshot or {}).get("accelerators") or []}
    kind = (result.get("decision") or {}).get("option_kind")
    sizing_v = sizing_view(sizing, rented=bool(kind) and kind not in ("onprem", "hybrid"))
    if sizing_v:
        in_decision_order(sizing_v, sizing, result.get("costs") or {})
        _price_alternatives(sizing_v, result.get("costs") or {})
    costs_v = costs_view(result.get("costs") or {}, accelerators)
    card_view(costs_v, result.get("costs") or {})  # the ten-second card's short labels, numbers, colours, matrix (h/card)
    return {"decision": card_decision(plan_decision_view(result.get("decision"))),
            "sizing": sizing, "costs": costs_v,
            "sizing_view": sizing_v, "memory_chart": memory_chart(sizing, accelerators),
            "serving_curve": serving_curve_chart(sizing, result.get("costs") or {}),
            "procurement": version_procurement_view(version.inputs),
            "launch": launch_view(result.get("decision"))}


def plan_decision_view(decision: dict | None) -> dict | None:
    """The plan's one decision (planner.plan_decision) as the page and the PDF show it."""
    if not decision:
        return None
    out = dict(decision)
    if out.get("hardware"):
        out["hardware"] = {**out["hardware"], "layout_text": _layout(out["hardware"].get("layout"))}
    return out


def _price_alternatives(view: dict, costs: dict) -> None:
    """The sizing ranks by catalog USD per hour; the page shows that price in the plan's currency
    at the plan's dated FX rate (never USD inside a RUB plan), or no price column without a rate."""
    currency = costs.get("currency") or "USD"
    factor = Decimal(1) if currency == "USD" else None
    for fx in (costs.get("inputs_used") or {}).get("fx") or []:
        rate = _decimal(fx.get("rate"))
        if rate and fx.get("base") == currency and fx.get("quote") == "USD":
            factor = 1 / rate
        elif rate and fx.get("base") == "USD" and fx.get("quote") == currency:
            factor = rate
    view["price_currency"] = currency if factor is not None else ""
    for c in view.get("ranked") or []:
        usd = _decimal(c.get("cost_usd_per_hour"))
        c["cost_per_hour"] = usd * factor if usd is not None and factor is not None else None
    if not any(c.get("cost_per_hour") is not None for c in view.get("ranked") or []):
        view["price_currency"] = ""  # no row has a catalog hourly price (training rows): no column of "unknown"
