"""The four-row cost table of one deployment option (REQUIREMENTS R4).

Every option is a list of Lines. A line is net of VAT, in the reporting currency, split into an
upfront amount (month 0), a monthly amount (months 1..N) and a terminal amount at month N
(the book value of owned equipment left at the end of the horizon, as a credit, or a commitment
still owed after it). Lines carry the inputs that produced them so the table can show them.

Utilisation u = share of calendar hours the fleet runs work (cloud bills only these hours;
owned hardware idles the rest). Efficiency e = share of running hours doing useful work (the
rest waits for data, for people, between experiments: R4.2). Useful GPU-hours = GPUs x 730 x u x e.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field, replace
from decimal import ROUND_CEILING, ROUND_FLOOR, Decimal

from planner.engine.messages import Msg

from .errors import fail
from .inputs import (
    HOURS_PER_MONTH,
    ApiPrice,
    CloudOffer,
    DedicatedOffer,
    PriceBook,
    Rate,
    ServerPrice,
    Workload,
)
from .money import ONE, ZERO, Price, add_months
from .rates import RATE_SCHEMA, ROLES, base_key, lookup

ROWS = ("gpu_time", "infrastructure", "engineering", "downtime_risk")
MILLION = Decimal("1000000")


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
                _show(key, r.value, r.currency, r.unit, r.source),
            )
        return self.memo[memo_key]


def _show(name: str, value, currency: str | None, unit: str, source: str) -> dict:
    """A rate-card value as a line shows it. Its source is listed once, in inputs_used.rates
    (repeating it on every line of every option made plans several MB); ``source`` is kept
    only for values that are not rate-card entries."""
    shown = {"name": name, "value": str(value), "currency": currency or "", "unit": unit}
    if source and name not in RATE_SCHEMA and base_key(name) not in RATE_SCHEMA:
        shown["source"] = source
    return shown


def _price_show(name: str, p: Price) -> dict:
    src = p.source + (f" ({p.as_of.isoformat()})" if p.as_of else "")
    return _show(name, p.amount, p.currency, p.unit + (" incl. VAT" if p.vat_included else ""), src)


@dataclass(frozen=True, kw_only=True)
class OptionCost:
    option_id: str
    kind: str
    candidate_id: str
    label: str
    lines: tuple[Line, ...]
    useful_gpu_hours_per_month: Decimal
    tokens_per_month: Decimal | None
    training_gpu_hours_per_run: Decimal | None
    unknowns: tuple[str, ...] = ()
    warnings: tuple[str, ...] = ()  # risks the total does not show in full (e.g. spot for serving)
    detail: dict = field(default_factory=dict)


MODE_TEXT = {
    "cloud_on_demand": "on-demand",
    "cloud_spot": "spot",
    "cloud_commit_1y": "1-year commitment",
    "cloud_commit_3y": "3-year commitment",
}


def holds_tp_group(w: Workload, gpus_per_host: int) -> bool:
    """A tensor-parallel group talks over NVLink/PCIe on every layer, so it must sit inside one
    instance or server; whole groups must pack a host (pipeline stages and replicas may span hosts)."""
    tp = max(1, w.tensor_parallel)
    return gpus_per_host >= tp and gpus_per_host % tp == 0


def fleet_text(w: Workload, gpus: int | None = None) -> str:
    """ "2 x H100 SXM5 80GB (TP2)": what runs, with its layout."""
    layout = f"TP{max(1, w.tensor_parallel)}" + (
        f" x PP{w.pipeline_parallel}" if w.pipeline_parallel > 1 else ""
    )
    name = w.accelerator_name or w.accelerator_id or "GPU"
    return f"{w.gpu_count if gpus is None else gpus} x {name} ({layout})"


def _gpus(n: int) -> str:
    return Msg("{n} {n:plural:GPU|GPUs}", n=n)


def _hosts_text(hosts: int, spare: bool) -> str:
    return f"{hosts}" + (" (incl. 1 spare)" if spare else "")


def layout_warnings(w: Workload, *, hosts: int, gpus_per_host: int, what: str) -> list[str]:
    """Pipeline stages on different hosts exchange activations every micro-batch: say so."""
    if w.pipeline_parallel > 1 and hosts > 1 and gpus_per_host < w.tensor_parallel * w.pipeline_parallel:
        return [
            Msg("pipeline stages (PP{pipeline_parallel}) span servers: they need a fast inter-node network (e.g. 100 Gb/s or more, RDMA) between them", pipeline_parallel=w.pipeline_parallel)
            if what == "server" else
            Msg("pipeline stages (PP{pipeline_parallel}) span instances: they need a fast inter-node network (e.g. 100 Gb/s or more, RDMA) between them", pipeline_parallel=w.pipeline_parallel)
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


# ---- shared rows -----------------------------------------------------------------------------


def engineering_lines(ctx: Context, kind: str) -> list[Line]:
    key = ("engineering", kind)
    if key not in ctx.memo:
        ctx.memo[key] = _engineering_lines(ctx, kind)
    return list(ctx.memo[key])


def _engineering_lines(ctx: Context, kind: str) -> list[Line]:
    setup = ops = ZERO
    shown = []
    for role in ROLES:
        rate, rate_shown = ctx.money(f"engineering_rate_per_hour.{role}")
        s_h, o_h = ctx.value(f"setup_hours.{kind}.{role}"), ctx.value(f"ops_hours_per_month.{kind}.{role}")
        setup += s_h * rate
        ops += o_h * rate
        shown += [
            rate_shown,
            _show(
                f"setup_hours.{kind}.{role}",
                s_h,
                None,
                "hours",
                ctx.rate(f"setup_hours.{kind}.{role}").source,
            ),
            _show(
                f"ops_hours_per_month.{kind}.{role}",
                o_h,
                None,
                "hours per month",
                ctx.rate(f"ops_hours_per_month.{kind}.{role}").source,
            ),
        ]
    cur = ctx.rate(f"engineering_rate_per_hour.{ROLES[0]}").currency or ctx.currency
    return [
        Line(
            row="engineering",
            key="engineering.setup",
            label="Setup (once)",
            upfront=setup,
            vat=False,
            origin_currency=cur,
            tag="engineering",
            inputs={"rates": shown},
        ),
        Line(
            row="engineering",
            key="engineering.operations",
            label="Operations",
            monthly=ops,
            vat=False,
            origin_currency=cur,
            tag="engineering",
            inputs={"rates": shown},
        ),
    ]


def _outage(ctx: Context, kind: str) -> tuple[Line, list, Decimal]:
    incidents_y = ctx.value(f"incidents_per_year.{kind}")
    mttr = ctx.value(f"mttr_hours.{kind}")
    reduction = ZERO if ctx.redundancy == "none" else ctx.value(f"redundancy_reduction.{ctx.redundancy}")
    per_month = incidents_y / 12 * (ONE - reduction)
    hour_cost, hour_shown = ctx.money("downtime_cost_per_hour")
    penalty, penalty_shown = ctx.money("sla_penalty_per_incident")
    shown = [
        _show(
            f"incidents_per_year.{kind}",
            incidents_y,
            None,
            "per year",
            ctx.rate(f"incidents_per_year.{kind}").source,
        ),
        _show(f"mttr_hours.{kind}", mttr, None, "hours", ctx.rate(f"mttr_hours.{kind}").source),
        _show("redundancy", ctx.redundancy, None, Msg("reduces incidents by {reduction}", reduction=reduction), ""),
        hour_shown,
        penalty_shown,
    ]
    outage = Line(
        row="downtime_risk",
        key="downtime_risk.outage",
        label="Expected outage cost",
        monthly=per_month * (mttr * hour_cost + penalty),
        vat=False,
        origin_currency=ctx.rate("downtime_cost_per_hour").currency or ctx.currency,
        tag="downtime",
        inputs={"rates": shown},
    )
    return outage, shown, per_month


def downtime_lines(
    ctx: Context,
    kind: str,
    *,
    gpu_count: int,
    gpu_hour_net: Decimal,
    is_training: bool,
    checkpoint_interval_hours: Decimal,
) -> list[Line]:
    key = ("outage", kind)
    if key not in ctx.memo:
        ctx.memo[key] = _outage(ctx, kind)
    outage, shown, per_month = ctx.memo[key]
    lines = [outage]
    if is_training and gpu_count:
        # on average half a checkpoint interval of work is redone after each incident
        lost = per_month * checkpoint_interval_hours / 2 * gpu_count * gpu_hour_net
        lines.append(
            Line(
                row="downtime_risk",
                key="downtime_risk.lost_progress",
                label="Training progress lost since the last checkpoint",
                monthly=lost,
                vat=False,
                origin_currency=ctx.currency,
                tag="downtime",
                inputs={
                    "rates": [
                        *shown,
                        _show(
                            "checkpoint_interval_hours", checkpoint_interval_hours, None, "hours", "workload"
                        ),
                    ]
                },
            )
        )
    return lines


def gpu_time_lines(*, paid: Line, paid_gpu_hours: Decimal, useful_gpu_hours: Decimal) -> list[Line]:
    """Split one GPU-time amount into the useful part and idle time, its own line (R4.2)."""
    share = min(ONE, useful_gpu_hours / paid_gpu_hours) if paid_gpu_hours > 0 else ZERO
    return [
        paid.scaled(share, key="gpu_time.useful", label="GPU time, useful"),
        paid.scaled(ONE - share, key="gpu_time.idle", label="GPU time, idle (paid, no useful work)"),
    ]


def storage_lines(ctx: Context, w: Workload, *, scope: str) -> list[Line]:
    key = ("storage", tuple(sorted(w.storage_gb.items())), scope)
    if key not in ctx.memo:
        ctx.memo[key] = _storage_lines(ctx, w, scope=scope)
    return list(ctx.memo[key])


def _storage_lines(ctx: Context, w: Workload, *, scope: str) -> list[Line]:
    lines = []
    for tier, gb in sorted(w.storage_gb.items()):
        if gb <= 0:
            continue
        rate, shown = ctx.money(f"cloud_storage_per_gb_month.{tier}", scope=scope)
        lines.append(
            Line(
                row="infrastructure",
                key=f"infrastructure.storage.{tier}",
                label=f"Storage, {tier}",
                monthly=gb * rate,
                market=True,
                tag="storage",
                origin_currency=ctx.rate(f"cloud_storage_per_gb_month.{tier}", scope=scope).currency or "",
                inputs={"quantity": str(gb), "unit": "GB", "rates": [shown]},
            )
        )
    return lines


def egress_line(ctx: Context, w: Workload, *, scope: str) -> list[Line]:
    if w.egress_gb_per_month <= 0:
        return []
    rate, shown = ctx.money("egress_per_gb", scope=scope)
    return [
        Line(
            row="infrastructure",
            key="infrastructure.traffic",
            label="Traffic (egress)",
            monthly=w.egress_gb_per_month * rate,
            market=True,
            tag="traffic",
            origin_currency=ctx.rate("egress_per_gb", scope=scope).currency or "",
            inputs={"quantity": str(w.egress_gb_per_month), "unit": "GB per month", "rates": [shown]},
        )
    ]


# ---- options ---------------------------------------------------------------------------------


def _useful(w: Workload, u: Decimal, e: Decimal) -> Decimal:
    return w.gpu_count * HOURS_PER_MONTH * u * e


def _tokens(w: Workload) -> Decimal | None:
    if w.tokens_in_per_month is None and w.tokens_out_per_month is None:
        return None
    return (w.tokens_in_per_month or ZERO) + (w.tokens_out_per_month or ZERO)


def cloud_option(
    ctx: Context,
    w: Workload,
    offer: CloudOffer,
    mode: str,
    *,
    u: Decimal,
    e: Decimal,
    gpu_count: int | None = None,
) -> OptionCost | None:
    gpus = w.gpu_count if gpu_count is None else gpu_count
    base = {
        "cloud_on_demand": offer.on_demand,
        "cloud_spot": offer.spot,
        "cloud_commit_1y": offer.commit_1y,
        "cloud_commit_3y": offer.commit_3y,
    }[mode]
    path = f"prices.cloud_offers.{offer.provider}.{offer.instance_type}"
    rate_shown = []
    if base is None and mode in ("cloud_commit_1y", "cloud_commit_3y") and offer.on_demand is not None:
        key = "commit_discount_1y" if mode == "cloud_commit_1y" else "commit_discount_3y"
        disc = ctx.rate(key)
        base = replace(
            offer.on_demand,
            amount=offer.on_demand.amount * (ONE - disc.value),
            source=f"{offer.on_demand.source}; −{disc.value * 100:g} % ({disc.source})",
        )
        rate_shown.append(_show(key, disc.value, None, disc.unit, disc.source))
    if base is None:
        return None
    rate = ctx.net(base, path=path)
    instances = ceil_div(gpus, offer.gpus_per_instance) if gpus else 0
    if instances and ctx.redundancy == "n_plus_1":
        instances += 1  # one spare instance
    committed = mode.startswith("cloud_commit")
    if committed:
        billed = HOURS_PER_MONTH  # a commitment is paid for every hour, used or not
    else:
        billed = ceil_to(HOURS_PER_MONTH * u, offer.billing_granularity_hours)
    if mode == "cloud_spot" and u > 0:
        interruptions = ctx.value("spot_interruptions_per_month")
        lost = u * interruptions * (w.checkpoint_interval_hours / 2 + w.restart_hours)
        billed += lost
        rate_shown.append(
            _show(
                "spot_interruptions_per_month",
                interruptions,
                None,
                "per running month",
                ctx.rate("spot_interruptions_per_month").source,
            )
        )
    paid_gpu_hours = instances * offer.gpus_per_instance * billed
    paid = Line(
        row="gpu_time",
        key="gpu_time",
        label="GPU time",
        monthly=instances * billed * rate,
        market=True,
        origin_currency=base.currency,
        tag="gpu_rent",
        utilisation_driven=not committed,
        inputs={
            "instances": instances,
            "billed_hours_per_month": str(billed.normalize()),
            "rates": [_price_show(f"{offer.instance_type} {mode}", base), *rate_shown],
        },
    )
    useful = gpus * HOURS_PER_MONTH * u * e
    lines = gpu_time_lines(paid=paid, paid_gpu_hours=paid_gpu_hours, useful_gpu_hours=useful)
    if committed:
        term = 12 if mode == "cloud_commit_1y" else 36
        rest = max(0, term - ctx.horizon_months)
        if rest:
            lines.append(
                Line(
                    row="gpu_time",
                    key="gpu_time.commitment_after_horizon",
                    label="Commitment still owed after the horizon",
                    terminal=instances * HOURS_PER_MONTH * rate * rest,
                    origin_currency=base.currency,
                    tag="gpu_rent",
                    inputs={"months": rest},
                )
            )
    lines += storage_lines(ctx, w, scope=offer.provider) + egress_line(ctx, w, scope=offer.provider)
    gpu_hour_net = rate / offer.gpus_per_instance
    lines += engineering_lines(ctx, "cloud")
    lines += downtime_lines(
        ctx,
        "cloud",
        gpu_count=gpus,
        gpu_hour_net=gpu_hour_net,
        is_training=w.is_training,
        checkpoint_interval_hours=w.checkpoint_interval_hours,
    )
    warnings = layout_warnings(w, hosts=instances, gpus_per_host=offer.gpus_per_instance, what="instance")
    if mode == "cloud_spot" and not w.is_training:
        lines.append(_spot_outage_line(ctx, w, u=u))
        warnings.append(
            Msg("spot capacity can be reclaimed at any time: every interruption stops serving until a new "
                "instance is up (priced in the downtime-risk row)")
            + (Msg("; with a latency target (TTFT/TPOT) this puts the SLA at risk") if w.latency_target else "")
        )
    spare = instances > 0 and ctx.redundancy == "n_plus_1"
    return OptionCost(
        option_id=f"{w.candidate_id}|{mode}|{offer.provider}|{offer.region}|{offer.instance_type}",
        kind=mode,
        candidate_id=w.candidate_id,
        label=f"{fleet_text(w, gpus)} on {_hosts_text(instances, spare)} x {offer.provider} {offer.instance_type} ({_gpus(offer.gpus_per_instance)}), {offer.region}, {MODE_TEXT[mode]}",
        lines=tuple(lines),
        useful_gpu_hours_per_month=useful,
        tokens_per_month=_tokens(w),
        training_gpu_hours_per_run=w.training_gpu_hours_per_run,
        warnings=tuple(warnings),
        detail={
            "provider": offer.provider,
            "region": offer.region,
            "instance_type": offer.instance_type,
            "instances": instances,
            "gpus": gpus,
            "gpus_per_instance": offer.gpus_per_instance,
            "accelerator": w.accelerator_name or w.accelerator_id,
            "tensor_parallel": w.tensor_parallel,
            "pipeline_parallel": w.pipeline_parallel,
        },
    )


def _spot_outage_line(ctx: Context, w: Workload, *, u: Decimal) -> Line:
    """Serving on spot: each interruption is an outage for the restart time, at the cost of an hour
    of downtime (reduced by redundancy like any other incident)."""
    interruptions = ctx.value("spot_interruptions_per_month")
    reduction = ZERO if ctx.redundancy == "none" else ctx.value(f"redundancy_reduction.{ctx.redundancy}")
    hours = u * interruptions * w.restart_hours * (ONE - reduction)
    hour_cost, hour_shown = ctx.money("downtime_cost_per_hour")
    return Line(
        row="downtime_risk",
        key="downtime_risk.spot_interruptions",
        label="Outages from spot interruptions",
        monthly=hours * hour_cost,
        vat=False,
        origin_currency=ctx.rate("downtime_cost_per_hour").currency or ctx.currency,
        tag="downtime",
        utilisation_driven=True,
        inputs={
            "outage_hours_per_month": str(hours.normalize()),
            "restart_hours": str(w.restart_hours),
            "rates": [
                _show(
                    "spot_interruptions_per_month",
                    interruptions,
                    None,
                    "per running month",
                    ctx.rate("spot_interruptions_per_month").source,
                ),
                _show("redundancy", ctx.redundancy, None, Msg("reduces outages by {reduction}", reduction=reduction), ""),
                hour_shown,
            ],
        },
    )


def dedicated_option(
    ctx: Context, w: Workload, offer: DedicatedOffer, *, u: Decimal, e: Decimal
) -> OptionCost:
    path = f"prices.dedicated_offers.{offer.provider}.{offer.name}"
    servers = ceil_div(w.gpu_count, offer.gpus_per_server) + (1 if ctx.redundancy == "n_plus_1" else 0)
    rent = ctx.net(offer.monthly, path=path)
    paid = Line(
        row="gpu_time",
        key="gpu_time",
        label="GPU time",
        monthly=servers * rent,
        market=True,
        origin_currency=offer.monthly.currency,
        tag="gpu_rent",
        inputs={"servers": servers, "rates": [_price_show(offer.name, offer.monthly)]},
    )
    useful = _useful(w, u, e)
    lines = gpu_time_lines(
        paid=paid, paid_gpu_hours=servers * offer.gpus_per_server * HOURS_PER_MONTH, useful_gpu_hours=useful
    )
    if offer.setup_fee is not None:
        lines.append(
            Line(
                row="infrastructure",
                key="infrastructure.setup_fee",
                label="Server setup fee",
                upfront=servers * ctx.net(offer.setup_fee, path=path),
                origin_currency=offer.setup_fee.currency,
                tag="gpu_rent",
                inputs={"rates": [_price_show("setup fee", offer.setup_fee)]},
            )
        )
    lines += storage_lines(ctx, w, scope="dedicated") + egress_line(ctx, w, scope="dedicated")
    lines += engineering_lines(ctx, "dedicated")
    lines += downtime_lines(
        ctx,
        "dedicated",
        gpu_count=w.gpu_count,
        gpu_hour_net=rent / offer.gpus_per_server / HOURS_PER_MONTH,
        is_training=w.is_training,
        checkpoint_interval_hours=w.checkpoint_interval_hours,
    )
    spare = ctx.redundancy == "n_plus_1"
    return OptionCost(
        option_id=f"{w.candidate_id}|dedicated|{offer.provider}|{offer.name}",
        kind="dedicated",
        candidate_id=w.candidate_id,
        label=f"{fleet_text(w)} on {_hosts_text(servers, spare)} x {offer.provider} {offer.name} ({_gpus(offer.gpus_per_server)}), dedicated, monthly",
        lines=tuple(lines),
        useful_gpu_hours_per_month=useful,
        tokens_per_month=_tokens(w),
        training_gpu_hours_per_run=w.training_gpu_hours_per_run,
        warnings=tuple(layout_warnings(w, hosts=servers, gpus_per_host=offer.gpus_per_server, what="server")),
        detail={
            "provider": offer.provider,
            "name": offer.name,
            "servers": servers,
            "gpus": w.gpu_count,
            "gpus_per_server": offer.gpus_per_server,
            "accelerator": w.accelerator_name or w.accelerator_id,
            "tensor_parallel": w.tensor_parallel,
            "pipeline_parallel": w.pipeline_parallel,
        },
    )


def _amortised(
    ctx: Context, *, row: str, key: str, label: str, capex: Decimal, currency: str, tag: str, inputs: dict
) -> Line:
    """Straight line to the residual value; the book value left at the horizon is credited at month N."""
    months = int(ctx.value("amortisation_years") * 12)
    residual = capex * ctx.value("residual_value_share")
    used = (capex - residual) * min(ctx.horizon_months, months) / months if months else capex - residual
    return Line(
        row=row,
        key=key,
        label=label,
        upfront=capex,
        terminal=-(capex - used),
        origin_currency=currency,
        tag=tag,
        inputs=inputs,
    )


def onprem_option(
    ctx: Context, w: Workload, server: ServerPrice, *, u: Decimal, e: Decimal, kind: str = "onprem"
) -> OptionCost:
    path = f"prices.servers.{server.accelerator_id}"
    servers = ceil_div(w.gpu_count, server.gpus_per_server) + (1 if ctx.redundancy == "n_plus_1" else 0)
    unit = ctx.net(server.price, path=path)
    capex_servers = servers * unit
    amort_shown = [
        _show(
            "amortisation_years",
            ctx.value("amortisation_years"),
            None,
            "years",
            ctx.rate("amortisation_years").source,
        ),
        _show(
            "residual_value_share",
            ctx.value("residual_value_share"),
            None,
            "share",
            ctx.rate("residual_value_share").source,
        ),
    ]
    paid = _amortised(
        ctx,
        row="gpu_time",
        key="gpu_time",
        label="GPU servers (amortised)",
        capex=capex_servers,
        currency=server.price.currency,
        tag="capex",
        inputs={"servers": servers, "rates": [_price_show("server", server.price), *amort_shown]},
    )
    useful = _useful(w, u, e)
    lines = gpu_time_lines(
        paid=paid, paid_gpu_hours=servers * server.gpus_per_server * HOURS_PER_MONTH, useful_gpu_hours=useful
    )
    spares = ctx.value("spares_share")
    lines.append(
        _amortised(
            ctx,
            row="infrastructure",
            key="infrastructure.spares",
            label="Spare parts (amortised)",
            capex=capex_servers * spares,
            currency=server.price.currency,
            tag="capex",
            inputs={"rates": [_show("spares_share", spares, None, "share", ctx.rate("spares_share").source)]},
        )
    )
    net_rate, net_shown = ctx.money("network_capex_per_server")
    lines.append(
        _amortised(
            ctx,
            row="infrastructure",
            key="infrastructure.network",
            label="Network equipment (amortised)",
            capex=servers * net_rate,
            currency=ctx.rate("network_capex_per_server").currency or "",
            tag="capex",
            inputs={"servers": servers, "rates": [net_shown]},
        )
    )
    capex_total = capex_servers * (ONE + spares) + servers * net_rate
    for tier, gb in sorted(w.storage_gb.items()):
        if gb <= 0:
            continue
        rate, shown = ctx.money(f"onprem_storage_capex_per_gb.{tier}")
        capex_total += gb * rate
        lines.append(
            _amortised(
                ctx,
                row="infrastructure",
                key=f"infrastructure.storage.{tier}",
                label=f"Storage, {tier} (amortised)",
                capex=gb * rate,
                currency=ctx.rate(f"onprem_storage_capex_per_gb.{tier}").currency or "",
                tag="capex",
                inputs={"quantity": str(gb), "unit": "GB", "rates": [shown]},
            )
        )
    unknowns = []
    if w.server_power_w is None:
        unknowns.append(Msg("power: server IT load unknown, power and colocation not priced"))
    else:
        kw = servers * w.server_power_w / 1000
        idle, pue = ctx.value("idle_power_share"), ctx.value("pue")
        tariff_price = ctx.prices.power_tariff_per_kwh or ctx.rate("power_tariff_per_kwh").price()
        tariff = ctx.net(tariff_price, path="prices.power_tariff_per_kwh")
        kwh = kw * (idle + (ONE - idle) * u) * pue * HOURS_PER_MONTH
        lines.append(
            Line(
                row="infrastructure",
                key="infrastructure.power",
                label="Power and cooling",
                monthly=kwh * tariff,
                market=True,
                origin_currency=tariff_price.currency,
                tag="power",
                utilisation_driven=True,
                inputs={
                    "it_load_kw": str(kw),
                    "kwh_per_month": str(kwh.quantize(ONE)),
                    "rates": [
                        _price_show("power tariff", tariff_price),
                        _show("pue", pue, None, "ratio", ctx.rate("pue").source),
                        _show("idle_power_share", idle, None, "share", ctx.rate("idle_power_share").source),
                    ],
                },
            )
        )
        colo, colo_shown = ctx.money("colocation_per_kw_month")
        lines.append(
            Line(
                row="infrastructure",
                key="infrastructure.colocation",
                label="Colocation / rack",
                monthly=kw * colo,
                market=True,
                tag="colocation",
                origin_currency=ctx.rate("colocation_per_kw_month").currency or "",
                inputs={"it_load_kw": str(kw), "rates": [colo_shown]},
            )
        )
    per_u, per_u_shown = ctx.money("colocation_per_u_month")
    if per_u > 0:
        if w.server_rack_units:
            units = servers * w.server_rack_units
            lines.append(
                Line(
                    row="infrastructure",
                    key="infrastructure.rack_space",
                    label="Rack space",
                    monthly=units * per_u,
                    market=True,
                    tag="colocation",
                    origin_currency=ctx.rate("colocation_per_u_month").currency or "",
                    inputs={"rack_units": units, "rates": [per_u_shown]},
                )
            )
        else:
            unknowns.append(Msg("rack units of the server unknown: rack space per U not priced"))
    support = ctx.value("support_share_per_year")
    lines.append(
        Line(
            row="infrastructure",
            key="infrastructure.support",
            label="Support contracts",
            monthly=capex_total * support / 12,
            tag="support",
            origin_currency=server.price.currency,
            inputs={
                "capex": str(capex_total.quantize(ONE)),
                "rates": [
                    _show(
                        "support_share_per_year",
                        support,
                        None,
                        "share of capex per year",
                        ctx.rate("support_share_per_year").source,
                    )
                ],
            },
        )
    )
    lines += egress_line(ctx, w, scope="onprem")
    lines += engineering_lines(ctx, kind)
    lines += downtime_lines(
        ctx,
        kind,
        gpu_count=w.gpu_count,
        gpu_hour_net=unit / server.gpus_per_server / (ctx.value("amortisation_years") * 12 * HOURS_PER_MONTH),
        is_training=w.is_training,
        checkpoint_interval_hours=w.checkpoint_interval_hours,
    )
    spare = ctx.redundancy == "n_plus_1"
    return OptionCost(
        option_id=f"{w.candidate_id}|{kind}|{server.accelerator_id}",
        kind=kind,
        candidate_id=w.candidate_id,
        label=f"{fleet_text(w)} on {_hosts_text(servers, spare)} x {server.gpus_per_server}-GPU server, on-prem (bought)",
        lines=tuple(lines),
        useful_gpu_hours_per_month=useful,
        tokens_per_month=_tokens(w),
        training_gpu_hours_per_run=w.training_gpu_hours_per_run,
        unknowns=tuple(unknowns),
        warnings=tuple(
            layout_warnings(w, hosts=servers, gpus_per_host=server.gpus_per_server, what="server")
        ),
        detail={
            "servers": servers,
            "capex_net": str(capex_total),
            "gpus": w.gpu_count,
            "gpus_per_server": server.gpus_per_server,
            "accelerator": w.accelerator_name or w.accelerator_id,
            "tensor_parallel": w.tensor_parallel,
            "pipeline_parallel": w.pipeline_parallel,
        },
    )


def hybrid_option(
    ctx: Context,
    w: Workload,
    server: ServerPrice,
    offer: CloudOffer,
    *,
    owned_share: Decimal,
    u: Decimal,
    e: Decimal,
) -> OptionCost | None:
    """An owned baseline (owned_share of the servers) plus on-demand cloud burst for the rest."""
    servers = ceil_div(w.gpu_count, server.gpus_per_server)
    owned = int((servers * owned_share).to_integral_value(rounding=ROUND_FLOOR))
    if owned < 1 or owned >= servers:
        return None  # no split to speak of: the on-prem or the cloud option already covers it
    owned_gpus = owned * server.gpus_per_server
    own = onprem_option(
        ctx, replace(w, gpu_count=owned_gpus, server_count=owned), server, u=u, e=e, kind="hybrid"
    )
    burst = cloud_option(ctx, w, offer, "cloud_on_demand", u=u, e=e, gpu_count=w.gpu_count - owned_gpus)
    if burst is None:
        return None
    lines = [
        replace(ln, key=f"{ln.key}.owned", label=f"{ln.label}, owned") if ln.row == "gpu_time" else ln
        for ln in own.lines
    ]
    lines += [
        replace(ln, key=f"{ln.key}.cloud", label=f"{ln.label}, cloud burst")
        for ln in burst.lines
        if ln.row == "gpu_time"
    ]
    burst_instances = burst.detail["instances"]
    return OptionCost(
        option_id=f"{w.candidate_id}|hybrid|{server.accelerator_id}|{offer.provider}|{offer.instance_type}",
        kind="hybrid",
        candidate_id=w.candidate_id,
        label=f"{fleet_text(w)}: {owned_gpus} GPUs on {owned} x {server.gpus_per_server}-GPU server owned + {w.gpu_count - owned_gpus} GPUs on {burst_instances} x {offer.provider} {offer.instance_type} ({_gpus(offer.gpus_per_instance)}), {offer.region}, on-demand burst",
        lines=tuple(lines),
        useful_gpu_hours_per_month=_useful(w, u, e),
        tokens_per_month=_tokens(w),
        training_gpu_hours_per_run=w.training_gpu_hours_per_run,
        unknowns=own.unknowns,
        warnings=tuple(dict.fromkeys(own.warnings + burst.warnings)),
        detail={
            "owned_servers": owned,
            "owned_gpus": owned_gpus,
            "burst_gpus": w.gpu_count - owned_gpus,
            "burst_instances": burst_instances,
            "gpus": w.gpu_count,
            "gpus_per_server": server.gpus_per_server,
            "gpus_per_instance": offer.gpus_per_instance,
            "provider": offer.provider,
            "region": offer.region,
            "instance_type": offer.instance_type,
            "accelerator": w.accelerator_name or w.accelerator_id,
            "tensor_parallel": w.tensor_parallel,
            "pipeline_parallel": w.pipeline_parallel,
        },
    )


def api_option(ctx: Context, w: Workload, api: ApiPrice) -> OptionCost | None:
    if _tokens(w) is None:
        return None
    path = f"prices.api_prices.{api.provider}.{api.model}"
    t_in, t_out = w.tokens_in_per_month or ZERO, w.tokens_out_per_month or ZERO
    monthly = t_in / MILLION * ctx.net(api.input_per_1m_tokens, path=path) + t_out / MILLION * ctx.net(
        api.output_per_1m_tokens, path=path
    )
    lines = [
        Line(
            row="gpu_time",
            key="gpu_time.api_tokens",
            label="Model API tokens (instead of GPU time)",
            monthly=monthly,
            market=True,
            origin_currency=api.input_per_1m_tokens.currency,
            tag="api",
            inputs={
                "tokens_in_per_month": str(t_in),
                "tokens_out_per_month": str(t_out),
                "rates": [
                    _price_show("input per 1M tokens", api.input_per_1m_tokens),
                    _price_show("output per 1M tokens", api.output_per_1m_tokens),
                ],
            },
        )
    ]
    lines += storage_lines(ctx, w, scope="api") + egress_line(ctx, w, scope="api")
    lines += engineering_lines(ctx, "api")
    lines += downtime_lines(
        ctx,
        "api",
        gpu_count=0,
        gpu_hour_net=ZERO,
        is_training=False,
        checkpoint_interval_hours=w.checkpoint_interval_hours,
    )
    return OptionCost(
        option_id=f"{w.candidate_id}|api|{api.provider}|{api.model}",
        kind="api",
        candidate_id=w.candidate_id,
        label=f"API: {api.provider} {api.model}",
        lines=tuple(lines),
        useful_gpu_hours_per_month=ZERO,
        tokens_per_month=_tokens(w),
        training_gpu_hours_per_run=None,
        detail={"provider": api.provider, "model": api.model},
    )


def month_dates(*, as_of: dt.date, horizon_months: int) -> list[dt.date]:
    """Index 0: the plan date (upfront payments); index m: the first day of month m of use."""
    return [as_of] + [add_months(as_of, m - 1) for m in range(1, horizon_months + 1)]


def check_utilisation(value: Decimal, *, path: str) -> Decimal:
    if not (0 <= value <= 1):
        raise fail(path, "must be between 0 and 1")
    return value
