"""Fit the few serving constants per (runtime, chip generation) on the InferenceX rows (issue 22).

Run:  .venv/bin/python scripts/fit_serving_moe.py [--write] [--exclude-model KEY] [--exclude-gpu GPU]
Data: ../shared/reference/inferencex/serving_fit.csv (its README says how each point was measured),
replayed as planner/engine/serving_replay_ix.py describes. Per (runtime, generation) group it fits,
by multiplicative coordinate search on the mean absolute log error of TTFT, TPOT and output
tokens/s per GPU (one third each):
- Blackwell and CDNA (no serving_measured.csv rows; their efficiencies were generation-factor
  assumptions): prefill_efficiency, decode_bandwidth_efficiency, step_overhead_s,
  request_overhead_s, ttft_cohort_factor;
- every generation, where the group has such rows: moe_layer_overhead_s (MoE rows), all_to_all_efficiency (rows with
  data-parallel attention and EP > 1, with all_to_all_latency_s), mtp_accepted_tokens (MTP rows) and disagg_handoff_s (disaggregated rows).
Hopper's prefill/bandwidth/overhead constants stay the serving_measured.csv fit (FITTED).
Bounds are physical: efficiencies in (0, 1], accepted tokens in [1, 1 + draft tokens].
--write rewrites planner/engine/serving_constants_ix.py with the values and the rows they were fitted on.
--only RUNTIME,GENERATION refits that group alone (the others keep their written values).
Guard: a group with serving_measured.csv rows (TensorRT-LLM Blackwell) takes a step only while that
file's MdAPE stays within MEASURED_GUARD (it must not get worse).
--exclude-model / --exclude-gpu: leave those rows out of the fit and report the error on them
(leave-one-out refits, docs/BENCHMARKS.md); --held-generation-only (with --exclude-gpu) refits only that GPU's
generation, the other generations as written (they hold none of its rows).
mla_layer_overhead_s is fitted for every group with MLA rows (DeepSeek-R1); a group without starts from the measured
preset (serving_constants.MLA_LAYER_OVERHEAD_PRESET_S) or 0.
--names A,B (with --only) searches those constants alone, from the group's written values (the rest held).
Rows of the models in NOT_FITTED_ON (DeepSeek-V4-Pro: a mechanism the model lacks) are scored, never fitted on
(--fit-on-all fits on them too). When the asynchronous step overhead's source group (vLLM Blackwell) has no row left,
it is fitted alone on the runtime's asynchronous Hopper rows (fit_async_step_overhead).
"""
import argparse
import math
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from planner.engine import serving_constants as sc  # noqa: E402
from planner.engine.hardware import generation_of  # noqa: E402
from planner.engine.presets import preset_arch  # noqa: E402
from planner.engine.serving_moe import (  # noqa: E402
    MTP_DRAFT_TOKENS,
    MTP_DRAFT_TOKENS_BY_RUNTIME,
    moe_gathers,
)
from planner.engine.serving_replay_ix import (  # noqa: E402
    GPU,
    MODEL,
    RUNTIME,
    accelerator,
    group_key,
    load_rows,
    refusal,
    replay,
    summary,
)

OUT = ROOT / "planner" / "engine" / "serving_constants_ix.py"


def is_mla_model(model_key: str) -> bool:
    """The row's model uses multi-head latent attention (DeepSeek-R1)."""
    return preset_arch(MODEL[model_key]).is_mla
# serving_measured.csv must not get worse (issue 22): its MdAPE over all 552 rows as it stands (docs/BENCHMARKS.md).
# A group whose runtime and generation have rows
# there (TensorRT-LLM Blackwell: 18 GB200 rows) takes a search step only if these figures hold.
# The search's default (since h/tpotm, 2026-12-04: 22.6 / 6.6 %; every leave-one-out refit in docs/BENCHMARKS.md ran with
# it). The written constants replay it at 22.4 / 6.6 %: TensorRT-LLM Blackwell was refitted on 2026-12-07 with
# --guard-ttft 0.224 from its written values (from the presets that guard stalls the search at 43 % TTFT in sample).
MEASURED_GUARD = {"ttft": 0.226, "tpot": 0.066}
BASE_NAMES = ("prefill_efficiency", "decode_bandwidth_efficiency", "step_overhead_s", "request_overhead_s",
              "ttft_cohort_factor")
