"""Extract DeepSeek-V4's compressed-attention module latencies from NVIDIA's measured kernel tables.

Run (in the AISimulate bench venv, which has the tables and pandas; docs/BENCHMARKS.md):
    /work/venv-aisim/bin/python scripts/extract_attention_modules.py [--write]
Reads aisimulate_core/systems/data/<system>/sparse_attention/<backend>/<version>/
dsv4_{csa,hca}_generation_module_perf.parquet (AISimulate 0.13.0.dev202610270000000085, the tables of
AIConfigurator's collector: one decode forward pass of a whole DeepSeek-V4 attention module under CUDA graphs,
q/kv projections, compressor, CSA indexer and top-k, sparse FlashMLA attention, o projections). Per table it
takes the batch-1 decode rows (isl 1) and, per number of heads on the GPU, the median latency over the contexts
of each regime: CSA below and above its top-k threshold (index_topk x 4 = 4,096 tokens: above it the indexer's
top-k selection runs), HCA over all contexts (its work does not change with the context at batch 1). Per
(backend, chip generation) the median over the generation's systems and the backend's versions.
--write writes planner/engine/data/compressed_attention_modules.json (compressed_attention.py reads it).
"""
import argparse
import glob
import json
import sys
from datetime import date
from pathlib import Path

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "planner" / "engine" / "data" / "compressed_attention_modules.json"
GENERATION = {"b200_sxm": "blackwell", "b300_sxm": "blackwell", "gb200": "blackwell", "gb300": "blackwell",
              "h100_sxm": "hopper", "h200_sxm": "hopper"}
RUNTIME = {"sglang": "sglang", "vllm": "vllm", "trtllm": "trtllm"}
TOPK_CONTEXT = 4096  # DeepSeek-V4 index_topk 1,024 compressed entries x compress ratio 4


def tables(data: Path, phase: str):
    """(runtime, generation, "csa" | "hca", table path, DataFrame) of every V4 module table of a phase
    ("generation" or "context") on a Hopper / Blackwell system and an engine the planner models."""
    for path in sorted(glob.glob(str(data / "*" / "sparse_attention" / "*" / "*" / f"dsv4_*_{phase}_module_perf.parquet"))):
        p = Path(path)
        system, backend = p.parts[-5], p.parts[-3]
        if system in GENERATION and backend in RUNTIME:
            yield RUNTIME[backend], GENERATION[system], "csa" if "_csa_" in p.name else "hca", p, pd.read_parquet(p)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--write", action="store_true")
    args = ap.parse_args(argv)
    import aisimulate_core
    data = Path(aisimulate_core.__file__).parent / "systems" / "data"
    cells: dict = {}
    used = []
    for rt, gen, variant, p, df in tables(data, "generation"):
        d = df[(df.batch_size == 1) & (df.isl == 1) & (df.step >= 256)]
        regimes = {"csa_short": d[d.step <= TOPK_CONTEXT], "csa_long": d[d.step > TOPK_CONTEXT]} if variant == "csa" \
            else {"hca": d}
        used.append(str(p.relative_to(data)))
        for regime, x in regimes.items():
            for h, g in x.groupby("num_heads"):
                key = (rt, gen, regime, int(h))
                cells.setdefault(key, []).append(float(g.latency.median()) * 1e-3)  # ms -> s
    floors: dict = {}
    for (rt, gen, regime, h), v in sorted(cells.items()):
        floors.setdefault(f"{rt}|{gen}", {}).setdefault(regime, {})[str(h)] = round(float(pd.Series(v).median()), 7)
    # Prefill: one prompt of isl tokens through a context module takes a + b x isl; b (seconds per prompt token,
    # least squares over isl 1,024-16,384 at batch 1) is what each further prompt token costs.
    slopes: dict = {}
    for rt, gen, variant, p, df in tables(data, "context"):
        d = df[(df.batch_size == 1) & (df.isl >= 1024) & (df.isl <= 16384)]
        used.append(str(p.relative_to(data)))
        for h, g in d.groupby("num_heads"):
            x = g.groupby("isl").latency.median()
            if len(x) >= 2:
                b = float(np.polyfit(x.index.to_numpy(dtype=float), x.to_numpy(dtype=float), 1)[0])
                slopes.setdefault((rt, gen, f"{variant}_prefill", int(h)), []).append(b * 1e-3)
    for (rt, gen, regime, h), v in sorted(slopes.items()):
        floors.setdefault(f"{rt}|{gen}", {}).setdefault(regime, {})[str(h)] = float(f"{pd.Series(v).median():.4g}")
    out = {
        "source": ("NVIDIA AISimulate 0.13.0.dev202610270000000085 (PyPI), aisimulate_core/systems/data/<system>/"
                   "sparse_attention/<backend>/<version>/dsv4_{csa,hca}_{generation,context}_module_perf.parquet: "
                   "AIConfigurator's collector, one decode or prefill pass of a whole DeepSeek-V4 attention module (sgl-project/DeepSeek-V4-Flash-FP8 "
                   "layer shapes) under CUDA graphs"),
        "read": date.today().isoformat(),
        "method": ("decode (csa_short, csa_long, hca): batch 1, isl 1; per heads on the GPU the median over the regime's "
                   "contexts (CSA: up to / above 4,096 tokens, where the indexer's top-k selection starts), seconds per "
                   "module. Prefill (csa_prefill, hca_prefill): the dsv4_{csa,hca}_context_module_perf tables, batch 1, the "
                   "least-squares slope of latency over isl 1,024-16,384, seconds per prompt token. Per backend and chip "
                   "generation the median over its systems and versions"),
        "tables": used,
        "floors_s": floors,
    }
    text = json.dumps(out, indent=1, sort_keys=True) + "\n"
    if args.write:
        OUT.write_text(text)
        print(f"wrote {OUT.relative_to(ROOT)}")
    else:
        sys.stdout.write(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
