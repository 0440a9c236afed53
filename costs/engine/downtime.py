"""The downtime-risk row every kind shares: platform incidents and GPU-server failures (expected cost, beside the budget)."""

from __future__ import annotations

from decimal import Decimal

from catalog.domain.messages import Msg, figure

from .inputs import HOURS_PER_MONTH, Workload
from .lines import (
    RISK_ROW,
    Context,
    Line,
    Usage,
    item,
    schedule_of,
    show,
)
from .money import ONE, ZERO


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
    """The downtime lines (below), built once per plan for the same inputs: the offers of one
    configuration share them (a serving fleet's lines do not depend on the offer's price)."""
    training = w.is_training and bool(gpu_count)
    # Decimals by their text: 2 and 2.0 are equal keys but would show differently. The usage by its
    # identity (cost_plan shares one Usage per running share; the memo keeps it alive, so its id
    # cannot be taken by another object while the entry exists)
    key = ("downtime", kind, gpu_count, hosts, id(use), active,
           w.is_training, str(w.checkpoint_interval_hours), str(w.restart_hours),
           # only a training job's redone GPU-hours are priced at the GPU-hour and billed by the hour
           str(gpu_hour_net) if training else None, rerun_billed_currency if training else None)
    hit = ctx.memo.get(key)
    if hit is None:
        hit = ctx.memo[key] = (use, _downtime_lines(ctx, kind, w=w, gpu_count=gpu_count, hosts=hosts,
                                                    gpu_hour_net=gpu_hour_net, use=use, active=active,
                                                    rerun_billed_currency=rerun_billed_currency))
    return list(hit[1])


def _downtime_lines(
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
    # a service is exposed to platform incidents every month it is in use; a job only while it runs
    # (a 70-hour run meets 70 hours' share of a year's incidents, not a whole month's)
    exposure = tuple(h / HOURS_PER_MONTH for h in use.hours) if use.job else active
    months = sum(exposure, ZERO) if exposure is not None else Decimal(ctx.horizon_months)
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
        ).with_schedule(exposure)
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
