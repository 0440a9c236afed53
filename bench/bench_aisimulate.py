"""AISimulate 0.13 side by side with GPU Planner's serving model on the InferenceX fit set, in one run
(issue 22, part 7).

Run:  /work/venv-aisim/bin/pip install -r requirements-bench-aisim.txt   (once; its own venv)
      .venv/bin/python bench/bench_aisimulate.py [--aisim-python /work/venv-aisim/bin/python]
                                                 [--per-group N] [--timeout S] [--no-cache]
Every row of ../shared/reference/inferencex/serving_fit.csv is put to both models: ours in this
process (planner/engine/serving_replay_ix.py `replay`), AISimulate in its own venv as a subprocess
(bench/aisimulate_worker.py, JSON lines in and out), so the app's venv needs no new dependency.
MdAPE of TTFT, TPOT and output tokens/s per GPU (against the measured medians) is printed for both
on exactly the rows both evaluate, overall and per (GPU, model, engine, precision, mode); rows
either side refuses are counted with the reason.

How a row is put to AISimulate (`aisimulate predict`, its built-in engine, offline on CPU):
- closed loop at the row's concurrency, 10 x concurrency requests (the InferenceX client's
  num_prompts), input / output 0.9 x the nominal lengths (as ours: the client draws [0.8 L, L]);
- model: the bundled config of the row's model (DeepSeek-R1-0528 -> deepseek-ai/DeepSeek-R1, same
  architecture; fp4 Qwen3.5 -> nvidia/Qwen3.5-397B-A17B-NVFP4); fp4 DeepSeek-R1: MoE in nvfp4, the
  rest as the checkpoint; fp8 Qwen3.5: fp8_block; KV cache fp8 for fp8/fp4 rows (as ours);
- hardware h100_sxm / h200_sxm / b200_sxm / b300_sxm / gb200; backend sglang / vllm / trtllm (dynamo-X
  -> X, disaggregated); its default (current) performance-data version for that system and backend;
- layout: replicas = workers, a worker's GPUs = pool GPUs / workers; with data-parallel attention
  attention_data = the worker's GPUs, else tensor = the worker's GPUs; MoE over expert parallel
  (moe_expert = EP, moe_tensor = the rest); MTP: kind mtp, depth 1, 0.85 accepted draft tokens (ours
  assumes 1.85 tokens a step);
- its medians of TTFT and TPOT, and output tokens/s divided by the GPUs deployed (decode GPUs when
  disaggregated, as the measured column).
Refused: AMD GPUs (no AMD system in AISimulate), ATOM and MoRI engines, models not bundled, and any
row it raises on or does not finish within --timeout seconds (its reason counted).

AISimulate's answers are cached in bench/results/aisimulate_cache.jsonl (keyed by the configuration)
so a rerun is fast; --no-cache recomputes. --per-group N evaluates at most N rows per (GPU, model,
engine, precision, mode, ISL/OSL) group (evenly spaced by concurrency) where a full run does not fit
the time at hand: the figures then say so.
"""
from __future__ import annotations

import argparse
import collections
import datetime
import hashlib
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from planner.engine import serving_replay  # noqa: E402
from planner.engine.serving_replay_ix import load_rows, mode, pools, replay  # noqa: E402

CACHE = ROOT / "bench" / "results" / "aisimulate_cache.jsonl"
WORKER = ROOT / "bench" / "aisimulate_worker.py"
AISIM_PYTHON = "/work/venv-aisim/bin/python"
HW = {"h100": "h100_sxm", "h200": "h200_sxm", "b200": "b200_sxm", "b300": "b300_sxm", "gb200": "gb200"}
BACKEND = {"sglang": "sglang", "vllm": "vllm", "trt": "trtllm", "dynamo-sglang": "sglang",
           "dynamo-trt": "trtllm", "dynamo-vllm": "vllm"}
MODEL = {("dsr1", "fp8"): "deepseek-ai/DeepSeek-R1", ("dsr1", "fp4"): "deepseek-ai/DeepSeek-R1",
         ("gptoss120b", "fp4"): "openai/gpt-oss-120b", ("qwen3.5", "bf16"): "Qwen/Qwen3.5-397B-A17B",
         ("qwen3.5", "fp8"): "Qwen/Qwen3.5-397B-A17B", ("qwen3.5", "fp4"): "nvidia/Qwen3.5-397B-A17B-NVFP4",
         ("dsv4", "fp8"): "sgl-project/DeepSeek-V4-Pro-FP8", ("dsv4", "fp4"): "nvidia/DeepSeek-V4-Pro-NVFP4"}
