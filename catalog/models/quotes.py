"""A team's supplier quotes for hardware."""

from django.conf import settings
from django.db import models
from django.db.models import Q
from django.utils.translation import gettext_lazy as _

from catalog.choices import (
    Currency,
    QuoteItemKind,
)

from .base import MONEY
from .hardware import Accelerator


class SupplierQuote(models.Model):
    """A quote procurement received from a supplier. Team-scoped: only that team sees and uses it.

    Used in the team's plans in preference to list prices while `valid_until` is not past the
    plan date; an expired quote is flagged and the list price is used instead."""

    team = models.ForeignKey("planner.Team", on_delete=models.CASCADE, related_name="supplier_quotes", verbose_name=_("team"))
    supplier = models.CharField(_("supplier"), max_length=200)
    item_kind = models.CharField(_("quoted item"), max_length=12, choices=QuoteItemKind.choices)
    accelerator = models.ForeignKey(Accelerator, on_delete=models.PROTECT, related_name="+", verbose_name=_("accelerator"))
    gpus_per_server = models.PositiveSmallIntegerField(
        _("GPUs per server"), null=True, blank=True, help_text=_("for a whole server configuration")
    )
    description = models.TextField(_("configuration as quoted"), blank=True)
    quantity = models.PositiveIntegerField(_("quantity"), default=1)
    unit_price = models.DecimalField(_("price per unit"), **MONEY)
    currency = models.CharField(_("currency"), max_length=3, choices=Currency.choices)
    includes_vat = models.BooleanField(_("price includes VAT"))
    quote_date = models.DateField(_("quote date"))
    valid_until = models.DateField(_("valid until (inclusive)"))
    document_name = models.CharField(_("attached document"), max_length=255, blank=True)
    notes = models.TextField(_("notes"), blank=True)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True, related_name="+", verbose_name=_("entered by")
    )
    created_at = models.DateTimeField(_("entered"), auto_now_add=True)

    class Meta:
        ordering = ["-quote_date", "pk"]
        constraints = [
            models.CheckConstraint(condition=Q(unit_price__gt=0), name="catalog_supplierquote_price_positive"),
            models.CheckConstraint(condition=Q(quantity__gt=0), name="catalog_supplierquote_quantity_positive"),
            models.CheckConstraint(condition=Q(currency__in=Currency.values), name="catalog_supplierquote_currency_known"),
            models.CheckConstraint(
                condition=Q(valid_until__gte=models.F("quote_date")), name="catalog_supplierquote_valid_after_date"
            ),
            models.CheckConstraint(
                condition=Q(item_kind="accelerator") | Q(gpus_per_server__gt=0),
                name="catalog_supplierquote_server_has_gpus",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.supplier}: {self.unit_price} {self.currency} ({self.quote_date})"

    def is_valid_on(self, day) -> bool:
        return self.quote_date <= day <= self.valid_until
