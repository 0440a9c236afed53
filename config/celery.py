"""Celery application.

The broker comes from settings (REDIS_URL), never from Celery's own
CELERY_BROKER_URL environment variable, which would silently override test apps.
With no REDIS_URL the tasks run in-process (eager), so the app works with no services.
"""

import os

from celery import Celery

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")

app = Celery("gpu_planner")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()