QUANT = {("dsr1", "fp4"): {"moe_quant_mode": "nvfp4"},
         ("qwen3.5", "fp8"): {"gemm_quant_mode": "fp8_block", "moe_quant_mode": "fp8_block"}}
LENGTH_SHARE = 0.9
MTP_ACCEPTED_DRAFTS = 0.85


def _i(x, default=1):
    try:
        return int(float(x))
    except (TypeError, ValueError):
        return default


def _parallel(gpus: int, ep: int, dpa: bool) -> dict:
    ep = ep if ep > 1 and gpus % ep == 0 else 1
    p = {"attention_data": gpus, "tensor": 1} if dpa and gpus > 1 else {"tensor": gpus, "attention_data": 1}
    return {**p, "pipeline": 1, "moe_expert": ep, "moe_tensor": gpus // ep}


def aisim_job(r: dict) -> tuple[dict | None, str | None, int]:
    """(AISimulate prediction config, None, GPUs the output is divided by) or (None, why not, 0)."""
    if r["gpu"] not in HW:
        return None, f"GPU {r['gpu']}: no such system in AISimulate", 0
    if r["framework"] not in BACKEND:
        return None, f"engine {r['framework']}: not an AISimulate backend", 0
    key = (r["model_key"], r["precision"])
    if key not in MODEL:
        return None, f"model {r['model']} {r['precision']}: not bundled with AISimulate", 0
    if r["consistency"] != "ok" or not (r["measured_ttft_ms"] and r["measured_tpot_ms"]
                                        and r["measured_output_tok_s_per_gpu"]):
        return None, "topology fields incomplete or measurement missing", 0
    timing = {"kvcache_quant_mode": "fp8"} if r["precision"] in ("fp8", "fp4") else {}
    timing.update(QUANT.get(key, {}))
    c = _i(r["concurrency"])
    eng = {"mode": "aggregated", "model": MODEL[key], "hardware": HW[r["gpu"]],
           "backend": BACKEND[r["framework"]]}
    if r["speculative"] == "mtp":
        eng["speculation"] = {"kind": "mtp", "params": {"depth": 1},
                              "expected_accepted_tokens": MTP_ACCEPTED_DRAFTS}
    if r["disaggregated"] == "True":
        p = pools(r)
        if p is None:
            return None, "disaggregated pools: GPUs not a multiple of the workers", 0
        pw, pg, pep, pdpa, dw, dg, dep, ddpa = p
        eng["mode"] = "disaggregated"
        eng["workers"] = {
            "prefill": {"parallelism": {"replicas": pw, **_parallel(pg, pep, pdpa)}, "timing": dict(timing)},
            "decode": {"parallelism": {"replicas": dw, **_parallel(dg, dep, ddpa)}, "timing": dict(timing),
                       "scheduler": {"max_sequences": max(256, c)}}}
        gpus = dw * dg
    else:
        g = _i(r["tensor_parallel"])
        eng["workers"] = {"aggregated": {
            "parallelism": {"replicas": 1, **_parallel(g, _i(r["expert_parallel"]), r["data_parallel_attention"] == "True")},
            "timing": dict(timing), "scheduler": {"max_sequences": max(256, c)}}}
        gpus = g
    cfg = {"traffic": {"source": {"type": "synthetic", "input_tokens": round(LENGTH_SHARE * _i(r["isl"])),
                                  "output_tokens": round(LENGTH_SHARE * _i(r["osl"]))},
                       "load": {"type": "concurrency", "concurrency": c}, "stop": {"requests": 10 * c}},
           "engine": eng}
    return cfg, None, gpus


MEASURED_MODEL = {"meta-llama/Llama-3.1-8B-Instruct": "meta-llama/Meta-Llama-3.1-8B"}  # same shapes
MEASURED_GEMM = {"bf16": "bfloat16", "fp8": "fp8", "nvfp4": "nvfp4"}


def measured_job(r: dict) -> dict:
    """AISimulate prediction config for a row of serving_measured.csv (nominal lengths, its columns)."""
    c = _i(r["concurrency"])
    return {"traffic": {"source": {"type": "synthetic", "input_tokens": _i(r["isl"]), "output_tokens": _i(r["osl"])},
                        "load": {"type": "concurrency", "concurrency": c}, "stop": {"requests": 10 * c}},
            "engine": {"mode": "aggregated", "model": MEASURED_MODEL.get(r["model"], r["model"]),
                       "hardware": r["system"], "backend": r["backend"],
                       "workers": {"aggregated": {
                           "parallelism": {"replicas": 1, "tensor": _i(r["tensor_parallel"]),
                                           "pipeline": _i(r["pipeline_parallel"])},
                           "timing": {"gemm_quant_mode": MEASURED_GEMM[r["gemm_quant"]]},
                           "scheduler": {"max_sequences": max(256, c)}}}}}


def measured_side_by_side(python: str, timeout: int, cache: dict, per_group: int) -> None:
    """Both models on serving_measured.csv (TTFT and TPOT means; the file has no throughput column)."""
    all_rows = serving_replay.load_rows()
    chosen = pick(list(range(len(all_rows))), all_rows, per_group, _measured_group)
    rows = [all_rows[i] for i in chosen]
    ours = serving_replay.replay(rows)
    jobs = {_key(measured_job(r)): measured_job(r) for r in rows}
    t0 = time.perf_counter()
    run_aisim(jobs, python, timeout, cache)
    items, refused = [], collections.Counter()
    for r, o in zip(rows, ours, strict=True):
        a = cache[_key(measured_job(r))]
        s = a.get("summary") or {}
        vals = (s.get("mean_ttft_ms"), s.get("mean_tpot_ms"))
        if not a["ok"] or not all(isinstance(v, int | float) and v > 0 for v in vals):
            refused[(a.get("reason") or f"no usable answer {vals}")[:160]] += 1
            continue
        items.append({"row": r, "ours_ttft": abs(o["ttft_error"]), "ours_tpot": abs(o["tpot_error"]),
                      "aisim_ttft": _ape(vals[0], float(r["measured_ttft_ms"])),
                      "aisim_tpot": _ape(vals[1], float(r["measured_tpot_ms"]))})
    print(f"\n## serving_measured.csv: {len(all_rows)} rows; put to both: {len(rows)}"
          f"{f' (at most {per_group} per model/GPU/engine/precision/ISL-OSL group)' if per_group else ''}"
          f"; evaluated by both: {len(items)}"
          f" ({time.perf_counter() - t0:.0f} s for AISimulate's side)")
    for title, f in (("Overall", lambda x: "all"),
                     ("By model / GPU / engine / precision", lambda x: (x["row"]["model"], x["row"]["system"],
                                                                       x["row"]["backend"], x["row"]["precision"]))):
        groups = collections.defaultdict(list)
        for x in items:
            groups[f(x)].append(x)
        print(f"\n{title} (MdAPE against the measured means)\n")
        print("| group | rows | TTFT ours | TTFT AISimulate | TPOT ours | TPOT AISimulate |\n|---|---|---|---|---|---|")
        for g in sorted(groups, key=str):
            v = groups[g]
            name = " / ".join(g) if isinstance(g, tuple) else g
            print(f"| {name} | {len(v)} | " + " | ".join(
                _md([x[f"{w}_{k}"] for x in v]) for k in ("ttft", "tpot") for w in ("ours", "aisim")) + " |")
    print("\nRows AISimulate refused or did not finish (counted)\n")
    for why, n in refused.most_common():
        print(f"- {n}: {why}")
    if not refused:
        print("- none")


def _key(cfg: dict) -> str:
    return hashlib.sha256(json.dumps(cfg, sort_keys=True).encode()).hexdigest()[:20]


def load_cache() -> dict:
    out = {}
    if CACHE.exists():
        for line in CACHE.read_text().splitlines():
            d = json.loads(line)
            out[d["key"]] = d
    return out


CACHED_ONLY = False  # --cached-only: rows without a cached answer are counted as not run


def run_aisim(jobs: dict, python: str, timeout: int, cache: dict) -> str:
    """jobs: {key: config}. Fills cache with AISimulate's answers (appending them to CACHE); returns its version."""
    todo = {k: v for k, v in jobs.items() if k not in cache}
    version = cache.get("__version__", {}).get("version", "")
    if CACHED_ONLY:
        for k in todo:
            cache[k] = {"key": k, "ok": False, "reason": "not run in the time at hand (--cached-only)"}
        return version
    if not todo and version:
        return version
    CACHE.parent.mkdir(parents=True, exist_ok=True)
    proc = subprocess.Popen([python, str(WORKER), "--timeout", str(timeout)], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, text=True, env={**os.environ, "PYTHONWARNINGS": "ignore"})
    proc.stdin.write("".join(json.dumps({"key": k, "config": v}) + "\n" for k, v in todo.items()))
    proc.stdin.close()
    t0, n = time.perf_counter(), 0
    with CACHE.open("a") as fh:
        for line in proc.stdout:
            d = json.loads(line)
            cache[d["key"]] = d
            fh.write(json.dumps(d) + "\n")
            fh.flush()
            if d["key"] == "__version__":
                version = d["version"]
                continue
            n += 1
            if n % 25 == 0:
                print(f"  AISimulate: {n}/{len(todo)} rows, {time.perf_counter() - t0:.0f} s", file=sys.stderr)
    if proc.wait() != 0:
        raise SystemExit(f"AISimulate worker exited with {proc.returncode}")
    return version


def _ape(pred, meas):
    return abs(pred / meas - 1.0)


def _md(v):
    return f"{statistics.median(v):.1%}" if v else "–"


def table(title, items, by):
    groups = collections.defaultdict(list)
    for x in items:
        groups[by(x)].append(x)
    print(f"\n{title}\n")
    print("| group | rows | TTFT ours | TTFT AISimulate | TPOT ours | TPOT AISimulate | out tok/s/GPU ours"
          " | out tok/s/GPU AISimulate |")
    print("|---|---|---|---|---|---|---|---|")
    for g in sorted(groups, key=str):
        v = groups[g]
        cells = []
        for k in ("ttft", "tpot", "out"):
            cells += [_md([x[f"ours_{k}"] for x in v]), _md([x[f"aisim_{k}"] for x in v])]
        name = " / ".join(g) if isinstance(g, tuple) else g
        print(f"| {name} | {len(v)} | " + " | ".join(cells) + " |")


def _fit_group(r):
    return r["gpu"], r["model_key"], r["framework"], r["precision"], mode(r), r["isl"], r["osl"]


def _measured_group(r):
    return r["model"], r["system"], r["backend"], r["precision"], r["isl"], r["osl"]


def pick(rows_idx: list[int], rows: list[dict], per_group: int, group=_fit_group) -> list[int]:
    """Every row, or at most per_group rows per group, evenly spaced by concurrency from the lowest."""
    if not per_group:
        return rows_idx
    groups = collections.defaultdict(list)
    for i in rows_idx:
        groups[group(rows[i])].append(i)
    out = []
    for v in groups.values():
        v = sorted(v, key=lambda i: (_i(rows[i]["concurrency"]), rows[i]["id"]))
        step = max(1, len(v) / per_group)
        out += sorted({v[min(len(v) - 1, int(k * step))] for k in range(min(per_group, len(v)))})
    return sorted(out)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--aisim-python", default=AISIM_PYTHON)
    ap.add_argument("--per-group", type=int, default=0, help="at most N rows per group (0: every row)")
    ap.add_argument("--timeout", type=int, default=120, help="seconds of AISimulate simulation per row")
    ap.add_argument("--measured-per-group", type=int, default=0, help="at most N serving_measured rows per group")
    ap.add_argument("--no-cache", action="store_true")
    ap.add_argument("--measured", choices=("yes", "no", "only"), default="yes",
                    help="also (or only) the rows of ../shared/reference/serving_measured.csv")
    ap.add_argument("--cached-only", action="store_true", help="only AISimulate answers already cached")
    args = ap.parse_args(argv)
    global CACHED_ONLY  # noqa: PLW0603
    CACHED_ONLY = args.cached_only
    cache = {} if args.no_cache else load_cache()
    if args.no_cache and CACHE.exists():
        CACHE.unlink()
    if args.measured == "only":
        measured_side_by_side(args.aisim_python, args.timeout, cache, args.measured_per_group)
        return
    rows = load_rows()
    t0 = time.perf_counter()
    ours = replay(rows)
    t_ours = time.perf_counter() - t0
    jobs, refused_aisim, both_idx = {}, collections.Counter(), []
    meta = {}
    for i, r in enumerate(rows):
        cfg, why, gpus = aisim_job(r)
        if why:
            refused_aisim[why] += 1
            continue
        meta[i] = (_key(cfg), cfg, gpus)
        if not ours[i]["refused"]:
            both_idx.append(i)
    chosen = pick(both_idx, rows, args.per_group)
    for i in chosen:
        k, cfg, _ = meta[i]
        jobs[k] = cfg
    t1 = time.perf_counter()
    version = run_aisim(jobs, args.aisim_python, args.timeout, cache)
    t_aisim = time.perf_counter() - t1
    items, refused_run = [], collections.Counter()
    for i in chosen:
        r, o, (k, _, gpus) = rows[i], ours[i], meta[i]
        a = cache[k]
        s = a.get("summary") or {}
        vals = (s.get("median_ttft_ms"), s.get("median_tpot_ms"), s.get("output_throughput_tok_s"))
        if not a["ok"] or not all(isinstance(v, int | float) and v > 0 for v in vals):
            refused_run[(a.get("reason") or f"no usable answer {vals}")[:160]] += 1
            continue
        mt, mq, mo = (float(r[c]) for c in ("measured_ttft_ms", "measured_tpot_ms", "measured_output_tok_s_per_gpu"))
        items.append({"row": r, "mode": mode(r),
                      "ours_ttft": abs(o["ttft_err"]), "ours_tpot": abs(o["tpot_err"]), "ours_out": abs(o["out_err"]),
                      "aisim_ttft": _ape(vals[0], mt), "aisim_tpot": _ape(vals[1], mq),
                      "aisim_out": _ape(vals[2] / gpus, mo)})
    ours_ok = sum(1 for x in ours if not x["refused"])
    print(f"Date {datetime.datetime.now(datetime.UTC):%Y-%m-%d %H:%M} UTC; AISimulate {version} "
          f"({args.aisim_python}); {len(rows)} rows of serving_fit.csv")
    print(f"GPU Planner evaluates {ours_ok} rows ({t_ours:.1f} s); AISimulate can be given {len(meta)} rows; "
          f"both: {len(both_idx)}; put to AISimulate in this run: {len(chosen)}"
          f"{f' (at most {args.per_group} per GPU/model/engine/precision/mode/ISL-OSL group)' if args.per_group else ''}"
          f" ({t_aisim:.0f} s, cache {CACHE.relative_to(ROOT)}); evaluated by both: {len(items)}")
    table("Overall, on the rows both evaluate (MdAPE against the measured medians)", items, lambda x: "all")
    table("By GPU / model / engine / precision / mode", items,
          lambda x: (x["row"]["gpu"], x["row"]["model_key"], x["row"]["framework"], x["row"]["precision"], x["mode"]))
    for name, f in (("engine", lambda x: x["row"]["framework"]), ("GPU", lambda x: x["row"]["gpu"]),
                    ("model", lambda x: x["row"]["model_key"]), ("mode", lambda x: x["mode"])):
        table(f"By {name}", items, f)
    print("\nRows AISimulate cannot be given (counted, of all rows)\n")
    for why, n in refused_aisim.most_common():
        print(f"- {n}: {why}")
    print("\nRows put to AISimulate that it refused or did not finish (counted)\n")
    for why, n in refused_run.most_common():
        print(f"- {n}: {why}")
    if not refused_run:
        print("- none")
    print("\nRows GPU Planner refuses (counted, of all rows)\n")
    for why, n in collections.Counter(x["refused"] for x in ours if x["refused"]).most_common():
        print(f"- {n}: {why}")
    if args.measured == "yes":
        measured_side_by_side(args.aisim_python, args.timeout, cache, args.measured_per_group)


if __name__ == "__main__":
    main()
