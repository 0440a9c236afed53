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
    from django.views.defaults import server_error as default_server_error

    return default_server_error(request, *args, **kwargs)


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
