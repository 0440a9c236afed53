"""django-filter sets for the catalog API. `as_of=YYYY-MM-DD` keeps only rows valid on that date."""

import django_filters as df

from catalog import models as m
from catalog.selectors import valid_at


class ValidAtFilterSet(df.FilterSet):
    as_of = df.DateFilter(method="filter_as_of", label="valid on this date (YYYY-MM-DD)")

    def filter_as_of(self, queryset, name, value):
        return queryset.filter(valid_at(value))


class AcceleratorFilter(df.FilterSet):
    min_memory_gib = df.NumberFilter(field_name="memory_gib", lookup_expr="gte")
    min_bf16_tflops = df.NumberFilter(field_name="bf16_tflops_dense", lookup_expr="gte")

    class Meta:
        model = m.Accelerator
        fields = ["vendor", "form_factor_kind", "verified", "release_year"]


class ServerPlatformFilter(df.FilterSet):
    min_gpu_slots = df.NumberFilter(field_name="gpu_slots", lookup_expr="gte")

    class Meta:
        model = m.ServerPlatform
        fields = ["vendor", "gpu_form_factor_kind", "has_nvlink"]


class CloudOfferFilter(ValidAtFilterSet):
    accelerator = df.CharFilter(field_name="accelerator__slug")

    class Meta:
        model = m.CloudOffer
        fields = ["provider", "region", "instance_type", "gpu_count", "flagged", "price_basis", "currency"]


class StorageTierFilter(ValidAtFilterSet):
    class Meta:
        model = m.StorageTier
        fields = ["media", "currency"]


class NetworkOptionFilter(ValidAtFilterSet):
    class Meta:
        model = m.NetworkOption
        fields = ["technology", "speed_gbit_s", "currency"]


class HardwarePriceFilter(ValidAtFilterSet):
    accelerator = df.CharFilter(field_name="accelerator__slug")
    server_platform = df.CharFilter(field_name="server_platform__slug")

    class Meta:
        model = m.HardwarePrice
        fields = ["currency", "price_kind"]


class ExchangeRateFilter(df.FilterSet):
    date_from = df.DateFilter(field_name="rate_date", lookup_expr="gte")
    date_to = df.DateFilter(field_name="rate_date", lookup_expr="lte")

    class Meta:
        model = m.ExchangeRate
        fields = ["base", "quote", "rate_date"]


class VatRateFilter(ValidAtFilterSet):
    class Meta:
        model = m.VatRate
        fields = ["country"]


class ElectricityTariffFilter(ValidAtFilterSet):
    class Meta:
        model = m.ElectricityTariff
        fields = ["country", "region", "currency"]


class ProviderFilter(df.FilterSet):
    class Meta:
        model = m.Provider
        fields = ["country", "kind", "priced"]


class PublishedPriceFilter(df.FilterSet):
    class Meta:
        model = m.PublishedPrice
        fields = ["dataset", "provider", "platform", "component", "billing", "stale", "currency"]
