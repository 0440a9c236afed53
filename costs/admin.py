from django.contrib import admin

from .models import RateCard


@admin.register(RateCard)
class RateCardAdmin(admin.ModelAdmin):
    list_display = ("key", "value", "currency", "unit", "valid_from", "valid_to", "is_assumption")
    list_filter = ("is_assumption", "currency")
    search_fields = ("key", "source", "notes")
    date_hierarchy = "valid_from"
