"""Import runs: catalog imports and price feed runs."""

from django.db import models
from django.db.models import Q
from django.utils.translation import gettext_lazy as _

from catalog.choices import (
    FeedKind,
    ImportStatus,
)


class CatalogImportRun(models.Model):
    """A catalog import handed to a background worker (catalog.tasks.run_catalog_import)."""

    status = models.CharField(_("status"), max_length=10, choices=ImportStatus.choices, default=ImportStatus.PENDING)
    source_path = models.CharField(_("directory or .xlsx file"), max_length=500)
    counts = models.JSONField(_("rows per table"), default=dict, blank=True)
    errors = models.JSONField(_("errors"), default=list, blank=True)
    created_at = models.DateTimeField(_("created"), auto_now_add=True)
    started_at = models.DateTimeField(_("started"), null=True, blank=True)
    finished_at = models.DateTimeField(_("finished"), null=True, blank=True)

    class Meta:
        ordering = ["-created_at"]
        constraints = [
            models.CheckConstraint(condition=Q(status__in=ImportStatus.values), name="catalog_catalogimportrun_status_known"),
        ]

    def __str__(self) -> str:
        return f"import #{self.pk} ({self.status})"


class FeedImportRun(models.Model):
    """One run of a price feed importer (Bank of Russia rates, SkyPilot offers): what it wrote or why it failed."""

    kind = models.CharField(_("feed"), max_length=12, choices=FeedKind.choices)
    source = models.TextField(_("URL or file"))
    status = models.CharField(_("status"), max_length=10, choices=ImportStatus.choices, default=ImportStatus.RUNNING)
    counts = models.JSONField(_("rows written"), default=dict, blank=True)
    error = models.TextField(_("error"), blank=True)
    started_at = models.DateTimeField(_("started"), auto_now_add=True)
    finished_at = models.DateTimeField(_("finished"), null=True, blank=True)

    class Meta:
        ordering = ["-started_at", "-pk"]
        constraints = [
            models.CheckConstraint(condition=Q(kind__in=FeedKind.values), name="catalog_feedimportrun_kind_known"),
            models.CheckConstraint(condition=Q(status__in=ImportStatus.values), name="catalog_feedimportrun_status_known"),
            models.CheckConstraint(condition=~Q(status="failed") | ~Q(error=""), name="catalog_feedimportrun_failure_has_error"),
        ]

    def __str__(self) -> str:
        return f"{self.kind} {self.status} ({self.started_at:%Y-%m-%d %H:%M})"
