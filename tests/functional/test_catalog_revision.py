"""Snapshots are cached per catalog revision (catalog.revision): a price written is in the next
plan's snapshot, a rolled-back write leaves nothing behind, and no plan shares another's copy."""

import datetime as dt
import re
from decimal import Decimal
from pathlib import Path

import pytest
from django.db import transaction

from catalog import revision
from costs.models import RateCard
from planner import services

ROOT = Path(__file__).resolve().parents[2]
AS_OF = dt.date(2026, 6, 1)


@pytest.fixture
def rate(db):
    revision.clear()
    return RateCard.objects.create(key="pue", value=Decimal("1.3"), unit="ratio", valid_from=dt.date(2025, 1, 1),
                                   source="assumption: test", is_assumption=True)


def _pue(rates: dict) -> str:
    return rates["rates"]["pue"]["value"]


def test_a_saved_rate_is_in_the_next_snapshot(rate):
    _, before = services.plan_snapshots(as_of=AS_OF)
    token = revision.current()
    rate.value = Decimal("1.5")
    rate.save()
    assert revision.current() != token
    _, after = services.plan_snapshots(as_of=AS_OF)
    assert (_pue(before), _pue(after)) == ("1.3", "1.5")


def test_a_deleted_rate_leaves_the_snapshot(rate):
    services.plan_snapshots(as_of=AS_OF)
    rate.delete()
    _, after = services.plan_snapshots(as_of=AS_OF)
    assert "pue" not in after["rates"]


def test_a_rolled_back_write_restores_the_token_and_the_rows(rate):
    _, before = services.plan_snapshots(as_of=AS_OF)
    token = revision.current()
    with pytest.raises(RuntimeError), transaction.atomic():
        rate.value = Decimal("9")
        rate.save()
        assert _pue(services.plan_snapshots(as_of=AS_OF)[1]) == "9"
        raise RuntimeError("roll back")
    assert revision.current() == token
    assert _pue(services.plan_snapshots(as_of=AS_OF)[1]) == _pue(before) == "1.3"


def test_the_cache_is_used_until_a_change(rate, monkeypatch):
    builds = []
    real = services._catalog_snapshots
    monkeypatch.setattr(services, "_catalog_snapshots", lambda as_of: builds.append(as_of) or real(as_of))
    services.plan_snapshots(as_of=AS_OF)
    services.plan_snapshots(as_of=AS_OF)
    assert len(builds) == 1
    services.plan_snapshots(as_of=AS_OF + dt.timedelta(days=1))  # another date: its own entry
    assert len(builds) == 2
    rate.save()
    services.plan_snapshots(as_of=AS_OF)
    assert len(builds) == 3


def test_each_plan_gets_its_own_copy(rate):
    prices, rates = services.plan_snapshots(as_of=AS_OF)
    rates["rates"]["pue"]["value"] = "7"
    prices["cloud_offers"].append({"id": "mutated"})
    again_prices, again_rates = services.plan_snapshots(as_of=AS_OF)
    assert _pue(again_rates) == "1.3"
    assert {"id": "mutated"} not in again_prices["cloud_offers"]


def test_no_catalog_write_bypasses_the_signals():
    """QuerySet.update, bulk_create and raw SQL send no post_save: a snapshot cached before such a
    write would be served after it. Application code must call revision.bump() if it ever needs one."""
    bypass = re.compile(r"\.bulk_create\(|\.bulk_update\(|\)\.update\(|objects\.update\(|\.raw\(|cursor\(\)")
    hits = []
    for path in [*ROOT.glob("catalog/**/*.py"), *ROOT.glob("costs/**/*.py")]:
        if "migrations" in path.parts or "tests" in path.parts or path.name == "revision.py":
            continue
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if bypass.search(line):
                hits.append(f"{path.relative_to(ROOT)}:{number}: {line.strip()}")
    assert not hits, "catalog writes without signals (call catalog.revision.bump()):\n" + "\n".join(hits)
