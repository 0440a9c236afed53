"""The JSON Schema of the cost options (costs.engine.options.parse_cost_options), built from the
cost engine's own constants: the other half of the input schemas, apart from the WorkloadSpec's.
"""

from __future__ import annotations

from costs.engine.inputs import DECISION_BASES, OPTION_KINDS, REDUNDANCY
from costs.engine.money import CURRENCIES
from costs.engine.options import (
    ISO_COUNTRIES,
    MAX_HORIZON_MONTHS,
    MAX_MAGNITUDE,
    MAX_SAMPLES,
    MIN_SAMPLES,
    SUPPORT_KINDS,
    SUPPORT_PER,
    SUPPORT_SCALE,
)
from costs.engine.rates import RATE_SCHEMA
from planner.engine.presets import preset_ids

from .input_schema_parts import _bool, _int, _not_null, _num, _obj, _visible


def _rate_override(kind: str) -> dict:
    if kind == "fraction":
        return _not_null(_num(0, 1))
    if kind == "min1":
        return _not_null(_num(1))
    return _not_null(_num(0))


def _bounded(node):
    """Every number of the cost options at most MAX_MAGNITUDE in size (the parser's rule)."""
    if isinstance(node, list):
        return [_bounded(x) for x in node]
    if not isinstance(node, dict):
        return node
    out = {k: _bounded(v) for k, v in node.items()}
    if out.get("type") == "number":
        out.setdefault("maximum", float(MAX_MAGNITUDE))
        out.setdefault("minimum", -float(MAX_MAGNITUDE))
    return out


def cost_options_schema() -> dict:
    return _bounded(_cost_options_schema())


def _cost_options_schema() -> dict:
    countries = sorted(ISO_COUNTRIES)
    price_item = lambda props, required: _obj(props, required=required, nullable=False)  # noqa: E731
    amount = _not_null(_num(0))
    currency = {"type": "string", "enum": list(CURRENCIES)}
    overrides = {}
    for key, spec in RATE_SCHEMA.items():
        if key == "price_drift_per_year":
            overrides[key] = _not_null(_num())
        else:
            overrides[key] = _rate_override(spec.kind)
    return _obj({
        "horizon_months": _not_null(_int(1, MAX_HORIZON_MONTHS)),
        "currency": currency,
        "include_vat": _not_null(_bool()),
        "country": {"type": "string", "enum": countries},
        "as_of": {"type": "string", "format": "date"},
        "utilisation": _num(0, 1),
        "efficiency": _num(0, 1, exclusive_min=True),
        "options": {"type": "array", "minItems": 1, "items": {"type": "string", "enum": list(OPTION_KINDS)}},
        "redundancy": {"type": "string", "enum": list(REDUNDANCY)},
        "hybrid_owned_share": _not_null(_num(0, 1, exclusive_min=True)),
        "monte_carlo_samples": _not_null(_int(MIN_SAMPLES, MAX_SAMPLES)),
        "seed": _not_null(_int(0, 2**63 - 1)),
        "overrides": _obj(overrides, nullable=False, description="Rate-card values to replace, by rate name."),
        "server_prices": {"type": "array", "items": price_item({
            "accelerator": _visible(),
            "gpus_per_server": _not_null(_int(1, 64)), "amount": amount, "currency": currency,
            "includes_vat": {}, "source": {}, "name": {}, "power_w": _not_null(_num(0, exclusive_min=True)),
            "rack_units": _not_null(_int(1, 60)), "date": {"type": "string", "format": "date", "nullable": True},
        }, ["accelerator", "gpus_per_server", "amount", "currency"])},
        "api_prices": {"type": "array", "items": {
            "type": "object",
            "required": ["provider", "model", "currency", "input_per_1m_tokens", "output_per_1m_tokens"],
            "properties": {
                "provider": _visible(),
                "model": _visible(),
                "currency": currency, "input_per_1m_tokens": amount, "output_per_1m_tokens": amount,
                "open_weights_model": {"type": "string", "enum": preset_ids(), "nullable": True,
                                       "description": "The preset id when the API serves that open-weights "
                                                      "model: compared like for like with self-hosting it."},
            },
        }},
        "data_residency": {"type": "array", "items": {"type": "string", "enum": countries}},
        "providers": {"type": "array", "maxItems": 100, "description": (
            "Providers the plan may buy from, by their catalog names (e.g. \"Yandex Cloud\"); empty or absent: "
            "any. A team's procurement settings narrow it further."),
            "items": _visible(120)},
        "egress_gb_per_month": _num(0),
        "inter_zone_gb_per_month": _num(0),
        "runs": _int(1, 100_000),
        "runs_per_month": _num(0, 10_000, exclusive_min=True),
        "discount_rate": {**_num(0), "maximum": 1, "exclusiveMaximum": True},
        "vat_recoverable": _not_null(_bool()),
        "downtime_cost_per_hour": _num(0),
        "decision_basis": {"type": "string", "enum": list(DECISION_BASES),
                           "description": "How the decision picks: cheapest budget (default), risk_adjusted "
                                          "(budget + expected cost of downtime; needs downtime_cost_per_hour), "
                                          "fewest_gpus (then the cheapest)."},
        "support_lines": {"type": "array", "items": price_item({
            "label": _visible(),
            "amount": amount, "currency": currency,
            "per": {"type": "string", "enum": list(SUPPORT_PER)},
            "scale": {"type": "string", "enum": list(SUPPORT_SCALE)},
            "kinds": {"type": "array", "minItems": 1, "items": {"type": "string", "enum": list(OPTION_KINDS)}},
            "includes_vat": {}, "source": {},
        }, ["label", "amount", "currency"])},
    }, nullable=False, description="Cost options (docs/COSTS.md); defaults apply to what is left out. "
                                   f"support_lines kinds default to {', '.join(SUPPORT_KINDS)}.")
