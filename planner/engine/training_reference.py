"""Published training runs (planner/engine/data/training_published.json) in the model's terms.

Each throughput row gives the efficiency the run implies (`implied_efficiency.implied_training_efficiency`)
and the efficiency the model predicts for the same layout; whole-run rows are checked end to end
through size_workload (tests/unit/test_training_published.py). scripts/fit_training_efficiency.py
fits the few constants of compute.py on the rows with role "fit".
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from . import compute, fabrics, implied_efficiency, moe_comm, training_flops
from .architecture import ModelArch
from .hardware import AcceleratorSpec
from .memory import lora_adapter_params
from .precision import peak_tflops

DATA = Path(__file__).with_name("data") / "training_published.json"


@dataclass(frozen=True, kw_only=True)
class ThroughputRow:
    id: str
    role: str
    arch: ModelArch
    acc: AcceleratorSpec
    generation: str
    fmt: str
    observed: float  # implied efficiency (executed FLOPs / peak)
    hidden_size: float  # GEMM width: the hidden size; MoE: compute.model_width (experts' narrower GEMMs)
    tp: int
    x_attn: float  # attention-core / dense FLOPs over the chip's attention speed-up (compute.attention_speedup)
    peak_ratio: float
    pp: int
    microbatches: float
    vpp: int
    tolerance: float
    method: str = "full"
    pair: str | None = None  # QLoRA rows: the LoRA row of the same run
    use: str = "efficiency"  # "qlora_pair": only the LoRA/QLoRA ratio of the pair is used
    cp: int = 1
    peak_tflops: float = 0.0
    bandwidth_gb_s: float = 0.0
    exec_flops_per_token: float = 0.0
    tokens_per_microbatch: float = 0.0
    source_group: str = ""
    vendor: str = ""
    tp_comm: float = 0.0  # compute.tp_comm_coefficient of the row's chip and layout
    ep: int = 1  # MoE: expert parallelism (published, else moe_comm.expert_parallel's rule)
    a2a_bytes_per_token: float = 0.0  # MoE: moe_comm.all_to_all_bytes_per_token at ep
    a2a_link_gb_s: float = 0.0  # MoE: one-way link bandwidth the all-to-all is charged at (moe_comm)
    model_flops_per_token: float = 0.0  # executed training FLOPs per token (6N, x recomputation), the a2a's compute side

    @property
    def compute_precision(self) -> str:
        return {"8": "fp8", "4": "fp4"}.get(self.fmt, "bf16")

    def qlora_ratio_per_byte(self, efficiency: float) -> float:
        """Dequantisation / compute time per byte of QLORA_DEQUANT_BYTES_PER_PARAM at this efficiency."""
        return 1.0 / float(compute.qlora_factor(efficiency, frozen_params=float(self.arch.params), peak_tflops=self.peak_tflops,
                                                bandwidth_gb_s=self.bandwidth_gb_s, exec_flops_per_token=self.exec_flops_per_token,
                                                tokens_per_microbatch=self.tokens_per_microbatch, cp=self.cp,
                                                dequant_bytes=1.0)) - 1.0

    def predicted(self, constants: compute.EfficiencyConstants = compute.DEFAULT_CONSTANTS, base: float | None = None,
                  dequant_bytes: float = compute.QLORA_DEQUANT_BYTES_PER_PARAM, capped: bool | None = None) -> float:
        """Predicted efficiency; `capped` (default: when the engine's base is used) applies the engine's cap of
        an 8-bit step at the 16-bit efficiency of the layout (the fit of an 8-bit base leaves it off)."""
        if capped is None:
            capped = base is None
        if base is None:
            base = compute.base_efficiency(self.generation, self.compute_precision)[0]
        e = float(compute.training_efficiency(base=base, hidden_size=self.hidden_size, tp=self.tp, x_attn=self.x_attn,
                                              peak_ratio=self.peak_ratio, pp=self.pp, microbatches=self.microbatches,
                                              vpp=self.vpp, constants=constants,
                                              layers=self.arch.layers if self.arch.is_transformer else None,
                                              compute_precision=self.compute_precision,
                                              base_16bit=compute.base_16bit(self.generation) if capped else None,
                                              tokens_per_gpu=compute.gemm_tokens(
                                                  self.arch, self.tokens_per_microbatch / self.cp, self.ep),
                                              tp_comm=self.tp_comm))
        if self.a2a_bytes_per_token > 0:  # MoE: the expert-parallel all-to-all as the engine charges it
            e *= float(moe_comm.all_to_all_factor(e, bytes_per_token=self.a2a_bytes_per_token,
                                                  link_gb_s=self.a2a_link_gb_s, peak_tflops=self.peak_tflops,
                                                  exec_flops_per_token=self.model_flops_per_token))
        if self.method == "qlora":
            e /= 1.0 + dequant_bytes * self.qlora_ratio_per_byte(e)
        return e


def load_rows() -> list[dict]:
    return json.loads(DATA.read_text())["rows"]


def arch_of(row: dict) -> ModelArch:
    from .spec import parse_workload_spec

    return parse_workload_spec({"kind": "pretraining", "model": row["model"], "training": {"tokens": 1e9}}).model


def tokens_per_s_per_gpu(obs: dict, a: ModelArch, *, peak: float, x: float, prefix: str = "") -> float | None:
    """Tokens/s per GPU from a published figure in any of the file's conventions (None if absent)."""
    if prefix + "tokens_per_s_per_gpu" in obs:
        return obs[prefix + "tokens_per_s_per_gpu"]
    if prefix + "mfu_6n_plus_attention" in obs:
        return obs[prefix + "mfu_6n_plus_attention"] * peak * 1e12 / (6.0 * a.active_params * (1.0 + x))
    if prefix + "tflops_per_gpu_6n_plus_attention" in obs:
        return obs[prefix + "tflops_per_gpu_6n_plus_attention"] * 1e12 / (6.0 * a.active_params * (1.0 + x))
    if prefix + "tflops_per_gpu_executed_6n_plus_attention" in obs:
        return obs[prefix + "tflops_per_gpu_executed_6n_plus_attention"] * 1e12 / (8.0 * a.active_params * (1.0 + x))
    return None


def published_goodput(row: dict) -> float | None:
    """Whole run with a published steady-state throughput: steady GPU-hours / published GPU-hours."""
    a = arch_of(row)
    tps = tokens_per_s_per_gpu(row["observed"], a, peak=1.0, x=compute.attention_ratio(a, seq=row["sequence_length"]),
                               prefix="steady_")
    if tps is None:
        return None
    return row["observed"]["tokens"] / tps / 3600.0 / row["observed"]["gpu_hours"]


def throughput_rows(accelerators: Sequence[AcceleratorSpec]) -> list[ThroughputRow]:
    by_id = {a.id: a for a in accelerators}
    out = []
    for r in load_rows():
        if r["kind"] != "throughput":
            continue
        a = arch_of(r)
        acc = by_id[r["accelerator"]]
        prec = r["compute_precision"]
        peak, _ = peak_tflops(acc, prec)
        bf16, _ = peak_tflops(acc, "bf16")
        seq = r["sequence_length"]
        x = compute.attention_ratio(a, seq=seq)
        tps = tokens_per_s_per_gpu(r["observed"], a, peak=peak, x=x)
        trainable = 0.0
        if r["method"] != "full":
            lora = r.get("lora", {})
            trainable = float(lora_adapter_params(a, rank=lora.get("rank", 16), targets=tuple(lora.get("targets", ("q", "v")))))
        gbt = r["global_batch_tokens"]
        if gbt is None:  # FSDP without pipeline: the batch only matters for the bubble (pp = 1)
            gbt = seq * r["gpus"]
        imp = implied_efficiency.implied_training_efficiency(
            arch=a, peak_tflops=peak, peak_bf16_tflops=bf16, architecture=acc.architecture, compute_precision=prec,
            gpus=r["gpus"], tensor_parallel=r["tp"], pipeline_parallel=r["pp"], virtual_pipeline_stages=r["vpp"],
            context_parallel=r["cp"], sequence_length=seq, global_batch_tokens=gbt, micro_batch_size=r["micro_batch"],
            checkpointing=r["checkpointing"], tokens_per_second=tps * r["gpus"], method=r["method"],
            trainable_params=trainable)
        dp = max(1, r["gpus"] // (r["tp"] * r["pp"] * r["cp"]))
        m = float(compute.microbatches_per_pipeline(global_batch_tokens=gbt, seq=seq, micro_batch=r["micro_batch"], dp=dp))
        moe = a.is_moe and a.model_type != "vision"
        ep = int(r.get("ep") or (moe_comm.expert_parallel(a, dp=dp, cp=r["cp"], tp=r["tp"],
                                                          domain=fabrics.scale_up_domain(acc)) if moe else 1))
        out.append(ThroughputRow(
            id=r["id"], role=r["role"], arch=a, acc=acc, generation=compute.training_generation(acc.architecture),
            fmt=compute.format_class(prec), observed=imp.mfu, hidden_size=compute.model_width(a) if moe else a.hidden_size,
            tp=r["tp"],
            x_attn=x / compute.attention_speedup(acc.architecture), peak_ratio=peak / bf16 if bf16 else 1.0, pp=r["pp"], microbatches=m, vpp=r["vpp"],
            tolerance=r["tolerance"]["relative"], method=r["method"], pair=r.get("pair"), use=r.get("use", "efficiency"),
            cp=r["cp"], peak_tflops=peak,
            bandwidth_gb_s=acc.memory_bandwidth_gb_s,
            exec_flops_per_token=(4.0 * a.active_params + 6.0 * trainable) * training_flops.recompute_factor(
                checkpointing=r["checkpointing"], method=r["method"]),
            tokens_per_microbatch=seq * r["micro_batch"], source_group=r.get("source_group", ""), vendor=acc.vendor,
            tp_comm=float(compute.tp_comm_coefficient(generation=compute.training_generation(acc.architecture), tp=r["tp"],
                                                      hidden_size=compute.model_width(a), peak_tflops=peak,
                                                      link_gb_s=compute.tp_link_gb_s(acc, r["tp"]))),
            ep=ep, a2a_bytes_per_token=float(moe_comm.all_to_all_bytes_per_token(
                a, ep=ep, full_recompute=r["checkpointing"] == "full")) if moe else 0.0,
            a2a_link_gb_s=moe_comm.link_one_way_gb_s(acc, ep)[0] if moe else 0.0,
            model_flops_per_token=training_flops.training_flops(a, tokens=1.0, method=r["method"], trainable_params=trainable)
            * training_flops.recompute_factor(checkpointing=r["checkpointing"], method=r["method"])))
    return out


def run_goodput(row: dict) -> float | None:
    """The goodput a whole-run row publishes as an input (its effective training time: useful training over
    elapsed, every loss included), else None (the planner's default by GPU count applies)."""
    e = row.get("effective_training_time")
    return None if e is None else float(e["value"])


def whole_run_spec(row: dict, goodput: float | None = None) -> dict:
    """The WorkloadSpec a whole-run row describes (layout pins where published; goodput: the argument, else the
    row's published effective training time, else the default). A published effective training time already holds
    every loss of the run, so it replaces the default rather than multiplying it: goodput enters once."""
    t = {"tokens": row["observed"]["tokens"], "sequence_length": row["sequence_length"],
         "global_batch_tokens": int(row["global_batch_tokens"])}
    for k, key in (("tp", "tensor_parallel"), ("pp", "pipeline_parallel"), ("cp", "context_parallel"),
                   ("vpp", "virtual_pipeline_stages")):
        if row.get(k):
            t[key] = row[k]
    if row.get("expert_overlap"):  # published schedule overlaps the MoE all-to-all (DeepSeek-V3: DualPipe)
        t["expert_overlap"] = True
    if goodput is None:
        goodput = run_goodput(row)
    if goodput is not None:
        t["goodput"] = goodput
    hw = {"accelerator": row["accelerator"]}
    if row.get("gpus"):
        hw["count"] = row["gpus"]
    return {"kind": "pretraining", "model": row["model"], "precision": {"compute": row["compute_precision"]},
            "training": t, "hardware": hw}


def qlora_pairs(rows: Sequence[ThroughputRow], dequant_bytes: float = compute.QLORA_DEQUANT_BYTES_PER_PARAM):
    """(QLoRA row, observed QLoRA/LoRA efficiency ratio, predicted ratio from the observed LoRA efficiency)."""
    by_id = {r.id: r for r in rows}
    out = []
    for q in rows:
        if q.method == "qlora" and q.pair in by_id:
            lora = by_id[q.pair]
            out.append((q, q.observed / lora.observed, 1.0 / (1.0 + dequant_bytes * q.qlora_ratio_per_byte(lora.observed))))
    return out


def fit_dequant_bytes(rows: Sequence[ThroughputRow]) -> float:
    """QLORA_DEQUANT_BYTES_PER_PARAM: geometric mean over the QLoRA "fit" rows of the bytes per parameter
    that turn the observed LoRA efficiency of the paired run into the observed QLoRA efficiency."""
    by_id = {r.id: r for r in rows}
    ks = []
    for q in rows:
        if q.method == "qlora" and q.role == "fit" and q.pair in by_id:
            lora = by_id[q.pair]
            ks.append((lora.observed / q.observed - 1.0) / q.qlora_ratio_per_byte(lora.observed))
    return float(np.exp(np.mean(np.log(ks))))


def log_errors(rows: Sequence[ThroughputRow], **kw) -> np.ndarray:
    return np.array([np.log(r.predicted(**kw) / r.observed) for r in rows])
