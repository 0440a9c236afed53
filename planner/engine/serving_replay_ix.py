"""Replay the InferenceX rows (../shared/reference/inferencex/serving_fit.csv) through the serving
model: aggregated layouts (TP, expert parallel, data-parallel attention, MTP) by evaluate_layout,
disaggregated prefill/decode by serving_disagg.evaluate_disaggregated.

Shared by bench/bench_serving_fit.py, scripts/fit_serving_moe.py and the tests. How a row is put
to the model (docs/BENCHMARKS.md "Serving: InferenceX fit set (issue 22)"):
- lengths: 0.9 x the nominal isl / osl (the client draws each request's lengths uniformly from
  [0.8 L, L]; the README of the data: "the mean real length is about 0.9 x L");
- closed loop at the row's concurrency; weights = compute = the row's precision, KV cache fp8 for
  fp8/fp4 rows (the engines' recipes run DeepSeek-R1 and gpt-oss with an fp8 KV cache), bf16 else;
- TTFT: the model's median (`ttft_p50_ms`) against the row's `measured_ttft_ms`, a median over requests (README);
  the closed loop's start-up cohort is in the mean, not the median (docs/SIZING.md "Closed-loop TTFT");
- output tokens/s per GPU against the row's: per GPU deployed, per decode GPU when disaggregated;
- a row is refused (counted, with the reason) when its model is not in the catalog, its topology
  fields are incomplete (`consistency` not ok; the 34 early GB200 disaggregated rows record only the
  total GPU count and the README gives no rule to split it), or the layout does not hold the model;
  aggregated rows flagged `no_input_output_split` are kept, their output tokens/s derived from the
  total by the documented lengths (measured_output).
"""

from __future__ import annotations

import csv
from pathlib import Path

import numpy as np

from .catalog_csv import load_accelerators_csv
from .hardware import generation_of
from .precision import WEIGHT_SCHEMES, WeightFormat
from .presets import preset_arch
from .serving_disagg import Pool, evaluate_disaggregated
from .serving_layout import evaluate_layout

ROOT = Path(__file__).resolve().parents[2]
FIT_CSV = ROOT.parent / "shared" / "reference" / "inferencex" / "serving_fit.csv"
if not FIT_CSV.exists():  # a git worktree under /work/wt/<name>: the shared data sits beside the main checkout
    FIT_CSV = Path("/work/shared/reference/inferencex/serving_fit.csv")
GPU = {"h100": "nvidia-h100-sxm5-80gb", "h200": "nvidia-h200-sxm-141gb", "b200": "nvidia-b200-sxm-180gb",
       "b300": "nvidia-b300-sxm-288gb", "gb200": "nvidia-gb200-186gb", "mi300x": "amd-mi300x-192gb",
       "mi355x": "amd-mi355x-288gb", "mi325x": "amd-mi325x-256gb"}
MODEL = {"dsr1": "deepseek-r1-0528", "gptoss120b": "gpt-oss-120b", "qwen3.5": "qwen3.5-397b-a17b",
         "dsv4": "deepseek-v4-pro"}
RUNTIME = {"sglang": "sglang", "vllm": "vllm", "trt": "trtllm", "atom": "atom", "dynamo-sglang": "sglang",
           "dynamo-trt": "trtllm", "dynamo-vllm": "vllm", "mori-sglang": "sglang"}
PREC = {"fp4": ("fp4", "fp4", "fp8"), "fp8": ("fp8", "fp8", "fp8"), "bf16": ("bf16", "bf16", "bf16")}
LENGTH_SHARE = 0.9  # mean real length / nominal (README of serving_fit.csv)