BOUNDS = {"prefill_efficiency": (0.05, 1.0), "decode_bandwidth_efficiency": (0.05, 1.0),
          "step_overhead_s": (1e-4, 0.05), "request_overhead_s": (1e-3, 0.5), "ttft_cohort_factor": (0.01, 10.0),
          "all_to_all_efficiency": (0.02, 1.0), "moe_gather_efficiency": (0.02, 1.0), "disagg_handoff_s": (1e-3, 2.0),
          "mla_layer_overhead_s": (1e-6, 5e-4), "moe_layer_overhead_s": (1e-6, 5e-4), "scheduler_poll_steps": (1.0, 64.0),
          "all_to_all_latency_s": (1e-7, 5e-4)}
# Groups whose engine takes in new requests less often than every step in the InferenceX recipes without the row
# saying how often (--num-continuous-decode-steps 4 on MI355X, benchmarks/dsr1_fp8_mi355x.sh @1fc5d73c):
# scheduler_poll_steps is fitted for them only. SGLang's Hopper
# recipe sets neither (benchmarks/dsr1_fp8_h200.sh @1fc5d73c) and serving_measured.csv's H100 SGLang rows run the
# default: 1 there, as for vLLM and TensorRT-LLM (their schedulers take requests in every step).
# SGLang Blackwell's rows whose recipe sets the flag take the recipe's interval (serving_replay_ix.recipe_poll_steps);
# the rest run SGLang's default, 1 (docs/SIZING.md "Scheduler polling"): fitting it would fit a fudge (it ran to 37).
POLL_GROUPS = (("sglang", "cdna"),)
DISAGG_HANDOFF_START_S = 0.05  # the search is multiplicative: it starts from 50 ms, not from the preset 0
MLA_LAYER_OVERHEAD_START_S = 20e-6  # likewise from 20 us per MLA layer (preset 0)
MOE_LAYER_OVERHEAD_START_S = 10e-6  # and 10 us per MoE layer
ALL_TO_ALL_LATENCY_START_S = 10e-6  # and 10 us per MoE layer per doubling of the EP ranks
MOE_OVERHEAD = True
# Models whose rows exercise a mechanism the serving model lacks: replayed and scored, never fitted on (the
# fitted constants would take up the missing time and carry it to every other model of the group).
# DeepSeek-V4-Pro: its compressed (CSA) and heavily compressed (HCA) attention layers cost 1.5-5.5 ms a step more
# than R1's MLA in AIConfigurator's module tables, and the model has no per-module attention latency
# (docs/BENCHMARKS.md "Why DeepSeek-V4-Pro is overrated"); fitted on, it set vLLM Blackwell's step overhead to
# 8.1 ms when B200's gpt-oss rows were left out (docs/BENCHMARKS.md "Leave-one-out refits ...").
NOT_FITTED_ON = {"dsv4": "DeepSeek-V4-Pro: CSA/HCA attention latency not modelled"}
# The pattern search stops on a small loss change only once every step is below this (log; 10 %): a constant
# still moving in large steps has not converged, however little the last two sweeps gained (SGLang Hopper).
TOL_MAX_STEP = math.log(1.1)


def loss(results) -> float:
    ok = [x for x in results if not x["refused"]]
    if not ok:
        return math.inf
    e = [abs(math.log1p(x[k])) for x in ok for k in ("ttft_err", "tpot_err", "out_err")]
    # a row the constants make unservable counts as a large error (not as nothing)
    return float(np.mean(e)) + 2.0 * (len(results) - len(ok)) / len(results)


HUBER_CLIP = 0.5  # huber loss: a log error beyond this counts linearly (|log| - clip/2), within it quadratically


def loss_huber(results) -> float:
    ok = [x for x in results if not x["refused"]]
    if not ok:
        return math.inf
    e = np.abs(np.log1p([x[k] for x in ok for k in ("ttft_err", "tpot_err", "out_err")]))
    h = np.where(e <= HUBER_CLIP, e * e / (2 * HUBER_CLIP), e - HUBER_CLIP / 2)
    return float(np.mean(h)) + 2.0 * (len(results) - len(ok)) / len(results)


def loss_median(results) -> float:
    """Mean of the three medians of the absolute log errors (what MdAPE reports), plus the refusal penalty."""
    ok = [x for x in results if not x["refused"]]
    if not ok:
        return math.inf
    m = [np.median([abs(math.log1p(x[k])) for x in ok]) for k in ("ttft_err", "tpot_err", "out_err")]
    return float(np.mean(m)) + 2.0 * (len(results) - len(ok)) / len(results)


