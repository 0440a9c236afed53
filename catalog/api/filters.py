"""django-filter sets for the catalog API. `as_of=YYYY-MM-DD` keeps only rows valid on that date."""

import re
from decimal import Decimal

import django_filters as df
from django import forms
from django.db import models as dj
from django.utils.translation import gettext_lazy as _
from drf_spectacular.utils import extend_schema_field

from catalog import models as m
from catalog.selectors import valid_at

INTEGER_TEXT = re.compile(r"[+-]?[0-9]+")


class _IntegerField(forms.IntegerField):
    """Whole numbers only, written as digits with an optional sign, as the schema's `integer`
    says: django-filter's NumberFilter would take 0.5, and Django's IntegerField itself strips a
    trailing `.0`, so `gpu_count=0.0` or `8.` would pass as integers."""

    def to_python(self, value):
        if isinstance(value, str):
            value = value.strip()
            if value and not INTEGER_TEXT.fullmatch(value):
                raise forms.ValidationError(self.error_messages["invalid"], code="invalid")
        return super().to_python(value)


class IntegerFilter(df.NumberFilter):
    field_class = _IntegerField


def decimal_bound(model, field_name: str) -> Decimal:
    """The largest value a DecimalField holds (max_digits, decimal_places): 999999.99 for (8, 2)."""
    field = model._meta.get_field(field_name)
    return Decimal(10) ** (field.max_digits - field.decimal_places) - Decimal(10) ** -field.decimal_places


def bounded_decimal_filter(model, field_name: str, lookup_expr: str) -> df.NumberFilter:
    """A number filter on a DecimalField bounded to what the field holds, in the code and in the
    schema (django-filter's own bound is 1e50, far beyond any stored value)."""
    bound = decimal_bound(model, field_name)
    schema = {"type": "number", "minimum": float(-bound), "maximum": float(bound)}
    cls = extend_schema_field(schema)(type("BoundedDecimalFilter", (df.NumberFilter,), {}))
    return cls(field_name=field_name, lookup_expr=lookup_expr, min_value=-bound, max_value=bound)


class _PresentDateField(forms.DateField):
    """`as_of=` (present but empty) is an error, as the schema's `format: date` says; an absent
    parameter still means "no filter"."""

    def to_python(self, value):
        if value == "":
            raise forms.ValidationError(_("Enter a date (YYYY-MM-DD)."), code="invalid")
        return super().to_python(value)


class PresentDateFilter(df.DateFilter):
    field_class = _PresentDateField


BOOLEAN_VALUES = ("true", "false")


class StrictFilterSet(df.FilterSet):
    """What the schema says is what the code takes: integer fields whole numbers only; an
    enum, boolean, number or date parameter that is present may not be empty, and booleans
    are `true` or `false` (django-filter would quietly ignore `currency=` or
    `flagged=null` and return everything)."""

    def is_valid(self):
        valid = super().is_valid()
        for name, flt in self.filters.items():
            if name not in self.data:
                continue
            raw = self.data.get(name)
            if isinstance(flt, df.BooleanFilter):
                if raw not in BOOLEAN_VALUES:
                    self.form.add_error(name, _("Must be true or false."))
            elif raw == "" and isinstance(flt, df.ChoiceFilter | df.NumberFilter | df.DateFilter):
                self.form.add_error(name, _("May not be empty."))
        return valid and not self.form.errors

    @classmethod
    def filter_for_lookup(cls, field, lookup_type):
        filter_class, params = super().filter_for_lookup(field, lookup_type)
        if filter_class is df.NumberFilter and isinstance(field, dj.IntegerField):
            filter_class = IntegerFilter
        elif filter_class is df.DateFilter:
            filter_class = PresentDateFilter
        return filter_class, params


class ValidAtFilterSet(StrictFilterSet):
    as_of = PresentDateFilter(method="filter_as_of", label="valid on this date (YYYY-MM-DD)")

    def filter_as_of(self, queryset, name, value):
        return queryset.filter(valid_at(value))


class AcceleratorFilter(StrictFilterSet):
    min_memory_gib = bounded_decimal_filter(m.Accelerator, "memory_gib", "gte")
    min_bf16_tflops = bounded_decimal_filter(m.Accelerator, "bf16_tflops_dense", "gte")

    class Meta:
        model = m.Accelerator
        fields = ["vendor", "form_factor_kind", "verified", "release_year"]


class ServerPlatformFilter(StrictFilterSet):
    min_gpu_slots = IntegerFilter(field_name="gpu_slots", lookup_expr="gte")

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


class ExchangeRateFilter(StrictFilterSet):
    date_from = PresentDateFilter(field_name="rate_date", lookup_expr="gte")
    date_to = PresentDateFilter(field_name="rate_date", lookup_expr="lte")

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


class ProviderFilter(StrictFilterSet):
    class Meta:
        model = m.Provider
        fields = ["country", "kind", "priced"]


class PublishedPriceFilter(StrictFilterSet):
    class Meta:
        model = m.PublishedPrice
        fields = ["dataset", "provider", "platform", "component", "billing", "stale", "currency"]
