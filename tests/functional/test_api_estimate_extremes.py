"""An estimate at the schema's largest values computes (found by schemathesis: a price of 1e308 per
1M tokens overflowed the cost engine's 28-digit Decimals); beyond the stated bound is a 400 naming the
field."""

import decimal

import pytest

from costs.engine.options import MAX_MAGNITUDE
from planner.api.input_schema_costs import cost_options_schema
from tests.functional.api_fixtures import *  # noqa: F403
from tests.functional.api_fixtures import catalog, client_for, world  # noqa: F401

pytestmark = pytest.mark.django_db

BIG = float(MAX_MAGNITUDE)
SPEC = {"kind": "inference", "model": {"preset": "llama-3.1-8b"},
        "serving": {"requests_per_second": 1_000_000, "input_tokens": 120_000, "output_tokens": 11_000,
                    "concurrency": 1}}


def _api_price(amount):
    return {"provider": "X", "model": "m", "currency": "USD", "input_per_1m_tokens": amount,
            "output_per_1m_tokens": amount}


def test_the_largest_allowed_price_and_volume_compute(world, catalog):  # noqa: F811
    api = client_for(world.users["editor"])
    body = {"spec": {**SPEC, "model": {"preset": "llama-3.1-8b"}},
            "costs": {"options": ["api"], "horizon_months": 120, "api_prices": [_api_price(BIG)]}}
    r = api.post("/api/v1/estimate/", body, format="json")
    assert r.status_code == 200, r.json()


def test_money_arithmetic_has_room_for_the_largest_totals():
    """1e6 requests/s x 131 000 tokens, 730 h a month = 3.4e14 M tokens a month; at a price of 1e12 per
    million over 120 months, 4.1e28: more digits than Python's default 28 can quantize to the cent."""
    total = decimal.Decimal(3.4e14) * decimal.Decimal(10) ** 12 * 120
    assert total.quantize(decimal.Decimal("0.000001")) == total  # would raise InvalidOperation at 28 digits


def test_beyond_the_bound_is_a_400_naming_the_field(world, catalog):  # noqa: F811
    api = client_for(world.users["editor"])
    body = {"spec": {"kind": "inference", "model": {"preset": "llama-3.1-8b"}},
            "costs": {"options": ["api"], "api_prices": [_api_price(1.2e308)], "egress_gb_per_month": 2e12}}
    r = api.post("/api/v1/estimate/", body, format="json")
    assert r.status_code == 400
    fields = {e["field"] for e in r.json()["errors"]}
    assert {"costs.api_prices[0].input_per_1m_tokens", "costs.egress_gb_per_month"} <= fields


def test_the_schema_states_the_bound_on_every_number():
    def numbers(node):
        if isinstance(node, dict):
            if node.get("type") == "number":
                yield node
            for v in node.values():
                yield from numbers(v)
        elif isinstance(node, list):
            for v in node:
                yield from numbers(v)

    found = list(numbers(cost_options_schema()))
    assert found and all(n["maximum"] <= BIG and n.get("minimum", 0) >= -BIG for n in found)
