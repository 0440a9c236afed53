"""What every deployment option is made of: cost lines, the plan context and the helpers the rows
use; the rows shared by all kinds are in ``rows`` (engineering, storage, traffic, support, the
useful/idle split) and ``downtime`` (downtime risk).

A line is net of VAT, in the reporting currency, split into an upfront amount (month 0), a
monthly amount (months 1..N, times the line's ``schedule`` where it has one: a one-off training
run bills only the months it runs) and a terminal amount at month N (the book value of owned
equipment left at the end of the horizon, as a credit, or a commitment still owed after it).
Each line carries its ``breakdown``: quantity x unit price x months = amount, with the source,
date and basis ("list price", "quote", "assumption") of every unit price (the Infracost way).

Utilisation u = share of calendar hours the fleet runs (cloud bills only these hours; owned
hardware idles the rest). Efficiency e = share of running hours doing useful work.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field
from decimal import ROUND_CEILING, Decimal
from functools import cached_property

from catalog.domain.messages import Msg

from .inputs import HOURS_PER_MONTH, PriceBook, Rate, Workload
from .money import ONE, ZERO, Price
from .rates import RATE_SCHEMA, base_key, lookup

ROWS = ("gpu_time", "infrastructure", "engineering", "downtime_risk")
# The expected cost of incidents: a risk figure shown beside the budget, never inside its total
# (issue 20, 2.); only a risk-adjusted decision basis adds it to what it compares.
RISK_ROW = "downtime_risk"
MILLION = Decimal("1000000")
GB_PER_BYTE = Decimal("1e-9")


@dataclass(frozen=True, kw_only=True)
class Line:
    row: str
    key: str
    label: str
    upfront: Decimal = ZERO
    monthly: Decimal = ZERO
    terminal: Decimal = ZERO
    market: bool = False  # a rental price: follows the price drift
    vat: bool = True  # False for own staff time and the cost of an outage
    origin_currency: str = "USD"
    tag: str = ""  # sensitivity group
    utilisation_driven: bool = False
    inputs: dict = field(default_factory=dict)
    # months 1..N multipliers of ``monthly`` (None: 1 every month)
    schedule: tuple[Decimal, ...] | None = None
    breakdown: tuple[dict, ...] = ()
    # expected hours of outage per month (times ``schedule`` like ``monthly``): what a risk line
    # counts whether or not the cost of an hour of downtime is known
    outage_hours: Decimal = ZERO

    def scaled(self, share: Decimal, *, key: str, label: str) -> Line:
        # explicit constructor: dataclasses.replace is several times slower in this hot path
        return Line(
            row=self.row,
            key=key,
            label=label,
            upfront=self.upfront * share,
            monthly=self.monthly * share,
            terminal=self.terminal * share,
            market=self.market,
            vat=self.vat,
            origin_currency=self.origin_currency,
            tag=self.tag,
            utilisation_driven=self.utilisation_driven,
            inputs=self.inputs,
            schedule=self.schedule,
            breakdown=tuple({**b, "share": _num(share)} for b in self.breakdown) if share != ONE else self.breakdown,
            outage_hours=self.outage_hours * share,
        )

    def months_factor(self, n: int) -> Decimal:
        """Sum of the schedule over the horizon (n without one)."""
        return Decimal(n) if self.schedule is None else sum(self.schedule, ZERO)

    def with_schedule(self, schedule: tuple[Decimal, ...] | None) -> Line:
        # a risk line without a price still counts its outage hours by the schedule
        if schedule is None or not (self.monthly or self.outage_hours):
            return self
        return Line(
            row=self.row,
            key=self.key,
            label=self.label,
            upfront=self.upfront,
            monthly=self.monthly,
            terminal=self.terminal,
            market=self.market,
            vat=self.vat,
            origin_currency=self.origin_currency,
            tag=self.tag,
            utilisation_driven=self.utilisation_driven,
            inputs=self.inputs,
            schedule=schedule,
            breakdown=tuple(
                {**b, "months": _num(sum(schedule, ZERO))} if b.get("per") == "month" else b
                for b in self.breakdown
            ),
            outage_hours=self.outage_hours,
        )


@dataclass(frozen=True, kw_only=True)
class Context:
    """What every calculator needs: currency conversion, horizon, rates. Built once per plan."""

    currency: str
    country: str
    as_of: dt.date
    horizon_months: int
    prices: PriceBook
    rates: dict[str, Rate]
    redundancy: str
    drift_factors: tuple[Decimal, ...]  # price multiplier of months 1..N
    include_vat: bool = True
    support_lines: tuple = ()
    # memo of pure lookups within one plan (same inputs -> same values); never part of results
    memo: dict = field(default_factory=dict, compare=False, repr=False)

    def net(self, price: Price, *, path: str) -> Decimal:
        """Price -> net of VAT, in the reporting currency, at the plan date's FX rate."""
        key = ("net", price)
        if key not in self.memo:
            self.memo[key] = self._net(price, path=path)
        return self.memo[key]

    def _net(self, price: Price, *, path: str) -> Decimal:
        amount = price.amount
        if price.vat_included:
            amount = amount / (
                ONE + self.prices.vat.rate(country=self.country, on=price.as_of or self.as_of, path=path)
            )
        return self.prices.fx.convert(
            amount=amount, base=price.currency, quote=self.currency, on=self.as_of, path=path
        )

    def rate(self, key: str, *, scope: str | None = None) -> Rate:
        return lookup(self.rates, key, scope=scope)

    def value(self, key: str, *, scope: str | None = None) -> Decimal:
        return self.rate(key, scope=scope).value

    def money(self, key: str, *, scope: str | None = None) -> tuple[Decimal, dict]:
        memo_key = ("money", key, scope)
        if memo_key not in self.memo:
            r = self.rate(key, scope=scope)
            self.memo[memo_key] = (
                self.net(r.price(), path=f"rates.{key}"),
                show(key, r.value, r.currency, r.unit, r.source),
            )
        return self.memo[memo_key]

    def rate_item(self, key: str, *, scope: str | None = None, **kw) -> dict:
        """A breakdown item priced at a rate-card money value."""
        r = self.rate(key, scope=scope)
        net, _shown = self.money(key, scope=scope)
        return item(unit_price=net, price=r.price(), name=key, **kw)

    def price_item(self, price: Price, *, path: str, **kw) -> dict:
        return item(unit_price=self.net(price, path=path), price=price, **kw)