def served_weights(arch, label: str) -> str | WeightFormat:
    """The weights a row's engine holds. A label naming the published checkpoint's non-expert format while the
    checkpoint stores its experts narrower is that checkpoint as published: DeepSeek-V4-Pro "fp8" is
    deepseek-ai/DeepSeek-V4-Pro, FP8 with MXFP4 experts (103-104 GB per GPU at TP8 on H200 as SGLang logs it,
    SemiAnalysisAI/InferenceX issue #2128, 2026-09-09), not 1.6 TB of FP8. Otherwise the label's format."""
    w = PREC[label][0]
    if not arch.checkpoint_weights:
        return w
    own = WeightFormat(arch.checkpoint_weights)
    rest = WEIGHT_SCHEMES[own.parts["rest"]][0]
    return own if rest == w and str(own) != w else w
# Engines whose InferenceX recipes schedule asynchronously: the vLLM ones set `async-scheduling: true`
# (SemiAnalysisAI/InferenceX benchmarks/gptoss_fp4_h100.sh and gptoss_fp4_b200.sh @1fc5d73c,
# gptoss_fp4_h200.sh @16cd9556; read 2026-12-03).
ASYNC_SCHEDULING = ("vllm",)


# SGLang's --scheduler-recv-interval as the InferenceX single-node recipes set it (the rows do not record it;
# SemiAnalysisAI/InferenceX benchmarks/single_node/fixed_seq_len/*.sh @843c6254, read 2026-12-04): the DeepSeek-R1
# and Qwen3.5 Blackwell recipes poll every 10 decode steps below 16 clients and every 30 from 16 (dsr1_fp4_b200.sh,
# dsr1_fp8_b200.sh, dsr1_fp8_b300.sh, their _mtp siblings, qwen3.5_fp4_b300.sh, qwen3.5_bf16_b200/b300.sh), except
# DeepSeek-R1 FP8 at TP4 (10) and Qwen3.5 FP4/FP8 on B200 (30 above 4 clients) and FP8 on B300 (10); the Qwen3.5
# CDNA recipes poll every 30 (qwen3.5_fp8_mi300x.sh, qwen3.5_fp8_mi355x.sh, qwen3.5_bf16_mi300x/mi355x.sh); with
# data-parallel attention every step (SGLang's skipper does not run with DP attention). None: the recipe sets
# nothing, the group's constant applies.
def recipe_poll_steps(r: dict) -> float | None:
    if r["framework"] != "sglang" or _b(r.get("data_parallel_attention")) or _b(r.get("disaggregated")):
        return None
    c, model, gpu, prec = _i(r.get("concurrency")), r["model_key"], r["gpu"], r["precision"]
    if gpu in ("mi300x", "mi325x", "mi355x"):
        return 30.0 if model == "qwen3.5" else None
    if gpu not in ("b200", "b300") or model not in ("dsr1", "qwen3.5"):
        return None
    if model == "dsr1" and prec == "fp8" and _i(r["tensor_parallel"]) == 4:
        return 10.0
    if model == "qwen3.5" and gpu == "b200" and prec in ("fp4", "fp8"):
        return 30.0 if c > 4 else 10.0
    if model == "qwen3.5" and gpu == "b300" and prec == "fp8":
        return 10.0
    return 30.0 if c >= 16 else 10.0


def load_rows(path: Path | None = None) -> list[dict]:
    path = path or FIT_CSV
    with path.open(encoding="utf-8", newline="") as f:
        return list(csv.DictReader(f))


def _accelerators() -> dict:
    return {a.id: a for a in load_accelerators_csv(ROOT / "catalog" / "data" / "accelerators.csv")}


_ACC: dict = {}


def accelerator(gpu: str):
    if not _ACC:
        _ACC.update(_accelerators())
    return _ACC.get(GPU.get(gpu, ""))


def _b(x) -> bool:
    return str(x) == "True"


def _i(x, default=1) -> int:
    try:
        return int(float(x))
    except (TypeError, ValueError):
        return default


def mode(r: dict) -> str:
    parts = ["disagg" if _b(r["disaggregated"]) else "agg"]
    if _i(r["expert_parallel"]) > 1:
        parts.append("EP")
    if _b(r["data_parallel_attention"]):
        parts.append("DPA")
    if r["speculative"] == "mtp":
        parts.append("MTP")
    return "+".join(parts)


