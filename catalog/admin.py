"""Admin for every catalog model: search, filters and the dated price history of each item."""

from django.contrib import admin, messages
from django.db import transaction
from django.utils.translation import gettext_lazy as _

from catalog import models as m

SOURCE_FIELDS = ("source_title", "source_url", "source_date", "retrieved_on", "notes")
PRICE_FILTERS = ("currency", "includes_vat", "valid_from")


class HardwarePriceInline(admin.TabularInline):
    """Price history of one item, oldest first."""

    model = m.HardwarePrice
    extra = 0
    ordering = ("valid_from",)
    fields = ("price", "currency", "includes_vat", "price_kind", "valid_from", "valid_to", "source_title", "source_url", "retrieved_on")


class AcceleratorPriceInline(HardwarePriceInline):
    fk_name = "accelerator"


class PlatformPriceInline(HardwarePriceInline):
    fk_name = "server_platform"


class CpuPriceInline(HardwarePriceInline):
    fk_name = "cpu"


class CloudOfferInline(admin.TabularInline):
    model = m.CloudOffer
    extra = 0
    ordering = ("valid_from", "provider", "instance_type")
    fields = ("provider", "region", "instance_type", "gpu_count", "price_on_demand_per_hour", "price_spot_per_hour",
              "currency", "valid_from", "valid_to", "flagged")
    readonly_fields = fields
    show_change_link = True
    can_delete = False

    def has_add_permission(self, request, obj=None):
        return False


@admin.register(m.Accelerator)
class AcceleratorAdmin(admin.ModelAdmin):
    list_display = ("slug", "vendor", "model", "form_factor_kind", "memory_gib", "memory_bandwidth_gb_s", "bf16_tflops_dense", "tdp_w", "verified")
    list_filter = ("vendor", "form_factor_kind", "verified", "release_year")
    search_fields = ("slug", "vendor", "model", "architecture", "notes")
    inlines = [AcceleratorPriceInline, CloudOfferInline]


@admin.register(m.Cpu)
class CpuAdmin(admin.ModelAdmin):
    list_display = ("slug", "vendor", "model", "cores", "threads", "tdp_w", "pcie_lanes")
    list_filter = ("vendor",)
    search_fields = ("slug", "vendor", "model")
    inlines = [CpuPriceInline]


@admin.register(m.ServerPlatform)
class ServerPlatformAdmin(admin.ModelAdmin):
    list_display = ("slug", "vendor", "model", "gpu_slots", "gpu_form_factor_kind", "cpu_sockets", "pcie_gen", "has_nvlink")
    list_filter = ("vendor", "gpu_form_factor_kind", "has_nvlink")
    search_fields = ("slug", "vendor", "model", "notes")
    autocomplete_fields = ("included_accelerator", "included_cpu")
    inlines = [PlatformPriceInline]


@admin.register(m.StorageTier)
class StorageTierAdmin(admin.ModelAdmin):
    list_display = ("slug", "name", "media", "purchase_price_per_tb", "service_price_per_gb_month", "currency", "valid_from", "valid_to")
    list_filter = ("media", *PRICE_FILTERS)
    search_fields = ("slug", "name")


@admin.register(m.NetworkOption)
class NetworkOptionAdmin(admin.ModelAdmin):
    list_display = ("slug", "name", "technology", "speed_gbit_s", "nic_price", "switch_port_price", "cable_price", "currency", "valid_from")
    list_filter = ("technology", "speed_gbit_s", *PRICE_FILTERS)
    search_fields = ("slug", "name")


@admin.register(m.CloudOffer)
class CloudOfferAdmin(admin.ModelAdmin):
    list_display = ("provider", "region", "instance_type", "accelerator", "gpu_count", "price_on_demand_per_hour",
                    "price_spot_per_hour", "currency", "valid_from", "flagged")
    list_filter = ("provider", "flagged", "price_basis", "region", *PRICE_FILTERS)
    search_fields = ("provider", "region", "instance_type", "source_gpu_model", "accelerator__slug", "flag_reason")
    autocomplete_fields = ("accelerator",)
    list_select_related = ("accelerator",)


@admin.register(m.DedicatedServerOffer)
class DedicatedServerOfferAdmin(admin.ModelAdmin):
    list_display = ("provider", "plan_name", "location", "accelerator", "gpu_count", "price_per_month", "currency", "includes_vat", "valid_from")
    list_filter = ("provider", "location", *PRICE_FILTERS)
    search_fields = ("provider", "plan_name", "accelerator__slug")
    autocomplete_fields = ("accelerator",)
    list_select_related = ("accelerator",)