def show(name: str, value, currency: str | None, unit: str, source: str) -> dict:
    """A rate-card value as a line shows it. Its source is listed once, in inputs_used.rates
    (repeating it on every line of every option made plans several MB); ``source`` is kept
    only for values that are not rate-card entries."""
    shown = {"name": name, "value": str(value), "currency": currency or "", "unit": unit}
    if source and name not in RATE_SCHEMA and base_key(name) not in RATE_SCHEMA:
        shown["source"] = source
    return shown


def price_show(name: str, p: Price) -> dict:
    src = p.source + (f" ({p.as_of.isoformat()})" if p.as_of else "")
    return show(name, p.amount, p.currency, p.unit + (" incl. VAT" if p.vat_included else ""), src)


def _basis(price: Price) -> str:
    if price.source.startswith("assumption") or price.source == "user override":
        return "assumption" if price.source.startswith("assumption") else "user input"
    return price.basis


def item(
    *,
    label: str,
    quantity: Decimal,
    quantity_unit: str,
    unit_price: Decimal,
    price: Price | None,
    months: Decimal | int | None = None,
    per: str = "month",
    name: str = "",
) -> dict:
    """One breakdown entry: quantity x unit price (net, reporting currency) x months = amount.
    ``per``: "month" (x months), "once" (month 0) or "end" (at the end of the horizon)."""
    m = Decimal(months) if months is not None else ONE
    amount = quantity * unit_price * (m if per == "month" else ONE)
    out = {
        "item": label,
        "quantity": _num(quantity),
        "quantity_unit": quantity_unit,
        "unit_price": _num(unit_price, 6),
        "per": per,
        "months": _num(m) if per == "month" else None,
        "amount": _num(amount, 2),
    }
    if price is not None:
        # the price as published (before FX and VAT), its date and what kind of figure it is;
        # a rate-card entry names its key (its source is listed once, in inputs_used.rates)
        out["price"] = f"{price.amount} {price.currency} {price.unit}".strip() + (
            " incl. VAT" if price.vat_included else ""
        )
        out["date"] = price.as_of.isoformat() if price.as_of else None
        out["basis"] = _basis(price)
        if not name:
            out["source"] = price.source
        if price.stale:
            out["stale"] = True
    if name:
        out["rate"] = name
    return out


