from django.apps import AppConfig


class PlannerConfig(AppConfig):
    default_auto_field = "django.db.models.BigAutoField"
    name = "planner"

    def ready(self):
        # Registers the Celery tasks in every process (web included): the services queue a
        # computation by the task's name rather than importing the task module above them.
        from . import tasks  # noqa: F401
