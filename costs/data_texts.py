"""Russian texts of the shipped rate card's sources (costs/data/rate_card_sources_ru.csv).

A rate's source is data, not an engine message, so gettext does not know it; a plan stores it in
English as the rate card says it. The pages, the PDF, the XLSX and the API in Russian show the
Russian text of a shipped source through planner.i18n; a source entered by a team (admin, API)
is shown as entered.
"""

from __future__ import annotations

import csv
from functools import lru_cache
from pathlib import Path

SOURCES_RU_PATH = Path(__file__).resolve().parent / "data" / "rate_card_sources_ru.csv"


@lru_cache(maxsize=1)
def rate_card_sources_ru(path: Path = SOURCES_RU_PATH) -> dict[str, str]:
    with open(path, newline="", encoding="utf-8") as fh:
        return {row["source"]: row["source_ru"] for row in csv.DictReader(fh)}


# a source quoted inside a longer one (a derived server price names its host cost's source, an
# assumed commitment price its discount's) is replaced where it stands; the bare word
# "assumption" only as a whole text, never inside another one
QUOTED_MIN_CHARS = 20


@lru_cache(maxsize=1)
def _quoted_sources() -> tuple[tuple[str, str], ...]:
    pairs = [(en, ru) for en, ru in rate_card_sources_ru().items() if len(en) >= QUOTED_MIN_CHARS]
    return tuple(sorted(pairs, key=lambda p: -len(p[0])))  # the longest first: no partial replacement


def in_russian(text: str) -> str:
    whole = rate_card_sources_ru().get(text)
    if whole is not None:
        return whole
    if "assumption" not in text and "Herd of Models" not in text:
        return text
    for en, ru in _quoted_sources():
        if en in text:
            text = text.replace(en, ru)
    return text
