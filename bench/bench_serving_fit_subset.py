"""InferenceX rows the exact-layout evaluation can express today, predicted vs measured.

Run:  .venv/bin/python bench/bench_serving_fit_subset.py
Rows of ../shared/reference/inferencex/serving_fit.csv on one node, without MTP, disaggregation or
data-parallel attention (expert parallel is not modelled: an EP row is evaluated as its TP
layout), on the catalog's GPUs, models and engines (SGLang, vLLM, TensorRT-LLM); nominal isl/osl,
closed loop at the row's concurrency, weights = compute = the row's precision (fp4: fp8 KV).
Prints the median absolute error of TTFT, TPOT and output tokens/s per GPU, the rows refused, and
the Little's-law residual of the predictions themselves (predicted output tokens/s per GPU against
concurrency x osl / (TTFT + (osl - 1) x TPOT) / GPUs): a consistency check, not an accuracy one.
Nothing is fitted here. Kept as main evaluated these rows (EP as TP, nominal lengths) so its
figures compare across versions; the full replay with EP, DPA, MTP and disaggregation is
bench/bench_serving_fit.py (docs/BENCHMARKS.md "Serving: InferenceX fit set (issue 22)").
"""
import csv
import statistics
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from planner.engine.catalog_csv import load_accelerators_csv  # noqa: E402
from planner.engine.presets import preset_arch  # noqa: E402
from planner.engine.serving_layout import evaluate_layout  # noqa: E402

FIT_CSV = ROOT.parent / "shared" / "reference" / "inferencex" / "serving_fit.csv"
if not FIT_CSV.exists():
    FIT_CSV = Path("/work/shared/reference/inferencex/serving_fit.csv")
ACC = {a.id: a for a in load_accelerators_csv(ROOT / "catalog" / "data" / "accelerators.csv")}
GPU = {"h100": "nvidia-h100-sxm5-80gb", "h200": "nvidia-h200-sxm-141gb", "b200": "nvidia-b200-sxm-180gb",
       "b300": "nvidia-b300-sxm-288gb", "gb200": "nvidia-gb200-186gb", "mi300x": "amd-mi300x-192gb",
       "mi355x": "amd-mi355x-288gb", "mi325x": "amd-mi325x-256gb"}
MODEL = {"dsr1": "deepseek-r1-0528", "gptoss120b": "gpt-oss-120b", "qwen3.5": "qwen3.5-397b-a17b"}
FW = {"sglang": "sglang", "vllm": "vllm", "trt": "trtllm"}
PREC = {"fp4": ("fp4", "fp4", "fp8"), "fp8": ("fp8", "fp8", "fp8"), "bf16": ("bf16", "bf16", "bf16")}
with FIT_CSV.open(encoding="utf-8", newline="") as f:
    all_rows = list(csv.DictReader(f))
rows = [r for r in all_rows
        if r["disaggregated"] == "False" and r["speculative"] == "none" and r["data_parallel_attention"] == "False"
        and r["multinode"] == "False" and r["gpu"] in GPU and r["model_key"] in MODEL and r["framework"] in FW
        and r["precision"] in PREC and r["measured_output_tok_s_per_gpu"] and r["measured_ttft_ms"] and r["measured_tpot_ms"]]
groups = {}
for r in rows:
    groups.setdefault((r["model_key"], r["gpu"], r["framework"], r["precision"]), []).append(r)
err = {"ttft": [], "tpot": [], "out": []}
little = []
refused = 0
for (m, g, fw, p), rs in groups.items():
    w, c, kv = PREC[p]
    col = lambda k: np.array([float(x[k]) for x in rs])  # noqa: E731, B023
    res = evaluate_layout(arch=preset_arch(MODEL[m]), accelerator=ACC[GPU[g]], tensor_parallel=col("tensor_parallel"),
                          runtime=FW[fw], weights=w, compute=c, kv_cache=kv, input_tokens=col("isl"),
                          output_tokens=col("osl"), concurrency=col("concurrency"))
    for j, r in enumerate(rs):
        t, q, o = float(res["ttft_ms"][j]), float(res["tpot_ms"][j]), float(res["output_tokens_per_s_per_gpu"][j])
        if not (np.isfinite(t) and np.isfinite(q) and o > 0):
            refused += 1
            continue
        err["ttft"].append(abs(t / float(r["measured_ttft_ms"]) - 1))
        err["tpot"].append(abs(q / float(r["measured_tpot_ms"]) - 1))
        err["out"].append(abs(o / float(r["measured_output_tok_s_per_gpu"]) - 1))
        osl, cc, gpus = float(r["osl"]), float(r["concurrency"]), float(r["tensor_parallel"])
        little.append(abs(o / (cc * osl / ((t + (osl - 1) * q) / 1e3) / gpus) - 1))
print(f"rows {len(rows)}, evaluated {len(err['ttft'])}, refused {refused}")
md = {k: statistics.median(v) for k, v in err.items()}
print(f"MdAPE TTFT {md['ttft']:.1%} TPOT {md['tpot']:.1%} output tok/s/GPU {md['out']:.1%}")
print(f"Little's law residual of the predictions: median {statistics.median(little):.2%}, max {max(little):.2%}")
