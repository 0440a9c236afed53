"""Where engine texts come from and whether each has a Russian translation.

Every `Msg("template", ...)` in planner/engine, costs/engine and costs/adapters is found by its
syntax tree (a template is always a literal: it is the gettext msgid); the Russian catalog is
read from the .po itself (so a translation counts before it is compiled).
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SOURCES = ("planner/engine", "costs/engine", "costs/adapters", "costs/price_sources.py", "catalog",
           "planner/plan_decision.py")
# A template with no word in it ("{a}{b}", "{n} GPU") needs no translation.
WORD = re.compile(r"[A-Za-z]{2,}")


def _files():
    for source in SOURCES:
        path = ROOT / source
        yield from ([path] if path.is_file() else sorted(path.rglob("*.py")))


def engine_templates() -> dict[str, list[str]]:
    """{template: ["file:line", ...]} for every Msg(...) call with a literal template."""
    out: dict[str, list[str]] = {}
    for path in _files():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if (isinstance(node, ast.Call) and getattr(node.func, "id", getattr(node.func, "attr", None)) == "Msg"
                    and node.args and isinstance(node.args[0], ast.Constant) and isinstance(node.args[0].value, str)):
                template = node.args[0].value
                if WORD.search(re.sub(r"\{[^{}]*\}", "", template)):
                    out.setdefault(template, []).append(f"{path.relative_to(ROOT)}:{node.lineno}")
    return out


RU_PO = ROOT / "locale" / "ru" / "LC_MESSAGES" / "django.po"


def _unquote(line: str) -> str:
    return ast.literal_eval(line.strip())


def russian_catalog() -> dict[str, str]:
    """{msgid: msgstr} of the Russian .po (the source, so an entry counts before it is compiled;
    a plural entry gives its first form; obsolete `#~` entries are left out)."""
    out: dict[str, str] = {}
    parts: dict[str, str] = {}
    field = None

    def flush():
        msgid = parts.get("msgid")
        if msgid:
            if "msgctxt" in parts:
                msgid = f"{parts['msgctxt']}\x04{msgid}"
            out[msgid] = parts.get("msgstr", parts.get("msgstr[0]", ""))
        parts.clear()

    for raw in RU_PO.read_text(encoding="utf-8").splitlines():
        line = raw.strip()
        if not line or line.startswith("#"):
            flush()
            field = None
            continue
        head, _sep, rest = line.partition(" ")
        if head in ("msgctxt", "msgid", "msgid_plural", "msgstr") or head.startswith("msgstr["):
            if head in ("msgctxt", "msgid") and "msgstr" in "".join(parts):
                flush()
            field = head
            parts[field] = _unquote(rest)
        elif line.startswith('"') and field:
            parts[field] += _unquote(line)
    flush()
    return out


def missing_translations(found: dict[str, list[str]] | None = None) -> list[str]:
    catalog = russian_catalog()
    return sorted(t for t in (found or engine_templates()) if not catalog.get(t))


def placeholders(text: str) -> set[str]:
    """The parameter names a template uses (a translation must use the same ones)."""
    return {m.split(":")[0].split("!")[0] for m in re.findall(r"(?<!\{)\{([^{}]+)\}", text)}


def po_entry(template: str, where: list[str]) -> str:
    escaped = template.replace("\\", "\\\\").replace('"', '\\"')
    refs = " ".join(where[:3])
    return f'\n#: {refs}\n#, python-brace-format\nmsgid "{escaped}"\nmsgstr ""\n'
