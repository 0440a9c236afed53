"""Engine texts that the edges can translate.

The engines are framework-free (no gettext), so a user-visible text they produce is a `Msg`:
a `str` that renders in English (so logs, tests and old callers keep working) and carries
its template and parameters, so pages, exports and the API can render it through gettext in
the user's language, with numbers formatted for that language.

    Msg("TTFT {ttft_ms:.0f} ms exceeds the {target_ms:g} ms target", ttft_ms=812.4, target_ms=500)

Rules: the template is a literal (it is the gettext msgid); parameters are JSON values
(numbers, strings, or nested Msg); units are part of the template or a parameter, never
glued into a number.

Beyond `str.format`, a field may pick a plural form by a number parameter:
``{servers:plural:server|servers}`` (English has two forms; a Russian msgstr gives three,
``{servers:plural:сервер|сервера|серверов}``). Numbers are formatted with the format spec
given (``{n:,}``, ``{x:.1f}``, ``{x:g}``) and then take the language's separators.

Storage: `with_structured(tree)` adds, next to every Msg with parameters (or list holding one),
a sibling ``<key>_i18n`` with its {"template", "params"}, so the structure survives JSON storage
while the English text stays where it always was. A Msg without parameters needs no sibling: its
text is its msgid (the edge translates the texts under known keys, planner.i18n.TEXT_KEYS). `render(data, translate=..., lang=...)` turns that
JSON form back into text in a language; the Django edge (planner.i18n) supplies gettext.
"""

from __future__ import annotations

import functools
import math
import re
import string
from collections.abc import Callable
from decimal import Decimal

I18N_SUFFIX = "_i18n"


def english_plural(n) -> int:
    return 0 if _is_one(n) else 1


def russian_plural(n) -> int:
    """0: 1, 21, 101 (сервер); 1: 2-4, 22-24 and fractions (сервера); 2: 5-20, 25-30 (серверов)."""
    try:
        number = float(n)
    except (TypeError, ValueError):
        return 2
    if not number.is_integer():
        return 1
    i = abs(int(number))
    if i % 10 == 1 and i % 100 != 11:
        return 0
    if 2 <= i % 10 <= 4 and not 12 <= i % 100 <= 14:
        return 1
    return 2


def _is_one(n) -> bool:
    try:
        return float(n) == 1
    except (TypeError, ValueError):
        return False


class Conventions:
    """How numbers and plurals are written in one language."""

    def __init__(self, *, decimal: str = ".", group: str = ",", plural: Callable = english_plural):
        self.decimal, self.group, self.plural = decimal, group, plural


ENGLISH = Conventions()
RUSSIAN = Conventions(decimal=",", group="\u00a0", plural=russian_plural)


class _Formatter(string.Formatter):
    def __init__(self, conventions: Conventions):
        super().__init__()
        self.c = conventions

    def format_field(self, value, format_spec: str):
        if format_spec.startswith("plural:"):
            forms = format_spec[len("plural:"):].split("|")
            return forms[min(self.c.plural(value), len(forms) - 1)]
        text = format(value, format_spec)
        if isinstance(value, int | float | Decimal) and not isinstance(value, bool) and (self.c.decimal, self.c.group) != (".", ","):
            text = text.replace(",", "\x00").replace(".", self.c.decimal).replace("\x00", self.c.group)
        return text


_PLURAL_FIELD = re.compile(r"\{(\w+):plural:([^{}]*)\}")


def format_template(template: str, params: dict, conventions: Conventions = ENGLISH) -> str:
    if not params:
        return template
    if conventions is ENGLISH:
        # the same text as _Formatter's (English numbers need no separator swap), by the C formatter: a
        # plural field becomes its form first (the engines write thousands of these texts per plan)
        if "plural:" in template:
            template = _with_english_forms(template, params)
        if "plural:" not in template:
            return template.format_map(params)
    return _Formatter(conventions).vformat(template, (), params)


