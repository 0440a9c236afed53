"""Read-only catalog API: paginated, filterable (django-filter), orderable (?ordering=)."""

from rest_framework import viewsets

from catalog import models as m
from catalog.api import filters as f
from catalog.api import serializers as s


class AcceleratorViewSet(viewsets.ReadOnlyModelViewSet):
    queryset = m.Accelerator.objects.order_by("vendor", "model")
    serializer_class = s.AcceleratorSerializer
    filterset_class = f.AcceleratorFilter
    lookup_field = "slug"
    ordering_fields = ["memory_gib", "memory_bandwidth_gb_s", "bf16_tflops_dense", "fp8_tflops_dense", "tdp_w", "release_year", "vendor"]


class ServerPlatformViewSet(viewsets.ReadOnlyModelViewSet):
    queryset = m.ServerPlatform.objects.select_related("included_accelerator", "included_cpu").order_by("vendor", "model")
    serializer_class = s.ServerPlatformSerializer
    filterset_class = f.ServerPlatformFilter
    lookup_field = "slug"
    ordering_fields = ["gpu_slots", "vendor", "model"]


class CloudOfferViewSet(viewsets.ReadOnlyModelViewSet):
    queryset = m.CloudOffer.objects.select_related("accelerator").order_by("provider", "region", "instance_type", "id")
    serializer_class = s.CloudOfferSerializer
    filterset_class = f.CloudOfferFilter
    ordering_fields = ["price_on_demand_per_hour", "price_spot_per_hour", "gpu_count", "provider", "valid_from"]


class StorageTierViewSet(viewsets.ReadOnlyModelViewSet):
    queryset = m.StorageTier.objects.order_by("media", "slug", "valid_from")
    serializer_class = s.StorageTierSerializer
    filterset_class = f.StorageTierFilter
    ordering_fields = ["service_price_per_gb_month", "purchase_price_per_tb", "valid_from"]


class NetworkOptionViewSet(viewsets.ReadOnlyModelViewSet):
    queryset = m.NetworkOption.objects.order_by("technology", "speed_gbit_s", "valid_from")
    serializer_class = s.NetworkOptionSerializer
    filterset_class = f.NetworkOptionFilter
    ordering_fields = ["speed_gbit_s", "nic_price", "valid_from"]


class HardwarePriceViewSet(viewsets.ReadOnlyModelViewSet):
    queryset = m.HardwarePrice.objects.select_related("accelerator", "server_platform", "cpu").order_by("valid_from", "id")
    serializer_class = s.HardwarePriceSerializer
    filterset_class = f.HardwarePriceFilter
    ordering_fields = ["price", "valid_from"]


class ExchangeRateViewSet(viewsets.ReadOnlyModelViewSet):
    queryset = m.ExchangeRate.objects.order_by("-rate_date", "base", "quote")
    serializer_class = s.ExchangeRateSerializer
    filterset_class = f.ExchangeRateFilter
    ordering_fields = ["rate_date", "rate"]


class VatRateViewSet(viewsets.ReadOnlyModelViewSet):
    queryset = m.VatRate.objects.order_by("country", "valid_from")
    serializer_class = s.VatRateSerializer
    filterset_class = f.VatRateFilter
    ordering_fields = ["valid_from", "rate_percent"]


class ElectricityTariffViewSet(viewsets.ReadOnlyModelViewSet):
    queryset = m.ElectricityTariff.objects.order_by("country", "region", "valid_from")
    serializer_class = s.ElectricityTariffSerializer
    filterset_class = f.ElectricityTariffFilter
    ordering_fields = ["price_per_kwh", "valid_from"]


class ProviderViewSet(viewsets.ReadOnlyModelViewSet):
    """Providers with their country and their regions' jurisdictions (priced = prices in the catalog)."""

    queryset = m.Provider.objects.prefetch_related("regions").order_by("name")
    serializer_class = s.ProviderSerializer
    filterset_class = f.ProviderFilter
    ordering_fields = ["name", "country"]


class PublishedPriceViewSet(viewsets.ReadOnlyModelViewSet):
    """Price rows exactly as published (the Russian files): components, VAT basis, date, stale flag."""

    queryset = m.PublishedPrice.objects.select_related("accelerator").order_by("dataset", "provider", "id")
    serializer_class = s.PublishedPriceSerializer
    filterset_class = f.PublishedPriceFilter
    ordering_fields = ["price", "valid_from", "provider"]
