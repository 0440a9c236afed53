"""The rows every kind of option shares: engineering, GPU time (useful and idle), storage, traffic, support contracts."""

from __future__ import annotations

from decimal import Decimal

from catalog.domain.messages import Msg, figure

from .inputs import Workload
from .lines import (
    Context,
    Line,
    item,
    show,
)
from .money import ONE, ZERO
from .rates import ROLE_TEXT, ROLES

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
    key = ("traffic", str(w.egress_gb_per_month), scope, active, str(inter_zone_gb))
    if key not in ctx.memo:
        ctx.memo[key] = _traffic_lines(ctx, w, scope=scope, active=active, inter_zone_gb=inter_zone_gb)
    return list(ctx.memo[key])


def _traffic_lines(ctx: Context, w: Workload, *, scope: str, active, inter_zone_gb) -> list[Line]:
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
