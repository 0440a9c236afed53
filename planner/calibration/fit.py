"""From a measured run to the engine's own efficiency terms, and back (docs/CALIBRATION.md).

The only module of the planner app that knows the sizing engine's internals: the serving
evaluation of one exact layout, the names of the efficiency constants and the training FLOP
count. Everything here is pure (no database): it takes a run as a mapping of validated fields
and the catalog accelerator it ran on.

Serving: the engine's TTFT is a prefill bounded below by one weight read, its TPOT a decode
step bounded by memory traffic or compute (planner/engine/serving.py). A run is fitted by two
multiplicative scales on the preset constants: `prefill_scale` on PREFILL_EFFICIENCY so that
the predicted TTFT equals the measured mean, `decode_scale` on MBU and DECODE_COMPUTE_EFFICIENCY
so that the predicted TPOT equals the measured mean; each by a 1-D root find (bisection on the
logarithm) over the engine's evaluation, bounded so no constant exceeds 1 (the chip's peak).
Several runs combine by the median, with their range.

Training: implied MFU = measured tokens/s x FLOPs per token x recomputation factor / (GPUs x
dense peak), in the engine's convention (planner/engine/compute.py); goodput = useful time /
wall-clock of a whole run, where the useful time is the run's tokens at the measured speed.

When the engines of issues 10/11 land (serving_constants(), an exact-layout evaluation,
implied_training_efficiency()), only this module changes.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from catalog.domain.messages import Msg
from planner.engine import compute, memory, serving, training_flops
from planner.engine.calibration import Calibration, Calibrations
from planner.engine.hardware import AcceleratorSpec
from planner.engine.precision import peak_tflops
from planner.engine.presets import get_preset, preset_arch

try:  # the serving model of issue 10: runtimes, continuous batching, queueing, exact layouts
    from planner.engine.serving_constants import serving_constants as _engine_serving_constants
    from planner.engine.serving_layout import evaluate_layout as _evaluate_layout
except ImportError:  # the engine before it: planner/engine/serving.py's roofline
    _engine_serving_constants = _evaluate_layout = None
try:  # the training model of issue 11
    from planner.engine.implied_efficiency import implied_training_efficiency as _engine_implied_training
except ImportError:
    _engine_implied_training = None

RUNTIMES = ("vllm", "sglang", "trtllm", "hf_transformers")
RUNTIME_NAMES = {"vllm": "vLLM", "sglang": "SGLang", "trtllm": "TensorRT-LLM", "hf_transformers": "HF Transformers"}
# The engine runs int4 (AWQ/GPTQ) weights with bf16 compute; other formats compute in their own.
_COMPUTE_OF = {"int4": "bf16"}
# vLLM's default --max-num-seqs on the roofline engine: the running batch a replica holds at most.
MAX_RUNNING_SEQUENCES = 256
SCALE_MIN = 1e-3
BISECT_STEPS = 60
ROOT_TOLERANCE = 1e-7  # on the logarithm: the predicted time within 1e-7 of the measured one, relatively
ALTERNATIONS = 3  # prefill and decode constants interact in the batching model: fit them in turn


def compute_precision(precision: str) -> str:
    return _COMPUTE_OF.get(precision, precision)


def kv_precision(precision: str) -> str:
    return "fp16" if precision == "fp16" else ("fp8" if precision == "fp8" else "bf16")


def engine_generation() -> str:
    """Which serving model the fit runs on (shown in docs and the scoreboard's notes)."""
    return "continuous-batching model (issue 10)" if _evaluate_layout else "roofline model (planner/engine/serving.py)"


# ------------------------------------------------------------------------------ constants

# Constant names the calibration scales: (prefill-side names, decode-side names).
_NEW_NAMES = (("prefill_efficiency",), ("decode_bandwidth_efficiency",))
_OLD_NAMES = (("prefill_efficiency",), ("decode_compute_efficiency", "mbu"))


def serving_preset_constants(acc: AcceleratorSpec, runtime: str, precision: str) -> dict[str, float]:
    """The engine's preset values of the constants a calibration scales, for runs of this
    accelerator, runtime and (weights) precision."""
    if _engine_serving_constants is not None:
        c = _engine_serving_constants(acc, runtime, compute_precision(precision))
        return {k: float(c[k]) for group in _NEW_NAMES for k in group}
    return {"prefill_efficiency": serving.PREFILL_EFFICIENCY,
            "decode_compute_efficiency": serving.DECODE_COMPUTE_EFFICIENCY,
            "mbu": serving.MBU[precision]}


def _names():
    return _NEW_NAMES if _engine_serving_constants is not None else _OLD_NAMES


def serving_values(acc: AcceleratorSpec, runtime: str, precision: str, *, prefill_scale: float,
                   decode_scale: float) -> dict[str, float]:
    """Calibration values under the engine's constant names (planner.engine.calibration)."""
    c = serving_preset_constants(acc, runtime, precision)
    pre_names, dec_names = _names()
    out = {k: round(c[k] * prefill_scale, 6) for k in pre_names}
    out.update({k: round(c[k] * decode_scale, 6) for k in dec_names})
    return out


def _max_scales(acc: AcceleratorSpec, runtime: str, precision: str) -> tuple[float, float]:
    """The largest scales that keep every constant <= 1 (no more than the chip's peak)."""
    c = serving_preset_constants(acc, runtime, precision)
    pre_names, dec_names = _names()
    return 1.0 / max(c[k] for k in pre_names), 1.0 / max(c[k] for k in dec_names)


# ------------------------------------------------------------------------------- serving


@dataclass(frozen=True)
class ServingPrediction:
    ttft_ms: float
    tpot_ms: float
    batch_per_replica: float


def _layout(run: Mapping) -> tuple[int, int, int]:
    tp, pp = int(run.get("tensor_parallel") or 1), int(run.get("pipeline_parallel") or 1)
    return tp, pp, max(1, int(run["count"]) // (tp * pp))


def _serving_parts(run: Mapping, acc: AcceleratorSpec):
    arch = preset_arch(run["model_preset"])
    weights = run["precision"]
    peak, _col = peak_tflops(acc, compute_precision(weights))
    if not peak:
        raise ValueError(f"{acc.id} has no known {compute_precision(weights)} peak")
    tp, pp, replicas = _layout(run)
    return arch, weights, float(peak), tp, pp, replicas


def running_batch(run: Mapping, replicas: int, latency_s) -> float:
    """Sequences running per replica: closed loop = the concurrency; open loop = arrival rate x
    request latency (Little's law), never above the concurrency cap or the engine's batch limit."""
    cap = run.get("concurrency") or run.get("num_prompts") or MAX_RUNNING_SEQUENCES
    cap = min(float(cap) / replicas, MAX_RUNNING_SEQUENCES)
    rate = run.get("request_rate")
    if rate is None:
        return max(1.0, cap)
    return max(1.0, min(cap, float(rate) / replicas * latency_s))


def _predict_new(run: Mapping, acc: AcceleratorSpec, prefill_scale: float, decode_scale: float) -> ServingPrediction:
    tp, pp, replicas = _layout(run)
    weights = run["precision"]
    runtime = run.get("runtime") or "vllm"
    consts = serving_values(acc, runtime, weights, prefill_scale=prefill_scale, decode_scale=decode_scale)
    load = {}
    if run.get("concurrency") or (run.get("request_rate") is None):
        clients = run.get("concurrency") or run.get("num_prompts") or 1
        load["concurrency"] = max(1.0, float(clients) / replicas)
    if run.get("request_rate") is not None:
        load["requests_per_second"] = float(run["request_rate"]) / replicas
    out = _evaluate_layout(arch=preset_arch(run["model_preset"]), accelerator=acc, tensor_parallel=tp,
                           pipeline_parallel=pp, runtime=runtime, weights=weights,
                           compute=compute_precision(weights), input_tokens=int(run["input_tokens"]),
                           output_tokens=int(run["output_tokens"]), consts=consts, **load)
    return ServingPrediction(ttft_ms=float(out["ttft_ms"]), tpot_ms=float(out["tpot_ms"]),
                             batch_per_replica=float(out["running_sequences"]))


def predict_serving(run: Mapping, acc: AcceleratorSpec, *, prefill_scale: float = 1.0,
                    decode_scale: float = 1.0) -> ServingPrediction:
    """TTFT and TPOT the engine predicts for exactly this run's layout and load, with its
    constants scaled (1.0 = the presets)."""
    if _evaluate_layout is not None:
        return _predict_new(run, acc, prefill_scale, decode_scale)
    arch, weights, peak, tp, pp, replicas = _serving_parts(run, acc)
    w_bytes = memory.inference_weight_bytes(arch, weights=weights)
    n_in, n_out = int(run["input_tokens"]), int(run["output_tokens"])
    avg_ctx = n_in + n_out / 2
    kv_avg = memory.kv_bytes_per_sequence(arch, tokens=int(avg_ctx), kv_precision=kv_precision(weights))
    pre = float(serving.prefill_s(arch, input_tokens=n_in, tp=tp, bandwidth_gb_s=acc.memory_bandwidth_gb_s,
                                  peak_tflops=peak * prefill_scale, weight_bytes=w_bytes,
                                  weights_precision=weights, pp=pp))
    ttft = float(serving.ttft_s(pre))

    def step(batch: float) -> float:
        return float(serving.decode_step_s(arch, batch=batch, context_tokens=avg_ctx, tp=tp,
                                           bandwidth_gb_s=acc.memory_bandwidth_gb_s * decode_scale,
                                           peak_tflops=peak * decode_scale, weight_bytes=w_bytes,
                                           kv_bytes_per_seq=kv_avg, weights_precision=weights, pp=pp))

    batch = running_batch(run, replicas, 0.0) if run.get("request_rate") is None else 1.0
    for _ in range(30):  # open loop: the batch and the latency settle together
        new = running_batch(run, replicas, ttft + max(n_out - 1, 0) * step(batch))
        if abs(new - batch) < 1e-6:
            break
        batch = new
    return ServingPrediction(ttft_ms=ttft * 1000.0, tpot_ms=step(batch) * 1000.0, batch_per_replica=batch)


def _solve_scale(f, target: float, hi: float) -> tuple[float, str]:
    """The scale s in [SCALE_MIN, hi] with f(s) = target, f decreasing; at a bound with a note.

    Root of g(x) = ln f(e^x) - ln target by the Illinois variant of regula falsi: it keeps the
    bracket of bisection and converges superlinearly (about 6-10 evaluations of the engine)."""
    lo_v, hi_v = f(SCALE_MIN), f(hi)
    if not (math.isfinite(lo_v) and math.isfinite(hi_v)) or lo_v <= 0 or hi_v <= 0:
        return 1.0, "the engine cannot evaluate this layout (it does not fit its memory budget): presets kept"
    if target >= lo_v:
        return SCALE_MIN, "slower than the model allows at its lowest efficiency"
    if target <= hi_v:
        return hi, "faster than the model allows at 100% of peak (bound at the chip's limit)"
    ln_t = math.log(target)
    a, b = math.log(SCALE_MIN), math.log(hi)
    ga, gb = math.log(lo_v) - ln_t, math.log(hi_v) - ln_t  # ga > 0 > gb
    side = 0
    x = (a + b) / 2
    for _ in range(BISECT_STEPS):
        x = (a * gb - b * ga) / (gb - ga)
        gx = math.log(f(math.exp(x))) - ln_t
        if abs(gx) < ROOT_TOLERANCE or b - a < ROOT_TOLERANCE:
            break
        if gx > 0:
            a, ga = x, gx
            if side == 1:
                gb /= 2
            side = 1
        else:
            b, gb = x, gx
            if side == -1:
                ga /= 2
            side = -1
    return math.exp(x), ""


@dataclass(frozen=True)
class ServingFit:
    prefill_scale: float
    decode_scale: float
    preset: ServingPrediction
    notes: tuple[str, ...] = field(default=())


def fit_serving_run(run: Mapping, acc: AcceleratorSpec) -> ServingFit:
    """The scales that make the engine's TTFT and TPOT equal this run's measured means."""
    runtime = run.get("runtime") or "vllm"
    hi_p, hi_d = _max_scales(acc, runtime, run["precision"])
    preset = predict_serving(run, acc)
    pre, dec, why_p, why_d = 1.0, 1.0, "", ""
    rounds = ALTERNATIONS if _evaluate_layout is not None else 1  # the roofline's two phases are independent
    for _ in range(rounds):
        before = (pre, dec)
        pre, why_p = _solve_scale(lambda s, d=dec: predict_serving(run, acc, prefill_scale=s, decode_scale=d).ttft_ms,
                                  run["ttft_mean_ms"], hi_p)
        dec, why_d = _solve_scale(lambda s, p=pre: predict_serving(run, acc, prefill_scale=p, decode_scale=s).tpot_ms,
                                  run["tpot_mean_ms"], hi_d)
        if abs(pre / before[0] - 1) < 1e-4 and abs(dec / before[1] - 1) < 1e-4:
            break
    notes = tuple(f"{m}: {w}" for m, w in (("TTFT", why_p), ("TPOT", why_d)) if w)
    return ServingFit(prefill_scale=pre, decode_scale=dec, preset=preset, notes=notes)


def tpot_floor_ms(run: Mapping, acc: AcceleratorSpec) -> float:
    """No decode step can be faster than one read of the weights a GPU holds at full bandwidth."""
    arch, weights, _peak, tp, pp, _r = _serving_parts(run, acc)
    share = min(1.0, arch.active_params / arch.params) if arch.params else 1.0
    w_bytes = memory.inference_weight_bytes(arch, weights=weights) * share
    return w_bytes / (tp * pp * acc.memory_bandwidth_gb_s * 1e9) * 1000.0


def ttft_floor_ms(run: Mapping, acc: AcceleratorSpec) -> float:
    """No prefill can be faster than its matrix FLOPs (2 x active parameters per input token) at the
    dense peak of the tensor-parallel group (pipeline stages run one after another for a prompt)."""
    arch, _weights, peak, tp, _pp, _r = _serving_parts(run, acc)
    return 2.0 * arch.active_params * int(run["input_tokens"]) / (tp * peak * 1e12) * 1000.0


# ------------------------------------------------------------------------------ training


def training_tokens_per_s(run: Mapping) -> float:
    if run.get("tokens_per_s"):
        return float(run["tokens_per_s"])
    return float(run["global_batch_size"]) * float(run["sequence_length"]) / float(run["step_time_s"])


def _recompute(run: Mapping) -> float:
    return training_flops.recompute_factor(checkpointing=run.get("activation_checkpointing") or "selective", method="full")


def _run_hours(run: Mapping) -> float | None:
    if run.get("wall_clock_hours"):
        return float(run["wall_clock_hours"])
    if run.get("gpu_hours"):
        return float(run["gpu_hours"]) / int(run["count"])
    return None


def raw_goodput(run: Mapping) -> float | None:
    """Useful time / wall-clock from the run's own figures (no model): the whole run's tokens at
    the measured speed, over its wall-clock. None without whole-run figures."""
    hours = _run_hours(run)
    if not (run.get("total_tokens") and hours):
        return None
    return float(run["total_tokens"]) / training_tokens_per_s(run) / 3600.0 / hours


def implied_training_efficiency(run: Mapping, acc: AcceleratorSpec) -> dict[str, float | None]:
    """{"mfu": executed FLOP/s / (GPUs x dense peak), "goodput": useful / wall-clock or None,
    "preset_mfu": what the engine's presets give for the same run}."""
    arch = preset_arch(run["model_preset"])
    precision = compute_precision(run["precision"])
    peak, _col = peak_tflops(acc, precision)
    if not peak:
        raise ValueError(f"{acc.id} has no known {precision} peak")
    count = int(run["count"])
    if _engine_implied_training is not None:
        bf16, _c = peak_tflops(acc, "bf16")
        tps = training_tokens_per_s(run)
        got = _engine_implied_training(
            arch=arch, peak_tflops=float(peak), peak_bf16_tflops=bf16, architecture=acc.architecture,
            compute_precision=precision, gpus=count, tensor_parallel=int(run.get("tensor_parallel") or 1),
            pipeline_parallel=int(run.get("pipeline_parallel") or 1), sequence_length=int(run["sequence_length"]),
            global_batch_tokens=float(run["global_batch_size"]) * float(run["sequence_length"]),
            checkpointing=run.get("activation_checkpointing") or "selective", tokens_per_second=tps,
            gpu_hours=run.get("gpu_hours"), wall_clock_hours=run.get("wall_clock_hours"),
            tokens=run.get("total_tokens"), accelerator=acc)
        return {"mfu": float(got.mfu), "goodput": got.goodput, "preset_mfu": float(got.model_efficiency)}
    tps = training_tokens_per_s(run)
    mfu = tps * 6.0 * arch.active_params * _recompute(run) / (count * float(peak) * 1e12)
    goodput = raw_goodput(run)
    preset = compute.mfu_preset(architecture=acc.architecture, params=arch.params, gpus=count).value
    return {"mfu": mfu, "goodput": None if goodput is None else min(1.0, goodput), "preset_mfu": preset}


def predict_training_tokens_per_s(run: Mapping, implied: Mapping, *, mfu: float) -> float:
    """Tokens/s the engine predicts for this run at efficiency `mfu` (same FLOPs per token and
    peak as the implied one, so the ratio of efficiencies is the ratio of speeds)."""
    return training_tokens_per_s(run) * mfu / implied["mfu"]


# --------------------------------------------------------------------------- combination


def spread(values: Sequence[float]) -> dict[str, float]:
    vals = sorted(float(v) for v in values)
    return {"median": statistics.median(vals), "low": vals[0], "high": vals[-1], "n": len(vals)}


def rel_error(predicted: float, measured: float) -> float:
    """Signed relative error of a prediction: +0.2 = 20% above the measurement."""
    return (predicted - measured) / measured


_SHORT = {"prefill_efficiency": "prefill", "decode_compute_efficiency": "decode compute", "mbu": "bandwidth",
          "decode_bandwidth_efficiency": "decode bandwidth"}


def serving_label(*, values: Mapping[str, float], runs: int, accelerator: str, runtime: str, versions: Sequence[str],
                  measured_on: str) -> Msg:
    engine = RUNTIME_NAMES.get(runtime, runtime) + (" " + ", ".join(versions) if versions else "")
    named = ", ".join(f"{_SHORT.get(k, k)} {v:.2f}" for k, v in values.items())
    return Msg("efficiency {values} from {runs} run(s) on {accelerator}, {engine}, {date}", values=named, runs=runs,
               accelerator=accelerator, engine=engine, date=measured_on)


def training_label(*, values: Mapping[str, float], runs: int, accelerator: str, measured_on: str) -> Msg:
    if values.get("goodput") is not None:
        return Msg("MFU {mfu:.2f}, goodput {goodput:.2f} from {runs} run(s) on {accelerator}, {date}",
                   mfu=values["mfu"], goodput=values["goodput"], runs=runs, accelerator=accelerator, date=measured_on)
    return Msg("MFU {mfu:.2f} from {runs} run(s) on {accelerator}, {date}", mfu=values["mfu"], runs=runs,
               accelerator=accelerator, date=measured_on)


def build_calibrations(rows: Sequence[Mapping]) -> Calibrations:
    """The engine's Calibrations from stored active calibrations
    ({kind, accelerator, runtime, precision, label, values})."""
    serving_cals, training_cals = {}, {}
    for r in rows:
        cal = Calibration(label=str(r["label"]), values={k: float(v) for k, v in r["values"].items() if v is not None})
        if r["kind"] == "serving":
            serving_cals[(r["accelerator"], r["runtime"], r["precision"])] = cal
        else:
            training_cals[r["accelerator"]] = cal
    return Calibrations(serving=serving_cals, training=training_cals)


def accelerator_label(acc: AcceleratorSpec) -> str:
    return acc.model


def preset_name(preset_id: str) -> str:
    p = get_preset(preset_id)
    return p.name if p else preset_id
