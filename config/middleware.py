"""Database down: answer 503 with a short page (or JSON under /api/), never a stack trace.

Django turns a view's exception into a response layer by layer, so two hooks are needed:
DatabaseUnavailableMiddleware.process_exception for views, and server_error (handler500)
for database errors raised elsewhere (e.g. saving the session after the view). Nothing here
touches the database or the templates, which may need it. The connection is replaced on
the next request (CONN_HEALTH_CHECKS), so the app recovers alone when the database is back.
"""

import logging
import sys
from html import escape

from django.db import DatabaseError, InterfaceError, OperationalError
from django.http import HttpResponse, JsonResponse
from django.middleware.gzip import GZipMiddleware
from django.utils.translation import gettext as _

logger = logging.getLogger(__name__)

DATABASE_DOWN_ERRORS = (OperationalError, InterfaceError)
RETRY_AFTER_SECONDS = "30"


def _wants_json(request) -> bool:
    return request.path.startswith("/api/") or "application/json" in request.headers.get("Accept", "")


def _problem_json(status: int, message: str) -> JsonResponse:
    """The API's one error shape (planner.api.errors.problem), imported late: it needs no DB."""
    from planner.api.errors import problem

    return JsonResponse(problem(status, [{"field": None, "message": message}]), status=status)


def database_unavailable_response(request) -> HttpResponse:
    message = _("The database is unavailable. Please try again in a minute.")
    if _wants_json(request):
        response = _problem_json(503, message)
    else:
        title = escape(_("Service temporarily unavailable"))
        body = (
            f"<!doctype html><html><head><meta charset='utf-8'><title>{title}</title></head>"
            f"<body><h1>{title}</h1><p>{escape(message)}</p></body></html>"
        )
        response = HttpResponse(body, status=503, content_type="text/html; charset=utf-8")
    response["Retry-After"] = RETRY_AFTER_SECONDS
    response["Cache-Control"] = "no-store"
    return response


def _is_database_down(exc: BaseException | None) -> bool:
    # psycopg errors arrive wrapped by Django; a broken pool connection is an InterfaceError.
    return isinstance(exc, DATABASE_DOWN_ERRORS)


class DatabaseUnavailableMiddleware:
    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        return self.get_response(request)

    def process_exception(self, request, exception):
        if _is_database_down(exception):
            logger.error("database unavailable: %s", type(exception).__name__)
            return database_unavailable_response(request)
        return None


def server_error(request, *args, **kwargs):
    """handler500: 503 when the cause is the database, otherwise a plain 500 page."""
    exc = sys.exc_info()[1]
    if _is_database_down(exc):
        return database_unavailable_response(request)
    if isinstance(exc, DatabaseError):
        logger.error("database error: %s", type(exc).__name__)
    if _is_api(request):
        return _problem_json(500, _("Internal error."))
    from django.views.defaults import server_error as default_server_error

    return default_server_error(request, *args, **kwargs)


# Errors Django answers itself (no view, a failed CSRF check, a PermissionDenied outside DRF)
# come in the API's JSON shape under /api/, and as Django's pages elsewhere.


def _is_api(request) -> bool:
    return request.path.startswith("/api/")


def not_found(request, exception=None):
    if _is_api(request):
        return _problem_json(404, _("Not found."))
    from django.views.defaults import page_not_found

    return page_not_found(request, exception)


def permission_denied(request, exception=None):
    if _is_api(request):
        return _problem_json(403, _("You do not have permission to perform this action."))
    from django.views.defaults import permission_denied as default

    return default(request, exception)


def bad_request(request, exception=None):
    if _is_api(request):
        return _problem_json(400, _("Bad request."))
    from django.views.defaults import bad_request as default

    return default(request, exception)


def csrf_failure(request, reason=""):
    """CSRF_FAILURE_VIEW: a JSON 403 under /api/ (e.g. a session-authenticated unsafe request
    without the X-CSRFToken header), Django's page elsewhere."""
    if _is_api(request):
        return _problem_json(403, _("CSRF check failed: send the X-CSRFToken header with the csrftoken cookie's value."))
    from django.views.csrf import csrf_failure as default

    return default(request, reason=reason)


