"""Catalog pages: thin views over catalog.selectors. Work without JavaScript; htmx swaps the table only."""

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.shortcuts import redirect, render
from django.utils import timezone
from django.utils.translation import gettext as _

from catalog.forms import (
    AcceleratorFilterForm,
    CloudOfferFilterForm,
    SupplierQuoteForm,
    SupplierQuoteUploadForm,
)
from catalog.models import (
    CloudOffer,
    ExchangeRate,
    FeedImportRun,
    HardwarePrice,
    PublishedPrice,
    ServerPlatform,
    SupplierQuote,
)
from catalog.quotes import COLUMNS, QuoteUploadError, quotes_upload
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
    from catalog.compose import composed_cloud_offers

    context["composed"] = composed_cloud_offers(as_of=timezone.localdate())
    return render(request, "catalog/cloud_offers.html", context)


def server_platform_list(request):
    platforms = ServerPlatform.objects.select_related("included_accelerator", "included_cpu").order_by("vendor", "model")
    return render(request, "catalog/server_platforms.html", {"platforms": platforms})


# --- supplier quotes and price freshness -------------------------------------------------------


@login_required
def quote_list(request):
    """The quotes of the user's teams; editors enter one (form) or upload a quote table."""
    from planner.selectors import teams_editable_by, teams_for_user

    editable = list(teams_editable_by(user=request.user))
    team_ids = [t.pk for t in teams_for_user(user=request.user)]
    form, upload = SupplierQuoteForm(), SupplierQuoteUploadForm()
    upload_errors: list[str] = []
    if request.method == "POST":
        team = next((t for t in editable if str(t.pk) == request.POST.get("team")), None)
        if team is None:
            messages.error(request, _("Choose one of the teams you can edit."))
        elif "file" in request.FILES:
            upload = SupplierQuoteUploadForm(request.POST, request.FILES)
            if upload.is_valid():
                f = upload.cleaned_data["file"]
                try:
                    created = quotes_upload(team=team, filename=f.name, data=f.read(), user=request.user)
                except QuoteUploadError as exc:
                    upload_errors = exc.errors
                else:
                    messages.success(request, _("%(n)s quotes saved.") % {"n": len(created)})
                    return redirect("catalog:quotes")
        else:
            form = SupplierQuoteForm(request.POST)
            if form.is_valid():
                quote = form.save(commit=False)
                quote.team, quote.created_by = team, request.user
                quote.save()
                messages.success(request, _("Quote saved."))
                return redirect("catalog:quotes")
    today = timezone.localdate()
    quotes = (SupplierQuote.objects.filter(team_id__in=team_ids).select_related("team", "accelerator")
              .order_by("-quote_date", "pk"))
    rows = [{"q": q, "valid": q.is_valid_on(today), "age_days": (today - q.quote_date).days} for q in quotes]
    return render(request, "catalog/quotes.html", {
        "rows": rows, "form": form, "upload": upload, "upload_errors": upload_errors, "teams": editable,
        "today": today, "columns": ", ".join(COLUMNS),
    })


def stale_prices(request):
    """Every dated price with its age at today; rows over their threshold or marked stale first."""
    from django.conf import settings

    today = timezone.localdate()
    limits = settings.PRICE_MAX_AGE_DAYS
    rows = []

    def add(kind, row, day, stale_reason="", source=""):
        age = (today - day).days if day else None
        limit = limits.get(kind, limits["cloud"])
        rows.append({"kind": kind, "row": row, "date": day, "age_days": age, "limit": limit,
                     "too_old": age is not None and age > limit, "stale_reason": stale_reason, "source": source})

    for p in PublishedPrice.objects.order_by("dataset", "provider", "pk"):
        kind = "cloud" if p.dataset == "cloud_gpu_offers_ru" else "hardware"
        add(kind, f"{p.provider}: {p.item} ({p.get_billing_display() or p.price_kind}) {p.price} {p.currency}",
            p.valid_from, p.stale_reason, p.source_title)
    for r in ExchangeRate.objects.order_by("base", "quote", "-rate_date"):
        add("fx", f"{r.base}/{r.quote} {r.rate}", r.rate_date, "", r.source_title)
    for o in CloudOffer.objects.filter(valid_to__isnull=True).order_by("provider", "instance_type"):
        add("cloud", f"{o.provider} {o.instance_type} ({o.region})", o.source_date or o.valid_from, o.flag_reason,
            o.source_title)
    for h in HardwarePrice.objects.select_related("accelerator", "server_platform", "cpu").order_by("pk"):
        add("hardware", f"{h.item} ({h.price_kind}) {h.price} {h.currency}", h.source_date or h.valid_from, "",
            h.source_title)
    latest_fx = {}
    for r in rows:
        if r["kind"] == "fx":
            latest_fx.setdefault(r["row"].split(" ")[0], r)
    rows = [r for r in rows if r["kind"] != "fx" or latest_fx.get(r["row"].split(" ")[0]) is r]
    only_stale = request.GET.get("all") != "1"
    shown = [r for r in rows if r["too_old"] or r["stale_reason"] or r["age_days"] is None] if only_stale else rows
    shown.sort(key=lambda r: (-(r["age_days"] if r["age_days"] is not None else 10**6), r["row"]))
    feeds = FeedImportRun.objects.order_by("-started_at", "-pk")[:10]
    return render(request, "catalog/stale_prices.html", {
        "rows": shown, "limits": limits, "today": today, "only_stale": only_stale, "total": len(rows), "feeds": feeds,
    })
