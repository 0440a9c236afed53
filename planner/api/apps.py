from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class PlannerApiConfig(AppConfig):
    # A separate app label so the API token model and its migration stay with the API code.
    name = "planner.api"
    label = "planner_api"
    verbose_name = _("Planner API")
    default_auto_field = "django.db.models.BigAutoField"