def refusal(r: dict) -> str | None:
    """Why a row cannot be put to the model (None: it can)."""
    if r["model_key"] not in MODEL:
        return f"model {r['model']} not in the catalog"
    if accelerator(r["gpu"]) is None:
        return f"GPU {r['gpu']} not in the catalog"
    if r["framework"] not in RUNTIME or r["precision"] not in PREC:
        return f"engine {r['framework']} / precision {r['precision']} not modelled"
    if r["consistency"] != "ok" and not (r["consistency"] == OUTPUT_SPLIT_MISSING and not _b(r["disaggregated"])):
        return f"topology fields incomplete ({r['consistency']})"
    if not (r["measured_ttft_ms"] and r["measured_tpot_ms"] and measured_output(r)):
        return "measurement missing"
    if _b(r["disaggregated"]) and pools(r) is None:
        return "disaggregated pools: GPUs not a multiple of the workers"
    return None


# Aggregated rows published with the total throughput only (README of the data: output tokens/s split
# missing). With --ignore-eos and input / output lengths both drawn uniformly from [0.8 L, L] (README, "How a
# point was measured"), output tokens are osl / (isl + osl) of all tokens: on the 2,762 aggregated rows that
# publish both, the ratio matches within -0.7 / +1.9 % (median 0.0 %).
OUTPUT_SPLIT_MISSING = "no_input_output_split"


def measured_output(r: dict) -> float | None:
    """Output tokens/s per GPU (per decode GPU when disaggregated) as published, or derived from the total
    throughput of an aggregated row by the length split above."""
    if r["measured_output_tok_s_per_gpu"]:
        return float(r["measured_output_tok_s_per_gpu"])
    if r["consistency"] == OUTPUT_SPLIT_MISSING and r["measured_throughput_tok_s_per_gpu"]:
        isl, osl = float(r["isl"]), float(r["osl"])
        return float(r["measured_throughput_tok_s_per_gpu"]) * osl / (isl + osl)
    return None


def _pool(workers, tp, ep, dpa, gpus) -> tuple | None:
    """(workers, GPUs per worker, EP, DPA). A worker spans gpus / workers GPUs; where the recorded TP
    is smaller (SGLang DP-attention rows record the attention TP, e.g. tp 1 with dp 4), the worker's
    tensor-parallel group is its GPUs (attention split by DPA, experts by EP or TP)."""
    if workers < 1 or gpus < 1 or gpus % workers:
        return None
    g = gpus // workers
    if dpa and tp == 1 and ep <= 1:
        # tp 1 and ep 1 under DP attention are per attention rank (Dynamo SGLang on GB200): every SGLang
        # DP-attention recipe of those runs sets ep-size = tp-size = dp-size = the worker's GPUs
        # (NVIDIA/srt-slurm recipies/gb200-fp4|fp8/*/{max-tpt,mid-curve}.yaml @fbb628e7, 2025-12; unchanged @c88ef731)
        ep = g
    return workers, g, ep if ep > 1 and g % ep == 0 else 1, dpa


def pools(r: dict) -> tuple | None:
    p = _pool(_i(r["prefill_workers"]), _i(r["prefill_tp"]), _i(r["prefill_ep"]), _b(r["prefill_dp_attention"]),
              _i(r["num_prefill_gpu"], -1))
    d = _pool(_i(r["decode_workers"]), _i(r["tensor_parallel"]), _i(r["expert_parallel"]),
              _b(r["data_parallel_attention"]), _i(r["num_decode_gpu"], -1))
    return None if p is None or d is None else p + d


def group_key(r: dict) -> tuple:
    rt = RUNTIME[r["framework"]]
    gen = generation_of(accelerator(r["gpu"]).architecture)
    return (r["model_key"], r["gpu"], rt, gen, r["precision"], r["speculative"],
            pools(r) if _b(r["disaggregated"]) else None, r["framework"] in ASYNC_SCHEDULING, recipe_poll_steps(r))