@admin.register(m.HardwarePrice)
class HardwarePriceAdmin(admin.ModelAdmin):
    list_display = ("__str__", "price", "currency", "includes_vat", "price_kind", "valid_from", "valid_to")
    list_filter = ("price_kind", *PRICE_FILTERS)
    search_fields = ("accelerator__slug", "server_platform__slug", "cpu__slug", "source_title")
    autocomplete_fields = ("accelerator", "server_platform", "cpu")
    list_select_related = ("accelerator", "server_platform", "cpu")


@admin.register(m.ElectricityTariff)
class ElectricityTariffAdmin(admin.ModelAdmin):
    list_display = ("country", "region", "consumer_class", "price_per_kwh", "currency", "includes_vat", "valid_from", "valid_to")
    list_filter = ("country", *PRICE_FILTERS)
    search_fields = ("country", "region", "consumer_class")


@admin.register(m.ExchangeRate)
class ExchangeRateAdmin(admin.ModelAdmin):
    list_display = ("rate_date", "base", "quote", "rate", "source_title")
    list_filter = ("base", "quote")
    date_hierarchy = "rate_date"
    search_fields = ("source_title",)


@admin.register(m.VatRate)
class VatRateAdmin(admin.ModelAdmin):
    list_display = ("country", "rate_percent", "valid_from", "valid_to", "source_title")
    list_filter = ("country",)
    search_fields = ("country", "source_title")


@admin.register(m.CatalogImportRun)
class CatalogImportRunAdmin(admin.ModelAdmin):
    list_display = ("pk", "status", "source_path", "created_at", "started_at", "finished_at")
    list_filter = ("status",)
    search_fields = ("source_path",)
    readonly_fields = ("status", "counts", "errors", "created_at", "started_at", "finished_at")
    actions = ["queue_import"]

    @admin.action(description=_("Run the selected pending imports in the background"))
    def queue_import(self, request, queryset):
        from catalog.tasks import run_catalog_import

        pending = list(queryset.filter(status="pending").values_list("pk", flat=True))
        for run_id in pending:
            transaction.on_commit(lambda run_id=run_id: run_catalog_import.delay(run_id))
        self.message_user(request, _("%(count)d import(s) queued.") % {"count": len(pending)}, messages.SUCCESS)


class ProviderRegionInline(admin.TabularInline):
    model = m.ProviderRegion
    extra = 0
    fields = ("region", "jurisdiction", "location", "source_title", "source_url", "retrieved_on")


@admin.register(m.Provider)
class ProviderAdmin(admin.ModelAdmin):
    list_display = ("name", "country", "kind", "priced")
    list_filter = ("country", "kind", "priced")
    search_fields = ("name",)
    inlines = [ProviderRegionInline]


@admin.register(m.PublishedPrice)
class PublishedPriceAdmin(admin.ModelAdmin):
    list_display = ("provider", "item", "component", "billing", "price", "currency", "includes_vat", "valid_from",
                    "valid_to", "stale")
    list_filter = ("dataset", "provider", "component", "billing", "stale", "includes_vat")
    search_fields = ("provider", "product", "item", "notes")


@admin.register(m.CloudVmShape)
class CloudVmShapeAdmin(admin.ModelAdmin):
    list_display = ("provider", "platform", "gpu_count", "vcpus", "ram_gib", "accelerator", "cluster_capable")
    list_filter = ("provider", "platform")


@admin.register(m.SupplierQuote)
class SupplierQuoteAdmin(admin.ModelAdmin):
    """Quotes of every team (staff only); a plan uses only its own team's."""

    list_display = ("team", "supplier", "item_kind", "accelerator", "gpus_per_server", "unit_price", "currency",
                    "includes_vat", "quote_date", "valid_until", "document_name")
    list_filter = ("team", "item_kind", "currency", "includes_vat")
    search_fields = ("supplier", "description", "document_name")
    date_hierarchy = "quote_date"
    readonly_fields = ("created_by", "created_at")

    def save_model(self, request, obj, form, change):
        if not change:
            obj.created_by = request.user
        super().save_model(request, obj, form, change)


@admin.register(m.FeedImportRun)
class FeedImportRunAdmin(admin.ModelAdmin):
    list_display = ("kind", "status", "source", "started_at", "finished_at", "error")
    list_filter = ("kind", "status")
    readonly_fields = ("kind", "source", "status", "counts", "error", "started_at", "finished_at")

    def has_add_permission(self, request):
        return False
