"""Prices and money tables: hardware purchase prices, electricity tariffs, exchange rates, VAT rates."""

from django.db import models
from django.db.models import Q
from django.utils.translation import gettext_lazy as _

from catalog.choices import (
    Currency,
)

from .base import MONEY, Priced, Sourced
from .hardware import Accelerator, Cpu, ServerPlatform


class HardwarePrice(Priced):
    """An on-prem purchase price of exactly one item: an accelerator, a server platform or a CPU."""

    accelerator = models.ForeignKey(
        Accelerator, on_delete=models.PROTECT, null=True, blank=True, related_name="prices", verbose_name=_("accelerator")
    )
    server_platform = models.ForeignKey(
        ServerPlatform, on_delete=models.PROTECT, null=True, blank=True, related_name="prices",
        verbose_name=_("server platform"),
    )
    cpu = models.ForeignKey(Cpu, on_delete=models.PROTECT, null=True, blank=True, related_name="prices", verbose_name="CPU")
    price = models.DecimalField(_("price per unit"), **MONEY)
    price_kind = models.CharField(
        _("kind of price"), max_length=60, help_text=_("e.g. list price, reseller offer, reported street price")
    )

    class Meta(Priced.Meta):
        ordering = ["valid_from"]
        constraints = [
            *Priced.Meta.constraints,
            models.CheckConstraint(condition=Q(price__gt=0), name="catalog_hardwareprice_price_positive"),
            models.CheckConstraint(
                condition=Q(accelerator__isnull=False, server_platform__isnull=True, cpu__isnull=True)
                | Q(accelerator__isnull=True, server_platform__isnull=False, cpu__isnull=True)
                | Q(accelerator__isnull=True, server_platform__isnull=True, cpu__isnull=False),
                name="catalog_hardwareprice_exactly_one_item",
            ),
            models.UniqueConstraint(
                fields=["accelerator", "valid_from", "currency", "price_kind"],
                condition=Q(accelerator__isnull=False), name="catalog_hardwareprice_unique_accelerator",
            ),
            models.UniqueConstraint(
                fields=["server_platform", "valid_from", "currency", "price_kind"],
                condition=Q(server_platform__isnull=False), name="catalog_hardwareprice_unique_platform",
            ),
            models.UniqueConstraint(
                fields=["cpu", "valid_from", "currency", "price_kind"],
                condition=Q(cpu__isnull=False), name="catalog_hardwareprice_unique_cpu",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.item}: {self.price} {self.currency} ({self.valid_from})"

    @property
    def item(self):
        return self.accelerator or self.server_platform or self.cpu


class ElectricityTariff(Priced):
    country = models.CharField(_("country (ISO 3166-1 alpha-2)"), max_length=2)
    region = models.CharField(_("region"), max_length=120)
    consumer_class = models.CharField(_("consumer class"), max_length=120)
    price_per_kwh = models.DecimalField(_("price per kWh"), **MONEY)

    class Meta(Priced.Meta):
        ordering = ["country", "region", "valid_from"]
        constraints = [
            *Priced.Meta.constraints,
            models.UniqueConstraint(
                fields=["country", "region", "consumer_class", "valid_from"], name="catalog_electricitytariff_unique"
            ),
            models.CheckConstraint(condition=Q(price_per_kwh__gt=0), name="catalog_electricitytariff_price_positive"),
        ]

    def __str__(self) -> str:
        return f"{self.country} {self.region}: {self.price_per_kwh} {self.currency}/kWh"


class ExchangeRate(Sourced):
    """1 `base` = `rate` `quote` on `rate_date` (e.g. 1 USD = 78.23 RUB)."""

    rate_date = models.DateField(_("date"))
    base = models.CharField(_("base currency"), max_length=3, choices=Currency.choices)
    quote = models.CharField(_("quote currency"), max_length=3, choices=Currency.choices)
    rate = models.DecimalField(_("rate"), max_digits=18, decimal_places=8)

    class Meta:
        ordering = ["-rate_date", "base", "quote"]
        constraints = [
            models.UniqueConstraint(fields=["rate_date", "base", "quote"], name="catalog_exchangerate_unique"),
            models.CheckConstraint(condition=Q(rate__gt=0), name="catalog_exchangerate_rate_positive"),
            models.CheckConstraint(condition=~Q(base=models.F("quote")), name="catalog_exchangerate_distinct_currencies"),
        ]

    def __str__(self) -> str:
        return f"{self.rate_date}: 1 {self.base} = {self.rate} {self.quote}"


class VatRate(Sourced):
    country = models.CharField(_("country (ISO 3166-1 alpha-2)"), max_length=2)
    rate_percent = models.DecimalField(_("rate, %"), max_digits=5, decimal_places=2)
    valid_from = models.DateField(_("valid from"))
    valid_to = models.DateField(_("valid to (exclusive)"), null=True, blank=True)

    class Meta:
        ordering = ["country", "valid_from"]
        constraints = [
            models.UniqueConstraint(fields=["country", "valid_from"], name="catalog_vatrate_unique"),
            models.CheckConstraint(
                condition=Q(rate_percent__gte=0) & Q(rate_percent__lt=100), name="catalog_vatrate_percent_range"
            ),
            models.CheckConstraint(
                condition=Q(valid_to__isnull=True) | Q(valid_to__gt=models.F("valid_from")),
                name="catalog_vatrate_valid_range",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.country} {self.rate_percent}% from {self.valid_from}"
