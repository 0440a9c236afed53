"""Hardware: accelerators, CPUs, server platforms, storage tiers and network options."""

from django.db import models
from django.db.models import Q
from django.utils.translation import gettext_lazy as _

from catalog.choices import (
    FormFactorKind,
    NetworkTechnology,
    StorageMedia,
    Verification,
)

from .base import MONEY, SPEC, Priced, Sourced


class Accelerator(Sourced):
    slug = models.SlugField(_("catalog id"), max_length=80, unique=True)
    vendor = models.CharField(_("vendor"), max_length=40)
    model = models.CharField(_("model"), max_length=120)
    architecture = models.CharField(_("architecture"), max_length=80)
    form_factor = models.CharField(_("form factor"), max_length=120)
    form_factor_kind = models.CharField(_("form factor kind"), max_length=12, choices=FormFactorKind.choices)
    memory_gib = models.DecimalField(_("memory, GiB (as marketed)"), max_digits=8, decimal_places=2)
    memory_type = models.CharField(_("memory type"), max_length=40, blank=True)
    memory_bandwidth_gb_s = models.DecimalField(_("memory bandwidth, GB/s"), max_digits=10, decimal_places=2)
    fp32_tflops = models.DecimalField(_("FP32 TFLOPS"), **SPEC)
    tf32_tflops_dense = models.DecimalField(_("TF32 TFLOPS dense"), **SPEC)
    bf16_tflops_dense = models.DecimalField(_("BF16 TFLOPS dense"), **SPEC)
    fp16_tflops_dense = models.DecimalField(_("FP16 TFLOPS dense"), **SPEC)
    fp8_tflops_dense = models.DecimalField(_("FP8 TFLOPS dense"), **SPEC)
    int8_tops_dense = models.DecimalField(_("INT8 TOPS dense"), **SPEC)
    fp4_tflops_dense = models.DecimalField(_("FP4 TFLOPS dense"), **SPEC)
    tdp_w = models.PositiveIntegerField(_("TDP, W"), null=True, blank=True)
    interconnect = models.CharField(_("GPU interconnect"), max_length=120, blank=True)
    interconnect_gb_s = models.DecimalField(_("interconnect, GB/s bidirectional"), **SPEC)
    pcie_gen = models.PositiveSmallIntegerField(_("PCIe generation"), null=True, blank=True)
    release_year = models.PositiveSmallIntegerField(_("release year"), null=True, blank=True)
    min_cuda = models.CharField(_("minimum CUDA/ROCm"), max_length=20, blank=True)
    min_driver = models.CharField(_("minimum driver"), max_length=40, blank=True)
    verified = models.CharField(_("verified"), max_length=12, choices=Verification.choices)

    class Meta:
        ordering = ["vendor", "model"]
        constraints = [
            models.CheckConstraint(condition=Q(memory_gib__gt=0), name="catalog_accelerator_memory_positive"),
            models.CheckConstraint(
                condition=Q(memory_bandwidth_gb_s__gt=0), name="catalog_accelerator_bandwidth_positive"
            ),
            models.CheckConstraint(
                condition=Q(form_factor_kind__in=FormFactorKind.values), name="catalog_accelerator_form_factor_known"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.vendor} {self.model}"


class Cpu(Sourced):
    slug = models.SlugField(_("catalog id"), max_length=80, unique=True)
    vendor = models.CharField(_("vendor"), max_length=40)
    model = models.CharField(_("model"), max_length=120)
    cores = models.PositiveSmallIntegerField(_("cores"))
    threads = models.PositiveSmallIntegerField(_("threads"), null=True, blank=True)
    base_clock_ghz = models.DecimalField(_("base clock, GHz"), max_digits=5, decimal_places=2, null=True, blank=True)
    max_boost_clock_ghz = models.DecimalField(_("max boost, GHz"), max_digits=5, decimal_places=2, null=True, blank=True)
    tdp_w = models.PositiveIntegerField(_("TDP, W"), null=True, blank=True)
    memory_channels = models.PositiveSmallIntegerField(_("memory channels"), null=True, blank=True)
    pcie_gen = models.PositiveSmallIntegerField(_("PCIe generation"), null=True, blank=True)
    pcie_lanes = models.PositiveSmallIntegerField(_("PCIe lanes"), null=True, blank=True)
    release_year = models.PositiveSmallIntegerField(_("release year"), null=True, blank=True)

    class Meta:
        ordering = ["vendor", "model"]
        verbose_name = "CPU"
        constraints = [models.CheckConstraint(condition=Q(cores__gt=0), name="catalog_cpu_cores_positive")]

    def __str__(self) -> str:
        return f"{self.vendor} {self.model}"


class ServerPlatform(Sourced):
    slug = models.SlugField(_("catalog id"), max_length=80, unique=True)
    vendor = models.CharField(_("vendor"), max_length=60)
    model = models.CharField(_("model"), max_length=120)
    gpu_slots = models.PositiveSmallIntegerField(_("GPU slots"))
    gpu_form_factor_kind = models.CharField(_("GPU form factor"), max_length=12, choices=FormFactorKind.choices)
    included_accelerator = models.ForeignKey(
        Accelerator, on_delete=models.PROTECT, null=True, blank=True, related_name="+",
        verbose_name=_("GPUs included (fixed systems such as DGX)"),
    )
    cpu_sockets = models.PositiveSmallIntegerField(_("CPU sockets"))
    included_cpu = models.ForeignKey(
        Cpu, on_delete=models.PROTECT, null=True, blank=True, related_name="+", verbose_name=_("CPU included")
    )
    max_cpu_cores_total = models.PositiveSmallIntegerField(_("max CPU cores (all sockets)"), null=True, blank=True)
    max_ram_gib = models.PositiveIntegerField(_("max RAM, GiB"), null=True, blank=True)
    pcie_gen = models.PositiveSmallIntegerField(_("PCIe generation"), null=True, blank=True)
    pcie_x16_slots = models.PositiveSmallIntegerField(_("PCIe x16 slots"), null=True, blank=True)
    pcie_lanes = models.PositiveSmallIntegerField(_("PCIe lanes (host total)"), null=True, blank=True)
    nic_options = models.TextField(_("NIC options"), blank=True)
    max_power_w = models.PositiveIntegerField(_("max system power, W"), null=True, blank=True)
    psu_count = models.PositiveSmallIntegerField(_("PSUs"), null=True, blank=True)
    psu_unit_w = models.PositiveIntegerField(_("PSU rating each, W"), null=True, blank=True)
    rack_units = models.PositiveSmallIntegerField(_("rack units (0 = tower)"), null=True, blank=True)
    has_nvlink = models.BooleanField(_("NVLink/Infinity Fabric between GPUs"), null=True, blank=True)
    has_nvswitch = models.BooleanField(_("NVSwitch"), null=True, blank=True)

    class Meta:
        ordering = ["vendor", "model"]
        constraints = [
            models.CheckConstraint(condition=Q(gpu_slots__gt=0), name="catalog_serverplatform_gpu_slots_positive"),
            models.CheckConstraint(condition=Q(cpu_sockets__gt=0), name="catalog_serverplatform_sockets_positive"),
        ]

    def __str__(self) -> str:
        return f"{self.vendor} {self.model}"


class StorageTier(Priced):
    """A storage medium with either a purchase price per TB (on-prem) or a service price per GB-month."""

    slug = models.SlugField(_("catalog id"), max_length=80)
    name = models.CharField(_("name"), max_length=160)
    media = models.CharField(_("media"), max_length=10, choices=StorageMedia.choices)
    purchase_price_per_tb = models.DecimalField(_("purchase price per TB"), null=True, blank=True, **MONEY)
    service_price_per_gb_month = models.DecimalField(_("service price per GB-month"), null=True, blank=True, **MONEY)
    read_throughput_mb_s = models.PositiveIntegerField(_("sequential read, MB/s"), null=True, blank=True)
    write_throughput_mb_s = models.PositiveIntegerField(_("sequential write, MB/s"), null=True, blank=True)
    capacity_tb = models.DecimalField(_("unit capacity, TB"), max_digits=10, decimal_places=3, null=True, blank=True)

    class Meta(Priced.Meta):
        ordering = ["media", "slug", "valid_from"]
        constraints = [
            *Priced.Meta.constraints,
            models.UniqueConstraint(fields=["slug", "valid_from"], name="catalog_storagetier_unique_slug_valid_from"),
            models.CheckConstraint(
                condition=Q(purchase_price_per_tb__isnull=False) | Q(service_price_per_gb_month__isnull=False),
                name="catalog_storagetier_has_a_price",
            ),
            models.CheckConstraint(
                condition=(Q(purchase_price_per_tb__isnull=True) | Q(purchase_price_per_tb__gt=0))
                & (Q(service_price_per_gb_month__isnull=True) | Q(service_price_per_gb_month__gt=0)),
                name="catalog_storagetier_prices_positive",
            ),
        ]

    def __str__(self) -> str:
        return self.name


class NetworkOption(Priced):
    slug = models.SlugField(_("catalog id"), max_length=80)
    name = models.CharField(_("name"), max_length=160)
    technology = models.CharField(_("technology"), max_length=12, choices=NetworkTechnology.choices)
    speed_gbit_s = models.PositiveIntegerField(_("port speed, Gbit/s"))
    nic_price = models.DecimalField(_("NIC price (per adapter)"), null=True, blank=True, **MONEY)
    switch_port_price = models.DecimalField(_("switch price per port"), null=True, blank=True, **MONEY)
    cable_price = models.DecimalField(_("cable/transceiver price"), null=True, blank=True, **MONEY)

    class Meta(Priced.Meta):
        ordering = ["technology", "speed_gbit_s", "valid_from"]
        constraints = [
            *Priced.Meta.constraints,
            models.UniqueConstraint(fields=["slug", "valid_from"], name="catalog_networkoption_unique_slug_valid_from"),
            models.CheckConstraint(condition=Q(speed_gbit_s__gt=0), name="catalog_networkoption_speed_positive"),
        ]

    def __str__(self) -> str:
        return self.name
