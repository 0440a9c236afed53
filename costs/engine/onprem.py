"""Owned GPU servers: bought at month 0, amortised, powered and housed for the whole horizon."""

from __future__ import annotations

from decimal import Decimal

from catalog.domain.messages import Msg, figure

from .downtime import downtime_lines
from .inputs import HOURS_PER_MONTH, ServerPrice, Workload
from .lines import (
    Context,
    Line,
    Usage,
    ceil_div,
    fleet_text,
    hosts_text,
    item,
    layout_warnings,
    pools_detail,
    price_show,
    show,
    tokens,
    useful_hours,
)
from .money import ONE, ZERO
from .option import OptionCost
from .rows import engineering_lines, gpu_time_lines, traffic_lines, user_support_lines


def amortised(
    ctx: Context,
    *,
    row: str,
    key: str,
    label: str,
    capex: Decimal,
    currency: str,
    tag: str,
    inputs: dict,
    breakdown: tuple[dict, ...] = (),
) -> Line:
    """Bought at month 0; straight line to the residual value; the book value left at the horizon
    is credited at month N."""
    months = int(ctx.value("amortisation_years") * 12)
    residual = capex * ctx.value("residual_value_share")
    used = (capex - residual) * min(ctx.horizon_months, months) / months if months else capex - residual
    book = capex - used
    credit = item(
        label=Msg("book value left after {months} months (credited)", months=ctx.horizon_months),
        quantity=ONE,
        quantity_unit="",
        unit_price=-book,
        price=None,
        per="end",
    )
    return Line(
        row=row,
        key=key,
        label=label,
        upfront=capex,
        terminal=-book,
        origin_currency=currency,
        tag=tag,
        inputs=inputs,
        breakdown=(*breakdown, credit),
    )


