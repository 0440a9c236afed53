"""Every catalog model has a working admin: list with search and filters, and an item's price history."""

from datetime import date
from decimal import Decimal

import pytest
from django.contrib import admin
from django.urls import reverse

from catalog import models as m

pytestmark = pytest.mark.django_db
SOURCE = {"source_title": "test source", "source_url": "https://example.org/t", "retrieved_on": date(2026, 1, 1)}
CATALOG_MODELS = [
    m.Accelerator, m.Cpu, m.ServerPlatform, m.StorageTier, m.NetworkOption, m.CloudOffer, m.DedicatedServerOffer,
    m.HardwarePrice, m.ElectricityTariff, m.ExchangeRate, m.VatRate, m.CatalogImportRun,
]


def test_every_catalog_model_is_registered():
    assert all(admin.site.is_registered(model) for model in CATALOG_MODELS)


@pytest.mark.parametrize("model", CATALOG_MODELS, ids=lambda model: model.__name__)
def test_changelist_with_search_renders(admin_client, model):
    url = reverse(f"admin:catalog_{model._meta.model_name}_changelist")
    assert admin_client.get(url, {"q": "x"}).status_code == 200


def test_accelerator_page_shows_its_price_history_oldest_first(admin_client):
    acc = m.Accelerator.objects.create(
        slug="h100", vendor="NVIDIA", model="H100", architecture="Hopper", form_factor="SXM5", form_factor_kind="SXM",
        memory_gib=Decimal("80"), memory_bandwidth_gb_s=Decimal("3350"), verified="yes", **SOURCE,
    )
    for year, price in ((2025, "27000"), (2024, "31000")):
        m.HardwarePrice.objects.create(accelerator=acc, price=Decimal(price), price_kind="list", currency="USD",
                                       includes_vat=False, valid_from=date(year, 1, 1), **SOURCE)
    content = admin_client.get(reverse("admin:catalog_accelerator_change", args=[acc.pk])).content.decode()
    assert content.index("31000") < content.index("27000")
