"""The catalog's revision: one row whose token changes whenever a price, rate or spec changes."""

from django.db import models
from django.utils.translation import gettext_lazy as _


class CatalogRevision(models.Model):
    """A single row (pk 1). Its token is a fresh random value after every write to the catalog's
    and the rate card's tables (catalog.revision), so a snapshot cached under one token is never
    served after a change; a rolled-back write takes its token back with it."""

    token = models.CharField(_("token"), max_length=32)
    changed_at = models.DateTimeField(_("changed"), auto_now=True)

    class Meta:
        verbose_name = _("catalog revision")

    def __str__(self) -> str:
        return f"catalog revision {self.token}"
