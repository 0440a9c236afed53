"""Text that may enter the app: no NUL, no unpaired surrogates, bounded JSON nesting.

PostgreSQL text cannot hold NUL (U+0000) and UTF-8 cannot encode an unpaired surrogate
(U+D800–U+DFFF), so either one reaching the database or a template is a 500. JSON escapes
(`"\\u0000"`, `"\\ud800"`) and `%00` in a URL can carry both in. Nesting is capped *before*
parsing: `json.loads` recurses, and 100,000 levels would exhaust the stack.

One place for the rules, used by every entry point so new fields and endpoints get them
without code of their own (docs/API.md, "Text and nesting limits"):
- the API's JSON parser (planner.api.parsers.SafeJSONParser): every key and string of every
  body, at any depth -> 400 naming the field path;
- UnsafeTextMiddleware (config.middleware): every query parameter name and value, and
  form/multipart field names, values and upload file names -> 400 (JSON under /api/);
- forms and uploads that parse JSON (planner.forms) call `loads_checked` -> form errors.
"""

from __future__ import annotations

import json
import math
import re

from django.utils.translation import gettext as _

# Deeper than any document the app accepts (a WorkloadSpec is < 6 levels; a Hugging Face
# config.json < 5); shallow enough that every walk over it is cheap.
MAX_JSON_DEPTH = 32

_UNSAFE = re.compile("[\x00\ud800-\udfff]")
# A JSON string literal (with escapes), to blank out before counting brackets.
_JSON_STRING = re.compile(r'"(?:[^"\\]|\\.)*"', re.DOTALL)
_NOT_BRACKET = re.compile(r"[^\[\]{}]+")


class UnsafeText(ValueError):
    """An unsafe string; `path` is the dotted field path (None for the document itself)."""

    def __init__(self, path: str | None, message: str):
        super().__init__(message)
        self.path = path
        self.message = message


def unsafe_reason(text: str) -> str | None:
    """Why a string may not be stored, or None when it is fine."""
    match = _UNSAFE.search(text)
    if match is None:
        return None
    if match.group() == "\x00":
        return _("must not contain NUL (U+0000) characters")
    return _("must not contain unpaired surrogate characters (U+D800–U+DFFF)")


def find_unsafe(value, path: str = "") -> UnsafeText | None:
    """The first unsafe key or string in a parsed JSON value (iterative: no recursion)."""
    stack = [(path, value)]
    while stack:
        where, item = stack.pop()
        if isinstance(item, str):
            reason = unsafe_reason(item)
            if reason:
                return UnsafeText(where or None, reason)
        elif isinstance(item, dict):
            for key, child in item.items():
                key = str(key)
                child_path = f"{where}.{key}" if where else key
                reason = unsafe_reason(key)
                if reason:
                    # The key itself cannot be named safely: point at its parent.
                    return UnsafeText(where or None, _("a key %(reason)s") % {"reason": reason})
                stack.append((child_path, child))
        elif isinstance(item, list):
            stack.extend((f"{where}.{i}" if where else str(i), child) for i, child in enumerate(item))
    return None


def json_depth(text: str, limit: int = MAX_JSON_DEPTH) -> int:
    """Nesting depth of a JSON text without parsing it; stops counting past `limit`."""
    brackets = _NOT_BRACKET.sub("", _JSON_STRING.sub('""', text))
    depth = deepest = 0
    for char in brackets:
        if char in "[{":
            depth += 1
            if depth > deepest:
                deepest = depth
                if deepest > limit:
                    return deepest
        else:
            depth -= 1
    return deepest


def too_deep_message(limit: int = MAX_JSON_DEPTH) -> str:
    return _("JSON nested deeper than %(depth)s levels.") % {"depth": limit}


def _reject_constant(name):
    raise ValueError(f"{name} is not a valid JSON number")


def _finite_float(text):
    value = float(text)
    if not math.isfinite(value):
        raise ValueError(f"number {text[:20]} is out of range")
    return value


def loads_checked(text: str, *, path: str = "", limit: int = MAX_JSON_DEPTH):
    """json.loads with the nesting cap checked first, finite numbers only, and every key and
    string checked. Raises UnsafeText (unsafe text or too deep) or ValueError (not JSON)."""
    reason = unsafe_reason(text) if "\x00" in text else None
    if reason:  # a raw NUL is not valid JSON anyway; say what is wrong with it
        raise UnsafeText(path or None, reason)
    if json_depth(text, limit) > limit:
        raise UnsafeText(path or None, too_deep_message(limit))
    try:
        value = json.loads(text, parse_constant=_reject_constant, parse_float=_finite_float)
    except RecursionError:  # cannot happen after the depth check; kept as a guard
        raise UnsafeText(path or None, too_deep_message(limit)) from None
    problem = find_unsafe(value, path)
    if problem is not None:
        raise problem
    return value


class SafeTextFormMixin:
    """A form error on every field whose submitted value (or upload file name) holds NUL or
    an unpaired surrogate, whatever the field's type: a checkbox or a choice would otherwise
    turn "a\\x00b" into True or a default silently, and a text field of a subclass would
    carry it on. Fields added later are covered without code of their own."""

    def _clean_fields(self):
        unsafe = {}
        for name in self.fields:
            key = self.add_prefix(name)
            values = self.data.getlist(key) if hasattr(self.data, "getlist") else [self.data.get(key)]
            files = self.files.getlist(key) if hasattr(self.files, "getlist") else [self.files.get(key)]
            for value in [*values, *(getattr(f, "name", None) for f in files)]:
                reason = unsafe_reason(value) if isinstance(value, str) else None
                if reason:
                    unsafe[name] = reason
                    break
        super()._clean_fields()
        for name, reason in unsafe.items():
            if name in self.cleaned_data or name not in self.errors:
                self.add_error(name, reason)
