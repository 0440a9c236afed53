"""File names of downloads: the plan's title kept in any script.

The Content-Disposition header carries the name twice (RFC 6266 section 4.3): `filename*=UTF-8''…`
(RFC 8187 percent-encoding) for browsers, which all read it, and an ASCII `filename="…"` for
clients that do not. The ASCII fallback transliterates Russian letters (the table of Russian
passports, ICAO Doc 9303 / MVD order 889 of 2013) and drops what has no ASCII form, so
"Агент на внешнем API модели" downloads as "агент-на-внешнем-api-модели-v1.xlsx", or as
"agent-na-vneshnem-api-modeli-v1.xlsx" in an old client."""

from __future__ import annotations

import re
import unicodedata
from urllib.parse import quote

from django.utils.text import slugify

_RU = dict(zip("абвгдеёжзийклмнопрстуфхцчшщъыьэюя",
               ["a", "b", "v", "g", "d", "e", "e", "zh", "z", "i", "i", "k", "l", "m", "n", "o", "p", "r", "s",
                "t", "u", "f", "kh", "ts", "ch", "sh", "shch", "ie", "y", "", "e", "iu", "ia"], strict=True))


def export_filename(plan_name: str, number: int, fmt: str) -> str:
    """"агент-на-внешнем-api-модели-v1.xlsx": the plan's title as a slug in its own script."""
    return f"{slugify(plan_name, allow_unicode=True) or 'plan'}-v{number}.{fmt}"


def ascii_filename(filename: str) -> str:
    """The name in ASCII letters, digits, '.', '_' and '-' only (never empty, never quoted)."""
    text = "".join(_RU.get(ch, ch) for ch in filename.lower())
    text = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode("ascii")
    text = re.sub(r"-{2,}", "-", re.sub(r"[^A-Za-z0-9._-]+", "-", text)).strip("-.")
    return text or "download"


def attachment(filename: str) -> str:
    """The Content-Disposition value of a download named `filename` (any script)."""
    fallback = ascii_filename(filename)
    if fallback == filename:
        return f'attachment; filename="{filename}"'
    return f"attachment; filename=\"{fallback}\"; filename*=UTF-8''{quote(filename, safe='')}"