def _with_english_forms(template: str, params: dict) -> str:
    pieces, fields = _plural_fields(template)
    out = [pieces[0]]
    for (name, forms), after in zip(fields, pieces[1:], strict=True):
        out += [forms[min(ENGLISH.plural(params[name]), len(forms) - 1)].replace("{", "{{").replace("}", "}}"), after]
    return "".join(out)


@functools.lru_cache(maxsize=1024)
def _plural_fields(template: str) -> tuple[list[str], list[tuple[str, list[str]]]]:
    """The template cut around its plural fields: (the pieces between them, (name, forms) of each)."""
    pieces, fields, at = [], [], 0
    for m in _PLURAL_FIELD.finditer(template):
        pieces.append(template[at:m.start()])
        fields.append((m.group(1), m.group(2).split("|")))
        at = m.end()
    pieces.append(template[at:])
    return pieces, fields


class Msg(str):
    """An English text with its template and parameters kept for translation."""

    def __new__(cls, template: str, /, **params):
        text = format_template(template, params)
        obj = super().__new__(cls, text)
        obj.template = template
        obj.params = params
        return obj

    def __getnewargs_ex__(self):  # copy/deepcopy/pickle keep the template and parameters
        return (self.template,), self.params

    # Gluing texts keeps their structure: Msg("a") + Msg("b") is a Msg whose parts translate
    # one by one (a plain str part stays as it is, so glue only punctuation that way).
    def __add__(self, other):
        if not isinstance(other, str):
            return NotImplemented
        return Msg("{a}{b}", a=self, b=other)

    def __radd__(self, other):
        if not isinstance(other, str):
            return NotImplemented
        return Msg("{a}{b}", a=other, b=self)

    def to_data(self) -> dict:
        """JSON form: {"text": English, "template": msgid, "params": {...}}."""
        return {"text": str(self), "template": self.template,
                "params": {k: _param_data(v) for k, v in self.params.items()}}


def figure(value) -> int | float:
    """A Decimal (or number) as a text parameter: a whole number stays whole ('4', not '4.00'),
    others as a float, so the language's decimal separator applies ('0,173' in Russian); a str()
    of the Decimal would keep the dot."""
    if isinstance(value, Decimal) and value == value.to_integral_value():
        return int(value)
    return int(value) if isinstance(value, int) else float(value)


def _param_data(value):
    if isinstance(value, Msg):
        return value.to_data()
    if isinstance(value, Decimal):  # JSON has no decimals; a text's figure needs no more than a float
        value = float(value)
    if isinstance(value, float) and not math.isfinite(value):
        return None  # JSON (and PostgreSQL) has no NaN; the text falls back to its English form

    if isinstance(value, list | tuple):
        return [_param_data(v) for v in value]
    return value


def join_texts(parts, sep: str):
    """Texts joined with a separator, each part staying translatable ("; ".join would not)."""
    out = ""
    for i, part in enumerate(parts):
        out = out + (sep if i else "") + part
    return out


def is_msg_data(value) -> bool:
    return isinstance(value, dict) and isinstance(value.get("template"), str) and isinstance(value.get("params"), dict)


def to_data(value):
    """The JSON form of a text: a Msg's template and parameters, a plain string as a template."""
    if isinstance(value, Msg):
        return value.to_data()
    if is_msg_data(value):
        return value
    return {"text": str(value), "template": str(value), "params": {}}


def render(value, *, translate: Callable[[str], str] = lambda s: s, conventions: Conventions = ENGLISH,
           translate_param: Callable[[str], str] | None = None) -> str:
    """A text (Msg, its JSON form, or a plain string) in the language `translate` and
    `conventions` stand for. A plain-string parameter goes through `translate_param` (a name
    the edge knows, e.g. an option label; default: `translate`, so a parameter that is itself
    a msgid, "1-year commitment", is translated too). A translation that does not fit its
    parameters falls back to English."""
    if isinstance(value, Msg):
        value = value.to_data()
    if not is_msg_data(value):
        return translate(value) if isinstance(value, str) and value else ("" if value is None else str(value))
    tp = translate_param or translate
    params = {k: render(v, translate=translate, conventions=conventions, translate_param=translate_param)
              if (isinstance(v, Msg) or is_msg_data(v)) else (tp(v) if isinstance(v, str) and v else v)
              for k, v in value["params"].items()}
    template = value["template"]
    translated = translate(template) if template else template
    try:
        return format_template(translated, params, conventions)
    except (KeyError, IndexError, ValueError, TypeError):
        try:
            return format_template(template, params, conventions)
        except (KeyError, IndexError, ValueError, TypeError):
            return value.get("text") or template


