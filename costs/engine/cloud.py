"""Cloud instances: on demand, spot, 1- and 3-year commitments (one kind of option each)."""

from __future__ import annotations

from dataclasses import replace
from decimal import Decimal

from catalog.domain.messages import Msg, figure

from .downtime import downtime_lines
from .inputs import HOURS_PER_MONTH, CloudOffer, Workload
from .lines import (
    RISK_ROW,
    Context,
    Line,
    Usage,
    ceil_div,
    ceil_to,
    fleet_text,
    gpus_text,
    hosts_text,
    item,
    layout_warnings,
    load_share,
    pools_detail,
    price_show,
    schedule_of,
    show,
    tokens,
    useful_hours,
)
from .money import ONE, ZERO
from .option import OptionCost
from .rows import engineering_lines, gpu_time_lines, storage_lines, traffic_lines

MODE_TEXT = {
    "cloud_on_demand": "on-demand",
    "cloud_spot": "spot",
    "cloud_commit_1y": "1-year commitment",
    "cloud_commit_3y": "3-year commitment",
}
TERM_MONTHS = {"cloud_commit_1y": 12, "cloud_commit_3y": 36}


def cloud_option(
    ctx: Context,
    w: Workload,
    offer: CloudOffer,
    mode: str,
    *,
    use: Usage,
    e: Decimal,
    gpu_count: int | None = None,
    inter_zone_gb: Decimal = ZERO,
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
    if base is None and mode in TERM_MONTHS and offer.on_demand is not None:
        key = "commit_discount_1y" if mode == "cloud_commit_1y" else "commit_discount_3y"
        disc = ctx.rate(key)
        base = replace(
            offer.on_demand,
            amount=offer.on_demand.amount * (ONE - disc.value),
            source=f"{offer.on_demand.source}; −{disc.value * 100:g} % ({disc.source})",
            basis="assumption",
        )
        rate_shown.append(show(key, disc.value, None, disc.unit, disc.source))
    if base is None:
        return None
    rate = ctx.net(base, path=path)
    instances = ceil_div(gpus, offer.gpus_per_instance) if gpus else 0
    if instances and ctx.redundancy == "n_plus_1":
        instances += 1  # one spare instance
    committed = mode in TERM_MONTHS
    n = ctx.horizon_months
    if committed:
        billed = (HOURS_PER_MONTH,) * n  # a commitment is paid for every hour, used or not
    elif use.uniform:
        billed = (ceil_to(use.hours[0], offer.billing_granularity_hours) if n else ZERO,) * n
    else:
        billed = tuple(ceil_to(h, offer.billing_granularity_hours) for h in use.hours)
    spot_lost = ZERO
    if mode == "cloud_spot" and use.u > 0:
        # each running instance is reclaimed independently: the work since the last checkpoint
        # (half an interval) plus the restart is run again after each interruption. A training run
        # is synchronous: any instance's interruption stops every instance, so each one re-runs that
        # time once per interruption anywhere in the fleet (instances x the per-instance rate).
        interruptions = ctx.value("spot_interruptions_per_month")
        fleet_factor = instances if w.is_training else 1
        spot_lost = interruptions * fleet_factor * (w.checkpoint_interval_hours / 2 + w.restart_hours)
        if use.uniform:
            billed = (billed[0] + spot_lost * use.u,) * n if n else ()
        else:
            billed = tuple(b + spot_lost * (h / HOURS_PER_MONTH) for b, h in zip(billed, use.hours, strict=True))
        rate_shown.append(
            show("spot_interruptions_per_month", interruptions, None, "per instance per running month", "")
        )
    sched = schedule_of(billed)
    month_hours = HOURS_PER_MONTH if sched is not None else (billed[0] if billed else ZERO)
    billed_total = sum(billed, ZERO)
    paid_gpu_hours = instances * offer.gpus_per_instance * billed_total
    paid = Line(
        row="gpu_time",
        key="gpu_time",
        label="GPU time",
        monthly=instances * month_hours * rate,
        market=True,
        origin_currency=base.currency,
        tag="gpu_rent",
        utilisation_driven=not committed,
        inputs={
            "instances": instances,
            "billed_hours_per_month": str((billed_total / n).quantize(Decimal("0.0001")).normalize())
            if n
            else "0",
            "rates": [price_show(f"{offer.instance_type} {MODE_TEXT[mode]}", base), *rate_shown],
        },
        schedule=sched,
        breakdown=(
            ctx.price_item(
                base,
                path=path,
                label=Msg(
                    "{instances} x {instance_type} x billed hours (incl. {hours} h re-run a running month)",
                    instances=instances, instance_type=offer.instance_type, hours=figure(spot_lost),
                )
                if spot_lost
                else Msg("{instances} x {instance_type} x billed hours", instances=instances,
                         instance_type=offer.instance_type),
                quantity=instances * billed_total / n if n else ZERO,
                quantity_unit="instance-hours per month (average)",
                months=n,
            ),
        ),
    )
    lines = gpu_time_lines(
        paid=paid, paid_gpu_hours=paid_gpu_hours, useful_gpu_hours=gpus * use.total_hours * e * load_share(w)
    )
    if committed:
        rest = max(0, TERM_MONTHS[mode] - n)
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
                    breakdown=(
                        ctx.price_item(
                            base,
                            path=path,
                            label=Msg("{instances} x {instance_type} x 730 h x {months} months after the horizon",
                                      instances=instances, instance_type=offer.instance_type, months=rest),
                            quantity=instances * HOURS_PER_MONTH * rest,
                            quantity_unit="instance-hours",
                            per="end",
                        ),
                    ),
                )
            )
    # a commitment runs the whole term; pay-as-you-go storage, traffic and people only while in use
    active = None if committed else use.active
    lines += storage_lines(ctx, w, scope=offer.provider, active=active)
    lines += traffic_lines(ctx, w, scope=offer.provider, active=active, inter_zone_gb=inter_zone_gb)
    lines += engineering_lines(ctx, "cloud", hosts=instances, active=active)
    lines += downtime_lines(
        ctx,
        "cloud",
        w=w,
        gpu_count=gpus,
        hosts=instances,
        gpu_hour_net=rate / offer.gpus_per_instance,
        use=use,
        active=active,
        # billed by the hour: a redone hour is paid (a commitment pays every hour anyway)
        rerun_billed_currency=None if committed else base.currency,
    )
    warnings = layout_warnings(w, hosts=instances, gpus_per_host=offer.gpus_per_instance, what="instance")
    if mode == "cloud_spot" and not w.is_training:
        lines.append(_spot_outage_line(ctx, w, use=use, instances=instances))
        warnings.append(
            Msg(
                "spot capacity can be reclaimed at any time: every interruption stops serving until a new "
                "instance is up (priced in the downtime-risk row); with a latency target (TTFT/TPOT) this "
                "puts the SLA at risk"
            )
            if w.latency_target
            else Msg(
                "spot capacity can be reclaimed at any time: every interruption stops serving until a new "
                "instance is up (priced in the downtime-risk row)"
            )
        )
    if base.basis == "assumption":
        warnings.append(
            Msg(
                "{mode} price assumed: the catalog lists none for this offer, on-demand minus the rate "
                "card's discount is used",
                mode=MODE_TEXT[mode],
            )
        )
    spare = instances > 0 and ctx.redundancy == "n_plus_1"
    return OptionCost(
        option_id=f"{w.candidate_id}|{mode}|{offer.provider}|{offer.region}|{offer.instance_type}",
        kind=mode,
        candidate_id=w.candidate_id,
        label=f"{fleet_text(w, gpus)} on {hosts_text(instances, spare)} x {offer.provider} {offer.instance_type} "
        f"({gpus_text(offer.gpus_per_instance)}), {offer.region}, {MODE_TEXT[mode]}",
        lines=tuple(lines),
        useful_gpu_hours_per_month=useful_hours(w, use, e) / n if n else ZERO,
        running_gpu_hours=w.gpu_count * use.total_hours,
        tokens_per_month=tokens(w),
        output_tokens_per_month=w.tokens_out_per_month,
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
            **pools_detail(w),
        },
    )