LOSSES = {"mean": loss, "huber": loss_huber, "median": loss_median}
# Constants a group's written entry holds but the fit does not search: the all-reduce latency its constants were
# fitted with (10 us, the preset before FITTED's h/tpotm refit; docs/SIZING.md "Constants fitted on the InferenceX
# rows"). Not fitted on serving_fit.csv, so taking it from the written entry leaks no held-out row.
FIXED_NAMES = ("allreduce_latency_s",)


# The engines' names as a plan shows them (serving_fit.csv's framework column)
ENGINE_LABELS = {"atom": "ATOM", "sglang": "SGLang", "dynamo-sglang": "Dynamo SGLang", "mori-sglang": "MoRI SGLang",
                 "trt": "TensorRT-LLM", "dynamo-trt": "Dynamo TensorRT-LLM", "vllm": "vLLM", "dynamo-vllm": "Dynamo vLLM"}


def rows_note(rows) -> dict:
    """FITTED_IX_ROWS' entry for a group fitted on `rows`: how many, of which engines, GPUs and models."""
    return {"rows": len(rows), "engines": tuple(sorted({ENGINE_LABELS.get(r["framework"], r["framework"]) for r in rows})),
            "gpus": tuple(sorted({r["gpu"].upper() for r in rows})),
            "models": tuple(sorted({MODEL[r["model_key"]] for r in rows}))}


def rows_text(note: dict) -> str:
    return (f"{note['rows']} rows; {', '.join(note['engines'])}; {', '.join(note['gpus'])}; "
            f"{', '.join(note['models'])}")


def measured_figures(key, consts):
    """(TTFT, TPOT) MdAPE over serving_measured.csv with `consts` for the group `key` (None: no rows there)."""
    from planner.engine.serving_replay import SYSTEMS, _accelerators
    from planner.engine.serving_replay import load_rows as measured_rows
    from planner.engine.serving_replay import replay as measured_replay

    accs = _accelerators()
    rows = measured_rows()
    if not any((r["backend"], generation_of(accs[SYSTEMS[r["system"]]].architecture)) == key for r in rows):
        return None
    saved = sc.FITTED_IX.get(key)
    sc.FITTED_IX[key] = consts
    sc.FITTED_IX_ROWS.setdefault(key, rows_note([]))  # constants_source names the rows
    try:
        out = measured_replay(rows)
    finally:
        if saved is None:
            sc.FITTED_IX.pop(key, None)
        else:
            sc.FITTED_IX[key] = saved
    return (float(np.median([abs(x["ttft_error"]) for x in out])), float(np.median([abs(x["tpot_error"]) for x in out])))


def guard_ok(key, consts, cur_figs) -> tuple[bool, tuple | None]:
    figs = measured_figures(key, consts)
    if figs is None:
        return True, None
    ok = figs[0] <= MEASURED_GUARD["ttft"] + 5e-4 and figs[1] <= MEASURED_GUARD["tpot"] + 5e-4
    # from a start that breaks the guard, a step may still be taken if it brings the figures closer
    better = cur_figs is not None and figs[0] <= cur_figs[0] and figs[1] <= cur_figs[1]
    return ok or better, figs


def group_names(key, rows, only_names=None):
    """The constants searched for the group `key` on `rows` (same rule for every group: what its rows exercise)."""
    rt, gen = key
    names = [] if gen == "hopper" else list(BASE_NAMES)
    if MOE_OVERHEAD and any(preset_arch(MODEL[r["model_key"]]).is_moe for r in rows):
        names.append("moe_layer_overhead_s")
    if any(is_mla_model(r["model_key"]) for r in rows):
        names.append("mla_layer_overhead_s")
    # the MoE exchange each DPA + EP row runs: an all-to-all, or SGLang's gather (serving_moe.moe_gathers)
    paths = {moe_gathers(RUNTIME[r["framework"]], accelerator(r["gpu"]), r["disaggregated"] == "True")
             for r in rows if r["data_parallel_attention"] == "True" and int(float(r["expert_parallel"] or 1)) > 1}
    if False in paths:
        names += ["all_to_all_efficiency", "all_to_all_latency_s"]
    if True in paths:
        names.append("moe_gather_efficiency")
    if any(r["speculative"] == "mtp" for r in rows):
        names.append("mtp_accepted_tokens")
    if any(r["disaggregated"] == "True" for r in rows):
        names.append("disagg_handoff_s")
    if key in POLL_GROUPS:
        names.append("scheduler_poll_steps")
    if only_names:
        names = [n for n in names if n in only_names]
    return names


