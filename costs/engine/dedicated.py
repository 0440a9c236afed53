"""Dedicated GPU servers rented by the month (all hours paid; a job rents only the months it runs)."""

from __future__ import annotations

from decimal import Decimal

from catalog.domain.messages import Msg

from .downtime import downtime_lines
from .inputs import HOURS_PER_MONTH, DedicatedOffer, Workload
from .lines import (
    Context,
    Line,
    Usage,
    ceil_div,
    fleet_text,
    gpus_text,
    hosts_text,
    layout_warnings,
    pools_detail,
    price_show,
    tokens,
    useful_hours,
)
from .money import ZERO
from .option import OptionCost
from .rows import engineering_lines, gpu_time_lines, storage_lines, traffic_lines


def dedicated_option(
    ctx: Context, w: Workload, offer: DedicatedOffer, *, use: Usage, e: Decimal, inter_zone_gb: Decimal = ZERO
) -> OptionCost:
    path = f"prices.dedicated_offers.{offer.provider}.{offer.name}"
    servers = ceil_div(w.gpu_count, offer.gpus_per_server) + (1 if ctx.redundancy == "n_plus_1" else 0)
    rent = ctx.net(offer.monthly, path=path)
    active = use.active  # a job rents the servers for the months it runs (whole months)
    months = sum(active, ZERO) if active is not None else Decimal(ctx.horizon_months)
    paid = Line(
        row="gpu_time",
        key="gpu_time",
        label="GPU time",
        monthly=servers * rent,
        market=True,
        origin_currency=offer.monthly.currency,
        tag="gpu_rent",
        inputs={"servers": servers, "rates": [price_show(offer.name, offer.monthly)]},
        breakdown=(
            ctx.price_item(
                offer.monthly,
                path=path,
                label=Msg("{servers} x {provider} {name}", servers=servers, provider=offer.provider, name=offer.name),
                quantity=Decimal(servers),
                quantity_unit="servers",
                months=months,
            ),
        ),
    ).with_schedule(active)
    lines = gpu_time_lines(
        paid=paid,
        paid_gpu_hours=servers * offer.gpus_per_server * HOURS_PER_MONTH * months,
        useful_gpu_hours=useful_hours(w, use, e),
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
                inputs={"rates": [price_show("setup fee", offer.setup_fee)]},
                breakdown=(
                    ctx.price_item(
                        offer.setup_fee,
                        path=path,
                        label=Msg("setup fee"),
                        quantity=Decimal(servers),
                        quantity_unit="servers",
                        per="once",
                    ),
                ),
            )
        )
    lines += storage_lines(ctx, w, scope="dedicated", active=active)
    lines += traffic_lines(ctx, w, scope="dedicated", active=active, inter_zone_gb=inter_zone_gb)
    lines += engineering_lines(ctx, "dedicated", hosts=servers, active=active)
    lines += downtime_lines(
        ctx,
        "dedicated",
        w=w,
        gpu_count=w.gpu_count,
        hosts=servers,
        gpu_hour_net=rent / offer.gpus_per_server / HOURS_PER_MONTH,
        use=use,
        active=active,
    )
    spare = ctx.redundancy == "n_plus_1"
    n = ctx.horizon_months
    return OptionCost(
        option_id=f"{w.candidate_id}|dedicated|{offer.provider}|{offer.name}",
        kind="dedicated",
        candidate_id=w.candidate_id,
        label=f"{fleet_text(w)} on {hosts_text(servers, spare)} x {offer.provider} {offer.name} "
        f"({gpus_text(offer.gpus_per_server)}), dedicated, monthly",
        lines=tuple(lines),
        useful_gpu_hours_per_month=useful_hours(w, use, e) / n,
        running_gpu_hours=w.gpu_count * use.total_hours,
        tokens_per_month=tokens(w),
        output_tokens_per_month=w.tokens_out_per_month,
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
            **pools_detail(w),
        },
    )
