"""Nice axis ticks (issue 21, part 6): 0, 10 M, 20 M, never 22 898 557."""

import pytest
from django.utils import translation

from planner.chart_axis import OKABE_ITO, nice_step, nice_ticks, tick_label


@pytest.mark.parametrize(("peak", "ticks"), [
    (22_898_557, [0, 5e6, 10e6, 15e6, 20e6, 25e6]),
    (3_951_841, [0, 1e6, 2e6, 3e6, 4e6]),
    (7_315_861, [0, 2e6, 4e6, 6e6, 8e6]),
    (368_983, [0, 100e3, 200e3, 300e3, 400e3]),
    (1, [0, 0.2, 0.4, 0.6, 0.8, 1]),
    (95, [0, 20, 40, 60, 80, 100]),
])
def test_nice_ticks_cover_the_peak_on_round_steps(peak, ticks):
    assert nice_ticks(peak) == pytest.approx(ticks)
    assert nice_ticks(peak)[-1] >= peak


def test_steps_are_one_two_two_and_a_half_or_five_times_a_power_of_ten():
    for span in (1, 3, 7, 13, 27, 55, 99, 12_345, 9_999_999, 0.03):
        step = nice_step(span)
        mantissa = step / 10 ** int(f"{step:e}".split("e")[1])
        assert mantissa in (1, 2, 2.5, 5), (span, step)
        assert 2 <= span / step <= 6, (span, step)


def test_degenerate_peaks_give_an_axis():
    assert nice_ticks(0) == [0.0, 1.0] and nice_ticks(-5) == [0.0, 1.0] and nice_ticks(float("nan")) == [0.0, 1.0]


def test_tick_labels_in_the_unit_of_the_top():
    with translation.override("en"):
        assert [tick_label(v, 25e6) for v in (0, 5e6, 25e6)] == ["0", "5\u00a0M", "25\u00a0M"]
        assert tick_label(2.5e6, 10e6) == "2.5\u00a0M"
        assert tick_label(400e3, 400e3) == "400\u00a0k"
        assert tick_label(80, 100) == "80"
    with translation.override("ru"):
        assert tick_label(20e6, 25e6) == "20\u00a0млн"
        assert tick_label(300e3, 400e3) == "300\u00a0тыс."
        assert tick_label(2e9, 3e9) == "2\u00a0млрд"


def test_palette_is_okabe_ito_with_distinct_colours():
    assert len(set(OKABE_ITO)) == len(OKABE_ITO) == 8
    assert OKABE_ITO[0] == "#0072B2" and "#F0E442" == OKABE_ITO[-1]  # yellow, hard on white, last
