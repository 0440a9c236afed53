"""Providers, their regions, prices they publish and the cloud VM shapes they sell."""

from django.db import models
from django.db.models import Q
from django.utils.translation import gettext_lazy as _

from catalog.choices import (
    Currency,
    PriceBilling,
    PriceComponent,
)

from .base import MONEY, Sourced
from .hardware import Accelerator


class Provider(Sourced):
    """A provider (cloud, hosting, API) and the country it is incorporated in (ISO 3166-1 alpha-2).

    `priced` is False for providers the catalog knows but holds no current price for: a plan
    names them as not priced and invites a quote (docs/CATALOG.md, "unknown stays unknown")."""

    name = models.CharField(_("name"), max_length=60, unique=True)
    country = models.CharField(_("country (ISO 3166-1 alpha-2)"), max_length=2)
    kind = models.CharField(_("kind"), max_length=20, help_text=_("cloud, hosting or model API"))
    priced = models.BooleanField(_("prices in the catalog"), default=True)

    class Meta:
        ordering = ["name"]

    def __str__(self) -> str:
        return f"{self.name} ({self.country})"


class ProviderRegion(Sourced):
    """Where a provider's region keeps data: the jurisdiction (ISO country) a residency rule checks."""

    provider = models.ForeignKey(Provider, on_delete=models.CASCADE, related_name="regions", verbose_name=_("provider"))
    region = models.CharField(_("region"), max_length=60)
    jurisdiction = models.CharField(_("jurisdiction (ISO 3166-1 alpha-2)"), max_length=2)
    location = models.CharField(_("location"), max_length=120, blank=True)

    class Meta:
        ordering = ["provider__name", "region"]
        constraints = [
            models.UniqueConstraint(fields=["provider", "region"], name="catalog_providerregion_unique"),
        ]

    def __str__(self) -> str:
        return f"{self.provider.name} {self.region} ({self.jurisdiction})"


class PublishedPrice(Sourced):
    """One price row exactly as a source published it (the Russian price files).

    Component rows (per GPU, per vCPU, per GB of RAM, GPU-cluster fee, per hour) are kept as
    published; the planner composes a VM's price from them and a CloudVmShape
    (catalog.compose). `includes_vat` NULL = the source does not say; `valid_from` NULL = the
    source is undated. `stale` rows stay stale: shown with their date, never used as current."""

    natural_key = models.CharField(_("natural key"), max_length=400, unique=True)
    dataset = models.CharField(_("file"), max_length=60)
    provider = models.CharField(_("provider or publisher"), max_length=160)
    product = models.CharField(_("product"), max_length=160)
    region = models.CharField(_("region"), max_length=160, blank=True)
    item = models.TextField(_("item or configuration as published"))
    platform = models.CharField(_("platform id"), max_length=60, blank=True)
    component = models.CharField(_("priced component"), max_length=20, choices=PriceComponent.choices)
    gpu_model = models.CharField(_("GPU as published"), max_length=200, blank=True)
    accelerator = models.ForeignKey(
        Accelerator, on_delete=models.PROTECT, null=True, blank=True, related_name="published_prices",
        verbose_name=_("accelerator"), help_text=_("empty when the source does not name the GPU variant"),
    )
    gpu_count = models.DecimalField(_("GPUs"), max_digits=8, decimal_places=3, null=True, blank=True)
    gpu_memory_gib = models.DecimalField(_("memory per GPU, GiB"), max_digits=8, decimal_places=2, null=True, blank=True)
    vcpus = models.PositiveIntegerField(_("vCPUs"), null=True, blank=True)
    ram_gib = models.DecimalField(_("RAM, GiB"), max_digits=10, decimal_places=2, null=True, blank=True)
    quantity = models.PositiveIntegerField(_("quantity the price covers"), default=1)
    price = models.DecimalField(_("price as published"), **MONEY)
    currency = models.CharField(_("currency"), max_length=3, choices=Currency.choices)
    price_unit = models.CharField(_("price unit"), max_length=120)
    billing = models.CharField(_("billing"), max_length=24, choices=PriceBilling.choices, blank=True)
    price_kind = models.CharField(_("kind of price"), max_length=40, blank=True)
    includes_vat = models.BooleanField(_("includes VAT"), null=True, blank=True, help_text=_("empty: not stated"))
    valid_from = models.DateField(_("valid from"), null=True, blank=True, help_text=_("empty: undated"))
    valid_to = models.DateField(_("valid to (exclusive)"), null=True, blank=True)
    stale = models.BooleanField(_("stale"), default=False)
    stale_reason = models.TextField(_("why stale"), blank=True)

    class Meta:
        ordering = ["dataset", "provider", "platform", "component", "billing", "pk"]
        constraints = [
            models.CheckConstraint(condition=Q(price__gt=0), name="catalog_publishedprice_price_positive"),
            models.CheckConstraint(condition=Q(currency__in=Currency.values), name="catalog_publishedprice_currency_known"),
            models.CheckConstraint(condition=Q(stale=False) | ~Q(stale_reason=""), name="catalog_publishedprice_stale_has_reason"),
            models.CheckConstraint(
                condition=Q(valid_to__isnull=True) | Q(valid_from__isnull=True) | Q(valid_to__gt=models.F("valid_from")),
                name="catalog_publishedprice_valid_range",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.provider} {self.item}: {self.price} {self.currency}/{self.price_unit}"


class CloudVmShape(Sourced):
    """A VM configuration a provider sells on a platform (GPUs, vCPUs, RAM), priced from components."""

    provider = models.CharField(_("provider"), max_length=60)
    platform = models.CharField(_("platform id"), max_length=60)
    platform_name = models.CharField(_("platform name"), max_length=160, blank=True)
    gpu_count = models.PositiveSmallIntegerField(_("GPUs"))
    vram_gib_total = models.DecimalField(_("VRAM total, GiB"), max_digits=10, decimal_places=2)
    vcpus = models.PositiveIntegerField(_("vCPUs"))
    ram_gib = models.DecimalField(_("RAM, GiB"), max_digits=10, decimal_places=2)
    accelerator = models.ForeignKey(
        Accelerator, on_delete=models.PROTECT, null=True, blank=True, related_name="+",
        verbose_name=_("accelerator"), help_text=_("empty when the provider does not name the GPU"),
    )
    accelerator_inference = models.TextField(
        _("accelerator inferred"), blank=True,
        help_text=_("when the provider does not name the GPU: the written rule by which the accelerator was "
                    "inferred from what the provider states (shown in every plan that uses the shape)"),
    )
    cluster_capable = models.BooleanField(_("can join a GPU cluster (InfiniBand)"), default=False)

    class Meta:
        ordering = ["provider", "platform", "gpu_count", "vcpus"]
        constraints = [
            models.UniqueConstraint(fields=["provider", "platform", "gpu_count", "vcpus"], name="catalog_cloudvmshape_unique"),
            models.CheckConstraint(condition=Q(gpu_count__gt=0), name="catalog_cloudvmshape_gpus_positive"),
        ]

    def __str__(self) -> str:
        return f"{self.provider} {self.platform} {self.gpu_count} GPU / {self.vcpus} vCPU / {self.ram_gib} GiB"
