"""A stored plan keeps the engine texts it was computed with (each `*_i18n` holds its template), and is
rendered in Russian from django.po when opened, months later. So a template the code no longer uses
must keep its Russian entry: two were lost this way (a plan's break-even in runs and its activations
text read in English on a Russian page). locale/ru/engine_texts_shipped.txt lists every template
shipped (as hashes); the .po must translate each."""

import hashlib
from pathlib import Path

from planner.msg_catalog import engine_templates, russian_catalog

SHIPPED = Path(__file__).resolve().parents[2] / "locale" / "ru" / "engine_texts_shipped.txt"


def _hash(template: str) -> str:
    return hashlib.sha1(template.encode()).hexdigest()[:16]


def _shipped() -> set[str]:
    return {ln.strip() for ln in SHIPPED.read_text(encoding="utf-8").splitlines() if ln.strip() and ln[0] != "#"}


def test_every_shipped_engine_text_keeps_its_russian_entry():
    translated = {_hash(msgid) for msgid, msgstr in russian_catalog().items() if msgstr}
    lost = sorted(_shipped() - translated)
    assert not lost, f"{len(lost)} engine texts stored plans may hold have no Russian entry any more: keep the " \
                     f"old msgid in django.po when a text changes ({lost[:5]})"


def test_every_engine_text_of_the_code_is_listed_as_shipped():
    new = sorted({_hash(t) for t in engine_templates()} - _shipped())
    assert not new, "append to locale/ru/engine_texts_shipped.txt:\n" + "\n".join(new)