def fit_group(key, rows, rounds=5, only_names=None, start=None, search="pattern", tol=1e-3, min_step=0.01,
              loss_fn=None, fixed=None, verbose=False):
    """Fit the group's constants on `rows`; returns (values, loss, evaluations).

    search "pattern" (default): coordinate pattern search in log space within BOUNDS. Per constant its own
    step (starting at x2); a move that lowers the loss is taken and the step doubled in the same direction
    while it keeps lowering it (so a constant can travel from 0.6 ms to 6 ms in a few evaluations); a
    constant whose moves both fail has its step halved. Sweeps over the constants until every step is
    below `min_step` (log; 0.01 = 1 %), the loss's relative change over two sweeps is below `tol`, or
    `rounds` sweeps. search "halving": the former search (one x step / 1/step try per constant per round,
    step square-rooted after each round).
    fixed: constants held at these values (not searched; e.g. the written all-reduce latency, not fitted here)."""
    rt, gen = key
    loss_fn = loss_fn or loss
    acc = next(accelerator(r["gpu"]) for r in rows)
    base = {**sc.serving_constants(acc, rt, "bf16"), **(start or {})}
    names = group_names(key, rows, only_names)
    bounds = dict(BOUNDS, mtp_accepted_tokens=(1.0, 1.0 + MTP_DRAFT_TOKENS_BY_RUNTIME.get(rt, MTP_DRAFT_TOKENS)))
    cur = {n: float(base[n]) for n in names}
    if "disagg_handoff_s" in cur:
        cur["disagg_handoff_s"] = max(cur["disagg_handoff_s"], DISAGG_HANDOFF_START_S)
    if "mla_layer_overhead_s" in cur:
        cur["mla_layer_overhead_s"] = max(cur["mla_layer_overhead_s"], MLA_LAYER_OVERHEAD_START_S)
    if "moe_layer_overhead_s" in cur:
        cur["moe_layer_overhead_s"] = max(cur["moe_layer_overhead_s"], MOE_LAYER_OVERHEAD_START_S)
    if "all_to_all_latency_s" in cur:
        cur["all_to_all_latency_s"] = max(cur["all_to_all_latency_s"], ALL_TO_ALL_LATENCY_START_S)
    for n in names:  # a preset outside the bounds starts at the bound
        cur[n] = min(max(cur[n], bounds[n][0]), bounds[n][1])
    # with --names the constants not searched stay as written (start): the replay and the guard see them too
    held = {**(fixed or {}), **{k: v for k, v in (start or {}).items() if k not in cur}}
    held = {k: v for k, v in held.items() if k not in cur}
    evals = [0]

    def f(vals):
        evals[0] += 1
        return loss_fn(replay(rows, {key: {**held, **vals}}))

    best = f(cur)
    figs = measured_figures(key, {**held, **cur})

    def attempt(n, x):
        """Take cur[n] = x (clipped) if it lowers the loss and passes the guard; True if taken."""
        nonlocal best, cur, figs
        lo, hi = bounds[n]
        x = min(max(x, lo), hi)
        if x == cur[n]:
            return False
        trial = {**cur, n: x}
        v = f(trial)
        if v < best:
            ok, trial_figs = guard_ok(key, {**held, **trial}, figs)
            if ok:
                best, cur, figs = v, trial, trial_figs
                return True
        return False

    if search == "halving":
        step = 2.0
        for _ in range(rounds):
            for n in names:
                for fac in (step, 1.0 / step):
                    if attempt(n, cur[n] * fac):
                        break
            step = math.sqrt(step)
    else:
        steps = {n: math.log(2.0) for n in names}
        direction = {n: 1.0 for n in names}
        history = [best]
        for _ in range(rounds):
            for n in names:
                moved = False
                for d in (direction[n], -direction[n]):
                    if attempt(n, cur[n] * math.exp(d * steps[n])):
                        moved, direction[n] = True, d
                        # expand while it keeps improving
                        while attempt(n, cur[n] * math.exp(d * 2.0 * steps[n])):
                            steps[n] *= 2.0
                        break
                if not moved:
                    steps[n] /= 2.0
            history.append(best)
            if verbose:
                print(f"    sweep {len(history) - 1}: loss {best:.4f}, {evals[0]} evaluations, largest step "
                      f"x{math.exp(max(steps.values(), default=0.0)):.3f}", flush=True)
            if all(s < min_step for s in steps.values()):
                break
            if (len(history) >= 3 and (history[-3] - history[-1]) <= tol * abs(history[-3])
                    and max(steps.values(), default=0.0) < TOL_MAX_STEP):
                break
    if figs is not None:
        print(f"  {key}: serving_measured.csv MdAPE TTFT {figs[0]:.1%} TPOT {figs[1]:.1%} "
              f"(guard {MEASURED_GUARD['ttft']:.1%} / {MEASURED_GUARD['tpot']:.1%})", flush=True)
    return cur, best, evals[0]


