"""Rate cards in the database: loading (validated, atomic, idempotent) and the dated snapshot."""

import datetime as dt
import json
from decimal import Decimal as D

import pytest
from django.core.management import CommandError, call_command
from django.db import IntegrityError

from costs.engine.errors import CostValidationError
from costs.models import RateCard
from costs.rate_csv import COLUMNS
from costs.selectors import rate_card_snapshot
from costs.services import rate_cards_load

pytestmark = pytest.mark.django_db


def _csv(tmp_path, rows: list[str]):
    path = tmp_path / "rates.csv"
    path.write_text(",".join(COLUMNS) + "\n" + "\n".join(rows) + "\n", encoding="utf-8")
    return path


def test_shipped_rate_card_loads_and_reloads_unchanged():
    first = rate_cards_load()
    second = rate_cards_load()
    assert first["created"] == RateCard.objects.count() > 60
    assert second == {"created": 0, "updated": 0, "unchanged": first["created"]}


def test_changed_value_is_updated_in_place(tmp_path):
    rate_cards_load(path=_csv(tmp_path, ["pue,1.5,ratio,,2025-01-01,,assumption: x,true,"]))
    counts = rate_cards_load(path=_csv(tmp_path, ["pue,1.3,ratio,,2025-01-01,,assumption: x,true,"]))
    assert counts["updated"] == 1 and RateCard.objects.get(key="pue").value == D("1.3")


def test_bad_row_writes_nothing_and_names_line_and_column(tmp_path):
    path = _csv(
        tmp_path,
        [
            "pue,1.5,ratio,,2025-01-01,,assumption: x,true,",
            "utilisation_default,1.7,share,,2025-01-01,,assumption: x,true,",
        ],
    )
    with pytest.raises(CostValidationError) as exc:
        rate_cards_load(path=path)
    assert str(exc.value) == "rates.csv:3.utilisation_default: must be between 0 and 1"
    assert RateCard.objects.count() == 0


def test_row_without_source_is_refused(tmp_path):
    with pytest.raises(CostValidationError) as exc:
        rate_cards_load(path=_csv(tmp_path, ["pue,1.5,ratio,,2025-01-01,,,true,"]))
    assert [e.path for e in exc.value.errors] == ["rates.csv:2.source"]


def test_command_reports_failure_without_a_traceback(tmp_path):
    path = _csv(tmp_path, ["no_such_rate,1,x,,2025-01-01,,assumption: x,true,"])
    with pytest.raises(CommandError, match="unknown rate 'no_such_rate'"):
        call_command("load_rate_cards", "--file", str(path))


def test_snapshot_takes_the_rate_valid_at_the_date():
    RateCard.objects.create(
        key="pue",
        value=D("1.6"),
        unit="ratio",
        valid_from=dt.date(2025, 1, 1),
        valid_to=dt.date(2026, 1, 1),
        source="assumption: old hall",
        is_assumption=True,
    )
    RateCard.objects.create(
        key="pue",
        value=D("1.3"),
        unit="ratio",
        valid_from=dt.date(2026, 1, 1),
        source="assumption: new hall",
        is_assumption=True,
    )
    assert rate_card_snapshot(as_of=dt.date(2025, 12, 31))["rates"]["pue"]["value"] == "1.6"
    assert rate_card_snapshot(as_of=dt.date(2026, 1, 1))["rates"]["pue"]["value"] == "1.3"


def test_snapshot_is_json_and_marks_assumptions():
    rate_cards_load()
    snap = rate_card_snapshot(as_of=dt.date(2026, 6, 1))
    json.dumps(snap)
    assert snap["rates"]["pue"]["is_assumption"] is True
    assert snap["rates"]["engineering_rate_per_hour.mlops"]["currency"] == "RUB"


def test_database_refuses_an_inverted_validity_range():
    with pytest.raises(IntegrityError):
        RateCard.objects.create(
            key="pue",
            value=D("1.5"),
            unit="ratio",
            valid_from=dt.date(2026, 1, 1),
            valid_to=dt.date(2025, 1, 1),
            source="x",
            is_assumption=True,
        )


def test_api_prices_in_the_snapshot_reach_the_api_option():
    from costs.adapters import api_prices_from_snapshot
    from costs.models import ApiTokenPrice

    ApiTokenPrice.objects.create(
        provider="P",
        model="m",
        input_per_1m_tokens=D("0.5"),
        output_per_1m_tokens=D("2"),
        currency="USD",
        valid_from=dt.date(2026, 1, 1),
        source="https://example.org (2026-01-01)",
    )
    snap = rate_card_snapshot(as_of=dt.date(2026, 6, 1))
    (price,) = api_prices_from_snapshot(snap)
    assert (price.provider, price.input_per_1m_tokens.amount, price.output_per_1m_tokens.amount) == (
        "P",
        D("0.5"),
        D("2"),
    )
    assert rate_card_snapshot(as_of=dt.date(2025, 6, 1))["api_prices"] == []
