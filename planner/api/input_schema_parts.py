"""The JSON Schema building blocks the input schemas are made of (planner/api/input_schema.py and
its two section modules): typed, bounded, nullable fields and closed objects, with the parsers'
conventions (an optional field may be null).
"""

from __future__ import annotations

NAME_MAX = 200  # _Reader.text default

# "Has a visible character", written so that Python's re (the server's validator) and ECMA-262 (what
# JSON Schema patterns mean, and what generated clients and schemathesis use) agree on every code
# point: the two engines' \s differ (Python's counts U+001C..U+001F and U+0085, ECMA's U+FEFF), so
# both sets and the control characters are excluded by name. Never a bare \s, \S, "." or "$" in a
# published pattern: tests/unit/test_schema_patterns.py compares the two engines on each one.
_INVISIBLE = r"\s\x00-\x1f\x7f-\x9f\ufeff"
VISIBLE_PATTERN = rf"[^{_INVISIBLE}]"
# "provider/model": a visible character before the first "/", one after it.
MODEL_API_PATTERN = rf"^[^/]*[^/{_INVISIBLE}][^/]*/[\s\S]*{VISIBLE_PATTERN}"


def _visible(max_length=None) -> dict:
    """A required name: a string with a visible character."""
    out: dict = {"type": "string", "minLength": 1, "pattern": VISIBLE_PATTERN}
    if max_length:
        out["maxLength"] = max_length
    return out


def _num(lo=None, hi=None, *, integer=False, exclusive_min=False, nullable=True, description=None) -> dict:
    out: dict = {"type": "integer" if integer else "number"}
    if lo is not None:
        out["minimum"] = lo
        if exclusive_min:
            out["exclusiveMinimum"] = True
    if hi is not None:
        out["maximum"] = hi
    if nullable:
        out["nullable"] = True
    if description:
        out["description"] = description
    return out


def _int(lo=None, hi=None, **kw) -> dict:
    return _num(lo, hi, integer=True, **kw)


def _enum(values, *, nullable=True, description=None) -> dict:
    out: dict = {"type": "string", "enum": list(values)}
    if nullable:
        out["nullable"] = True
        out["enum"] = [*values, None]
    if description:
        out["description"] = description
    return out


def _text(max_length=NAME_MAX, *, nullable=True) -> dict:
    out: dict = {"type": "string", "maxLength": max_length}
    if nullable:
        out["nullable"] = True
    return out


def _bool(*, nullable=True) -> dict:
    out: dict = {"type": "boolean"}
    if nullable:
        out["nullable"] = True
    return out


def _obj(properties: dict, *, required=(), nullable=True, description=None, extra: dict | None = None) -> dict:
    out: dict = {"type": "object", "properties": properties, "additionalProperties": False}
    if required:
        out["required"] = list(required)
    if nullable:
        out["nullable"] = True
    if description:
        out["description"] = description
    if extra:
        out.update(extra)
    return out


_NOT_NULL = {"not": {"enum": [None]}}


def _not_null(schema: dict) -> dict:
    out = {k: v for k, v in schema.items() if k != "nullable"}
    if "enum" in out:
        out["enum"] = [v for v in out["enum"] if v is not None]
    return out
