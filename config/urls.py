from django.contrib import admin
from django.urls import include, path
from drf_spectacular.views import SpectacularAPIView

from .health import healthz, readyz
from .metrics_access import metrics

# Database down anywhere in a request -> 503 page/JSON, not a stack trace (config/middleware.py).
handler500 = "config.middleware.server_error"
# Under /api/ these answer in the API's JSON error shape (config/middleware.py).
handler400 = "config.middleware.bad_request"
handler403 = "config.middleware.permission_denied"
handler404 = "config.middleware.not_found"

urlpatterns = [
    path("healthz", healthz, name="healthz"),
    path("readyz", readyz, name="readyz"),
    # Prometheus exposition, behind a bearer token or an address allow-list in production.
    path("metrics", metrics, name="prometheus-django-metrics"),
    path("i18n/", include("django.conf.urls.i18n")),
    path("admin/", admin.site.urls),
    path("api/v1/schema/", SpectacularAPIView.as_view(), name="api-schema"),
    path("api/v1/", include("catalog.api.urls")),
    # Planner API; ends with a JSON 404 for unknown /api/v1/ URLs, so it stays last under api/v1/.
    path("api/v1/", include("planner.api.urls", namespace="api")),
    path("catalog/", include("catalog.urls")),
    path("", include("planner.urls")),
]
