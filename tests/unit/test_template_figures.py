"""Figures on the page and in the PDF are rounded half up, like the headlines (money_whole): Django's
number_format alone cuts the digits it does not show, so one table printed 28 436 971 where the
headline said 28 436 972 (issue 20: one plan, one answer)."""

from decimal import Decimal

import pytest
from django.utils import translation

from planner.templatetags.planner_tags import gib, money, money_whole, num, pct, share_pct


@pytest.mark.parametrize(("value", "digits", "en"), [
    ("28436971.92", 0, "28,436,972"),
    ("28436971.49", 0, "28,436,971"),
    ("466333.5", 0, "466,334"),
    ("-1.5", 0, "-2"),
    ("0.125", 2, "0.13"),
    (Decimal("7.05"), 1, "7.1"),
    (2.5, 0, "3"),
])
def test_num_rounds_half_up(value, digits, en):
    with translation.override("en"):
        assert num(value, digits) == en


def test_num_matches_the_headline_in_both_languages():
    for lang in ("en", "ru"):
        with translation.override(lang):
            assert f"{num('28436971.92', 0)} RUB" == money_whole("28436971.92", "RUB")


def test_pct_money_and_gib_round_half_up():
    with translation.override("ru"):
        assert pct("0.7985", 1) == "79,9 %"
        assert money("10.005", "RUB") == "10,01 RUB"
        assert gib(str(int(1.25 * (1 << 30)) + 1)) == "1,3 GiB"


@pytest.mark.parametrize(("share", "ru"), [
    ("0.4166666666666666666666666666666666666667", "41,7 %"), ("0.8", "80 %"), ("1", "100 %"),
    # a 1-hour job's utilisation over 24 months: a percentage, 3 significant digits (was "0,0000611")
    ("0.0000611", "0,00611 %"), ("0.0123", "1,2 %"),
])
def test_a_share_reads_as_a_percentage(share, ru):
    with translation.override("ru"):
        assert share_pct(share) == ru
    with translation.override("en"):
        assert share_pct(share) == ru.replace(",", ".")
