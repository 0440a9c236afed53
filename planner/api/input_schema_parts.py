"""The JSON Schema building blocks the input schemas are made of (planner/api/input_schema.py and
its two section modules): typed, bounded, nullable fields and closed objects, with the parsers'
conventions (an optional field may be null).
"""

from __future__ import annotations

NAME_MAX = 200  # _Reader.text default


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