def fit_async_step_overhead(runtime, source, rows, loss_fn=None):
    """The asynchronous step overhead (serving_constants.ASYNC_STEP_OVERHEAD_FROM) on `rows` (the runtime's async rows
    whose own group fits no step overhead: Hopper's), when its source group has no row to fit it on (leave B200 out:
    no vLLM Blackwell row is left). A one-constant search in log space, installed as the source group's value; the
    CPU-side scheduling time it stands for does not depend on the GPU generation. Returns (value, loss)."""
    loss_fn = loss_fn or loss
    lo, hi = BOUNDS["step_overhead_s"]

    def f(x):
        sc.FITTED_IX[source] = {"step_overhead_s": x}
        return loss_fn(replay(rows))

    grid = np.geomspace(max(lo, 2e-4), min(hi, 2e-2), 23)  # x1.23 apart
    vals = [f(x) for x in grid]
    i = int(np.argmin(vals))
    a, b = grid[max(i - 1, 0)], grid[min(i + 1, len(grid) - 1)]
    for _ in range(12):  # golden section on the bracket around the best grid point (log space)
        m1, m2 = a * (b / a) ** 0.382, a * (b / a) ** 0.618
        if f(m1) <= f(m2):
            b = m2
        else:
            a = m1
    x = math.sqrt(a * b)
    best = f(x)
    if best > min(vals):
        x, best = float(grid[i]), float(min(vals))
    sc.FITTED_IX[source] = {"step_overhead_s": float(x)}
    return float(x), float(best)


TABLE_COLUMNS = (("prefill eff.", "prefill_efficiency", ""), ("bandwidth eff.", "decode_bandwidth_efficiency", ""),
                 ("step overhead", "step_overhead_s", "ms"), ("request overhead", "request_overhead_s", "ms"),
                 ("cohort factor", "ttft_cohort_factor", ""), ("poll steps", "scheduler_poll_steps", ""),
                 ("all-to-all eff.", "all_to_all_efficiency", ""), ("all-to-all latency / log2 EP", "all_to_all_latency_s", "us"),
                 ("gather eff.", "moe_gather_efficiency", ""),
                 ("MTP accepted", "mtp_accepted_tokens", ""),
                 ("disagg. handoff", "disagg_handoff_s", "ms"), ("MoE layer overhead", "moe_layer_overhead_s", "us"),
                 ("MLA layer overhead", "mla_layer_overhead_s", "us"), ("all-reduce latency", "allreduce_latency_s", "us"))


def constants_table(fitted, rows_by_group) -> str:
    """docs/SIZING.md's table of the InferenceX constants, from serving_constants_ix.py (3 significant digits)."""
    def cell(v, unit):
        if v is None:
            return "–"
        scale = {"ms": 1e3, "us": 1e6}.get(unit, 1.0)
        text = f"{v * scale:.3g}"
        return f"{text} {'µs' if unit == 'us' else unit}".strip()
    head = "| runtime, generation | " + " | ".join(c for c, _, _ in TABLE_COLUMNS) + " | fitted on (serving_fit.csv) |"
    lines = [head, "|" + "---|" * (len(TABLE_COLUMNS) + 2)]
    for key, vals in sorted(fitted.items()):
        cells = [cell(vals.get(n), u) for _, n, u in TABLE_COLUMNS]
        if key in POLL_GROUPS or key == ("sglang", "blackwell"):
            cells[5] = f"{cells[5] if cells[5] != '–' else '1'} (recipe's where set)"
        note = rows_by_group.get(key)
        lines.append(f"| {key[0]}, {key[1]} | " + " | ".join(cells) + f" | {rows_text(note) if note else ''} |")
    return "\n".join(lines)


