"""Replay measured serving rows (../shared/reference/serving_measured.csv) through evaluate_layout.

Shared by the calibration test (tests/unit/test_serving_measured.py), the benchmark
(bench/bench_serving.py), the constant fit (scripts/fit_serving_constants.py) and the peer
comparison (bench/bench_serving_peer.py). Rows of one model / GPU / engine / precision run in one
vectorised call.
"""

from __future__ import annotations

import csv
from collections.abc import Iterable, Mapping
from pathlib import Path

import numpy as np

from .calibration import NO_CALIBRATIONS, Calibrations
from .catalog_csv import load_accelerators_csv
from .presets import preset_arch
from .serving_layout import evaluate_layout

ROOT = Path(__file__).resolve().parents[2]
MEASURED_CSV = ROOT.parent / "shared" / "reference" / "serving_measured.csv"
LOCAL_CSV = ROOT / "tests" / "unit" / "data" / "serving_measured.csv"
ACCELERATORS_CSV = ROOT / "catalog" / "data" / "accelerators.csv"

SYSTEMS = {"h100_sxm": "nvidia-h100-sxm5-80gb", "gb200": "nvidia-gb200-186gb"}
MODELS = {"Qwen/Qwen3-32B": "qwen3-32b", "meta-llama/Llama-3.1-8B-Instruct": "llama-3.1-8b"}
# The file gives the GEMM format; the KV-cache format is not in it. Assumption: fp8/fp4 GEMM rows
# run an fp8 KV cache (TensorRT-LLM's and vLLM's usual pairing), bf16 rows a bf16 KV cache.
PRECISIONS = {"bf16": ("bf16", "bf16", "bf16"), "fp8": ("fp8", "fp8", "bf16"), "fp4": ("fp4", "fp4", "fp8")}


def load_rows(path: Path | None = None) -> list[dict]:
    path = path or (MEASURED_CSV if MEASURED_CSV.exists() else LOCAL_CSV)
    with path.open(encoding="utf-8", newline="") as f:
        return list(csv.DictReader(f))


def _accelerators() -> dict:
    return {a.id: a for a in load_accelerators_csv(ACCELERATORS_CSV)}


def replay(rows: Iterable[Mapping], *, calibrations: Calibrations = NO_CALIBRATIONS, consts_by_runtime=None) -> list[dict]:
    """Predicted vs measured TTFT/TPOT per row (same order as `rows`).

    Each output row keeps id, model, system, backend, precision, tp, isl, osl, concurrency and adds
    predicted_ttft_ms, predicted_tpot_ms, measured_*, the relative errors and the bottleneck."""
    rows = list(rows)
    accs = _accelerators()
    groups: dict[tuple, list[int]] = {}
    for i, r in enumerate(rows):
        groups.setdefault((r["model"], r["system"], r["backend"], r["precision"]), []).append(i)
    out: list[dict | None] = [None] * len(rows)
    for (model, system, backend, precision), idx in groups.items():
        arch = preset_arch(MODELS[model])
        acc = accs[SYSTEMS[system]]
        w, c, kv = PRECISIONS[precision]
        col = lambda k: np.array([float(rows[i][k]) for i in idx])  # noqa: E731, B023
        consts = (consts_by_runtime or {}).get(backend)
        res = evaluate_layout(arch=arch, accelerator=acc, tensor_parallel=col("tensor_parallel"),
                              pipeline_parallel=col("pipeline_parallel"), runtime=backend, weights=w, compute=c,
                              kv_cache=kv, input_tokens=col("isl"), output_tokens=col("osl"),
                              concurrency=col("concurrency"), calibrations=calibrations, consts=consts)
        for j, i in enumerate(idx):
            r = rows[i]
            mt, mp = float(r["measured_ttft_ms"]), float(r["measured_tpot_ms"])
            pt, pq = float(res["ttft_ms"][j]), float(res["tpot_ms"][j])
            out[i] = {
                "id": r["id"], "model": model, "system": system, "backend": backend, "precision": precision,
                "tensor_parallel": int(float(r["tensor_parallel"])), "isl": int(float(r["isl"])),
                "osl": int(float(r["osl"])), "concurrency": int(float(r["concurrency"])),
                "measured_ttft_ms": mt, "measured_tpot_ms": mp, "predicted_ttft_ms": pt, "predicted_tpot_ms": pq,
                "ttft_ms": pt, "tpot_ms": pq,  # the names bench/bench_serving_peer.py reads
                "ttft_error": (pt - mt) / mt, "tpot_error": (pq - mp) / mp,
                "bottleneck": str(res["bottleneck"][j]), "fits": bool(res["fits"][j]),
            }
    return out


def median_abs_error(replayed: list[dict], key: str) -> float:
    v = [abs(r[key]) for r in replayed if np.isfinite(r[key])]
    return float(np.median(v)) if v else float("nan")


def error_table(replayed: list[dict], by: tuple[str, ...] = ("backend", "system")) -> list[dict]:
    """Median absolute % error of TTFT and TPOT per group, plus the overall row."""
    groups: dict[tuple, list[dict]] = {}
    for r in replayed:
        groups.setdefault(tuple(r[k] for k in by), []).append(r)
    table = [{**dict(zip(by, k, strict=True)), "rows": len(v), "ttft_mdape": median_abs_error(v, "ttft_error"),
              "tpot_mdape": median_abs_error(v, "tpot_error")} for k, v in sorted(groups.items())]
    table.append({**{k: "all" for k in by}, "rows": len(replayed), "ttft_mdape": median_abs_error(replayed, "ttft_error"),
                  "tpot_mdape": median_abs_error(replayed, "tpot_error")})
    return table


def format_table(table: list[dict]) -> str:
    keys = [k for k in table[0] if k not in ("rows", "ttft_mdape", "tpot_mdape")]
    head = "| " + " | ".join(keys) + " | rows | TTFT median abs error | TPOT median abs error |"
    sep = "|" + "---|" * (len(keys) + 3)
    lines = [head, sep]
    for t in table:
        lines.append("| " + " | ".join(str(t[k]) for k in keys) +
                     f" | {t['rows']} | {t['ttft_mdape']:.1%} | {t['tpot_mdape']:.1%} |")
    return "\n".join(lines)
