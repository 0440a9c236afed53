"""An external model API: tokens in and out at a price per million, no GPUs, no weights to host."""

from __future__ import annotations

from decimal import Decimal

from catalog.domain.messages import Msg

from .downtime import downtime_lines
from .inputs import HOURS_PER_MONTH, ApiPrice, CpuInstance, Workload
from .lines import MILLION, Context, Line, Usage, price_show, tokens
from .money import ZERO
from .option import OptionCost
from .rows import engineering_lines, storage_lines, traffic_lines


def api_option(ctx: Context, w: Workload, api: ApiPrice) -> OptionCost | None:
    if tokens(w) is None:
        return None
    path = f"prices.api_prices.{api.provider}.{api.model}"
    t_in, t_out = w.tokens_in_per_month or ZERO, w.tokens_out_per_month or ZERO
    p_in, p_out = ctx.net(api.input_per_1m_tokens, path=path), ctx.net(api.output_per_1m_tokens, path=path)
    n = ctx.horizon_months
    lines = [
        Line(
            row="gpu_time",
            key="gpu_time.api_tokens",
            label="Model API tokens (instead of GPU time)",
            monthly=t_in / MILLION * p_in + t_out / MILLION * p_out,
            market=True,
            origin_currency=api.input_per_1m_tokens.currency,
            tag="api",
            inputs={
                "tokens_in_per_month": str(t_in),
                "tokens_out_per_month": str(t_out),
                "rates": [
                    price_show("input per 1M tokens", api.input_per_1m_tokens),
                    price_show("output per 1M tokens", api.output_per_1m_tokens),
                ],
            },
            breakdown=(
                ctx.price_item(
                    api.input_per_1m_tokens,
                    path=path,
                    label=Msg("input tokens"),
                    quantity=t_in / MILLION,
                    quantity_unit="M tokens per month",
                    months=n,
                ),
                ctx.price_item(
                    api.output_per_1m_tokens,
                    path=path,
                    label=Msg("output tokens"),
                    quantity=t_out / MILLION,
                    quantity_unit="M tokens per month",
                    months=n,
                ),
            ),
        )
    ]
    # The API hosts the weights: only what the team keeps itself is stored (datasets, indexes,
    # logs in object storage), no NVMe for weights it does not serve.
    kept = {tier: gb for tier, gb in w.storage_gb.items() if tier != "nvme"}
    cpu_lines, cpu_detail, unknowns = _cpu_server(ctx, w)
    lines += cpu_lines
    lines += storage_lines(ctx, _with_storage(w, kept), scope="api")
    lines += traffic_lines(ctx, w, scope="api")
    lines += engineering_lines(ctx, "api", hosts=0)
    lines += downtime_lines(
        ctx, "api", w=w, gpu_count=0, hosts=0, gpu_hour_net=ZERO, use=Usage(u=ZERO, hours=(ZERO,) * n)
    )
    return OptionCost(
        option_id=f"{w.candidate_id}|api|{api.provider}|{api.model}",
        kind="api",
        candidate_id=w.candidate_id,
        label=f"API: {api.provider} {api.model}",
        lines=tuple(lines),
        useful_gpu_hours_per_month=ZERO,
        tokens_per_month=tokens(w),
        output_tokens_per_month=w.tokens_out_per_month,
        training_gpu_hours_per_run=None,
        unknowns=unknowns,
        detail={
            "provider": api.provider,
            "model": api.model,
            "open_weights_model": api.open_weights_model,
            **({"cpu_server": cpu_detail} if cpu_detail else {}),
        },
    )


def cpu_instance_for(ctx: Context, w: Workload) -> CpuInstance | None:
    """The cheapest CPU instance (net per hour, reporting currency) with at least the physical
    cores and RAM the sizing states; None when none in the catalog is that large."""
    cores, ram = w.cpu_cores_needed or 0, w.host_ram_gib_needed or ZERO
    fits = [c for c in ctx.prices.cpu_instances if c.physical_cores >= cores and c.ram_gib >= ram]
    return min(
        fits,
        key=lambda c: (ctx.net(c.on_demand, path=f"prices.cpu_instances.{c.provider}.{c.instance_type}"),
                       c.provider, c.region, c.instance_type),
        default=None,
    )


def _cpu_server(ctx: Context, w: Workload) -> tuple[list[Line], dict, tuple[str, ...]]:
    """The server the agent itself runs on (orchestration, vector database, queues): one CPU
    instance rented on demand around the clock (730 h a month)."""
    if w.cpu_cores_needed is None:
        return [], {}, ()
    inst = cpu_instance_for(ctx, w)
    ram_text = f"{w.host_ram_gib_needed or ZERO:.1f}"
    if inst is None:
        return [], {}, (
            Msg("CPU server ({cores} cores, {ram_gib} GiB RAM): no CPU instance price in the catalog that large; "
                "not priced", cores=w.cpu_cores_needed, ram_gib=ram_text)
            if ctx.prices.cpu_instances else
            Msg("CPU server ({cores} cores, {ram_gib} GiB RAM): no CPU instance price in the catalog (or none "
                "within the chosen data residency); not priced", cores=w.cpu_cores_needed, ram_gib=ram_text),
        )
    path = f"prices.cpu_instances.{inst.provider}.{inst.instance_type}"
    hourly = ctx.net(inst.on_demand, path=path)
    detail = {
        "provider": inst.provider,
        "region": inst.region,
        "instance_type": inst.instance_type,
        "vcpus": inst.vcpus,
        "physical_cores": inst.physical_cores,
        "ram_gib": str(inst.ram_gib),
        "cores_needed": w.cpu_cores_needed,
        "ram_gib_needed": ram_text,
        "price_per_hour": str(inst.on_demand.amount),
        "currency": inst.on_demand.currency,
        # the same hour in the plan's currency, net of VAT, at the plan date's FX rate (the cost table's basis)
        "price_per_hour_net": str(hourly.quantize(Decimal("0.01"))),
        "plan_currency": ctx.currency,
        "source": inst.on_demand.source,
    }
    line = Line(
        row="infrastructure",
        key="infrastructure.cpu_server",
        label=Msg("CPU server for the agent: {provider} {instance_type} ({region}), on demand",
                  provider=inst.provider, instance_type=inst.instance_type, region=inst.region),
        monthly=HOURS_PER_MONTH * hourly,
        market=True,
        origin_currency=inst.on_demand.currency,
        tag="cloud",
        inputs={"rates": [price_show("on demand per instance-hour", inst.on_demand)],
                "instance_hours_per_month": str(HOURS_PER_MONTH)},
        breakdown=(
            ctx.price_item(
                inst.on_demand,
                path=path,
                label=Msg("CPU instance {instance_type}: {cores} cores, {ram_gib} GiB RAM", instance_type=inst.instance_type,
                          cores=inst.physical_cores, ram_gib=f"{inst.ram_gib:g}"),
                quantity=HOURS_PER_MONTH,
                quantity_unit="instance-hours per month",
                months=ctx.horizon_months,
            ),
        ),
    )
    return [line], detail, ()


def _with_storage(w: Workload, storage: dict[str, Decimal]) -> Workload:
    from dataclasses import replace

    return replace(w, storage_gb=storage)
