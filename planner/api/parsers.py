"""A JSON parser that refuses what would otherwise crash or exhaust the server.

DRF reads the request stream itself, so Django's DATA_UPLOAD_MAX_MEMORY_SIZE does not apply
to JSON bodies: the size limit is enforced here (413). Deeply nested documents would raise
RecursionError (a 500) and NaN/Infinity or 1e400 are not JSON numbers we can compute with:
all of these are a 400 with a clear message.
"""

import json
import math

from django.conf import settings
from django.utils.translation import gettext as _
from rest_framework.exceptions import ParseError
from rest_framework.parsers import JSONParser

from .errors import PayloadTooLarge

MAX_DEPTH = 32


def _reject_constant(name):
    raise ValueError(f"{name} is not a valid JSON number")


def _finite_float(text):
    value = float(text)
    if not math.isfinite(value):
        raise ValueError(f"number {text[:20]} is out of range")
    return value


def _check_depth(value, depth=0):
    if depth > MAX_DEPTH:
        raise ParseError(_("JSON nested deeper than %(depth)s levels.") % {"depth": MAX_DEPTH})
    if isinstance(value, dict):
        for v in value.values():
            _check_depth(v, depth + 1)
    elif isinstance(value, list):
        for v in value:
            _check_depth(v, depth + 1)


class SafeJSONParser(JSONParser):
    def parse(self, stream, media_type=None, parser_context=None):
        limit = settings.DATA_UPLOAD_MAX_MEMORY_SIZE
        raw = stream.read(limit + 1) if stream is not None else b""
        if limit is not None and len(raw) > limit:
            raise PayloadTooLarge()
        encoding = (parser_context or {}).get("encoding", settings.DEFAULT_CHARSET)
        try:
            text = raw.decode(encoding)
        except (UnicodeDecodeError, LookupError):
            raise ParseError(_("The request body cannot be decoded as %(encoding)s.") % {"encoding": encoding}) from None
        try:
            data = json.loads(text, parse_constant=_reject_constant, parse_float=_finite_float)
        except RecursionError:
            raise ParseError(_("JSON nested deeper than %(depth)s levels.") % {"depth": MAX_DEPTH}) from None
        except ValueError as exc:  # JSONDecodeError, oversized integers, NaN/Infinity
            raise ParseError(_("JSON parse error - %(error)s") % {"error": exc}) from None
        _check_depth(data)
        return data
