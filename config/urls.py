from django.contrib import admin
from django.urls import include, path
from drf_spectacular.views import SpectacularAPIView

from .health import healthz, readyz

# Database down anywhere in a request -> 503 page/JSON, not a stack trace (config/middleware.py).
handler500 = "config.middleware.server_error"

urlpatterns = [
    path("healthz", healthz, name="healthz"),
    path("readyz", readyz, name="readyz"),
    path("", include("django_prometheus.urls")),
    path("i18n/", include("django.conf.urls.i18n")),
    path("admin/", admin.site.urls),
    path("api/v1/schema/", SpectacularAPIView.as_view(), name="api-schema"),
    path("api/v1/", include("catalog.api.urls")),
    # Planner API; ends with a JSON 404 for unknown /api/v1/ URLs, so it stays last under api/v1/.
    path("api/v1/", include("planner.api.urls", namespace="api")),
    path("catalog/", include("catalog.urls")),
    path("", include("planner.urls")),
]