def per_group(results):
    """{(runtime, generation): summary} of replay results."""
    return {t["group"]: t for t in summary(results, lambda x: group_key(x["row"])[2:4])}


def main(argv=None):
    ap = argparse.ArgumentParser()
    ap.add_argument("--write", action="store_true")
    ap.add_argument("--exclude-model")
    ap.add_argument("--exclude-gpu")
    ap.add_argument("--rounds", type=int, default=None,
                    help="halving search: its rounds (default 5); pattern search: the most sweeps (default 60)")
    ap.add_argument("--search", choices=("pattern", "halving"), default="pattern",
                    help="pattern (default): expanding/shrinking coordinate steps in log space until converged; "
                         "halving: the former x2, x1.41, ... rounds")
    ap.add_argument("--tol", type=float, default=1e-3, help="pattern search: stop when two sweeps lower the loss by less "
                                                            "than this share")
    ap.add_argument("--min-step", type=float, default=0.01, help="pattern search: stop when every log step is below this")
    ap.add_argument("--loss", choices=tuple(LOSSES), default="mean", help="mean (default): mean absolute log error; "
                    "huber: mean of the log errors clipped at HUBER_CLIP (robust); median: mean of the three medians")
    ap.add_argument("--preset-fixed", action="store_true",
                    help="fixed (not fitted) constants from the presets instead of the group's written value "
                         f"({', '.join(FIXED_NAMES)})")
    ap.add_argument("--fit-on-all", action="store_true",
                    help=f"fit on every model's rows, {', '.join(NOT_FITTED_ON)} included (NOT_FITTED_ON)")
    ap.add_argument("--verbose", action="store_true", help="print the loss after every sweep")
    ap.add_argument("--report", action="store_true", help="print the MdAPE per (runtime, generation), train and held out")
    ap.add_argument("--only", help="refit one group, e.g. trtllm,blackwell; the others keep their written values")
    ap.add_argument("--guard-ttft", type=float, default=None,
                    help=f"serving_measured.csv TTFT MdAPE a guarded group must stay within (default "
                         f"{MEASURED_GUARD['ttft']})")
    ap.add_argument("--held-generation-only", action="store_true",
                    help="with --exclude-gpu: refit only the groups of that GPU's generation (the others hold none of its "
                         "rows and the search reaches their written values again); every written value of the generation "
                         "is dropped first")
    ap.add_argument("--names", help="with --only: search these constants alone (comma-separated), the rest as written")
    ap.add_argument("--table", action="store_true",
                    help="print docs/SIZING.md's table of the written constants (serving_constants_ix.py) and stop")
    args = ap.parse_args(argv)
    if args.held_generation_only and (not args.exclude_gpu or args.only):
        ap.error("--held-generation-only needs --exclude-gpu (and no --only)")
    if args.guard_ttft is not None:
        if not 0.0 < args.guard_ttft < 1.0:
            ap.error("--guard-ttft: a share between 0 and 1, e.g. 0.224")
        MEASURED_GUARD["ttft"] = args.guard_ttft
    if args.exclude_gpu and accelerator(args.exclude_gpu) is None:
        ap.error(f"--exclude-gpu: {args.exclude_gpu!r} is not a GPU of serving_fit.csv ({', '.join(sorted(GPU))})")
    if args.table:
        print(constants_table(sc.FITTED_IX, sc.FITTED_IX_ROWS))
        return
    rounds = args.rounds if args.rounds is not None else (5 if args.search == "halving" else 60)
    only_names = tuple(args.names.split(",")) if args.names else None
    kept = dict(sc.FITTED_IX)
    sc.FITTED_IX.clear()
    only = tuple(args.only.split(",")) if args.only else None
    if only:  # the other groups as written (the guard replays serving_measured.csv with them)
        sc.FITTED_IX.update({k: v for k, v in kept.items() if k != only})
    held_gen = generation_of(accelerator(args.exclude_gpu).architecture) if args.held_generation_only else None
    if held_gen:
        sc.FITTED_IX.update({k: v for k, v in kept.items() if k[1] != held_gen})
    rows = [r for r in load_rows() if not refusal(r)]
    held = [r for r in rows if r["model_key"] == args.exclude_model or r["gpu"] == args.exclude_gpu]
    rest = [r for r in rows if r not in held] if held else rows
    skip = () if args.fit_on_all else tuple(NOT_FITTED_ON)
    train = [r for r in rest if r["model_key"] not in skip]
    scored = [r for r in rest if r["model_key"] in skip]
    groups: dict = {}
    for r in train:
        k = group_key(r)
        groups.setdefault((k[2], k[3]), []).append(r)
    fitted, notes = {}, {}
    t_all = time.perf_counter()
    # groups in sorted order, each installed in FITTED_IX once fitted: vLLM Hopper's async rows take vLLM Blackwell's
    # step overhead (serving_constants.ASYNC_STEP_OVERHEAD_FROM) as the written file would give them
    for key, rs in sorted(groups.items()):
        t0 = time.perf_counter()
        n_eval = 0
        fixed = {} if args.preset_fixed else {n: kept[key][n] for n in FIXED_NAMES if n in kept.get(key, {})}
        if (only and key != only) or (held_gen and key[1] != held_gen):
            vals, best = kept.get(key, {}), float("nan")
        else:
            start = kept.get(key, {}) if only_names else None
            vals, best, n_eval = fit_group(key, rs, rounds=rounds, only_names=only_names, start=start,
                                           search=args.search, tol=args.tol, min_step=args.min_step,
                                           loss_fn=LOSSES[args.loss], fixed=fixed, verbose=args.verbose)
            if only_names:  # the constants not searched stay as written
                vals = {**kept.get(key, {}), **vals}
            elif vals:
                vals = {**vals, **fixed}
        if vals:
            fitted[key] = vals
            sc.FITTED_IX[key] = vals
            notes[key] = rows_note(rs)
        shown = {n: float(f"{v:.4g}") for n, v in vals.items()}
        print(f"{key}: {len(rs)} rows, loss {best:.4f}, {n_eval} evaluations, {shown} "
              f"({time.perf_counter() - t0:.0f} s)", flush=True)
    for rt, source in sc.ASYNC_STEP_OVERHEAD_FROM.items():
        async_rows = [r for r in train if group_key(r)[2] == rt and group_key(r)[7] and group_key(r)[3] == "hopper"]
        if only or source in groups or not async_rows or (held_gen and source[1] != held_gen):
            continue
        x, best = fit_async_step_overhead(rt, source, async_rows, LOSSES[args.loss])
        fitted[source] = sc.FITTED_IX[source]
        notes[source] = rows_note(async_rows)  # the step overhead alone
        print(f"{source}: no row to fit on; asynchronous step overhead from {len(async_rows)} {rt} Hopper rows: "
              f"{x * 1e3:.3f} ms, loss {best:.4f}", flush=True)
    print(f"fit: {time.perf_counter() - t_all:.0f} s", flush=True)
    sc.FITTED_IX.clear()
    sc.FITTED_IX.update(fitted if not (only or held_gen) else {**{k: v for k, v in kept.items() if k != only}, **fitted})
    consts = dict(fitted)
    for name, rs in (("train", train), ("not fitted on", scored), ("train + not fitted on", rest if scored else []),
                     ("held out", held)):
        if not rs:
            continue
        res = replay(rs, consts)
        t = summary(res)[0]
        print(f"{name}: {t['rows']} rows, evaluated {t['evaluated']}, MdAPE TTFT {t['ttft']:.1%} "
              f"TPOT {t['tpot']:.1%} output tok/s/GPU {t['out']:.1%}", flush=True)
        if args.report:
            for g, t in per_group(res).items():
                print(f"  {name} {g}: {t['rows']} rows, evaluated {t['evaluated']}, MdAPE TTFT {t['ttft']:.1%} "
                      f"TPOT {t['tpot']:.1%} output tok/s/GPU {t['out']:.1%} (signed {t['out_signed']:+.1%})")
    if args.write and not held:
        lines = [OUT.read_text().split("FITTED_IX:")[0].rstrip() + "\n", "FITTED_IX: dict[tuple[str, str], dict[str, float]] = {"]
        for key, vals in fitted.items():
            body = ", ".join(f'"{n}": {v:.4g}' for n, v in vals.items())
            lines.append(f"    {key!r}: {{{body}}},")
        lines.append("}")
        lines.append("FITTED_IX_ROWS: dict[tuple[str, str], dict] = {")
        for key, note in notes.items():
            lines.append(f"    {key!r}: {note!r},")
        lines.append("}")
        OUT.write_text("\n".join(lines) + "\n")
        print(f"wrote {OUT}")


if __name__ == "__main__":
    main()
