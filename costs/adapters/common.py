"""Helpers the adapters share: snapshot values as Decimal/date/Price, workload kinds, catalog accelerators."""

from __future__ import annotations

import datetime as dt
from decimal import Decimal

from costs.engine.money import Price
from planner.engine.shapes import form_kind

TRAINING_KINDS = ("pretraining", "finetuning", "classic_training")
SERVING_KINDS = ("inference", "rag")
GB = Decimal("1e9")


def _d(value) -> Decimal | None:
    return None if value is None else Decimal(str(value))


def _date(value: str | None) -> dt.date | None:
    return dt.date.fromisoformat(value) if value else None


def _val(node) -> float | None:
    """A sizing quantity is {"value", "unit", "explain"}; unknown is None."""
    if isinstance(node, dict):
        node = node.get("value")
    return None if node is None or isinstance(node, bool) else float(node)


def _source(item: dict) -> str:
    s = item.get("source") or {}
    parts = [s.get("title") or "", s.get("url") or ""]
    return " | ".join(p for p in parts if p) or "catalog"


def _price(money: dict | None, item: dict, unit: str) -> Price | None:
    if not money:
        return None
    return Price(
        amount=Decimal(money["amount"]),
        currency=money["currency"],
        unit=unit,
        vat_included=bool(item.get("includes_vat")),
        source=_source(item),
        as_of=_date(item.get("valid_from")),
    )


_form_kind = form_kind  # planner.engine.shapes: SXM / PCIE / OAM / SUPERCHIP / TPU


def _accelerators(price_snapshot: dict) -> dict:
    from planner.engine.hardware import AcceleratorSpec

    known = set(AcceleratorSpec.__dataclass_fields__)
    return {
        a["id"]: AcceleratorSpec(**{k: v for k, v in a.items() if k in known})
        for a in price_snapshot.get("accelerators", [])
    }
