"""Catalog pages: thin views over catalog.selectors. Work without JavaScript; htmx swaps the table only."""

from django.shortcuts import render
from django.utils import timezone

from catalog.forms import AcceleratorFilterForm, CloudOfferFilterForm
from catalog.models import CloudOffer, ServerPlatform
from catalog.selectors import accelerator_catalog_rows, accelerator_vendors


def _cleaned(form) -> dict:
    form.is_valid()  # invalid fields are shown with their errors and left out of the filter
    return {k: v for k, v in getattr(form, "cleaned_data", {}).items() if v not in (None, "")}


def accelerator_list(request):
    form = AcceleratorFilterForm(request.GET or None, vendors=accelerator_vendors())
    filters = _cleaned(form) if request.GET else {}
    as_of = timezone.localdate()
    rows = accelerator_catalog_rows(
        as_of=as_of,
        min_memory_gib=filters.get("min_memory_gib"),
        vendor=filters.get("vendor", ""),
        form_factor_kind=filters.get("form_factor", ""),
        sort=filters.get("sort", "memory"),
    )
    context = {"form": form, "rows": rows, "as_of": as_of}
    if request.htmx:
        return render(request, "catalog/partials/accelerator_table.html", context)
    return render(request, "catalog/accelerators.html", context)


def cloud_offer_list(request):
    providers = list(CloudOffer.objects.order_by("provider").values_list("provider", flat=True).distinct())
    form = CloudOfferFilterForm(request.GET or None, providers=providers)
    filters = _cleaned(form) if request.GET else {}
    offers = CloudOffer.objects.select_related("accelerator").order_by("provider", "region", "instance_type")
    if filters.get("provider"):
        offers = offers.filter(provider=filters["provider"])
    if filters.get("hide_flagged"):
        offers = offers.filter(flagged=False)
    context = {"form": form, "offers": offers}
    if request.htmx:
        return render(request, "catalog/partials/cloud_offer_table.html", context)
    return render(request, "catalog/cloud_offers.html", context)


def server_platform_list(request):
    platforms = ServerPlatform.objects.select_related("included_accelerator", "included_cpu").order_by("vendor", "model")
    return render(request, "catalog/server_platforms.html", {"platforms": platforms})