def _spot_outage_line(ctx: Context, w: Workload, *, use: Usage, instances: int) -> Line:
    """Serving on spot: each interruption of an instance takes its share of the fleet (1 of
    ``instances``) down for the restart time, at the cost of an hour of downtime (reduced by
    redundancy like any other incident). Interruptions count per instance."""
    interruptions = ctx.value("spot_interruptions_per_month")
    reduction = ZERO if ctx.redundancy == "none" else ctx.value(f"redundancy_reduction.{ctx.redundancy}")
    # instances x interruptions each x restart hours x 1/instances of the capacity = interruptions x restart
    hours = use.u * interruptions * w.restart_hours * (ONE - reduction)
    hour_cost, hour_shown = ctx.money("downtime_cost_per_hour")
    return Line(
        row=RISK_ROW,
        key="downtime_risk.spot_interruptions",
        label="Outages from spot interruptions",
        monthly=hours * hour_cost,
        vat=False,
        origin_currency=ctx.rate("downtime_cost_per_hour").currency or ctx.currency,
        tag="downtime",
        utilisation_driven=True,
        outage_hours=hours,
        inputs={
            "outage_hours_per_month": str(hours.normalize()),
            "restart_hours": str(w.restart_hours),
            "instances": instances,
            "rates": [
                show("spot_interruptions_per_month", interruptions, None, "per instance per running month", ""),
                show("redundancy", ctx.redundancy, None, f"reduces outages by {reduction}", ""),
                hour_shown,
            ],
        },
        breakdown=(
            item(
                label=Msg("{instances} instances x {interruptions} interruptions x {restart} h x 1/{instances} of "
                          "capacity x u {u} x (1 - {reduction})", instances=instances,
                          interruptions=figure(interruptions), restart=figure(w.restart_hours), u=figure(use.u),
                          reduction=figure(reduction)),
                quantity=hours,
                quantity_unit="outage hours per month",
                unit_price=hour_cost,
                price=ctx.rate("downtime_cost_per_hour").price(),
                months=ctx.horizon_months,
                name="downtime_cost_per_hour",
            ),
        ),
    )
