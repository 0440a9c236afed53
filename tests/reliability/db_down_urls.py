"""Views that fail the way they do when PostgreSQL is gone (test_db_down.py)."""

from django.db import OperationalError
from django.urls import path


def view_db_down(request):
    raise OperationalError('connection to server at "127.0.0.1", port 5432 failed: Connection refused')


def view_bug(request):
    raise ValueError("a plain bug")


urlpatterns = [
    path("page/", view_db_down),
    path("api/v1/thing/", view_db_down),
    path("bug/", view_bug),
]
handler500 = "config.middleware.server_error"
