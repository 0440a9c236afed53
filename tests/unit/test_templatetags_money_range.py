"""The options table's P10-P90 cell: short figures that keep their order of magnitude."""

from decimal import Decimal

from django.utils import translation

from planner.templatetags.planner_tags import money_range_short


def test_range_in_millions_shares_the_unit():
    with translation.override("en"):
        assert money_range_short("12086326.40", "24111111") == "12.1 – 24.1 M"


def test_range_across_units_names_both_and_rounds_half_up():
    with translation.override("ru"):
        assert money_range_short(Decimal("914124"), Decimal("1345000")) == "914 тыс. – 1,35 млн"


def test_small_and_unknown():
    with translation.override("en"):
        assert money_range_short("12", "950") == "12 – 950"
        assert "unknown" in str(money_range_short(None, "5"))
