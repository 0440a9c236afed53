from django.apps import AppConfig


class CostsConfig(AppConfig):
    default_auto_field = "django.db.models.BigAutoField"
    name = "costs"

    def ready(self) -> None:
        from catalog.revision import watch

        watch(self)  # the rate card and API prices are in the snapshots too
