"""Request bodies checked against the same JSON Schema the OpenAPI document publishes.

For bodies whose rules live in a form or a file parser (supplier quotes, measured runs), the
published schema is the contract: a body it refuses is a 400 here, before the form or parser
sees it, so what the document says and what the server accepts cannot drift apart. What the
schema cannot state (one field against another, the catalog's physics) is checked after, by
the form or the parser, and listed in docs/API.md ("Rules the schema cannot state").

Schemas are written in the OpenAPI 3.0 dialect (JSON Schema draft 4: boolean
`exclusiveMinimum`, no `null` type unless `nullable`), so draft 4's validator reads them as
published.
"""

from __future__ import annotations

import copy

from django.db import DatabaseError
from django.utils.translation import gettext as _
from django.utils.translation import ngettext
from jsonschema import Draft4Validator, FormatChecker

from .errors import FieldErrors
from .input_schema_parts import VISIBLE_PATTERN

FORMATS = FormatChecker(formats=("date",))
MAX_ERRORS = 20


def catalog_enum(read) -> dict:
    """{"enum": ids} for ids of the catalog of the day, or {} when the catalog is empty or cannot be
    read (the document generated with no database, e.g. `check --deploy` before `migrate`): the form
    or parser still checks an id against the catalog."""
    try:
        ids = list(read())
    except DatabaseError:
        return {}
    return {"enum": ids} if ids else {}


def validator_schema(schema: dict) -> dict:
    """`nullable: true` (OpenAPI 3.0) said the way draft 4 understands it."""
    out = copy.deepcopy(schema)

    def walk(node):
        if isinstance(node, dict):
            if node.pop("nullable", False):
                if "type" in node:
                    node["type"] = [node["type"], "null"]
                if "enum" in node:
                    node["enum"] = [*node["enum"], None]
                if "oneOf" in node:
                    node["oneOf"] = [*node["oneOf"], {"type": "null"}]
                elif "allOf" in node and "type" not in node and "enum" not in node:
                    # a nullable reference ({"nullable": true, "allOf": [{"$ref": ...}]})
                    node["anyOf"] = [{"allOf": node.pop("allOf")}, {"type": "null"}]
            for value in node.values():
                walk(value)
        elif isinstance(node, list):
            for value in node:
                walk(value)

    walk(out)
    return out


def _type_messages() -> dict:  # translated when read, in the request's language
    return {"integer": _("Must be a whole number."), "number": _("Must be a number."),
            "string": _("Must be a string."), "boolean": _("Must be true or false."),
            "object": _("Must be a JSON object."), "array": _("Must be a list.")}


def _path(parts) -> str | None:
    return ".".join(str(p) for p in parts) or None


def _message(error) -> list[tuple[str | None, str]]:
    """(field path, message) for one draft-4 error, in the request's language."""
    where = list(error.absolute_path)
    rule, value, instance = error.validator, error.validator_value, error.instance
    if rule == "required":
        missing = [name for name in value if isinstance(instance, dict) and name not in instance]
        return [(_path([*where, name]), _("Required.")) for name in missing]
    if rule == "additionalProperties" and isinstance(instance, dict):
        known = set(error.schema.get("properties", {}))
        return [(_path([*where, name]), _("Unknown field.")) for name in instance if name not in known]
    if rule == "anyOf" and all(set(sub) == {"required"} for sub in value):
        names = ", ".join(name for sub in value for name in sub["required"])
        return [(_path(where), _("Give at least one of: %(names)s.") % {"names": names})]
    if rule == "type":
        kinds = [k for k in ([value] if isinstance(value, str) else value) if k != "null"]
        return [(_path(where), _type_messages().get(kinds[0], error.message) if kinds else error.message)]
    if rule == "enum":
        shown = ", ".join(str(v) for v in value[:12]) + (", …" if len(value) > 12 else "")
        return [(_path(where), _("Must be one of: %(values)s.") % {"values": shown})]
    if rule == "minimum":
        strict = error.schema.get("exclusiveMinimum") is True
        text = _("Must be greater than %(n)s.") if strict else _("Must be at least %(n)s.")
        return [(_path(where), text % {"n": value})]
    if rule == "maximum":
        return [(_path(where), _("Must be at most %(n)s.") % {"n": value})]
    if rule == "minLength":
        return [(_path(where), _("Must not be empty.") if value == 1 else
                 ngettext("At least %(n)s character.", "At least %(n)s characters.", value) % {"n": value})]
    if rule == "maxLength":
        return [(_path(where), ngettext("At most %(n)s character.", "At most %(n)s characters.", value)
                 % {"n": value})]
    if rule == "pattern":
        if value == VISIBLE_PATTERN:
            return [(_path(where), _("Must contain a visible character."))]
        return [(_path(where), error.schema.get("x-pattern-message") or
                 _("Does not match the pattern %(pattern)s.") % {"pattern": value})]
    if rule == "format" and value == "date":
        return [(_path(where), _("Must be a date, YYYY-MM-DD."))]
    return [(_path(where), error.message)]  # a rule none of our schemas uses


def check_body(schema: dict, data, *, prefix: tuple = ()) -> None:
    """Raises FieldErrors (400, with field paths under `prefix`) when `data` breaks `schema`."""
    validator = Draft4Validator(validator_schema(schema), format_checker=FORMATS)
    errors = sorted(validator.iter_errors(data), key=lambda e: list(map(str, e.absolute_path)))
    if errors:
        pairs: list[tuple[str | None, str]] = []
        for error in errors[:MAX_ERRORS]:
            pairs.extend((_path([*prefix, path]) if path else _path(prefix), message)
                         for path, message in _message(error))
        raise FieldErrors(pairs)
