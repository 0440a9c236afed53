"""An owned baseline (a share of the servers bought) plus on-demand cloud burst for the rest."""

from __future__ import annotations

from dataclasses import replace
from decimal import ROUND_FLOOR, Decimal

from .cloud import cloud_option
from .inputs import CloudOffer, ServerPrice, Workload
from .lines import Context, Usage, fleet_text, gpus_text, pools_detail, tokens, useful_hours
from .money import ZERO
from .onprem import onprem_option
from .option import OptionCost


def hybrid_option(
    ctx: Context,
    w: Workload,
    server: ServerPrice,
    offer: CloudOffer,
    *,
    owned_share: Decimal,
    use: Usage,
    e: Decimal,
) -> OptionCost | None:
    servers = -(-w.gpu_count // server.gpus_per_server)
    owned = int((servers * owned_share).to_integral_value(rounding=ROUND_FLOOR))
    if owned < 1 or owned >= servers:
        return None  # no split to speak of: the on-prem or the cloud option already covers it
    owned_gpus = owned * server.gpus_per_server
    own = onprem_option(
        ctx, replace(w, gpu_count=owned_gpus, server_count=owned), server, use=use, e=e, kind="hybrid"
    )
    burst = cloud_option(ctx, w, offer, "cloud_on_demand", use=use, e=e, gpu_count=w.gpu_count - owned_gpus)
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
    n = ctx.horizon_months
    return OptionCost(
        option_id=f"{w.candidate_id}|hybrid|{server.accelerator_id}|{offer.provider}|{offer.instance_type}",
        kind="hybrid",
        candidate_id=w.candidate_id,
        label=f"{fleet_text(w)}: {owned_gpus} GPUs on {owned} x {server.gpus_per_server}-GPU server "
        f"owned + {w.gpu_count - owned_gpus} GPUs on {burst_instances} x {offer.provider} {offer.instance_type} "
        f"({gpus_text(offer.gpus_per_instance)}), {offer.region}, on-demand burst",
        lines=tuple(lines),
        useful_gpu_hours_per_month=useful_hours(w, use, e) / n if n else ZERO,
        tokens_per_month=tokens(w),
        output_tokens_per_month=w.tokens_out_per_month,
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
            "server": server.name,
            "gpus_per_instance": offer.gpus_per_instance,
            "provider": offer.provider,
            "region": offer.region,
            "instance_type": offer.instance_type,
            "accelerator": w.accelerator_name or w.accelerator_id,
            "tensor_parallel": w.tensor_parallel,
            "pipeline_parallel": w.pipeline_parallel,
            **pools_detail(w),
        },
    )
