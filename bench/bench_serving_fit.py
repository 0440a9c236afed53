"""Full replay of the InferenceX fit set through the serving model (issue 22, part 7).

Run:  .venv/bin/python bench/bench_serving_fit.py [--by engine|gpu|precision|mode|model|runtime_generation]
      [--no-fit] [--write-group-errors]
Every row of ../shared/reference/inferencex/serving_fit.csv the model can express: aggregated
layouts (TP, expert parallel, data-parallel attention, MTP) and disaggregated prefill/decode pools,
on the catalog's GPUs, models and engines (planner/engine/serving_replay_ix.py says how a row is put
to the model). Prints the median absolute error (MdAPE) of TTFT, TPOT and output tokens/s per GPU,
overall and per engine / GPU / precision / mode / model, and the rows refused with the reason.
--no-fit: without the constants fitted on this data (FITTED_IX), i.e. the model before the fit.
"""
import argparse
import collections
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from planner.engine import serving_constants  # noqa: E402
from planner.engine.hardware import generation_of  # noqa: E402
from planner.engine.serving_fit_errors import ERRORS_JSON, write_group_errors  # noqa: E402
from planner.engine.serving_replay_ix import (  # noqa: E402
    MODEL,
    RUNTIME,
    accelerator,
    load_rows,
    replay,
    summary,
)

KEYS = {
    "engine": lambda x: (x["row"]["framework"]),
    "gpu": lambda x: x["row"]["gpu"],
    "precision": lambda x: x["row"]["precision"],
    "mode": lambda x: x.get("mode") or "refused",
    "model": lambda x: x["row"]["model_key"],
    # the groups the constants are fitted per (FITTED_IX): what a plan on that runtime and chip says of its error
    "runtime_generation": lambda x: (RUNTIME[x["row"]["framework"]], generation_of(accelerator(x["row"]["gpu"]).architecture)),
    "model_runtime_generation": lambda x: (MODEL[x["row"]["model_key"]], *KEYS["runtime_generation"](x)),
    "engine_gpu_precision_mode": lambda x: (x["row"]["framework"], x["row"]["gpu"], x["row"]["precision"],
                                            x.get("mode") or "refused"),
}


def table(title, rows):
    print(f"\n{title}\n\n| group | rows | evaluated | TTFT MdAPE | TPOT MdAPE | output tok/s/GPU MdAPE |")
    print("|---|---|---|---|---|---|")
    for t in rows:
        g = " / ".join(t["group"]) if isinstance(t["group"], tuple) else t["group"]
        print(f"| {g} | {t['rows']} | {t['evaluated']} | {t['ttft']:.1%} | {t['tpot']:.1%} | {t['out']:.1%} |")


def main(argv=None):
    ap = argparse.ArgumentParser()
    ap.add_argument("--by", default="engine,gpu,precision,mode,model")
    ap.add_argument("--no-fit", action="store_true")
    ap.add_argument("--write-group-errors", action="store_true",
                    help=f"write the MdAPE per (runtime, generation) and per (model, runtime, generation) to {ERRORS_JSON.relative_to(ROOT)} (plans quote it)")
    args = ap.parse_args(argv)
    if args.no_fit:
        serving_constants.FITTED_IX.clear()
    rows = load_rows()
    t0 = time.perf_counter()
    res = replay(rows)
    dt = time.perf_counter() - t0
    ok = [x for x in res if not x["refused"]]
    print(f"rows {len(rows)}, evaluated {len(ok)} ({len(ok) / len(rows):.1%}), refused {len(rows) - len(ok)}"
          f" ({dt:.1f} s)")
    table("Overall", summary(res))
    for k in args.by.split(","):
        if k in KEYS:
            table(f"By {k}", summary(res, KEYS[k]))
    if args.write_group_errors and not args.no_fit:
        write_group_errors(summary(res, KEYS["runtime_generation"]), summary(res, KEYS["model_runtime_generation"]))
        print(f"\nwrote {ERRORS_JSON.relative_to(ROOT)}")
    reasons = collections.Counter(x["refused"] for x in res if x["refused"])
    print("\nRefused rows by reason\n")
    for why, n in reasons.most_common():
        print(f"- {n}: {why}")


if __name__ == "__main__":
    main()
