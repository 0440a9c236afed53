"""Read-only catalog API under /api/v1/: paginated, filterable, orderable, read-only."""

from datetime import date
from decimal import Decimal

import pytest

from catalog import models as m

pytestmark = pytest.mark.django_db
SOURCE = {"source_title": "test source", "source_url": "https://example.org/t", "retrieved_on": date(2026, 1, 1)}


def accelerator(slug, memory="80", vendor="NVIDIA"):
    return m.Accelerator.objects.create(
        slug=slug, vendor=vendor, model=slug, architecture="A", form_factor="SXM5", form_factor_kind="SXM",
        memory_gib=Decimal(memory), memory_bandwidth_gb_s=Decimal("3350"), verified="yes", **SOURCE,
    )


def offer(acc, price, valid_from=date(2026, 1, 1), instance="i"):
    return m.CloudOffer.objects.create(
        provider="AWS", region="us-east-1", instance_type=instance, source_gpu_model="H100", accelerator=acc, gpu_count=8,
        price_on_demand_per_hour=Decimal(price), price_basis="instance", currency="USD", includes_vat=False,
        valid_from=valid_from, **SOURCE,
    )


def test_accelerator_list_is_paginated(client):
    accelerator("a1")
    body = client.get("/api/v1/accelerators/").json()
    assert body["count"] == 1 and "next" in body and body["results"][0]["slug"] == "a1"


def test_accelerator_filter_by_memory_and_ordering(client):
    accelerator("small", memory="24")
    accelerator("big", memory="192")
    accelerator("mid", memory="96")
    body = client.get("/api/v1/accelerators/", {"min_memory_gib": "80", "ordering": "-memory_gib"}).json()
    assert [r["slug"] for r in body["results"]] == ["big", "mid"]


def test_accelerator_detail_by_slug_keeps_decimals_as_strings(client):
    accelerator("a1")
    body = client.get("/api/v1/accelerators/a1/").json()
    assert body["memory_gib"] == "80.00" and body["bf16_tflops_dense"] is None


def test_cloud_offers_filter_by_accelerator_slug_and_as_of(client):
    acc = accelerator("h100")
    offer(acc, "55.04", instance="now")
    offer(acc, "60", valid_from=date(2026, 6, 1), instance="later")
    body = client.get("/api/v1/cloud-offers/", {"accelerator": "h100", "as_of": "2026-03-01"}).json()
    assert [r["instance_type"] for r in body["results"]] == ["now"]
    assert body["results"][0]["accelerator"] == "h100"
    assert body["results"][0]["price_on_demand_per_hour"] == "55.040000"


def test_vat_rates_as_of_returns_the_rate_in_force(client):
    m.VatRate.objects.create(country="RU", rate_percent=Decimal("20"), valid_from=date(2019, 1, 1), valid_to=date(2026, 1, 1), **SOURCE)
    m.VatRate.objects.create(country="RU", rate_percent=Decimal("22"), valid_from=date(2026, 1, 1), **SOURCE)
    body = client.get("/api/v1/vat-rates/", {"country": "RU", "as_of": "2026-01-01"}).json()
    assert [r["rate_percent"] for r in body["results"]] == ["22.00"]


def test_hardware_price_names_its_item(client):
    acc = accelerator("h100")
    m.HardwarePrice.objects.create(accelerator=acc, price=Decimal("30000"), price_kind="list", currency="USD",
                                   includes_vat=False, valid_from=date(2026, 1, 1), **SOURCE)
    (row,) = client.get("/api/v1/hardware-prices/").json()["results"]
    assert (row["item_kind"], row["item"], row["price"], row["currency"]) == ("accelerator", "h100", "30000.000000", "USD")


@pytest.mark.parametrize(
    "path", ["/api/v1/server-platforms/", "/api/v1/storage-tiers/", "/api/v1/network-options/", "/api/v1/exchange-rates/",
             "/api/v1/electricity-tariffs/"],
)
def test_every_catalog_endpoint_lists(client, path):
    response = client.get(path)
    assert response.status_code == 200 and response.json()["count"] == 0


def test_bad_filter_value_is_a_400_not_a_500(client):
    response = client.get("/api/v1/cloud-offers/", {"as_of": "not-a-date"})
    assert response.status_code == 400


def test_api_is_read_only(client):
    accelerator("a1")
    assert client.post("/api/v1/accelerators/", {"slug": "x"}).status_code in (403, 405)
    assert client.delete("/api/v1/accelerators/a1/").status_code in (403, 405)
    assert m.Accelerator.objects.filter(slug="a1").exists()


@pytest.mark.parametrize("text", ["0.0", "8.0", "8.", "0.5", "1e1", "٨", "8 8"])
def test_integer_filter_refuses_non_integer_text(client, text):
    """`gpu_count=0.0` was taken as 0 (Django's IntegerField strips a trailing `.0`); the schema
    says integer, so anything but digits with an optional sign is a 400 naming the parameter."""
    offer(accelerator("h100"), "10")
    response = client.get("/api/v1/cloud-offers/", {"gpu_count": text})
    assert response.status_code == 400, response.content
    assert "gpu_count" in response.content.decode()


@pytest.mark.parametrize("path,param", [("/api/v1/server-platforms/", "min_gpu_slots"),
                                        ("/api/v1/accelerators/", "release_year")])
def test_declared_and_generated_integer_filters_are_strict(client, path, param):
    response = client.get(path, {param: "2.0"})
    assert response.status_code == 400 and param in response.content.decode()


@pytest.mark.parametrize("text,count", [("8", 1), (" 8 ", 1), ("+8", 1), ("4", 0), ("-1", 0)])
def test_integer_filter_still_takes_whole_numbers(client, text, count):
    offer(accelerator("h100"), "10")
    response = client.get("/api/v1/cloud-offers/", {"gpu_count": text})
    assert response.status_code == 200 and response.json()["count"] == count
