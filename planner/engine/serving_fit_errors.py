"""The measured error of the serving model per (runtime, chip generation), from the full replay of
the InferenceX fit set (bench/bench_serving_fit.py --write-group-errors writes it after each refit):
what a plan on that engine and chip says about its own accuracy, and where a fine-grained MoE plan
has no fitted constants at all (issue 22: the MoE "upper bound" warning stays only there)."""

from __future__ import annotations

import json
from functools import lru_cache
from pathlib import Path

ERRORS_JSON = Path(__file__).resolve().parent / "data" / "serving_fit_errors.json"


@lru_cache(maxsize=1)
def group_errors() -> dict[tuple[str, str], dict]:
    """(runtime, generation) -> {"rows", "evaluated", "ttft_mdape", "tpot_mdape", "out_mdape"}."""
    if not ERRORS_JSON.exists():
        return {}
    data = json.loads(ERRORS_JSON.read_text(encoding="utf-8"))
    return {(g["runtime"], g["generation"]): g for g in data["groups"]}


@lru_cache(maxsize=1)
def model_errors() -> dict[tuple[str, str, str], dict]:
    """(model preset id, runtime, generation) -> the same figures for one model's own runs, with the
    median signed error of output tokens/s ("out_signed": above 0, the model promises more)."""
    if not ERRORS_JSON.exists():
        return {}
    data = json.loads(ERRORS_JSON.read_text(encoding="utf-8"))
    return {(g["model"], g["runtime"], g["generation"]): g for g in data.get("models", [])}


def _figures(t: dict) -> dict:
    return {"rows": t["rows"], "evaluated": t["evaluated"], "ttft_mdape": round(t["ttft"], 4),
            "tpot_mdape": round(t["tpot"], 4), "out_mdape": round(t["out"], 4),
            "out_signed": round(t["out_signed"], 4)}


def write_group_errors(table: list[dict], by_model: list[dict] = ()) -> None:
    """``table``: the replay's summary per (runtime, generation); ``by_model``: per (model preset id,
    runtime, generation)."""
    groups = [{"runtime": t["group"][0], "generation": t["group"][1], **_figures(t)} for t in table if t["evaluated"]]
    models = [{"model": t["group"][0], "runtime": t["group"][1], "generation": t["group"][2], **_figures(t)}
              for t in by_model if t["evaluated"]]
    ERRORS_JSON.write_text(json.dumps({
        "source": "../shared/reference/inferencex/serving_fit.csv, full replay with the fitted constants",
        "command": ".venv/bin/python bench/bench_serving_fit.py --write-group-errors",
        "groups": groups,
        "models": models,
    }, indent=1) + "\n", encoding="utf-8")
    group_errors.cache_clear()
    model_errors.cache_clear()


def _pct(x: float) -> str:
    return f"{x * 100:.0f} %"


# a model whose own runs the engine overrates by more than this (median output tokens/s) is flagged
OVERRATED = 0.25
# fewer own runs than this on an engine and generation say too little: the group's figures are quoted
MIN_OWN_RUNS = 5


def fine_grained_moe_note(*, experts: int, k: int, runtime: str, runtime_label: str, architecture: str,
                          model: str = ""):
    """What a fine-grained MoE plan says of its accuracy on this engine and chip generation: this
    model's own measured error where its runs were replayed (an overrated model flagged as such); else
    the measured error where the constants were fitted on MoE runs; the measured error and "keep
    headroom" where runs were measured but not fitted; the upper-bound warning where none exist."""
    from catalog.domain.messages import Msg

    from .hardware import generation_of
    from .serving_constants_ix import FITTED_IX

    generation = generation_of(architecture)
    own = model_errors().get((model, runtime, generation)) if model else None
    own = own if own and own["evaluated"] >= MIN_OWN_RUNS else None
    if own and own.get("out_signed", 0.0) > OVERRATED:
        return Msg("fine-grained MoE ({experts} experts, {k} per token): on {n} measured InferenceX runs of this model "
                   "on {runtime} and {generation} chips the serving model promised {over} more output tokens/s per "
                   "GPU than was measured (median; TTFT {ttft}, TPOT {tpot} off): its constants were not fitted on "
                   "this model, so treat this plan's capacity as an upper bound, keep headroom, or calibrate it with "
                   "a measured run of your engine (Calibration page)",
                   experts=experts, k=k, runtime=runtime_label, generation=generation, n=own["evaluated"],
                   over=_pct(own["out_signed"]), ttft=_pct(own["ttft_mdape"]), tpot=_pct(own["tpot_mdape"]))
    # this model's own runs where there are (another model's misses say little of this one's)
    err = own or group_errors().get((runtime, generation))
    if err and (runtime, generation) in FITTED_IX:
        return Msg("fine-grained MoE ({experts} experts, {k} per token): the {runtime} constants for {generation} "
                   "chips were fitted on {n} measured InferenceX runs of MoE models; the model's median error "
                   "there: TTFT {ttft}, TPOT {tpot}, output tokens/s per GPU {out}",
                   experts=experts, k=k, runtime=runtime_label, generation=generation, n=err["evaluated"],
                   ttft=_pct(err["ttft_mdape"]), tpot=_pct(err["tpot_mdape"]), out=_pct(err["out_mdape"]))
    if err:
        return Msg("fine-grained MoE ({experts} experts, {k} per token): the {runtime} constants for {generation} "
                   "chips are not fitted on MoE runs; on {n} measured InferenceX runs of this engine and "
                   "generation the model's median error is TTFT {ttft}, TPOT {tpot}, output tokens/s per GPU "
                   "{out}: keep headroom, or calibrate it with a measured run of your engine (Calibration page)",
                   experts=experts, k=k, runtime=runtime_label, generation=generation, n=err["evaluated"],
                   ttft=_pct(err["ttft_mdape"]), tpot=_pct(err["tpot_mdape"]), out=_pct(err["out_mdape"]))
    return Msg("fine-grained MoE ({experts} experts, {k} per token): no measured MoE runs of {runtime} on "
               "{generation} chips in the fit set, so its constants come from dense models; on published "
               "DeepSeek-V3/R1 runs (8 x H200 and 8 x MI300X, early 2025) such constants predicted 2-5x the "
               "measured throughput: treat this plan's capacity as an upper bound, keep headroom, or calibrate "
               "it with a measured run of your engine (Calibration page)",
               experts=experts, k=k, runtime=runtime_label, generation=generation)
