"""Counted units agree with their number on the page, also when the stored result was already
localised (planner.i18n translates a plain unit into one word: "серверов")."""

from django.utils import translation

from planner.presentation.common import unit_label


def test_a_localised_unit_still_takes_the_form_of_its_number():
    with translation.override("ru"):
        localised = translation.gettext("servers")
        assert [unit_label(localised, n) for n in (1, 2, 5)] == ["сервер", "сервера", "серверов"]
        assert [unit_label("servers", n) for n in (1, 2, 5)] == ["сервер", "сервера", "серверов"]
    with translation.override("en"):
        assert [unit_label("servers", n) for n in (1, 2)] == ["server", "servers"]
