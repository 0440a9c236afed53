"""What every deployment option is made of: cost lines, the plan context, and the rows shared by
all kinds (engineering, downtime risk, storage, traffic, support, the useful/idle split).

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

from catalog.domain.messages import Msg, figure

from .inputs import HOURS_PER_MONTH, PriceBook, Rate, Workload
from .money import ONE, ZERO, Price
from .rates import RATE_SCHEMA, ROLE_TEXT, ROLES, base_key, lookup

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
        if schedule is None or not self.monthly:
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
                {**b, "months": str(sum(schedule, ZERO).normalize())} if b.get("per") == "month" else b
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


def _num(d: Decimal, places: int | None = None) -> str:
    if places is not None:
        return str(d.quantize(Decimal(1).scaleb(-places)))
    d = d.quantize(Decimal("1e-9")).normalize()
    return f"{d:f}"


def fleet_text(w: Workload, gpus: int | None = None) -> str:
    """ "2 x H100 SXM5 80GB (TP2)": what runs, with its layout."""
    layout = f"TP{max(1, w.tensor_parallel)}" + (
        f" × PP{w.pipeline_parallel}" if w.pipeline_parallel > 1 else ""
    )
    name = w.accelerator_name or w.accelerator_id or "GPU"
    return f"{w.gpu_count if gpus is None else gpus} x {name} ({layout})"


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

    @property
    def active(self) -> tuple[Decimal, ...] | None:
        """Months the fleet is in use at all (1) or not (0); None: every month."""
        if not self.job:
            return None
        return tuple(ONE if h > 0 else ZERO for h in self.hours)

    @property
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


# ---- shared rows -----------------------------------------------------------------------------


def engineering_lines(ctx: Context, kind: str, *, hosts: int, active=None) -> list[Line]:
    key = ("engineering", kind, hosts, active)
    if key not in ctx.memo:
        ctx.memo[key] = _engineering_lines(ctx, kind, hosts=hosts, active=active)
    return list(ctx.memo[key])


def _engineering_lines(ctx: Context, kind: str, *, hosts: int, active) -> list[Line]:
    """Setup once and operations every month, per role: a floor for the smallest setup plus
    hours per server (or instance) of the fleet (rate card: labelled assumptions)."""
    setup = ops = ZERO
    shown, setup_items, ops_items = [], [], []
    scaled = kind != "api"
    months = sum(active, ZERO) if active is not None else Decimal(ctx.horizon_months)
    for role in ROLES:
        rate, rate_shown = ctx.money(f"engineering_rate_per_hour.{role}")
        s_h, o_h = ctx.value(f"setup_hours.{kind}.{role}"), ctx.value(f"ops_hours_per_month.{kind}.{role}")
        s_per = ctx.value(f"setup_hours_per_server.{kind}.{role}") if scaled else ZERO
        o_per = ctx.value(f"ops_hours_per_server_month.{kind}.{role}") if scaled else ZERO
        s_total, o_total = s_h + s_per * hosts, o_h + o_per * hosts
        setup += s_total * rate
        ops += o_total * rate
        shown += [
            rate_shown,
            show(f"setup_hours.{kind}.{role}", s_h, None, "hours", ""),
            show(f"ops_hours_per_month.{kind}.{role}", o_h, None, "hours per month", ""),
        ]
        if scaled:
            shown += [
                show(f"setup_hours_per_server.{kind}.{role}", s_per, None, "hours per server", ""),
                show(f"ops_hours_per_server_month.{kind}.{role}", o_per, None, "hours per server-month", ""),
            ]
        r = ctx.rate(f"engineering_rate_per_hour.{role}").price()
        setup_items.append(
            item(
                label=Msg("{role} setup: {floor_h} h + {per_host_h} h x {hosts} {hosts:plural:host|hosts}",
                          role=ROLE_TEXT[role], floor_h=figure(s_h),
                          per_host_h=figure(s_per), hosts=hosts),
                quantity=s_total,
                quantity_unit="hours",
                unit_price=rate,
                price=r,
                per="once",
                name=f"engineering_rate_per_hour.{role}",
            )
        )
        ops_items.append(
            item(
                label=Msg("{role} operations: {floor_h} h + {per_host_h} h x {hosts} {hosts:plural:host|hosts} a month",
                          role=ROLE_TEXT[role],
                          floor_h=figure(o_h), per_host_h=figure(o_per), hosts=hosts),
                quantity=o_total,
                quantity_unit="hours per month",
                unit_price=rate,
                price=r,
                months=months,
                name=f"engineering_rate_per_hour.{role}",
            )
        )
    cur = ctx.rate(f"engineering_rate_per_hour.{ROLES[0]}").currency or ctx.currency
    inputs = {"rates": shown, "hosts": hosts}
    return [
        Line(
            row="engineering",
            key="engineering.setup",
            label="Setup (once)",
            upfront=setup,
            vat=False,
            origin_currency=cur,
            tag="engineering",
            inputs=inputs,
            breakdown=tuple(setup_items),
        ),
        Line(
            row="engineering",
            key="engineering.operations",
            label="Operations",
            monthly=ops,
            vat=False,
            origin_currency=cur,
            tag="engineering",
            inputs=inputs,
            breakdown=tuple(ops_items),
        ).with_schedule(active),
    ]


def _reduction(ctx: Context) -> Decimal:
    return ZERO if ctx.redundancy == "none" else ctx.value(f"redundancy_reduction.{ctx.redundancy}")


def downtime_lines(
    ctx: Context,
    kind: str,
    *,
    w: Workload,
    gpu_count: int,
    hosts: int,
    gpu_hour_net: Decimal,
    use: Usage,
    active=None,
    rerun_billed_currency: str | None = None,
) -> list[Line]:
    """Platform incidents (fleet-independent, the whole service down for MTTR) and GPU-server
    failures, which grow with the fleet: a failed server takes 1/hosts of a serving fleet's
    capacity away for MTTR; a synchronous training job loses the work since the last checkpoint
    on every GPU, plus the restart.

    The work a training job redoes after a failure is real money only where GPU time is billed by
    the hour (cloud on demand and spot: ``rerun_billed_currency`` is the offer's currency): there
    the redone GPU-hours are billed like any others, so they are a budget line in the GPU-time row
    (with VAT and the rental price drift). Owned, committed and monthly-rented GPUs are paid for
    every hour whether or not work is redone: the redone hours cost no extra cash, they take
    capacity (and time), valued at the amortised/rented GPU-hour in the risk row."""
    months = sum(active, ZERO) if active is not None else Decimal(ctx.horizon_months)
    incidents_y = ctx.value(f"incidents_per_year.{kind}")
    mttr = ctx.value(f"mttr_hours.{kind}")
    reduction = _reduction(ctx)
    per_month = incidents_y / 12 * (ONE - reduction)
    hour_cost, hour_shown = ctx.money("downtime_cost_per_hour")
    penalty, penalty_shown = ctx.money("sla_penalty_per_incident")
    hour_price = ctx.rate("downtime_cost_per_hour").price()
    cur = ctx.rate("downtime_cost_per_hour").currency or ctx.currency
    shown = [
        show(f"incidents_per_year.{kind}", incidents_y, None, "per year", ""),
        show(f"mttr_hours.{kind}", mttr, None, "hours", ""),
        show("redundancy", ctx.redundancy, None, f"reduces incidents by {reduction}", ""),
        hour_shown,
        penalty_shown,
    ]
    lines = [
        Line(
            row=RISK_ROW,
            key="downtime_risk.outage",
            label="Expected outage cost",
            monthly=per_month * (mttr * hour_cost + penalty),
            vat=False,
            origin_currency=cur,
            tag="downtime",
            outage_hours=per_month * mttr,
            inputs={"rates": shown},
            breakdown=(
                item(
                    label=Msg("{incidents}/year platform incidents x (1 - {reduction}) / 12 x {mttr} h down",
                              incidents=figure(incidents_y), reduction=figure(reduction), mttr=figure(mttr)),
                    quantity=per_month * mttr,
                    quantity_unit="outage hours per month",
                    unit_price=hour_cost,
                    price=hour_price,
                    months=months,
                    name="downtime_cost_per_hour",
                ),
                item(
                    label=Msg("SLA penalty per incident"),
                    quantity=per_month,
                    quantity_unit="incidents per month",
                    unit_price=penalty,
                    price=ctx.rate("sla_penalty_per_incident").price(),
                    months=months,
                    name="sla_penalty_per_incident",
                ),
            ),
        ).with_schedule(active)
    ]
    if not gpu_count:
        return lines
    rate_y = ctx.value("gpu_failures_per_gpu_year")
    failures = gpu_count * rate_y / 12  # per month of running
    # failures cost only while the fleet runs: x u (services) or x the run hours (jobs)
    running = schedule_of(use.hours) if use.job else None
    run_share = ONE if use.job else use.u
    run_months = sum(running, ZERO) if running is not None else Decimal(ctx.horizon_months) * run_share
    if use.job and running is None:
        run_months = Decimal(ctx.horizon_months) * (use.hours[0] / HOURS_PER_MONTH if use.hours else ZERO)
        run_share = use.hours[0] / HOURS_PER_MONTH if use.hours else ZERO
    fail_shown = show("gpu_failures_per_gpu_year", rate_y, None, "per GPU per year", "")
    if w.is_training:
        # on average half a checkpoint interval of work is redone, on every GPU, plus the restart
        redo_h = w.checkpoint_interval_hours / 2 + w.restart_hours
        lost_gpu_h = failures * redo_h * gpu_count * run_share
        billed = rerun_billed_currency is not None
        lines.append(
            Line(
                row="gpu_time" if billed else RISK_ROW,
                key="gpu_time.rerun_after_failures" if billed else "downtime_risk.lost_progress",
                label="GPU time re-run after GPU-server failures" if billed
                else "Training progress lost to GPU-server failures",
                monthly=lost_gpu_h * gpu_hour_net,
                # billed GPU-hours: VAT and the rental price drift apply as to the GPU-time line
                vat=billed,
                market=billed,
                origin_currency=rerun_billed_currency if billed else ctx.currency,
                # incident-driven either way: the Monte Carlo's incident rate scales it
                tag="downtime",
                inputs={
                    "rates": [
                        fail_shown,
                        show("checkpoint_interval_hours", w.checkpoint_interval_hours, None, "hours", "workload"),
                        show("restart_hours", w.restart_hours, None, "hours", "workload"),
                    ],
                    "gpus": gpu_count,
                },
                breakdown=(
                    item(
                        label=Msg("{gpus} GPUs x {rate}/GPU-year / 12 failures x ({ckpt}/2 + {restart}) h x "
                                  "{gpus} GPUs redone", gpus=gpu_count, rate=figure(rate_y),
                                  ckpt=figure(w.checkpoint_interval_hours), restart=figure(w.restart_hours)),
                        quantity=lost_gpu_h / run_share if run_share else ZERO,
                        quantity_unit="GPU-hours per running month",
                        unit_price=gpu_hour_net,
                        price=None,
                        months=run_months,
                    ),
                ),
            ).with_schedule(running)
        )
    else:
        share = ONE / max(1, hosts)
        hours = failures * mttr * share * (ONE - reduction) * run_share
        lines.append(
            Line(
                row=RISK_ROW,
                key="downtime_risk.hardware_failures",
                label="Capacity lost to GPU-server failures",
                monthly=hours * hour_cost,
                vat=False,
                origin_currency=cur,
                tag="downtime",
                outage_hours=hours,
                inputs={"rates": [fail_shown, show(f"mttr_hours.{kind}", mttr, None, "hours", "")], "hosts": hosts},
                breakdown=(
                    item(
                        label=Msg("{gpus} GPUs x {rate}/GPU-year / 12 failures x {mttr} h x 1/{hosts} of capacity "
                                  "x (1 - {reduction})", gpus=gpu_count, rate=figure(rate_y), mttr=figure(mttr),
                                  hosts=hosts, reduction=figure(reduction)),
                        quantity=hours / run_share if run_share else ZERO,
                        quantity_unit="outage-equivalent hours per running month",
                        unit_price=hour_cost,
                        price=hour_price,
                        months=run_months,
                        name="downtime_cost_per_hour",
                    ),
                ),
            ).with_schedule(running)
        )
    return lines


def gpu_time_lines(*, paid: Line, paid_gpu_hours: Decimal, useful_gpu_hours: Decimal) -> list[Line]:
    """Split one GPU-time amount into the useful part and idle time, its own line (R4.2).
    Both GPU-hour figures are over the horizon."""
    share = min(ONE, useful_gpu_hours / paid_gpu_hours) if paid_gpu_hours > 0 else ZERO
    return [
        paid.scaled(share, key="gpu_time.useful", label="GPU time, useful"),
        paid.scaled(ONE - share, key="gpu_time.idle", label="GPU time, idle (paid, no useful work)"),
    ]


def storage_lines(ctx: Context, w: Workload, *, scope: str, active=None) -> list[Line]:
    key = ("storage", tuple(sorted(w.storage_gb.items())), scope, active)
    if key not in ctx.memo:
        ctx.memo[key] = _storage_lines(ctx, w, scope=scope, active=active)
    return list(ctx.memo[key])


def _storage_lines(ctx: Context, w: Workload, *, scope: str, active) -> list[Line]:
    lines = []
    months = sum(active, ZERO) if active is not None else Decimal(ctx.horizon_months)
    for tier, gb in sorted(w.storage_gb.items()):
        if gb <= 0:
            continue
        k = f"cloud_storage_per_gb_month.{tier}"
        rate, shown = ctx.money(k, scope=scope)
        lines.append(
            Line(
                row="infrastructure",
                key=f"infrastructure.storage.{tier}",
                label=f"Storage, {tier}",
                monthly=gb * rate,
                market=True,
                tag="storage",
                origin_currency=ctx.rate(k, scope=scope).currency or "",
                inputs={"quantity": str(gb), "unit": "GB", "rates": [shown]},
                breakdown=(
                    ctx.rate_item(
                        k, scope=scope, label=Msg("{tier} storage", tier=tier), quantity=gb, quantity_unit="GB", months=months
                    ),
                ),
            ).with_schedule(active)
        )
    return lines


def traffic_lines(ctx: Context, w: Workload, *, scope: str, active=None, inter_zone_gb=ZERO) -> list[Line]:
    lines = []
    months = sum(active, ZERO) if active is not None else Decimal(ctx.horizon_months)
    for key, label, gb, rate_key in (
        ("infrastructure.traffic", "Traffic (internet egress)", w.egress_gb_per_month, "egress_per_gb"),
        ("infrastructure.traffic_inter_zone", "Traffic between zones", inter_zone_gb, "inter_zone_per_gb"),
    ):
        if gb <= 0:
            continue
        rate, shown = ctx.money(rate_key, scope=scope)
        lines.append(
            Line(
                row="infrastructure",
                key=key,
                label=label,
                monthly=gb * rate,
                market=True,
                tag="traffic",
                origin_currency=ctx.rate(rate_key, scope=scope).currency or "",
                inputs={"quantity": str(gb), "unit": "GB per month", "rates": [shown]},
                breakdown=(
                    ctx.rate_item(
                        rate_key, scope=scope, label=label, quantity=gb, quantity_unit="GB per month", months=months
                    ),
                ),
            ).with_schedule(active)
        )
    return lines


def user_support_lines(ctx: Context, kind: str, *, gpus: int, servers: int, active=None) -> list[Line]:
    """Support and licence contracts the user entered (costs.support_lines), for their kinds."""
    out = []
    months = sum(active, ZERO) if active is not None else Decimal(ctx.horizon_months)
    for i, s in enumerate(ctx.support_lines):
        if kind not in s.kinds:
            continue
        qty = Decimal({"fixed": 1, "per_gpu": gpus, "per_server": servers}[s.scale])
        unit = ctx.net(s.price, path=f"costs.support_lines[{i}]")
        per_month = unit / 12 if s.per == "year" else unit
        once = s.per == "once"
        out.append(
            Line(
                row="infrastructure",
                key=f"infrastructure.support_contract.{i}",
                label=Msg("Support / licence: {label}", label=s.label),
                upfront=qty * unit if once else ZERO,
                monthly=ZERO if once else qty * per_month,
                origin_currency=s.price.currency,
                tag="support",
                inputs={"quantity": str(qty), "unit": s.scale, "per": s.per},
                breakdown=(
                    item(
                        label=Msg("{label} (per year / 12)", label=s.label) if s.per == "year" else Msg("{label}", label=s.label),
                        quantity=qty,
                        quantity_unit={"fixed": "contract", "per_gpu": "GPUs", "per_server": "servers"}[s.scale],
                        unit_price=per_month if not once else unit,
                        price=s.price,
                        months=None if once else months,
                        per="once" if once else "month",
                    ),
                ),
            ).with_schedule(None if once else active)
        )
    return out


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
