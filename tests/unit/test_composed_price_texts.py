"""A composed cloud price (Yandex Cloud: GPU + vCPU + RAM, each from the price list) says its sum as a text
that reads in Russian on a Russian plan, with Russian decimal commas (it read in English before)."""

from decimal import Decimal

import pytest

from costs.price_sources import _components_text
from planner.i18n import render

COMPOSED = {
    "provider": "Yandex Cloud", "product": "Compute Cloud", "valid_from": "2026-01-23", "includes_vat": True,
    "stale": False, "price_per_hour": {"amount": "4393.20", "currency": "RUB"},
    "components": [{"label": "GPU", "quantity": "4", "unit_price": "1016.90"},
                   {"label": "vCPU", "quantity": "88", "unit_price": "0.90"},
                   {"label": "RAM, GB", "quantity": "880", "unit_price": "0.28"}],
}


def test_english_text_states_the_sum_part_by_part():
    text = _components_text(COMPOSED)
    assert text == ("Yandex Cloud Compute Cloud: GPU 4 x 1016.90 + vCPU 88 x 0.90 + RAM, GB 880 x 0.28 = "
                    "4393.20 RUB per VM-hour, incl. VAT (price list of 2026-01-23)")
    # the parts add up to the stated sum
    assert sum(Decimal(c["quantity"]) * Decimal(c["unit_price"]) for c in COMPOSED["components"]) == Decimal("4393.20")


@pytest.mark.django_db(databases=[])
def test_russian_text_is_russian_with_decimal_commas():
    text = render(_components_text({**COMPOSED, "stale": True}), language="ru")
    assert "ОЗУ, ГБ 880 × 0,28" in text and "за час ВМ" in text and "с НДС" in text
    assert "прайс-лист от 2026-01-23" in text and "УСТАРЕЛО" in text
    assert "per VM-hour" not in text