_QUANTA = {places: Decimal(1).scaleb(-places) for places in range(10)}  # 10**-places, made once
_NANO = Decimal("1e-9")


def _num(d: Decimal, places: int | None = None) -> str:
    if places is not None:
        return str(d.quantize(_QUANTA[places]))
    return f"{d.quantize(_NANO).normalize():f}"


def fleet_text(w: Workload, gpus: int | None = None) -> str:
    """ "2 x H100 SXM5 80GB (TP2)": what runs, with its layout."""
    layout = pools_text(w.pools) if w.pools else f"TP{max(1, w.tensor_parallel)}" + (
        f" × PP{w.pipeline_parallel}" if w.pipeline_parallel > 1 else ""
    )
    name = w.accelerator_name or w.accelerator_id or "GPU"
    return f"{w.gpu_count if gpus is None else gpus} x {name} ({layout})"


def pools_text(pools: tuple[int, int, int, int]) -> str:
    """ "prefill 5 × TP4 + decode 3 × TP8": a disaggregated layout's pools."""
    pw, pt, dw, dt = pools
    return f"prefill {pw} × TP{pt} + decode {dw} × TP{dt}"


def pools_detail(w: Workload) -> dict:
    """An option's detail entry for a disaggregated layout (its label is localised from it)."""
    if not w.pools:
        return {}
    pw, pt, dw, dt = w.pools
    return {"pools": {"prefill": {"workers": pw, "tensor_parallel": pt}, "decode": {"workers": dw, "tensor_parallel": dt}}}


def gpus_text(n: int) -> str:
    return f"{n} GPU" + ("" if n == 1 else "s")


def hosts_text(hosts: int, spare: bool) -> str:
    return f"{hosts}" + (" (incl. 1 spare)" if spare else "")


def holds_tp_group(w: Workload, gpus_per_host: int) -> bool:
    """A tensor-parallel group talks over NVLink/PCIe on every layer, so it must sit inside one
    instance or server; whole groups must pack a host (pipeline stages and replicas may span hosts)."""
    tp = max(1, w.tensor_parallel)
    return gpus_per_host >= tp and gpus_per_host % tp == 0