class RequestSizeLimitMiddleware:
    """Refuse a request body larger than MAX_REQUEST_BODY_BYTES before anything reads it.

    DATA_UPLOAD_MAX_MEMORY_SIZE does not count uploaded files, which Django would otherwise
    stream to a temporary file whatever their size; forms then apply their own, smaller limits
    (config.json 1 MB). The WSGI body is bounded by Content-Length, so checking it suffices.
    """

    def __init__(self, get_response):
        from django.conf import settings

        self.get_response = get_response
        self.limit = settings.MAX_REQUEST_BODY_BYTES

    def __call__(self, request):
        try:
            length = int(request.META.get("CONTENT_LENGTH") or 0)
        except ValueError:
            length = 0
        if length > self.limit:
            message = _("The request body is too large (at most %(mb)s MB).") % {"mb": self.limit // (1024 * 1024)}
            if _wants_json(request):
                return _problem_json(413, message)
            return HttpResponse(escape(message), status=413, content_type="text/plain; charset=utf-8")
        return self.get_response(request)


class UnsafeTextMiddleware:
    """400 for NUL or unpaired surrogates in the URL path, any query parameter (name or value)
    and, under /api/, any form or multipart field (name, value, upload file name).

    Runs for every view, so new endpoints and filters are covered without code of their own.
    JSON bodies are checked by the API's parser (it knows the field paths); web forms report
    their own fields (Django rejects NUL in text fields; JSON fields use loads_checked), so a
    browser user sees a form error rather than this page. The answer names the parameter:
    `{"field": "query.kind", ...}` in the API's error shape, a short page elsewhere.
    """

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        found = self._first_unsafe(request)
        if found is None:
            return self.get_response(request)
        field, reason = found
        if _wants_json(request):
            from planner.api.errors import problem

            return JsonResponse(problem(400, [{"field": field, "message": reason}]), status=400)
        message = f"{field}: {reason}"
        return HttpResponse(escape(message), status=400, content_type="text/plain; charset=utf-8")

    @staticmethod
    def _first_unsafe(request) -> tuple[str, str] | None:
        from .textsafety import unsafe_reason

        reason = unsafe_reason(request.path)
        if reason:
            return "path", reason
        if request.path.startswith("/api/"):  # header values end up in the database too (Idempotency-Key)
            for name, value in request.META.items():
                if name.startswith("HTTP_") and isinstance(value, str) and unsafe_reason(value):
                    return "header." + name[5:].replace("_", "-").title(), unsafe_reason(value)
        sources = [("query", request.GET)]
        if request.path.startswith("/api/") and request.method in ("POST", "PUT", "PATCH", "DELETE"):
            content_type = request.content_type or ""
            if content_type.startswith(("multipart/form-data", "application/x-www-form-urlencoded")):
                sources += [("form", request.POST), ("files", request.FILES)]
        for prefix, data in sources:
            for key, values in data.lists():
                for text in (key, *(getattr(v, "name", v) for v in values)):
                    reason = unsafe_reason(str(text)) if text is not None else None
                    if reason:
                        return f"{prefix}.{key}" if unsafe_reason(key) is None else prefix, reason
        return None


class ApiHtmlNotFoundMiddleware:
    """Under /api/, a 404 Django answered with an HTML page (with DEBUG on, an unmatched URL gets
    the technical 404 page instead of handler404, e.g. a non-numeric id in a path) becomes the
    API's JSON error, so the API's documented error shape holds whatever the settings."""

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        response = self.get_response(request)
        if (response.status_code == 404 and _is_api(request)
                and response.get("Content-Type", "").startswith("text/html")):
            return _problem_json(404, _("Not found."))
        return response


def accepts_gzip(request) -> bool:
    """gzip among the client's Accept-Encoding, not refused with q=0 (Django's GZipMiddleware looks for
    the word only)."""
    for part in request.headers.get("Accept-Encoding", "").split(","):
        name, _, params = part.strip().partition(";")
        if name.strip().lower() == "gzip" and params.replace(" ", "") not in ("q=0", "q=0.0", "q=0.00", "q=0.000"):
            return True
    return False


class ApiGZipMiddleware(GZipMiddleware):
    """gzip for the API's JSON when the client accepts it: a saved plan's result is ~450 KB of JSON
    and ~55 KB compressed. Only JSON under /api/: pages and exports are left as they are (HTML pages
    carry the CSRF token, and PDF and XLSX are compressed already)."""

    def process_response(self, request, response):
        if not _is_api(request) or "json" not in response.get("Content-Type", "") or not accepts_gzip(request):
            return response
        return super().process_response(request, response)
