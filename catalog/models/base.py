"""Shared field settings and the abstract bases: a sourced row, a priced row with currency, VAT and validity."""

from django.db import models
from django.db.models import Q
from django.utils.translation import gettext_lazy as _

from catalog.choices import (
    Currency,
)

MONEY = {"max_digits": 18, "decimal_places": 6}
SPEC = {"max_digits": 12, "decimal_places": 3, "null": True, "blank": True}


class Sourced(models.Model):
    source_title = models.TextField(_("source title"))
    source_url = models.TextField(_("source URL or repository path@commit"), help_text=_("several separated by ' | '"))
    source_date = models.DateField(_("date of the source"), null=True, blank=True, help_text=_("empty when the source is undated"))
    retrieved_on = models.DateField(_("read on"))
    notes = models.TextField(_("notes"), blank=True)

    class Meta:
        abstract = True


class Priced(Sourced):
    currency = models.CharField(_("currency"), max_length=3, choices=Currency.choices)
    includes_vat = models.BooleanField(_("includes VAT"))
    valid_from = models.DateField(_("valid from"))
    valid_to = models.DateField(_("valid to (exclusive)"), null=True, blank=True)

    class Meta:
        abstract = True
        constraints = [
            models.CheckConstraint(
                condition=Q(valid_to__isnull=True) | Q(valid_to__gt=models.F("valid_from")),
                name="%(app_label)s_%(class)s_valid_range",
            ),
            models.CheckConstraint(
                condition=Q(currency__in=Currency.values), name="%(app_label)s_%(class)s_currency_known"
            ),
        ]
