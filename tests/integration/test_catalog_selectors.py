"""catalog.selectors: engines get plain values priced at an explicit date."""

import json
from datetime import date
from decimal import Decimal

import pytest

from catalog import models as m
from catalog.selectors import CatalogLookupError, accelerator_specs, fx_rate, vat_rate
from catalog.snapshots import price_snapshot

pytestmark = pytest.mark.django_db
SOURCE = {"source_title": "test source", "source_url": "https://example.org/t", "retrieved_on": date(2026, 1, 1)}


def accelerator(slug="acc-a", memory_gib="80"):
    return m.Accelerator.objects.create(
        slug=slug, vendor="V", model=slug, architecture="A", form_factor="SXM5", form_factor_kind="SXM",
        memory_gib=Decimal(memory_gib), memory_bandwidth_gb_s=Decimal("3350"), verified="yes", **SOURCE,
    )


def usd_rub(rate_date, rate):
    return m.ExchangeRate.objects.create(rate_date=rate_date, base="USD", quote="RUB", rate=Decimal(rate), **SOURCE)


def offer(acc, price, *, gpus=8, flagged=False, basis="instance", valid_from=date(2026, 1, 1), instance="i1", valid_to=None):
    return m.CloudOffer.objects.create(
        provider="P", region="r", instance_type=instance, source_gpu_model="G", accelerator=acc, gpu_count=gpus,
        price_on_demand_per_hour=Decimal(price), price_basis=basis, flagged=flagged, flag_reason="odd" if flagged else "",
        currency="USD", includes_vat=False, valid_from=valid_from, valid_to=valid_to, **SOURCE,
    )


def test_fx_rate_uses_the_latest_rate_on_or_before_the_date():
    usd_rub(date(2026, 1, 1), "80")
    usd_rub(date(2026, 2, 1), "90")
    assert fx_rate(base="USD", quote="RUB", as_of=date(2026, 1, 31)) == Decimal("80")


def test_fx_rate_inverts_a_published_rate():
    usd_rub(date(2026, 1, 1), "80")
    assert fx_rate(base="RUB", quote="USD", as_of=date(2026, 1, 1)) == Decimal(1) / Decimal(80)


def test_fx_rate_crosses_through_the_rouble():
    usd_rub(date(2026, 1, 1), "80")
    m.ExchangeRate.objects.create(rate_date=date(2026, 1, 1), base="EUR", quote="RUB", rate=Decimal("100"), **SOURCE)
    assert fx_rate(base="EUR", quote="USD", as_of=date(2026, 1, 2)) == Decimal("1.25")


def test_fx_rate_without_a_rate_names_the_pair_and_date():
    usd_rub(date(2026, 2, 1), "90")
    with pytest.raises(CatalogLookupError, match="USD->RUB dated on or before 2026-01-15"):
        fx_rate(base="USD", quote="RUB", as_of=date(2026, 1, 15))


def test_vat_rate_follows_the_date():
    m.VatRate.objects.create(country="RU", rate_percent=Decimal("20"), valid_from=date(2019, 1, 1), valid_to=date(2026, 1, 1), **SOURCE)
    m.VatRate.objects.create(country="RU", rate_percent=Decimal("22"), valid_from=date(2026, 1, 1), **SOURCE)
    assert vat_rate(country="RU", as_of=date(2025, 12, 31)) == Decimal("20")
    assert vat_rate(country="ru", as_of=date(2026, 1, 1)) == Decimal("22")


def test_vat_rate_missing_is_a_clear_error():
    with pytest.raises(CatalogLookupError, match="no VAT rate for country 'DE' valid on 2026-01-01"):
        vat_rate(country="DE", as_of=date(2026, 1, 1))


def test_accelerator_spec_without_prices_has_none():
    accelerator()
    (spec,) = accelerator_specs(as_of=date(2026, 1, 1))
    assert spec.id == "acc-a" and spec.memory_gib == 80.0
    assert spec.purchase_price_usd is None and spec.cloud_price_per_gpu_hour_usd is None


def test_purchase_price_is_converted_to_usd_at_the_date():
    acc = accelerator()
    usd_rub(date(2026, 1, 1), "80")
    m.HardwarePrice.objects.create(
        accelerator=acc, price=Decimal("2400000"), price_kind="quote", currency="RUB", includes_vat=False,
        valid_from=date(2026, 1, 1), **SOURCE,
    )
    (spec,) = accelerator_specs(as_of=date(2026, 6, 1))
    assert spec.purchase_price_usd == 30000.0


def test_cloud_price_is_cheapest_unflagged_whole_instance_per_gpu():
    acc = accelerator()
    offer(acc, "80", instance="expensive")  # 10 per GPU
    offer(acc, "40", instance="cheap")  # 5 per GPU
    offer(acc, "8", instance="flagged", flagged=True)  # 1 per GPU but flagged at the source
    offer(acc, "1", instance="gpu-only", gpus=1, basis="accelerator_only")  # needs a host VM
    (spec,) = accelerator_specs(as_of=date(2026, 2, 1))
    assert spec.cloud_price_per_gpu_hour_usd == 5.0


def test_cloud_price_ignores_offers_not_valid_at_the_date():
    acc = accelerator()
    offer(acc, "40", instance="old", valid_to=date(2026, 2, 1))
    (spec,) = accelerator_specs(as_of=date(2026, 2, 1))  # valid_to is exclusive
    assert spec.cloud_price_per_gpu_hour_usd is None


def test_price_snapshot_is_json_and_carries_money_as_strings():
    acc = accelerator()
    offer(acc, "55.04")
    usd_rub(date(2026, 1, 1), "78.5")
    snapshot = price_snapshot(as_of=date(2026, 1, 1))
    assert json.loads(json.dumps(snapshot)) == snapshot
    assert snapshot["cloud_offers"][0]["on_demand_per_hour"] == {"amount": "55.04", "currency": "USD"}
    assert snapshot["fx_rates"][0]["rate"] == "78.5"
    assert snapshot["cloud_offers"][0]["source"]["url"] == "https://example.org/t"


def test_price_snapshot_leaves_out_rows_not_yet_valid():
    acc = accelerator()
    offer(acc, "55.04", valid_from=date(2026, 3, 1))
    assert price_snapshot(as_of=date(2026, 2, 28))["cloud_offers"] == []
