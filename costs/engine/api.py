"""An external model API: tokens in and out at a price per million, no GPUs, no weights to host."""

from __future__ import annotations

from decimal import Decimal

from planner.engine.messages import Msg

from .inputs import ApiPrice, Workload
from .lines import (
    MILLION,
    Context,
    Line,
    Usage,
    downtime_lines,
    engineering_lines,
    price_show,
    storage_lines,
    tokens,
    traffic_lines,
)
from .money import ZERO
from .option import OptionCost


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
        training_gpu_hours_per_run=None,
        detail={"provider": api.provider, "model": api.model, "open_weights_model": api.open_weights_model},
    )


def _with_storage(w: Workload, storage: dict[str, Decimal]) -> Workload:
    from dataclasses import replace

    return replace(w, storage_gb=storage)
