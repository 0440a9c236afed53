"""Catalog pages: filters and sorting without JS, htmx partial, unknown shown as unknown, flat query count."""

from datetime import date
from decimal import Decimal

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from catalog import models as m

pytestmark = pytest.mark.django_db
SOURCE = {"source_title": "test source", "source_url": "https://example.org/t", "retrieved_on": date(2026, 1, 1)}


def accelerator(slug, *, vendor="NVIDIA", memory="80", kind="SXM", bf16="1000", price=None):
    acc = m.Accelerator.objects.create(
        slug=slug, vendor=vendor, model=slug.upper(), architecture="A", form_factor=kind, form_factor_kind=kind,
        memory_gib=Decimal(memory), memory_bandwidth_gb_s=Decimal("2000"), bf16_tflops_dense=Decimal(bf16) if bf16 else None,
        verified="secondary", **SOURCE,
    )
    if price:
        m.HardwarePrice.objects.create(accelerator=acc, price=Decimal(price), price_kind="list", currency="USD",
                                       includes_vat=False, valid_from=date(2020, 1, 1), **SOURCE)
        m.CloudOffer.objects.create(provider="P", region="r", instance_type=f"{slug}-8x", source_gpu_model="G", accelerator=acc,
                                    gpu_count=8, price_on_demand_per_hour=Decimal("16"), price_basis="instance",
                                    currency="USD", includes_vat=False, valid_from=date(2020, 1, 1), **SOURCE)
    return acc


def slugs_in_order(response):
    return [row.accelerator.slug for row in response.context["rows"]]


def test_catalog_page_lists_accelerators(client):
    accelerator("a1")
    response = client.get(reverse("catalog:accelerators"))
    assert response.status_code == 200
    assert b"A1" in response.content


def test_filters_memory_vendor_and_form_factor(client):
    accelerator("big", memory="192", vendor="AMD", kind="OAM")
    accelerator("small", memory="24", vendor="AMD", kind="OAM")
    accelerator("other", memory="192", vendor="NVIDIA", kind="SXM")
    response = client.get(reverse("catalog:accelerators"), {"min_memory_gib": "80", "vendor": "AMD", "form_factor": "OAM"})
    assert slugs_in_order(response) == ["big"]


def test_sort_by_price_per_gib_puts_unknown_prices_last(client):
    accelerator("cheap-per-gib", memory="100", price="10000")  # 100 USD/GiB
    accelerator("no-price", memory="200")
    accelerator("dear-per-gib", memory="10", price="10000")  # 1000 USD/GiB
    response = client.get(reverse("catalog:accelerators"), {"sort": "price_per_gib"})
    assert slugs_in_order(response) == ["cheap-per-gib", "dear-per-gib", "no-price"]
    assert b"unknown" in response.content


def test_sort_by_price_per_tflop(client):
    accelerator("fast", bf16="1000", price="10000")  # 10 USD/TFLOP
    accelerator("slow", bf16="100", price="10000")  # 100 USD/TFLOP
    response = client.get(reverse("catalog:accelerators"), {"sort": "price_per_tflop"})
    assert slugs_in_order(response) == ["fast", "slow"]


def test_invalid_filter_is_reported_not_a_server_error(client):
    accelerator("a1")
    response = client.get(reverse("catalog:accelerators"), {"min_memory_gib": "-5", "sort": "nonsense"})
    assert response.status_code == 200
    assert slugs_in_order(response) == ["a1"]
    assert b"greater than or equal to 0" in response.content


def test_htmx_request_gets_only_the_table(client):
    accelerator("a1")
    response = client.get(reverse("catalog:accelerators"), {"sort": "bf16"}, HTTP_HX_REQUEST="true")
    assert b"<html" not in response.content
    assert b"<table" in response.content


def test_no_js_form_has_a_real_action_and_htmx_get(client):
    response = client.get(reverse("catalog:accelerators"))
    url = reverse("catalog:accelerators").encode()
    assert b'action="' + url + b'"' in response.content
    assert b'hx-get="' + url + b'"' in response.content


def _page_queries(client, count):
    for i in range(count):
        accelerator(f"acc-{count}-{i}", price="1000")
    with CaptureQueriesContext(connection) as ctx:
        response = client.get(reverse("catalog:accelerators"), {"sort": "price_per_gib"})
    assert len(response.context["rows"]) == count
    return len(ctx.captured_queries)


def test_catalog_page_query_count_does_not_grow_with_rows(client):
    few = _page_queries(client, 3)
    m.CloudOffer.objects.all().delete()
    m.HardwarePrice.objects.all().delete()
    m.Accelerator.objects.all().delete()
    many = _page_queries(client, 30)
    assert many == few


def test_cloud_offer_page_shows_flag_reason_and_can_hide_flagged(client):
    acc = accelerator("a1")
    m.CloudOffer.objects.create(provider="P", region="r", instance_type="odd", source_gpu_model="G", accelerator=acc,
                                gpu_count=1, price_on_demand_per_hour=Decimal("1"), price_basis="instance", flagged=True,
                                flag_reason="spot equals on-demand", currency="USD", includes_vat=False,
                                valid_from=date(2020, 1, 1), **SOURCE)
    assert b"spot equals on-demand" in client.get(reverse("catalog:cloud_offers")).content
    assert b"spot equals on-demand" not in client.get(reverse("catalog:cloud_offers"), {"hide_flagged": "on"}).content


def test_server_platform_page_shows_unknown(client):
    m.ServerPlatform.objects.create(slug="s1", vendor="V", model="Box", gpu_slots=8, gpu_form_factor_kind="SXM",
                                    cpu_sockets=2, **SOURCE)
    response = client.get(reverse("catalog:server_platforms"))
    assert b"Box" in response.content and b"unknown" in response.content


def test_wide_catalog_tables_scroll_in_their_box(client):
    """The accelerator table (12 columns) pushed its last columns off the page; it now scrolls in
    its own box, and the note under a price wraps (a figure cell does not)."""
    from pathlib import Path

    accelerator("a1", price="30000")
    for url in (reverse("catalog:accelerators"), reverse("catalog:cloud_offers")):
        html = client.get(url).content.decode()
        assert '<div class="table-scroll"><table class="catalog">' in html, url
    css = (Path(__file__).resolve().parents[2] / "static" / "css" / "app.css").read_text()
    assert ".table-scroll { overflow-x:auto;" in css and "td.num .muted { white-space: normal;" in css