def onprem_option(
    ctx: Context,
    w: Workload,
    server: ServerPrice,
    *,
    use: Usage,
    e: Decimal,
    kind: str = "onprem",
    inter_zone_gb: Decimal = ZERO,
) -> OptionCost:
    path = f"prices.servers.{server.accelerator_id}"
    n = ctx.horizon_months
    servers = ceil_div(w.gpu_count, server.gpus_per_server) + (1 if ctx.redundancy == "n_plus_1" else 0)
    unit = ctx.net(server.price, path=path)
    capex_servers = servers * unit
    amort_shown = [
        show("amortisation_years", ctx.value("amortisation_years"), None, "years", ""),
        show("residual_value_share", ctx.value("residual_value_share"), None, "share", ""),
    ]
    server_name = server.name or f"{server.gpus_per_server}-GPU server"
    paid = amortised(
        ctx,
        row="gpu_time",
        key="gpu_time",
        label="GPU servers (amortised)",
        capex=capex_servers,
        currency=server.price.currency,
        tag="capex",
        inputs={"servers": servers, "rates": [price_show("server", server.price), *amort_shown]},
        breakdown=(
            ctx.price_item(
                server.price,
                path=path,
                label=Msg("{servers} x {server}", servers=servers, server=server_name),
                quantity=Decimal(servers),
                quantity_unit="servers",
                per="once",
            ),
        ),
    )
    useful = useful_hours(w, use, e)
    lines = gpu_time_lines(
        paid=paid, paid_gpu_hours=servers * server.gpus_per_server * HOURS_PER_MONTH * n, useful_gpu_hours=useful
    )
    spares = ctx.value("spares_share")
    lines.append(
        amortised(
            ctx,
            row="infrastructure",
            key="infrastructure.spares",
            label="Spare parts (amortised)",
            capex=capex_servers * spares,
            currency=server.price.currency,
            tag="capex",
            inputs={"rates": [show("spares_share", spares, None, "share", "")]},
            breakdown=(
                item(
                    label=Msg("spares_share {share} x server capex", share=figure(spares)),
                    quantity=spares,
                    quantity_unit="share",
                    unit_price=capex_servers,
                    price=None,
                    per="once",
                ),
            ),
        )
    )
    net_rate, net_shown = ctx.money("network_capex_per_server")
    lines.append(
        amortised(
            ctx,
            row="infrastructure",
            key="infrastructure.network",
            label="Network equipment (amortised)",
            capex=servers * net_rate,
            currency=ctx.rate("network_capex_per_server").currency or "",
            tag="capex",
            inputs={"servers": servers, "rates": [net_shown]},
            breakdown=(
                ctx.rate_item(
                    "network_capex_per_server",
                    label=Msg("network per server"),
                    quantity=Decimal(servers),
                    quantity_unit="servers",
                    per="once",
                ),
            ),
        )
    )
    capex_total = capex_servers * (ONE + spares) + servers * net_rate
    for tier, gb in sorted(w.storage_gb.items()):
        if gb <= 0:
            continue
        k = f"onprem_storage_capex_per_gb.{tier}"
        rate, shown = ctx.money(k)
        capex_total += gb * rate
        lines.append(
            amortised(
                ctx,
                row="infrastructure",
                key=f"infrastructure.storage.{tier}",
                label=f"Storage, {tier} (amortised)",
                capex=gb * rate,
                currency=ctx.rate(k).currency or "",
                tag="capex",
                inputs={"quantity": str(gb), "unit": "GB", "rates": [shown]},
                breakdown=(ctx.rate_item(k, label=Msg("{tier} storage", tier=tier), quantity=gb, quantity_unit="GB", per="once"),),
            )
        )
    unknowns = []
    power_w = server.power_w if server.power_w is not None else w.server_power_w
    if power_w is None:
        unknowns.append(Msg("power: server IT load unknown, power and colocation not priced"))
    else:
        kw = servers * power_w / 1000
        idle, pue = ctx.value("idle_power_share"), ctx.value("pue")
        tariff_price = ctx.prices.power_tariff_per_kwh or ctx.rate("power_tariff_per_kwh").price()
        tariff = ctx.net(tariff_price, path="prices.power_tariff_per_kwh")
        # a share of full load each month: idle draw all the time, full draw while running
        loads = tuple(idle + (ONE - idle) * h / HOURS_PER_MONTH for h in use.hours)
        uniform = len(set(loads)) <= 1
        load = loads[0] if uniform and loads else ONE
        full_kwh = kw * pue * HOURS_PER_MONTH
        lines.append(
            Line(
                row="infrastructure",
                key="infrastructure.power",
                label="Power and cooling",
                monthly=full_kwh * load * tariff,
                market=True,
                origin_currency=tariff_price.currency,
                tag="power",
                utilisation_driven=True,
                inputs={
                    "it_load_kw": str(kw),
                    "kwh_per_month": str((full_kwh * sum(loads, ZERO) / n).quantize(ONE)),
                    "rates": [
                        price_show("power tariff", tariff_price),
                        show("pue", pue, None, "ratio", ""),
                        show("idle_power_share", idle, None, "share", ""),
                    ],
                },
                schedule=None if uniform else loads,
                breakdown=(
                    ctx.price_item(
                        tariff_price,
                        path="prices.power_tariff_per_kwh",
                        label=Msg("{servers} x {kw} kW x PUE {pue} x 730 h x load (idle {idle} + running share)",
                                  servers=servers, kw=figure(power_w / 1000), pue=figure(pue), idle=figure(idle)),
                        quantity=full_kwh * sum(loads, ZERO) / n,
                        quantity_unit="kWh per month (average)",
                        months=n,
                    ),
                ),
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
                breakdown=(
                    ctx.rate_item(
                        "colocation_per_kw_month",
                        label=Msg("{servers} x {kw} kW of IT load", servers=servers, kw=figure(power_w / 1000)),
                        quantity=kw,
                        quantity_unit="kW",
                        months=n,
                    ),
                ),
            )
        )
    per_u, per_u_shown = ctx.money("colocation_per_u_month")
    rack_units = server.rack_units or w.server_rack_units
    if per_u > 0:
        if rack_units:
            units = servers * rack_units
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
                    breakdown=(
                        ctx.rate_item(
                            "colocation_per_u_month",
                            label=Msg("{servers} x {units} U", servers=servers, units=rack_units),
                            quantity=Decimal(units),
                            quantity_unit="U",
                            months=n,
                        ),
                    ),
                )
            )
        else:
            unknowns.append(Msg("rack units of the server unknown: rack space per U not priced"))
    support = ctx.value("support_share_per_year")
    lines.append(
        Line(
            row="infrastructure",
            key="infrastructure.support",
            label="Hardware support (share of capex, assumed)",
            monthly=capex_total * support / 12,
            tag="support",
            origin_currency=server.price.currency,
            inputs={
                "capex": str(capex_total.quantize(ONE)),
                "rates": [show("support_share_per_year", support, None, "share of capex per year", "")],
            },
            breakdown=(
                item(
                    label=Msg("support_share_per_year {share} / 12 x capex", share=figure(support)),
                    quantity=support / 12,
                    quantity_unit="share of capex per month",
                    unit_price=capex_total,
                    price=None,
                    months=n,
                    name="support_share_per_year",
                ),
            ),
        )
    )
    lines += user_support_lines(ctx, kind, gpus=servers * server.gpus_per_server, servers=servers)
    lines += traffic_lines(ctx, w, scope="onprem", inter_zone_gb=inter_zone_gb)
    lines += engineering_lines(ctx, kind, hosts=servers)
    lines += downtime_lines(
        ctx,
        kind,
        w=w,
        gpu_count=w.gpu_count,
        hosts=servers,
        gpu_hour_net=unit / server.gpus_per_server / (ctx.value("amortisation_years") * 12 * HOURS_PER_MONTH),
        use=use,
    )
    spare = ctx.redundancy == "n_plus_1"
    warnings = layout_warnings(w, hosts=servers, gpus_per_host=server.gpus_per_server, what="server")
    if server.price.basis == "derived":
        warnings.append(
            Msg(
                "server price built from the GPU's price plus the rate card's host cost per GPU slot "
                "(an assumption): ask a vendor for a quote and enter it in costs.server_prices"
            )
        )
    return OptionCost(
        option_id=f"{w.candidate_id}|{kind}|{server.accelerator_id}",
        kind=kind,
        candidate_id=w.candidate_id,
        label=f"{fleet_text(w)} on {hosts_text(servers, spare)} x {server.gpus_per_server}-GPU server, "
        "on-prem (bought)",
        lines=tuple(lines),
        useful_gpu_hours_per_month=useful / n,
        running_gpu_hours=w.gpu_count * use.total_hours,
        tokens_per_month=tokens(w),
        output_tokens_per_month=w.tokens_out_per_month,
        training_gpu_hours_per_run=w.training_gpu_hours_per_run,
        unknowns=tuple(unknowns),
        warnings=tuple(warnings),
        detail={
            "servers": servers,
            "server": server_name,
            "capex_net": str(capex_total),
            "gpus": w.gpu_count,
            "gpus_bought": servers * server.gpus_per_server,
            # servers are bought whole (an HGX board of 4 or 8, a catalog system): GPUs beyond the
            # layout's, the N+1 server not counted (the sizing's servers block says so in words)
            "spare_gpus": ceil_div(w.gpu_count, server.gpus_per_server) * server.gpus_per_server - w.gpu_count,
            "gpus_per_server": server.gpus_per_server,
            "server_power_w": str(power_w) if power_w is not None else None,
            "accelerator": w.accelerator_name or w.accelerator_id,
            "tensor_parallel": w.tensor_parallel,
            "pipeline_parallel": w.pipeline_parallel,
            **pools_detail(w),
            "price_basis": server.price.basis,
        },
    )
