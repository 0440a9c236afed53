"""What a measured training run implies in the efficiency model's terms (efficiency, goodput, and
what compute.py predicts for the same run): used by team calibrations and the published-runs fit.
"""

from __future__ import annotations

from dataclasses import dataclass

from catalog.domain.messages import Msg

from .architecture import ModelArch
from .compute import (
    attention_ratio,
    attention_speedup,
    base_16bit,
    base_efficiency,
    gemm_tokens,
    microbatches_per_pipeline,
    model_width,
    qlora_factor,
    tp_comm_coefficient,
    tp_link_gb_s,
    training_efficiency,
    training_generation,
)
from .training_flops import recompute_factor, training_flops


@dataclass(frozen=True, kw_only=True)
class ImpliedEfficiency:
    mfu: float  # executed FLOPs / (GPUs x peak x step time), the model's efficiency
    goodput: float | None  # useful-step time / wall-clock, when whole-run figures were given
    model_efficiency: float  # what the presets predict for the same run (for comparison)
    explain: str


def implied_training_efficiency(*, arch: ModelArch, peak_tflops: float, peak_bf16_tflops: float | None = None,
                                architecture: str = "", compute_precision: str = "bf16", gpus: int,
                                tensor_parallel: int = 1, pipeline_parallel: int = 1, virtual_pipeline_stages: int = 1,
                                context_parallel: int = 1, sequence_length: int, global_batch_tokens: float,
                                micro_batch_size: int = 1, method: str = "full", trainable_params: float = 0.0,
                                checkpointing: str = "selective", tokens_per_second: float | None = None,
                                step_time_s: float | None = None, gpu_hours: float | None = None,
                                wall_clock_hours: float | None = None, tokens: float | None = None,
                                bandwidth_gb_s: float | None = None, accelerator=None,
                                expert_overlap: bool = False) -> ImpliedEfficiency:
    """What a measured training run implies in this model's terms (pure; used by team calibrations).

    Give the steady-state throughput as `tokens_per_second` (whole cluster) or `step_time_s` (one
    optimizer step of `global_batch_tokens`). With the whole run's `tokens` and its `gpu_hours` or
    `wall_clock_hours` as well, goodput = useful-step time / wall-clock time is implied too.
    Without throughput but with whole-run figures, the product efficiency x goodput is returned as
    `mfu` and goodput stays None. With `accelerator` (its AcceleratorSpec), an MoE model's predicted
    efficiency includes the expert-parallel all-to-all as the search charges it (moe_comm).
    """
    if gpus < 1 or peak_tflops <= 0 or sequence_length < 1 or global_batch_tokens <= 0:
        raise ValueError("gpus, peak_tflops, sequence_length and global_batch_tokens must be positive")
    if step_time_s is not None:
        if step_time_s <= 0:
            raise ValueError("step_time_s must be positive")
        if tokens_per_second is not None:
            raise ValueError("give tokens_per_second or step_time_s, not both")
        tokens_per_second = global_batch_tokens / step_time_s
    flops_per_token = training_flops(arch, tokens=1.0, method=method, trainable_params=trainable_params)
    flops_per_token *= recompute_factor(checkpointing=checkpointing, method=method)
    for name, value in (("gpu_hours", gpu_hours), ("wall_clock_hours", wall_clock_hours), ("tokens", tokens)):
        if value is not None and value <= 0:
            raise ValueError(f"{name} must be positive")
    run_hours = None
    if tokens and gpu_hours:
        run_hours = gpu_hours / gpus
    elif tokens and wall_clock_hours:
        run_hours = wall_clock_hours
    goodput = None
    if tokens_per_second is not None:
        if tokens_per_second <= 0:
            raise ValueError("tokens_per_second must be positive")
        mfu = tokens_per_second * flops_per_token / (gpus * peak_tflops * 1e12)
        if run_hours:
            goodput = min(1.0, tokens / tokens_per_second / 3600.0 / run_hours)
        how = Msg("{tps:,.0f} tokens/s x {fpt:.4g} executed FLOP/token / ({g} x {peak:g} TFLOP/s)",
                  tps=tokens_per_second, fpt=flops_per_token, g=gpus, peak=peak_tflops)
    elif run_hours:
        mfu = tokens * flops_per_token / (gpus * peak_tflops * 1e12 * run_hours * 3600.0)
        how = Msg("whole run: {t:.4g} tokens x {fpt:.4g} FLOP/token / ({g} x {peak:g} TFLOP/s x {h:,.0f} h); "
                  "efficiency x goodput", t=tokens, fpt=flops_per_token, g=gpus, peak=peak_tflops, h=run_hours)
    else:
        raise ValueError("give tokens_per_second or step_time_s, or tokens with gpu_hours or wall_clock_hours")
    dp = max(1, gpus // (tensor_parallel * pipeline_parallel * context_parallel))
    m = float(microbatches_per_pipeline(global_batch_tokens=global_batch_tokens, seq=sequence_length,
                                        micro_batch=micro_batch_size, dp=dp))
    gen = training_generation(architecture)
    base, _ = base_efficiency(gen, compute_precision)
    ep_moe = 1
    if accelerator is not None and arch.is_moe and arch.model_type != "vision":
        from . import fabrics, moe_comm

        ep_moe = int(moe_comm.expert_parallel(arch, dp=dp, cp=context_parallel, tp=tensor_parallel,
                                              domain=fabrics.scale_up_domain(accelerator)))
    ratio = peak_tflops / peak_bf16_tflops if peak_bf16_tflops else 1.0
    predicted = float(training_efficiency(base=base, hidden_size=model_width(arch), tp=tensor_parallel,
                                          x_attn=attention_ratio(arch, seq=sequence_length) / attention_speedup(architecture),
                                          peak_ratio=ratio,
                                          pp=pipeline_parallel, microbatches=m, vpp=virtual_pipeline_stages,
                                          layers=arch.layers if arch.is_transformer else None,
                                          method=method, vision=arch.model_type == "vision",
                                          compute_precision=compute_precision, base_16bit=base_16bit(gen),
                                          tokens_per_gpu=gemm_tokens(arch, sequence_length * micro_batch_size / context_parallel,
                                                                     ep_moe),
                                          tp_comm=None if accelerator is None else tp_comm_coefficient(
                                              generation=gen, tp=tensor_parallel, hidden_size=model_width(arch),
                                              peak_tflops=peak_tflops, link_gb_s=tp_link_gb_s(accelerator, tensor_parallel))))
    if method == "qlora" and bandwidth_gb_s:
        predicted *= float(qlora_factor(predicted, frozen_params=arch.params, peak_tflops=peak_tflops,
                                        bandwidth_gb_s=bandwidth_gb_s, exec_flops_per_token=flops_per_token,
                                        tokens_per_microbatch=sequence_length * micro_batch_size, cp=context_parallel))
    if accelerator is not None and arch.is_moe and arch.model_type != "vision":
        from . import fabrics, moe_comm

        ep = int(moe_comm.expert_parallel(arch, dp=dp, cp=context_parallel, tp=tensor_parallel,
                                          domain=fabrics.scale_up_domain(accelerator)))
        nbytes = float(moe_comm.all_to_all_bytes_per_token(arch, ep=ep, full_recompute=checkpointing == "full"))
        if nbytes > 0:
            predicted *= float(moe_comm.all_to_all_factor(
                predicted, bytes_per_token=nbytes, link_gb_s=moe_comm.link_one_way_gb_s(accelerator, ep)[0],
                peak_tflops=peak_tflops, exec_flops_per_token=flops_per_token, overlapped=expert_overlap))
    return ImpliedEfficiency(mfu=float(mfu), goodput=None if goodput is None else float(goodput),
                             model_efficiency=predicted, explain=how)
