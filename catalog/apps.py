from django.apps import AppConfig


class CatalogConfig(AppConfig):
    default_auto_field = "django.db.models.BigAutoField"
    name = "catalog"

    def ready(self) -> None:
        from catalog.revision import watch

        watch(self)  # a price or spec written changes the revision: cached snapshots are not served
