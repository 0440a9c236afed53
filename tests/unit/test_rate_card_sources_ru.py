"""Every shipped rate card source reads in Russian where the plan is in Russian (XLSX "Исходные
данные", the line breakdowns, the API with Accept-Language: ru), and only there."""

import csv
import re

from costs.data_texts import SOURCES_RU_PATH, rate_card_sources_ru
from costs.rate_csv import DEFAULT_PATH
from planner.i18n import localise, render

CYRILLIC = re.compile("[а-яё]", re.IGNORECASE)


def _shipped_sources() -> set[str]:
    with open(DEFAULT_PATH, newline="", encoding="utf-8") as fh:
        return {row["source"].strip() for row in csv.DictReader(fh)}


def test_every_shipped_source_has_a_russian_text_and_none_is_stale():
    ru = rate_card_sources_ru()
    shipped = _shipped_sources()
    assert sorted(shipped - set(ru)) == [], f"add them to {SOURCES_RU_PATH.name}"
    assert sorted(set(ru) - shipped) == [], f"no longer in the rate card: remove them from {SOURCES_RU_PATH.name}"
    assert [s for s, text in ru.items() if not CYRILLIC.search(text)] == []


def test_a_rate_source_renders_in_the_plans_language():
    source = "assumption: GPU generations turn over in about 3 years"
    assert render(source, "ru") == "допущение: поколения GPU сменяются примерно за 3 года"
    assert render(source, "en") == source
    stored = {"inputs_used": {"rates": [{"key": "amortisation_years", "source": source}]}}
    assert localise(stored, "ru")["inputs_used"]["rates"][0]["source"].startswith("допущение:")


def test_a_source_the_team_entered_is_shown_as_entered():
    assert render("quote from our integrator, 2026-11-02", "ru") == "quote from our integrator, 2026-11-02"


def test_a_source_quoted_inside_a_derived_price_is_in_russian_too():
    derived = ("4 x GPU 35000 USD (a street price) + 4 x server_host_capex_per_gpu_slot 3000 USD (assumption: "
               "chassis, CPUs, RAM, PSUs and local disks of a GPU server, per GPU slot, when the catalog prices only "
               "the GPUs)")
    text = render(derived, "ru")
    assert "chassis" not in text and "(допущение: шасси, CPU, ОЗУ" in text
    assert text.startswith("4 x GPU 35000 USD (a street price)")  # the rest is the price's own data
    assert render("my assumption about power", "ru") == "my assumption about power"
