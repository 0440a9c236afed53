"""The project's own app: wiring that belongs to no feature app (audit log registration,
the plan metrics collector)."""

from django.apps import AppConfig, apps

# Who changed catalog prices, rate cards and plans, and when (django-auditlog, R-security).
AUDITED_CATALOG_MODELS = (
    "StorageTier", "NetworkOption", "CloudOffer", "DedicatedServerOffer", "HardwarePrice",
    "ElectricityTariff", "ExchangeRate", "VatRate",
)
# Versions carry large frozen snapshots; the audit keeps the fields that tell the story.
PLAN_VERSION_FIELDS = ["status", "attempts", "error", "note", "number"]


def register_audited_models() -> None:
    from auditlog.registry import auditlog

    def register(model, **kwargs):
        if not auditlog.contains(model):
            auditlog.register(model, **kwargs)

    for name in AUDITED_CATALOG_MODELS:
        register(apps.get_model("catalog", name))
    # Rate cards and every other cost setting the cost engine stores.
    for model in apps.get_app_config("costs").get_models():
        register(model)
    for name in ("Team", "Membership", "Workload", "Plan"):
        register(apps.get_model("planner", name))
    register(apps.get_model("planner", "PlanVersion"), include_fields=PLAN_VERSION_FIELDS)
    register(apps.get_model("planner", "ShareLink"), exclude_fields=["token_hash"])
    # Who recorded which measured run and who switched which calibration on or off (issue 12).
    register(apps.get_model("planner", "MeasuredRun"), exclude_fields=["raw"])
    register(apps.get_model("planner", "Calibration"))


class OpsConfig(AppConfig):
    name = "config"
    label = "ops"
    verbose_name = "Operations"

    def ready(self):
        from django.urls import register_converter
        from django.urls.converters import IntConverter

        from .metrics import register as register_plan_metrics

        class DatabaseInt(IntConverter):
            """`<int:...>` in every URL: at most 18 digits, so an id always fits a 64-bit
            database integer (a longer one is a 404, not a database overflow and a 500)."""

            regex = "[0-9]{1,18}"

        register_converter(DatabaseInt, "int")

        register_audited_models()
        register_plan_metrics()
