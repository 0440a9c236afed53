"""The hardware and price catalog.

Conventions (docs/CATALOG.md): units are in field names; money is Decimal with an ISO currency;
every price row carries its source, the date it was read (`retrieved_on`), the source's own
date when known (`source_date`), an includes-VAT flag and a validity range
[valid_from, valid_to) where valid_to is exclusive and NULL means "still valid".
A figure nobody published is NULL and shown as "unknown".
"""

from django.conf import settings
from django.db import models
from django.db.models import Q
from django.utils.translation import gettext_lazy as _

from catalog.choices import (
    CloudPriceBasis,
    Currency,
    FeedKind,
    FormFactorKind,
    ImportStatus,
    NetworkTechnology,
    PriceBilling,
    PriceComponent,
    QuoteItemKind,
    StorageMedia,
    Verification,
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
