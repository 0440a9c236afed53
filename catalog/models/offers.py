"""Rentable capacity: cloud instance offers and dedicated (monthly) server offers."""

from django.db import models
from django.db.models import Q
from django.utils.translation import gettext_lazy as _

from catalog.choices import (
    CloudPriceBasis,
)

from .base import MONEY, Priced
from .hardware import Accelerator


class CloudOffer(Priced):
    provider = models.CharField(_("provider"), max_length=40)
    region = models.CharField(_("region"), max_length=60)
    instance_type = models.CharField(_("instance type"), max_length=80)
    source_gpu_model = models.CharField(_("GPU name at the source"), max_length=40)
    accelerator = models.ForeignKey(
        Accelerator, on_delete=models.PROTECT, null=True, blank=True, related_name="cloud_offers",
        verbose_name=_("accelerator"), help_text=_("empty when the GPU is not in the catalog or the variant is ambiguous"),
    )
    gpu_count = models.PositiveSmallIntegerField(_("GPUs"))
    gpu_memory_gib = models.DecimalField(_("memory per GPU, GiB"), max_digits=8, decimal_places=2, null=True, blank=True)
    vcpus = models.PositiveIntegerField(_("vCPUs"), null=True, blank=True)
    ram_gib = models.DecimalField(_("RAM, GiB"), max_digits=10, decimal_places=2, null=True, blank=True)
    local_disk_gb = models.PositiveIntegerField(_("local disk, GB"), null=True, blank=True)
    price_on_demand_per_hour = models.DecimalField(_("on-demand per hour"), null=True, blank=True, **MONEY)
    price_spot_per_hour = models.DecimalField(_("spot per hour"), null=True, blank=True, **MONEY)
    price_commit_1y_per_hour = models.DecimalField(_("1-year commitment per hour"), null=True, blank=True, **MONEY)
    price_commit_3y_per_hour = models.DecimalField(_("3-year commitment per hour"), null=True, blank=True, **MONEY)
    price_basis = models.CharField(_("price basis"), max_length=20, choices=CloudPriceBasis.choices)
    billing_granularity_seconds = models.PositiveIntegerField(_("billing granularity, s"), null=True, blank=True)
    flagged = models.BooleanField(_("flagged as anomalous at the source"), default=False)
    flag_reason = models.TextField(_("why flagged"), blank=True)

    class Meta(Priced.Meta):
        ordering = ["provider", "region", "instance_type", "valid_from"]
        constraints = [
            *Priced.Meta.constraints,
            models.UniqueConstraint(
                fields=["provider", "region", "instance_type", "source_gpu_model", "gpu_count", "valid_from"],
                name="catalog_cloudoffer_unique_natural_key",
            ),
            models.CheckConstraint(condition=Q(gpu_count__gt=0), name="catalog_cloudoffer_gpu_count_positive"),
            models.CheckConstraint(
                condition=Q(price_on_demand_per_hour__isnull=False) | Q(price_spot_per_hour__isnull=False)
                | Q(price_commit_1y_per_hour__isnull=False) | Q(price_commit_3y_per_hour__isnull=False),
                name="catalog_cloudoffer_has_a_price",
            ),
            models.CheckConstraint(condition=Q(flagged=False) | ~Q(flag_reason=""), name="catalog_cloudoffer_flag_has_reason"),
        ]

    def __str__(self) -> str:
        return f"{self.provider} {self.instance_type} ({self.region})"


class DedicatedServerOffer(Priced):
    """A GPU server rented by the month (the usual form of Russian hosting offers)."""

    provider = models.CharField(_("provider"), max_length=60)
    plan_name = models.CharField(_("plan"), max_length=120)
    location = models.CharField(_("location"), max_length=80)
    accelerator = models.ForeignKey(
        Accelerator, on_delete=models.PROTECT, related_name="dedicated_offers", verbose_name=_("accelerator")
    )
    gpu_count = models.PositiveSmallIntegerField(_("GPUs"))
    cpu_description = models.CharField(_("CPU"), max_length=160, blank=True)
    ram_gib = models.PositiveIntegerField(_("RAM, GiB"), null=True, blank=True)
    disk_description = models.CharField(_("disks"), max_length=160, blank=True)
    price_per_month = models.DecimalField(_("price per month"), **MONEY)
    setup_fee = models.DecimalField(_("setup fee"), null=True, blank=True, **MONEY)

    class Meta(Priced.Meta):
        ordering = ["provider", "plan_name", "valid_from"]
        constraints = [
            *Priced.Meta.constraints,
            models.UniqueConstraint(
                fields=["provider", "plan_name", "location", "valid_from"], name="catalog_dedicatedserveroffer_unique"
            ),
            models.CheckConstraint(condition=Q(gpu_count__gt=0), name="catalog_dedicatedserveroffer_gpus_positive"),
            models.CheckConstraint(condition=Q(price_per_month__gt=0), name="catalog_dedicatedserveroffer_price_positive"),
        ]

    def __str__(self) -> str:
        return f"{self.provider} {self.plan_name}"
