from django.contrib import admin

from .models import ApiTokenPrice, RateCard


@admin.register(RateCard)
class RateCardAdmin(admin.ModelAdmin):
    list_display = ("key", "value", "currency", "unit", "valid_from", "valid_to", "is_assumption")
    list_filter = ("is_assumption", "currency")
    search_fields = ("key", "source", "notes")
    date_hierarchy = "valid_from"


@admin.register(ApiTokenPrice)
class ApiTokenPriceAdmin(admin.ModelAdmin):
    list_display = (
        "provider",
        "model",
        "input_per_1m_tokens",
        "output_per_1m_tokens",
        "currency",
        "valid_from",
        "valid_to",
    )
    list_filter = ("provider", "currency")
    search_fields = ("provider", "model", "source")
