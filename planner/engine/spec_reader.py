"""The spec reader: collects every field error while reading values (returns defaults for bad fields)."""

from __future__ import annotations

import math
import re
from collections.abc import Mapping

from catalog.domain.messages import Msg

from .errors import FieldError

_MISSING = object()


_UNSTORABLE = re.compile("[\x00\ud800-\udfff]")


class _Reader:
    """Collects errors while reading values; returns None/defaults for bad fields."""

    def __init__(self) -> None:
        self.errors: list[FieldError] = []

    def err(self, field: str, message: str) -> None:
        self.errors.append(FieldError(field=field, message=message))

    def section(self, d: Mapping, key: str, path: str, allowed: tuple[str, ...]) -> Mapping | None:
        value = d.get(key, _MISSING)
        if value is _MISSING or value is None:
            return None
        if not isinstance(value, Mapping):
            self.err(path, Msg("must be an object"))
            return None
        self.keys(value, path, allowed)
        return value

    def keys(self, d: Mapping, path: str, allowed: tuple[str, ...]) -> None:
        for k in d:
            if k not in allowed:
                self.err(f"{path}.{k}" if path else str(k), Msg("unknown field; allowed: {allowed}", allowed=', '.join(allowed)))

    def number(self, d, key, path, *, default=None, minimum=0.0, maximum=None, integer=False,
               strict_min=False, required=False):
        field = f"{path}.{key}" if path else key
        value = d.get(key, _MISSING) if d is not None else _MISSING
        if value is _MISSING or value is None:
            if required:
                self.err(field, "required")
            return default
        if isinstance(value, bool) or not isinstance(value, int | float):
            if isinstance(value, str):
                try:
                    value = float(value.strip())
                except ValueError:
                    self.err(field, Msg("must be a number, got {value}", value=repr(value)))
                    return default
            else:
                self.err(field, Msg("must be a number, got {value_type}", value_type=type(value).__name__))
                return default
        try:
            finite = math.isfinite(value)
        except OverflowError:  # an integer too large for a float (JSON allows any length)
            finite = False
        if not finite:
            self.err(field, Msg("must be a finite number"))
            return default
        if integer and value != int(value):
            self.err(field, Msg("must be a whole number, got {value}", value=value))
            return default
        if (strict_min and value <= minimum) or value < minimum:
            self.err(field, (Msg("must be more than {minimum:,.15g}, got {value:,.15g}", minimum=minimum, value=value) if strict_min else Msg("must be at least {minimum:,.15g}, got {value:,.15g}", minimum=minimum, value=value)))
            return default
        if maximum is not None and value > maximum:
            self.err(field, Msg("must be at most {maximum:,.15g}, got {value:,.15g}", maximum=maximum, value=value))
            return default
        return int(value) if integer else float(value)

    def integer(self, d, key, path, *, default=None, minimum=0, maximum=None, required=False):
        return self.number(d, key, path, default=default, minimum=minimum, maximum=maximum,
                           integer=True, required=required)

    def boolean(self, d, key, path, *, default=None):
        field = f"{path}.{key}"
        value = d.get(key, _MISSING) if d is not None else _MISSING
        if value is _MISSING or value is None:
            return default
        if not isinstance(value, bool):
            self.err(field, Msg("must be true or false, got {value}", value=repr(value)))
            return default
        return value

    def choice(self, d, key, path, allowed, *, default=None, required=False):
        field = f"{path}.{key}" if path else key
        value = d.get(key, _MISSING) if d is not None else _MISSING
        if value is _MISSING or value is None:
            if required:
                self.err(field, Msg("required; one of: {allowed}", allowed=', '.join(allowed)))
            return default
        if not isinstance(value, str) or value.strip().lower() not in allowed:
            self.err(field, Msg("unknown value {value}; allowed: {allowed}", value=repr(value), allowed=', '.join(allowed)))
            return default
        return value.strip().lower()

    def text(self, d, key, path, *, default="", max_length=200):
        field = f"{path}.{key}" if path else key
        value = d.get(key, _MISSING) if d is not None else _MISSING
        if value is _MISSING or value is None:
            return default
        if not isinstance(value, str):
            self.err(field, Msg("must be a string, got {value_type}", value_type=type(value).__name__))
            return default
        if len(value) > max_length:
            self.err(field, Msg("must be at most {max_length} characters", max_length=max_length))
            return default
        if _UNSTORABLE.search(value):  # PostgreSQL text cannot hold NUL; UTF-8 no lone surrogate
            self.err(field, Msg("must not contain NUL or unpaired surrogate characters"))
            return default
        return value.strip()
