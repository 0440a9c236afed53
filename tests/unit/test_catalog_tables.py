"""catalog.tables: how one cell is read and written (no database)."""

from datetime import date
from decimal import Decimal

import pytest
from hypothesis import given
from hypothesis import strategies as st

from catalog.tables import TABLES, CellError, Col

MONEY = Col("price", "dec", positive=True)


@given(st.decimals(min_value=Decimal("0.000001"), max_value=Decimal("1e11"), places=6))
def test_a_decimal_written_then_read_is_the_same_number(value):
    assert MONEY.parse(MONEY.format(value)) == value


@given(st.dates())
def test_a_date_written_then_read_is_the_same_date(value):
    col = Col("valid_from", "date")
    assert col.parse(col.format(value)) == value


@pytest.mark.parametrize("text", ["0", "-1", "-0.5"])
def test_positive_column_refuses_zero_and_negative(text):
    with pytest.raises(CellError, match="must be greater than 0"):
        MONEY.parse(text)


@pytest.mark.parametrize("text", ["abc", "1,5", "NaN", "Infinity"])
def test_not_a_finite_number_is_refused(text):
    with pytest.raises(CellError):
        MONEY.parse(text)


def test_whole_number_column_refuses_fractions():
    with pytest.raises(CellError, match="not a whole number"):
        Col("gpu_count", "int").parse("2.5")


def test_required_empty_cell_is_refused_and_optional_is_none():
    with pytest.raises(CellError, match="a value is required"):
        Col("currency", "choice", required=True, choices=("USD",)).parse("  ")
    assert Col("tdp_w", "int").parse("") is None


def test_choice_lists_the_allowed_values():
    with pytest.raises(CellError, match="'GBP' is not one of RUB, USD, EUR"):
        Col("currency", "choice", choices=("RUB", "USD", "EUR")).parse("GBP")


def test_dates_must_be_iso():
    with pytest.raises(CellError, match="not a date YYYY-MM-DD"):
        Col("valid_from", "date").parse("01.02.2026")
    assert Col("valid_from", "date").parse("2026-02-01") == date(2026, 2, 1)


def test_every_table_has_unique_column_names_and_a_natural_key():
    for table in TABLES:
        names = [c.name for c in table.columns]
        assert len(names) == len(set(names)), table.name
        assert table.key, table.name
