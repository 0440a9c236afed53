"""Every engine text (a literal Msg template in the engines) has a Russian translation that
uses the same parameters, and renders with Russian separators and plural forms.

The list is read from the sources each run (planner.msg_catalog), so texts added later by
anyone are checked too: `python manage.py msg_templates --missing --po` prints the entries to
append to locale/ru/LC_MESSAGES/django.po.
"""

import pytest

from catalog.domain.messages import Msg, render, russian_plural, with_structured
from planner.msg_catalog import engine_templates, placeholders, russian_catalog


@pytest.fixture(scope="module")
def found():
    return engine_templates()


def test_the_engines_have_texts_to_translate(found):
    assert len(found) > 150  # the scan itself works (a broken scan would pass everything below)


def test_every_engine_text_has_a_russian_translation(found):
    catalog = russian_catalog()
    missing = sorted(t for t in found if not catalog.get(t))
    assert not missing, "append to the .po (manage.py msg_templates --missing --po):\n" + "\n".join(
        f"{t}  [{found[t][0]}]" for t in missing)


def test_each_translation_uses_the_same_parameters(found):
    catalog = russian_catalog()
    wrong = [(t, catalog[t]) for t in found if catalog.get(t) and placeholders(t) != placeholders(catalog[t])]
    assert not wrong, wrong


def test_russian_numbers_and_plurals():
    catalog = russian_catalog()
    m = Msg("TP{tp} × PP{pp}, {replicas} {replicas:plural:replica|replicas}", tp=2, pp=1, replicas=5)
    assert str(m) == "TP2 × PP1, 5 replicas"
    assert render(m, translate=lambda s: catalog.get(s, s), conventions=_ru()) == "TP2 × PP1, 5 реплик"
    assert [russian_plural(n) for n in (1, 2, 5, 11, 21, 22, 1.5)] == [0, 1, 2, 2, 0, 1, 1]
    err = Msg("must be at most {maximum:,.15g}, got {value:,.15g}", maximum=1e6, value=1234567.5)
    assert render(err, translate=lambda s: catalog.get(s, s), conventions=_ru()) == \
        "должно быть не больше 1\u00a0000\u00a0000, получено 1\u00a0234\u00a0567,5"


def test_structure_survives_json_and_english_stays_in_place():
    import json

    tree = with_structured({"explain": Msg("per GPU x {count} GPUs", count=8), "note": Msg("no adapters"),
                            "warnings": [Msg("no adapters"), Msg("ROCm >= {v}", v="6.0")]})
    stored = json.loads(json.dumps(tree))
    assert stored["explain"] == "per GPU x 8 GPUs"
    assert stored["explain_i18n"] == {"template": "per GPU x {count} GPUs", "params": {"count": 8}}
    assert "note_i18n" not in stored  # no parameters: the text is its own msgid
    assert stored["warnings"] == ["no adapters", "ROCm >= 6.0"]
    assert [w["template"] for w in stored["warnings_i18n"]] == ["no adapters", "ROCm >= {v}"]


def test_a_translation_that_does_not_fit_falls_back_to_english():
    m = Msg("{n} GPUs", n=3)
    assert render(m, translate=lambda s: "{missing} ГПУ", conventions=_ru()) == "3 GPUs"


def _ru():
    from catalog.domain.messages import RUSSIAN

    return RUSSIAN


def test_figures_in_cost_formulas_take_the_languages_decimal_separator():
    """'PUE 1.5', '0.173 failures per GPU-year' were passed as str(Decimal) and kept their dot
    on Russian pages; figure() passes numbers, so the page's separator applies."""
    from decimal import Decimal

    from catalog.domain.messages import Msg, figure
    from planner.i18n import render

    m = Msg("{servers} x {kw} kW x PUE {pue} x (idle {idle})", servers=2, kw=figure(Decimal("5.16")),
            pue=figure(Decimal("1.50")), idle=figure(Decimal("0.3")))
    assert render(m, "en") == "2 x 5.16 kW x PUE 1.5 x (idle 0.3)"
    ru = render(m, "ru")
    assert "5,16" in ru and "1,5" in ru and "0,3" in ru and "5.16" not in ru
    assert figure(Decimal("4.00")) == 4 and isinstance(figure(Decimal("4.00")), int)