def layout_warnings(w: Workload, *, hosts: int, gpus_per_host: int, what: str) -> list[str]:
    """Pipeline stages on different hosts exchange activations every micro-batch: say so."""
    if w.pipeline_parallel > 1 and hosts > 1 and gpus_per_host < w.tensor_parallel * w.pipeline_parallel:
        if not w.is_training:
            # serving sends one activation per token between stages (hidden x 2 bytes: 16 KB on a 70B), not
            # gradients: a private 10 Gb/s link carries a step's megabytes in well under a millisecond
            return [
                Msg("pipeline stages (PP{pipeline_parallel}) span servers: each step passes its tokens' activations "
                    "to the next stage over the network (megabytes a step, tens to hundreds for a long prompt); keep them on a "
                    "private network of 10 Gb/s or more; the latency figures do not count this hop",
                    pipeline_parallel=w.pipeline_parallel)
                if what == "server" else
                Msg("pipeline stages (PP{pipeline_parallel}) span instances: each step passes its tokens' activations "
                    "to the next stage over the network (megabytes a step, tens to hundreds for a long prompt); keep the "
                    "instances in one zone on a private network of 10 Gb/s or more; the latency figures do not count "
                    "this hop", pipeline_parallel=w.pipeline_parallel)
            ]
        return [
            Msg("pipeline stages (PP{pipeline_parallel}) span servers: they need a fast inter-node network "
                "(e.g. 100 Gb/s or more, RDMA) between them", pipeline_parallel=w.pipeline_parallel)
            if what == "server" else
            Msg("pipeline stages (PP{pipeline_parallel}) span instances: they need a fast inter-node network "
                "(e.g. 100 Gb/s or more, RDMA) between them", pipeline_parallel=w.pipeline_parallel)
        ]
    return []


def ceil_to(value: Decimal, step: Decimal) -> Decimal:
    if step <= 0 or value <= 0:
        return max(value, ZERO)
    # a step such as 1/3600 h is inexact in Decimal: drop the noise before rounding up
    steps = (value / step).quantize(Decimal("1e-9")).to_integral_value(rounding=ROUND_CEILING)
    return (steps * step).quantize(Decimal("1e-9")).normalize()


def ceil_div(a: int, b: int) -> int:
    return -(-a // b)


# ---- jobs: when the fleet runs -------------------------------------------------------------


@dataclass(frozen=True, kw_only=True)
class Usage:
    """How many hours a month the fleet runs. Services: the same every month (730 x u). Jobs:
    the run hours; a one-off run fills months from month 1, recurring runs spread evenly."""

    u: Decimal  # average running share of calendar hours over the horizon
    hours: tuple[Decimal, ...]  # running hours of months 1..N
    job: bool = False

    @property
    def uniform(self) -> bool:
        return not self.job

    # cached: the options of a plan share one Usage per running share, and read these many times
    @cached_property
    def active(self) -> tuple[Decimal, ...] | None:
        """Months the fleet is in use at all (1) or not (0); None: every month."""
        if not self.job:
            return None
        return tuple(ONE if h > 0 else ZERO for h in self.hours)

    @cached_property
    def total_hours(self) -> Decimal:
        return sum(self.hours, ZERO)


def usage(*, u: Decimal, n: int, one_off: bool, job: bool) -> Usage:
    total = u * HOURS_PER_MONTH * n
    if not job:
        return Usage(u=u, hours=(HOURS_PER_MONTH * u,) * n)
    if not one_off:
        return Usage(u=u, hours=(total / n,) * n, job=True)
    hours, left = [], total
    for _ in range(n):
        h = min(HOURS_PER_MONTH, left)
        hours.append(h)
        left -= h
    return Usage(u=u, hours=tuple(hours), job=True)


def schedule_of(hours: tuple[Decimal, ...]) -> tuple[Decimal, ...] | None:
    """Hours per month as multipliers of a full month (None when every month is the same)."""
    if len(set(hours)) <= 1:
        return None
    return tuple(h / HOURS_PER_MONTH for h in hours)


def load_share(w: Workload) -> Decimal:
    """Serving: the share of running hours the traffic fills (average / peak load); 1 otherwise."""
    return ONE if w.load_share is None else w.load_share


def useful_hours(w: Workload, use: Usage, e: Decimal) -> Decimal:
    """Useful GPU-hours over the horizon: running GPU-hours x efficiency x the serving load share."""
    return w.gpu_count * use.total_hours * e * load_share(w)


def tokens(w: Workload) -> Decimal | None:
    if w.tokens_in_per_month is None and w.tokens_out_per_month is None:
        return None
    return (w.tokens_in_per_month or ZERO) + (w.tokens_out_per_month or ZERO)
