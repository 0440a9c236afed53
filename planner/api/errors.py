"""One JSON error shape for every API error:

    {"type": "urn:gpu-planner:error:validation", "title": "Invalid input", "status": 400,
     "errors": [{"field": "spec.model.architecture.layers", "message": "must be a positive integer"}]}

`field` is a dotted path into the request body (null when the error is about the request as a
whole). The handler is installed as REST_FRAMEWORK["EXCEPTION_HANDLER"].
"""

from __future__ import annotations

import logging

from django.core.exceptions import PermissionDenied as DjangoPermissionDenied
from django.core.exceptions import RequestDataTooBig, SuspiciousOperation
from django.db import InterfaceError, OperationalError
from django.http import Http404, JsonResponse
from django.utils.translation import gettext as _
from django.utils.translation import gettext_noop
from django.views.decorators.csrf import csrf_exempt
from rest_framework import exceptions, status
from rest_framework.response import Response

from planner.i18n import render

logger = logging.getLogger(__name__)

NON_FIELD_KEYS = ("non_field_errors", "detail")


class FieldErrors(exceptions.APIException):
    """400 with explicit (field path, message) pairs, e.g. from the engines' validators."""

    status_code = status.HTTP_400_BAD_REQUEST
    default_detail = "Invalid input."
    default_code = "invalid"

    def __init__(self, errors: list[tuple[str | None, str]]):
        self.errors = list(errors)
        super().__init__(detail="; ".join(m for _f, m in self.errors))


class FieldNotFound(FieldErrors):
    """404 naming the parameter that points at nothing (e.g. a version number the plan does
    not have), in the same shape as a 400's field errors."""

    status_code = status.HTTP_404_NOT_FOUND


class FieldConflict(FieldErrors):
    """409 with field errors: valid input that conflicts with what is stored (a run recorded already)."""

    status_code = status.HTTP_409_CONFLICT


class CredentialsRejected(FieldErrors):
    """401 for a username and password that do not authenticate (the token endpoint). The
    challenge names the header the API does take, so a client knows what to send next."""

    status_code = status.HTTP_401_UNAUTHORIZED
    challenge = 'Token realm="api"'


class Conflict(exceptions.APIException):
    status_code = status.HTTP_409_CONFLICT
    default_detail = "The request conflicts with the current state."
    default_code = "conflict"


class PayloadTooLarge(exceptions.APIException):
    status_code = status.HTTP_413_REQUEST_ENTITY_TOO_LARGE
    default_detail = "The request body is too large."
    default_code = "too_large"


def engine_errors(exc, *, prefix: str = "") -> FieldErrors:
    """FieldErrors from SpecValidationError (.field) or CostValidationError (.path)."""
    pairs = []
    for err in exc.errors:
        path = getattr(err, "field", None) or getattr(err, "path", None) or ""
        pairs.append((_join(prefix, path) or None, render(err.message)))
    return FieldErrors(pairs)


def _join(prefix: str, path: str) -> str:
    if path == "(root)":  # the engine's name for the document itself
        path = ""
    if prefix and path and path.startswith(prefix + "."):
        return path  # the engine already gave the full path
    return ".".join(p for p in (prefix, path) if p)


def flatten(detail, path: str = "") -> list[dict]:
    """Serializer errors (nested dicts and lists) as a flat list of {field, message}."""
    if isinstance(detail, dict):
        out = []
        for key, value in detail.items():
            key = str(key)
            out += flatten(value, path if key in NON_FIELD_KEYS else _join(path, key))
        return out
    if isinstance(detail, list):
        out = []
        for i, value in enumerate(detail):
            if isinstance(value, dict | list) and value:
                out += flatten(value, _join(path, str(i)) if isinstance(value, dict) else path)
            elif isinstance(value, dict | list):
                continue  # an empty entry: that list item had no error
            else:
                out.append({"field": path or None, "message": str(value)})
        return out
    return [{"field": path or None, "message": str(detail)}]


TITLES = {
    400: ("validation", gettext_noop("Invalid input")),
    401: ("unauthenticated", gettext_noop("Authentication required")),
    403: ("forbidden", gettext_noop("Permission denied")),
    404: ("not-found", gettext_noop("Not found")),
    405: ("method-not-allowed", gettext_noop("Method not allowed")),
    406: ("not-acceptable", gettext_noop("Not acceptable")),
    409: ("conflict", gettext_noop("Conflict")),
    412: ("precondition-failed", gettext_noop("Precondition failed")),
    413: ("too-large", gettext_noop("Request body too large")),
    415: ("unsupported-media-type", gettext_noop("Unsupported media type")),
    429: ("throttled", gettext_noop("Too many requests")),
    500: ("server-error", gettext_noop("Server error")),
    503: ("unavailable", gettext_noop("Service unavailable")),
}


def problem(status_code: int, errors: list[dict]) -> dict:
    slug, title = TITLES.get(status_code, ("error", "Error"))
    return {"type": f"urn:gpu-planner:error:{slug}", "title": _(title), "status": status_code, "errors": errors}


def _exception_to_problem(exc) -> tuple[int, list[dict], dict] | None:
    headers: dict = {}
    if isinstance(exc, OperationalError | InterfaceError):  # database down: retry later (config/middleware.py)
        message = _("The database is unavailable. Please try again in a minute.")
        return 503, [{"field": None, "message": message}], {"Retry-After": "30"}
    if isinstance(exc, CredentialsRejected):
        headers["WWW-Authenticate"] = exc.challenge
    if isinstance(exc, FieldErrors):
        return exc.status_code, [{"field": f, "message": str(m)} for f, m in exc.errors], headers
    if isinstance(exc, RequestDataTooBig):
        return 413, [{"field": None, "message": _("The request body is too large.")}], headers
    if isinstance(exc, Http404):
        return 404, [{"field": None, "message": _("Not found.")}], headers
    if isinstance(exc, DjangoPermissionDenied):
        return 403, [{"field": None, "message": _("You do not have permission to perform this action.")}], headers
    if isinstance(exc, SuspiciousOperation):
        return 400, [{"field": None, "message": _("Bad request.")}], headers
    if isinstance(exc, exceptions.APIException):
        if getattr(exc, "auth_header", None):
            headers["WWW-Authenticate"] = exc.auth_header
        if getattr(exc, "wait", None):
            headers["Retry-After"] = str(int(exc.wait))
        if isinstance(exc, exceptions.ValidationError):
            return exc.status_code, flatten(exc.detail) or [{"field": None, "message": "Invalid input."}], headers
        return exc.status_code, flatten(exc.detail), headers
    return None


def api_exception_handler(exc, context):
    # Imported here: rest_framework.views loads the parser setting, which imports this module.
    from rest_framework.views import set_rollback

    found = _exception_to_problem(exc)
    if found is None:
        # A bug, not bad input: log the trace, answer in the same shape without details.
        logger.exception("unhandled API error", exc_info=exc)
        status_code, errors, headers = 500, [{"field": None, "message": _("Internal error.")}], {}
    else:
        status_code, errors, headers = found
    set_rollback()  # no partial writes when ATOMIC_REQUESTS or an atomic block is active
    return Response(problem(status_code, errors), status=status_code, headers=headers)


@csrf_exempt  # an unknown URL is a 404 whatever the method; a CSRF 403 would hide that
def json_not_found(request, *args, **kwargs):
    """404 in the API's error shape for unknown URLs under /api/v1/."""
    return JsonResponse(problem(404, [{"field": None, "message": _("Not found.")}]), status=404)
