"""Hand-built inputs for the cost-engine tests: the shipped rate card plus small, explicit prices."""

from __future__ import annotations

import datetime as dt
from dataclasses import replace
from decimal import Decimal as D

from costs.engine.inputs import CloudOffer, CostInputs, CostOptions, PriceBook, ServerPrice, Workload
from costs.engine.money import FxRate, FxTable, Price, VatRate, VatTable
from costs.rate_csv import rates_from_rows, read_rate_csv

AS_OF = dt.date(2026, 3, 1)
FX = FxTable(
    rates=(
        FxRate(base="USD", quote="RUB", rate=D("80"), valid_from=dt.date(2025, 1, 1), source="test"),
        FxRate(base="EUR", quote="RUB", rate=D("90"), valid_from=dt.date(2025, 1, 1), source="test"),
    )
)
VAT = VatTable(
    rates=(
        VatRate(
            country="RU",
            rate=D("0.20"),
            valid_from=dt.date(2019, 1, 1),
            valid_to=dt.date(2026, 1, 1),
            source="test",
        ),
        VatRate(country="RU", rate=D("0.22"), valid_from=dt.date(2026, 1, 1), source="test"),
    )
)


def usd(amount: str, unit: str = "") -> Price:
    return Price(amount=D(amount), currency="USD", unit=unit, source="test")


def rates(as_of: dt.date = AS_OF, **values: str):
    r = rates_from_rows(read_rate_csv(), as_of=as_of)
    for key, value in values.items():
        r[key] = replace(r[key], value=D(value))
    return r


def workload(**kw) -> Workload:
    base = dict(
        candidate_id="h100x8",
        accelerator_id="h100",
        gpu_count=8,
        gpus_per_server=8,
        server_count=1,
        server_power_w=D("10000"),
    )
    base.update(kw)
    return Workload(**base)


def offer(**kw) -> CloudOffer:
    base = dict(
        provider="AWS",
        region="us-east-1",
        instance_type="p5.48xlarge",
        accelerator_id="h100",
        gpus_per_instance=8,
        on_demand=usd("40", "per instance-hour"),
        spot=usd("20", "per instance-hour"),
    )
    base.update(kw)
    return CloudOffer(**base)


def inputs(*, workloads=None, offers=None, servers=None, dedicated=(), rate_values=None, **opts) -> CostInputs:
    base_opts = dict(as_of=AS_OF, horizon_months=36, currency="USD", monte_carlo_samples=1000)
    base_opts.update(opts)
    return CostInputs(
        workloads=tuple(workloads or [workload()]),
        prices=PriceBook(
            cloud_offers=tuple(offers if offers is not None else [offer()]),
            dedicated_offers=tuple(dedicated),
            servers=tuple(
                servers
                if servers is not None
                else [
                    ServerPrice(accelerator_id="h100", gpus_per_server=8, price=usd("250000", "per server"))
                ]
            ),
            fx=FX,
            vat=VAT,
        ),
        rates=rates(base_opts["as_of"], **(rate_values or {})),
        options=CostOptions(**base_opts),
    )