def _stored(value) -> dict:
    """{"template", "params"}: the English text already sits next to it, so it is not repeated."""
    data = to_data(value)
    return {"template": data["template"], "params": {k: _strip_text(v) for k, v in data["params"].items()}}


def _strip_text(value):
    if is_msg_data(value):
        return {"template": value["template"], "params": {k: _strip_text(v) for k, v in value["params"].items()}}
    return value


def _has_msg(values) -> bool:
    # A Msg without parameters is its own msgid: its English text translates as it is stored.
    return any(isinstance(v, Msg) and v.params for v in values)


# values with_structured returns as they are, recognised by their exact type (no call for each)
_LEAF_TYPES = frozenset({str, int, float, bool, type(None), Decimal})


def with_structured(tree, *, floats: Callable[[float], float] | None = None):
    """A copy of a JSON-ready tree with `<key>_i18n` siblings for its Msg texts; `floats`, if
    given, maps every float in it (one walk where a caller would otherwise copy the tree twice)."""
    return _structured(tree, floats)


def _structured(tree, floats):
    if isinstance(tree, dict):
        out = {}
        for key, value in tree.items():
            kind = type(value)
            if kind in _LEAF_TYPES:
                out[key] = floats(value) if floats is not None and kind is float else value
                continue
            out[key] = _structured(value, floats)
            if isinstance(value, Msg) and value.params:
                out[f"{key}{I18N_SUFFIX}"] = _stored(value)
            elif isinstance(value, list | tuple) and value and all(isinstance(v, str) for v in value) and _has_msg(value):
                out[f"{key}{I18N_SUFFIX}"] = [_stored(v) for v in value]
        return out
    if isinstance(tree, list | tuple):
        if floats is None:
            return [v if type(v) in _LEAF_TYPES else _structured(v, None) for v in tree]
        return [(floats(v) if type(v) is float else v) if type(v) in _LEAF_TYPES else _structured(v, floats)
                for v in tree]
    return tree


def localise_tree(tree, *, translate: Callable[[str], str], conventions: Conventions,
                  text_keys: frozenset[str] = frozenset(), keep_structured: bool = False,
                  translate_param: Callable[[str], str] | None = None):
    """A copy of a stored tree with every text rendered in one language: a value with an
    `_i18n` sibling from it, a plain string under one of `text_keys` through `translate`."""
    if isinstance(tree, dict):
        out = {}
        for key, value in tree.items():
            if key.endswith(I18N_SUFFIX) and key[: -len(I18N_SUFFIX)] in tree:
                if keep_structured:
                    out[key] = value
                continue
            data = tree.get(f"{key}{I18N_SUFFIX}")
            if data is not None and isinstance(value, str) and is_msg_data(data):
                out[key] = render(data, translate=translate, conventions=conventions, translate_param=translate_param)
            elif (data is not None and isinstance(value, list) and isinstance(data, list)
                  and len(data) == len(value)):
                out[key] = [render(d, translate=translate, conventions=conventions, translate_param=translate_param) for d in data]
            elif key in text_keys and isinstance(value, str):
                out[key] = translate(value) if value else value
            elif key in text_keys and isinstance(value, list) and all(isinstance(v, str) for v in value):
                out[key] = [translate(v) if v else v for v in value]
            else:
                out[key] = localise_tree(value, translate=translate, conventions=conventions,
                                         text_keys=text_keys, keep_structured=keep_structured,
                                         translate_param=translate_param)
        return out
    if isinstance(tree, list):
        return [localise_tree(v, translate=translate, conventions=conventions, text_keys=text_keys,
                              keep_structured=keep_structured, translate_param=translate_param) for v in tree]
    return tree
