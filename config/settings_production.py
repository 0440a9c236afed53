"""Production settings: everything from config.settings, hardened.

Refuses to start without DJANGO_SECRET_KEY (the dev fallback is rejected too).
"""

from django.core.exceptions import ImproperlyConfigured

from .settings import *  # noqa: F403
from .settings import INSECURE_DEV_SECRET_KEY, env

SECRET_KEY = env.str("DJANGO_SECRET_KEY", default="")
if not SECRET_KEY or SECRET_KEY == INSECURE_DEV_SECRET_KEY or len(SECRET_KEY) < 50:
    raise ImproperlyConfigured(
        "DJANGO_SECRET_KEY must be set to a random string of at least 50 characters in production."
    )

DEBUG = False
SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
SECURE_SSL_REDIRECT = env.bool("DJANGO_SECURE_SSL_REDIRECT", default=True)
# Probes from the orchestrator speak plain HTTP inside the network.
SECURE_REDIRECT_EXEMPT = [r"^healthz$", r"^readyz$"]
SECURE_HSTS_SECONDS = env.int("DJANGO_SECURE_HSTS_SECONDS", default=31536000)
SECURE_HSTS_INCLUDE_SUBDOMAINS = True
SECURE_HSTS_PRELOAD = True
SESSION_COOKIE_SECURE = True
CSRF_COOKIE_SECURE = True
SECURE_CONTENT_TYPE_NOSNIFF = True
X_FRAME_OPTIONS = "DENY"
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {"BACKEND": "whitenoise.storage.CompressedManifestStaticFilesStorage"},
}
# /metrics never open to anonymous clients here: a bearer token or an allow-list.
METRICS_PUBLIC = False
if METRICS_TOKEN and len(METRICS_TOKEN) < 32:  # noqa: F405
    raise ImproperlyConfigured("METRICS_TOKEN must be at least 32 characters.")
# Fault injection is for the fault tests only.
FAULT_INJECTION_COMPUTE_DELAY_SECONDS = 0.0
FAULT_INJECTION_CLAIM_DELAY_SECONDS = 0.0
# The beat service (docker-compose.yml) runs CELERY_BEAT_SCHEDULE from config.settings: the sweeper,
# the daily Bank of Russia rates (CBR_DAILY_URL at CBR_DAILY_HOUR_UTC) and, when
# SKYPILOT_CATALOG_SOURCES is set, the weekly SkyPilot catalog refresh. Refuse to start without the rates feed.
if "import-cbr-daily" not in CELERY_BEAT_SCHEDULE or not CBR_DAILY_URL:  # noqa: F405
    raise ImproperlyConfigured("CBR_DAILY_URL must be set: the daily Bank of Russia rates feed is part of production.")