def replay(rows: list[dict], consts_by_group: dict | None = None) -> list[dict]:
    """One result per row (same order): predicted / measured TTFT, TPOT, output tok/s per GPU, or the
    refusal. consts_by_group: {(runtime, generation): {constant: value}} overrides (the fit)."""
    out: list[dict | None] = [None] * len(rows)
    groups: dict[tuple, list[int]] = {}
    for i, r in enumerate(rows):
        why = refusal(r)
        if why:
            out[i] = {"row": r, "refused": why}
        else:
            groups.setdefault(group_key(r), []).append(i)
    for key, idx in groups.items():
        model, gpu, rt, gen, prec, spec, layout, async_scheduling, poll = key
        arch, acc = preset_arch(MODEL[model]), accelerator(gpu)
        _, c, kv = PREC[prec]
        w = served_weights(arch, prec)
        consts = (consts_by_group or {}).get((rt, gen))
        if poll is not None:
            consts = {**(consts or {}), "scheduler_poll_steps": poll}
        col = lambda k: np.array([float(rows[i][k]) for i in idx])  # noqa: E731, B023
        common = dict(arch=arch, accelerator=acc, runtime=rt, weights=w, compute=c, kv_cache=kv,
                      input_tokens=LENGTH_SHARE * col("isl"), output_tokens=LENGTH_SHARE * col("osl"),
                      concurrency=col("concurrency"), speculative=spec, consts=consts,
                      async_scheduling=async_scheduling)
        if layout is None:
            res = evaluate_layout(**common, tensor_parallel=col("tensor_parallel"),
                                  expert_parallel=col("expert_parallel"),
                                  data_parallel_attention=np.array([_b(rows[i]["data_parallel_attention"]) for i in idx]))
            out_key = "output_tokens_per_s_per_gpu"
        else:
            pw, ptp, pep, pdpa, dw, dtp, dep, ddpa = layout
            res = evaluate_disaggregated(**common, prefill=Pool(pw, ptp, pep, pdpa), decode=Pool(dw, dtp, dep, ddpa))
            out_key = "output_tokens_per_s_per_decode_gpu"
        fits = np.broadcast_to(res["fits"], (len(idx),))
        for j, i in enumerate(idx):
            r = rows[i]
            t, q, o = float(res["ttft_p50_ms"][j]), float(res["tpot_ms"][j]), float(res[out_key][j])
            if not fits[j]:
                out[i] = {"row": r, "refused": "the layout does not hold the model (memory)"}
                continue
            if not (np.isfinite(t) and np.isfinite(q) and o > 0):
                out[i] = {"row": r, "refused": "no steady operating point"}
                continue
            mt, mq, mo = float(r["measured_ttft_ms"]), float(r["measured_tpot_ms"]), measured_output(r)
            out[i] = {"row": r, "refused": None, "runtime": rt, "generation": gen, "mode": mode(r),
                      "ttft_ms": t, "tpot_ms": q, "out_tok_s_gpu": o,
                      "ttft_err": t / mt - 1.0, "tpot_err": q / mq - 1.0, "out_err": o / mo - 1.0}
    return out


def mdape(results: list[dict], key: str) -> float:
    v = [abs(x[key]) for x in results if not x["refused"]]
    return float(np.median(v)) if v else float("nan")


def summary(results: list[dict], by=None) -> list[dict]:
    """MdAPE of TTFT, TPOT and output tok/s per GPU per group (by: a function of a result), and overall."""
    groups: dict = {}
    for x in results:
        groups.setdefault(by(x) if by else "all", []).append(x)
    table = []
    for k in sorted(groups, key=str):
        v = groups[k]
        ok = [x for x in v if not x["refused"]]
        table.append({"group": k, "rows": len(v), "evaluated": len(ok), "ttft": mdape(ok, "ttft_err"),
                      "tpot": mdape(ok, "tpot_err"), "out": mdape(ok, "out_err"),
                      # signed: above 0 the model promises more output tokens/s than was measured
                      "out_signed": float(np.median([x["out_err"] for x in ok])) if ok else float("nan")})
    return table
