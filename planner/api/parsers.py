"""A JSON parser that refuses what would otherwise crash or exhaust the server.

DRF reads the request stream itself, so Django's DATA_UPLOAD_MAX_MEMORY_SIZE does not apply
to JSON bodies: the size limit is enforced here (413). Nesting is capped before parsing
(100,000 levels would exhaust the stack), NaN/Infinity or 1e400 are not JSON numbers we can
compute with, and no key or string may carry NUL or an unpaired surrogate
(config.textsafety): all of these are a 400 with a clear message, the last naming the field.
Every endpoint that takes JSON gets these checks by parsing through this class.
"""

from django.conf import settings
from django.utils.translation import gettext as _
from rest_framework.exceptions import ParseError
from rest_framework.parsers import JSONParser

from config.textsafety import MAX_JSON_DEPTH, UnsafeText, loads_checked

from .errors import FieldErrors, PayloadTooLarge

MAX_DEPTH = MAX_JSON_DEPTH


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
            return loads_checked(text)
        except UnsafeText as exc:
            raise FieldErrors([(exc.path, exc.message)]) from None
        except ValueError as exc:  # JSONDecodeError, oversized integers, NaN/Infinity
            raise ParseError(_("JSON parse error - %(error)s") % {"error": exc}) from None
