"""Adapter fixes of issue 13: buyable server shapes, the provider's standard storage tier, a flag
on the spot price drops only the spot price, user traffic derived from the serving load."""

from decimal import Decimal as D

import pytest

from costs.adapters import (
    buyable_shape,
    cloud_offers_from_snapshot,
    storage_rates_from_snapshot,
)
from costs.adapters.workloads import _user_egress_gb
from costs.engine.inputs import Rate


@pytest.mark.parametrize(
    ("form", "need", "tp", "shape"),
    [
        ("SXM", 2, 2, (4, 4)),  # 2 x H200 at TP2: an HGX 4-GPU board, not a 2-GPU server nobody sells
        ("SXM", 5, 1, (8, 8)),
        ("SXM", 8, 8, (8, 8)),
        ("OAM", 2, 2, (8, 8)),
        ("PCIE", 1, 1, (1, 1)),  # one card in a 1-slot chassis (catalog/data/server_shapes.csv: 1, 3, 4, 8, 10)
        ("PCIE", 2, 1, (2, 3)),
        ("PCIE", 3, 1, (3, 3)),
        ("PCIE", 5, 1, (5, 8)),  # five cards in an 8-slot chassis
        ("PCIE", 8, 8, (8, 8)),
        ("SUPERCHIP", 4, 1, None),  # sold as systems only: a catalog platform or a quote
        ("TPU", 4, 1, None),
    ],
)
def test_buyable_shapes(form, need, tp, shape):
    assert buyable_shape(form_kind=form, need=need, tp=tp) == shape


def _tier(id_, name, media, price):
    return {"id": id_, "name": name, "media": media, "service_price_per_gb_month": {"amount": price, "currency": "USD"},
            "valid_from": "2026-11-30", "source": {"title": "t"}}


def test_object_storage_is_the_providers_standard_tier():
    snap = {"storage_tiers": [
        _tier("aws-s3-express-one-zone-us-east-1", "Amazon S3 Express One Zone (us-east-1)", "object", "0.11"),
        _tier("aws-s3-standard-us-east-1", "Amazon S3 Standard (us-east-1, first 50 TB)", "object", "0.023"),
        _tier("gcp-gcs-standard-us-central1", "Google Cloud Storage Standard", "object", "0.02"),
    ]}
    rates = storage_rates_from_snapshot(snap)
    assert rates["cloud_storage_per_gb_month.object@AWS"].value == D("0.023")
    assert rates["cloud_storage_per_gb_month.object@GCP"].value == D("0.02")
    assert rates["cloud_storage_per_gb_month.object"].value == D("0.023")


def _offer(**kw):
    base = {"provider": "Azure", "region": "eastus", "instance_type": "x", "accelerator": "h100", "gpu_count": 8,
            "on_demand_per_hour": {"amount": "90", "currency": "USD"}, "spot_per_hour": {"amount": "90", "currency": "USD"},
            "valid_from": "2026-11-30", "source": {"title": "t"}}
    base.update(kw)
    return base


def test_a_spot_flag_drops_only_the_spot_price():
    snap = {"cloud_offers": [
        _offer(flagged=True, flag_reason="spot price equals on-demand price in the source catalog"),
        _offer(instance_type="y", flagged=True, flag_reason="the source README lists this row among known catalog "
               "anomalies (verify before use); spot price equals on-demand price in the source catalog"),
    ]}
    offers = cloud_offers_from_snapshot(snap)
    assert [(o.instance_type, o.spot, o.on_demand.amount) for o in offers] == [("x", None, D("90"))]


def test_user_traffic_is_tokens_times_bytes_per_token():
    rates = {"egress_bytes_per_output_token": Rate(value=D(200))}
    assert _user_egress_gb(D(657_000_000), rates) == D("131.400")
