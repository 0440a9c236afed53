"""A measured run's fields: limits, the number tables, errors, the model/accelerator resolver and the cleaning of one run."""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import date, datetime

from planner.engine.errors import SpecValidationError
from planner.engine.hardware import AcceleratorSpec
from planner.engine.precision import PRECISIONS, peak_tflops
from planner.engine.presets import get_preset, list_presets, preset_arch, resolve_preset_id
from planner.engine.resolve import resolve_accelerator
from planner.engine.spec import MIN_GOODPUT

from . import fit

MAX_FILE_BYTES = 5 * 1024 * 1024
MAX_RECORDS = 1000
MAX_ERRORS = 50
MAX_GPUS = 65536
# Published whole-run figures are rounded (days, GPU-hours): a goodput up to 2% above 1 is taken as 1.
GOODPUT_ROUNDING = 1.02
# Below 0.01% of the dense peak no measured run goes (real runs: a few % for small vision models, 20-60%
# for LLMs): such a figure is a unit slip (tokens/s per GPU vs per job, ms vs s), and fitting on it
# would divide by almost zero. Not an efficiency estimate: a bound 100x below anything published.
MIN_PLAUSIBLE_MFU = 1e-4

SERVING_CSV_COLUMNS = (
    "model", "accelerator", "count", "tensor_parallel", "engine", "engine_version", "precision",
    "input_tokens", "output_tokens", "concurrency", "request_rate", "ttft_mean_ms", "ttft_p95_ms",
    "tpot_mean_ms", "tpot_p95_ms", "output_tokens_per_s",
)
SERVING_CSV_OPTIONAL = ("engine_version", "concurrency", "request_rate", "ttft_p95_ms", "tpot_p95_ms",
                        "output_tokens_per_s", "measured_on", "pipeline_parallel", "num_prompts")
TRAINING_CSV_COLUMNS = (
    "model", "accelerator", "count", "tensor_parallel", "pipeline_parallel", "data_parallel", "precision",
    "sequence_length", "global_batch_size", "tokens_per_s", "step_time_s",
)
TRAINING_CSV_OPTIONAL = ("data_parallel", "tokens_per_s", "step_time_s", "activation_checkpointing",
                         "total_tokens", "gpu_hours", "wall_clock_hours", "measured_on")

RUNTIME_ALIASES = {
    "vllm": "vllm", "sglang": "sglang", "trtllm": "trtllm", "trt-llm": "trtllm", "tensorrt-llm": "trtllm",
    "tensorrt_llm": "trtllm", "trt": "trtllm", "hf_transformers": "hf_transformers", "hf": "hf_transformers",
    "transformers": "hf_transformers",
}
CHECKPOINTING = ("none", "selective", "full")
# Name parts of a served checkpoint that do not change the architecture.
_MODEL_NAME_NOISE = {"instruct", "chat", "hf", "it", "base", "fp8", "awq", "gptq", "int4", "int8", "w4a16",
                     "w8a8", "dynamic", "bf16", "fp16", "meta"}


@dataclass(frozen=True)
class NumberField:
    """A run's number: > 0 and <= high (the API's run schema is built from these tables)."""

    high: float
    integer: bool = False
    required: bool = False
    default: int | None = None


COMMON_NUMBERS = {
    "count": NumberField(MAX_GPUS, integer=True, required=True),
    "tensor_parallel": NumberField(64, integer=True, default=1),
    "pipeline_parallel": NumberField(256, integer=True, default=1),
}
SERVING_NUMBERS = {
    "input_tokens": NumberField(10_000_000, integer=True, required=True),
    "output_tokens": NumberField(1_000_000, integer=True, required=True),
    "concurrency": NumberField(1_000_000, integer=True),
    "request_rate": NumberField(1_000_000),
    "num_prompts": NumberField(100_000_000, integer=True),
    "ttft_mean_ms": NumberField(3_600_000, required=True),
    "ttft_p95_ms": NumberField(3_600_000),
    "tpot_mean_ms": NumberField(60_000, required=True),
    "tpot_p95_ms": NumberField(60_000),
    "output_tokens_per_s": NumberField(1e9),
}
# A serving run gives at least one of these (closed loop: concurrency; open loop: the rate).
SERVING_LOAD_FIELDS = ("concurrency", "request_rate", "num_prompts")
TRAINING_NUMBERS = {
    "data_parallel": NumberField(MAX_GPUS, integer=True),
    "sequence_length": NumberField(10_000_000, integer=True, required=True),
    "global_batch_size": NumberField(100_000_000, integer=True, required=True),
    "tokens_per_s": NumberField(1e12),
    "step_time_s": NumberField(86_400),
    "total_tokens": NumberField(1e16),
    "gpu_hours": NumberField(1e9),
    "wall_clock_hours": NumberField(1e6),
}
# A training run gives its speed one way or the other.
TRAINING_SPEED_FIELDS = ("tokens_per_s", "step_time_s")
ENGINE_VERSION_MAX = 40


@dataclass(frozen=True)
class RunError:
    line: int | None
    field: str
    message: str

    def __str__(self):
        where = f"line {self.line}, " if self.line else ""
        return f"{where}{self.field}: {self.message}"


class RunFileError(Exception):
    def __init__(self, errors: Sequence[RunError]):
        self.errors = list(errors)[:MAX_ERRORS]
        super().__init__("; ".join(str(e) for e in self.errors))


class DuplicateRunsError(RunFileError):
    """Valid runs the team has recorded already: a conflict with what is stored (the API's 409),
    not bad input."""


# ------------------------------------------------------------------------------ resolving


def resolve_model(text: str) -> str:
    """A preset id for a model name or Hugging Face repo id ("meta-llama/Llama-3.1-8B-Instruct")."""
    raw = str(text or "").strip()
    exact = resolve_preset_id(raw)  # a preset id, or a catalog model's Hugging Face id
    if exact:
        return exact
    base = raw.rstrip("/").split("/")[-1].lower()
    parts = [p for p in re.split(r"[-_\s]+", base) if p]
    tries = [base, "-".join(parts), "-".join(p for p in parts if p not in _MODEL_NAME_NOISE)]
    names = {re.sub(r"[\s_]+", "-", p["name"].lower()): p["id"] for p in list_presets()}
    for t in tries:
        if get_preset(t):
            return t
        if t in names:
            return names[t]
    raise ValueError(f"{raw!r} is not a model the catalog knows (use a preset id, e.g. llama-3.1-8b)")


class Resolver:
    """Looks up models and accelerators for the validators (the catalog of the day)."""

    def __init__(self, accelerators: Sequence[AcceleratorSpec], aliases: dict[str, str] | None = None):
        self.accelerators = list(accelerators)
        self.by_id = {a.id: a for a in self.accelerators}
        self.aliases = dict(aliases or {})  # names as nvidia-smi/rocm-smi/providers write them

    def accelerator(self, text: str) -> AcceleratorSpec:
        try:
            acc, _note = resolve_accelerator(str(text), self.accelerators, self.aliases)
        except SpecValidationError as exc:
            raise ValueError("; ".join(e.message for e in exc.errors)) from None
        return acc


# ------------------------------------------------------------------------------- fields


class _Row:
    """Typed reads of one record; errors are collected, never raised one by one."""

    def __init__(self, data: dict, line: int | None, errors: list[RunError], lines: Callable[[str], int | None] = None):
        self.data, self.line, self.errors = data, line, errors
        self._lines = lines

    def err(self, name: str, message: str) -> None:
        line = self._lines(name) if self._lines else self.line
        self.errors.append(RunError(line or self.line, name, message))

    def present(self, name: str) -> bool:
        v = self.data.get(name)
        return v is not None and not (isinstance(v, str) and v.strip() == "")

    def text(self, name: str, *, required=True, max_len=200) -> str:
        if not self.present(name):
            if required:
                self.err(name, "required")
            return ""
        v = str(self.data[name]).strip()
        if len(v) > max_len:
            self.err(name, f"at most {max_len} characters")
            return ""
        return v

    def number(self, name: str, *, required=True, integer=False, low=0.0, high=math.inf, low_open=True,
               default=None):
        if not self.present(name):
            if required:
                self.err(name, "required")
            return default
        raw = self.data[name]
        if isinstance(raw, bool):
            self.err(name, "must be a number")
            return None
        try:
            v = float(str(raw).strip()) if not isinstance(raw, int | float) else float(raw)
        except ValueError:
            self.err(name, f"{raw!r} is not a number")
            return None
        if not math.isfinite(v):
            self.err(name, "must be a finite number")
            return None
        if integer and v != int(v):
            self.err(name, "must be a whole number")
            return None
        if (v <= low if low_open else v < low) or v > high:
            bound = f"> {low:g}" if low_open else f">= {low:g}"
            self.err(name, f"{v:g} is out of range (must be {bound} and <= {high:g})")
            return None
        return int(v) if integer else v

    def numbers(self, fields: dict[str, NumberField]) -> dict:
        return {name: self.number(name, integer=f.integer, high=f.high, required=f.required, default=f.default)
                for name, f in fields.items()}

    def choice(self, name: str, options, *, required=True, default=""):
        v = self.text(name, required=required).lower()
        if not v:
            return default
        if v not in options:
            self.err(name, f"{v!r} is not one of {', '.join(sorted(set(options)))}")
            return default
        return options[v] if isinstance(options, dict) else v

    def day(self, name: str):
        if not self.present(name):
            return None
        raw = str(self.data[name]).strip()
        for fmt in ("%Y-%m-%d", "%Y%m%d-%H%M%S", "%Y-%m-%dT%H:%M:%S", "%Y-%m-%d %H:%M:%S"):
            try:
                d = datetime.strptime(raw[:19] if "T" in raw or " " in raw else raw, fmt).date()
            except ValueError:
                continue
            if d > date.today() or d.year < 2015:
                self.err(name, f"{d.isoformat()} is not a plausible measurement date")
                return None
            return d
        self.err(name, f"{raw!r} is not a date (YYYY-MM-DD)")
        return None


def _resolve_common(row: _Row, resolver: Resolver, *, serving: bool) -> dict:
    out = {}
    model = row.text("model")
    if model:
        try:
            out["model_preset"] = resolve_model(model)
        except ValueError as exc:
            row.err("model", str(exc))
        else:
            arch = preset_arch(out["model_preset"])
            if serving and not arch.has_kv_cache:
                row.err("model", f"{arch.name} is not a generative decoder; serving runs calibrate LLM serving")
                out.pop("model_preset")
    out["model_given"] = model
    acc_text = row.text("accelerator")
    out["accelerator_given"] = acc_text
    acc = None
    if acc_text:
        try:
            acc = resolver.accelerator(acc_text)
        except ValueError as exc:
            row.err("accelerator", str(exc))
        else:
            out["accelerator"] = acc.id
    out.update(row.numbers(COMMON_NUMBERS))
    default_precision = "" if serving else "bf16"
    out["precision"] = row.choice("precision", {p: p for p in PRECISIONS}, required=serving,
                                  default=default_precision)
    if all(out.get(k) for k in ("count", "tensor_parallel", "pipeline_parallel")):
        if out["count"] % (out["tensor_parallel"] * out["pipeline_parallel"]):
            row.err("tensor_parallel", f"tensor x pipeline parallel ({out['tensor_parallel']} x "
                                       f"{out['pipeline_parallel']}) does not divide the {out['count']} accelerators")
    if acc is not None and out.get("precision"):
        if not peak_tflops(acc, fit.compute_precision(out["precision"]))[0]:
            row.err("precision", f"{acc.model} has no known {fit.compute_precision(out['precision'])} throughput")
    out["measured_on"] = row.day("measured_on")
    return out, acc


def clean_serving(data: dict, *, line: int | None, resolver: Resolver, errors: list[RunError],
                  lines: Callable[[str], int | None] | None = None) -> dict | None:
    """A validated serving run from canonical fields, or None (errors appended)."""
    start = len(errors)
    row = _Row(data, line, errors, lines)
    out, acc = _resolve_common(row, resolver, serving=True)
    out["runtime"] = row.choice("engine", RUNTIME_ALIASES)
    out["runtime_version"] = row.text("engine_version", required=False, max_len=ENGINE_VERSION_MAX)
    out.update(row.numbers(SERVING_NUMBERS))
    if not any(row.present(k) for k in SERVING_LOAD_FIELDS):
        row.err("concurrency", "give the concurrency (closed loop) or the request rate (open loop)")
    if len(errors) == start and out.get("model_preset"):
        most = preset_arch(out["model_preset"]).max_position_embeddings
        if most and out["input_tokens"] + out["output_tokens"] > most:
            row.err("input_tokens", f"input + output tokens ({out['input_tokens'] + out['output_tokens']}) exceed the "
                                    f"model's maximum context ({most})")
    if len(errors) == start and acc is not None:
        ttft_floor = fit.ttft_floor_ms(out, acc)
        if out["ttft_mean_ms"] < ttft_floor:
            row.err("ttft_mean_ms", f"{out['ttft_mean_ms']:g} ms is below the {ttft_floor:.3g} ms the prompt's "
                                    f"{out['input_tokens']} tokens take at {acc.model}'s dense peak (prefix caching "
                                    "is not modelled)")
        floor = fit.tpot_floor_ms(out, acc)
        if out["tpot_mean_ms"] < floor:
            row.err("tpot_mean_ms", f"{out['tpot_mean_ms']:g} ms is below the {floor:.2f} ms one read of the "
                                    f"weights takes at {acc.model}'s full memory bandwidth (speculative "
                                    "decoding is not modelled)")
        if out["output_tokens_per_s"] and out["concurrency"]:
            # Each of `concurrency` streams emits at most one token per TPOT.
            most = out["concurrency"] * 1000.0 / out["tpot_mean_ms"] * 1.5
            if out["output_tokens_per_s"] > most:
                row.err("output_tokens_per_s", f"{out['output_tokens_per_s']:g} tokens/s is more than "
                                               f"{out['concurrency']} streams at {out['tpot_mean_ms']:g} ms per token "
                                               "can produce")
    return out if len(errors) == start else None


def clean_training(data: dict, *, line: int | None, resolver: Resolver, errors: list[RunError]) -> dict | None:
    start = len(errors)
    row = _Row(data, line, errors)
    out, acc = _resolve_common(row, resolver, serving=False)
    out["activation_checkpointing"] = row.choice("activation_checkpointing", {c: c for c in CHECKPOINTING},
                                                 required=False, default="")
    out.update(row.numbers(TRAINING_NUMBERS))
    if out["tokens_per_s"] is None and out["step_time_s"] is None and not row.present("tokens_per_s") \
            and not row.present("step_time_s"):
        row.err("tokens_per_s", "give the tokens/s of the whole job or the step time")
    if out["data_parallel"] and out["count"] and out["tensor_parallel"] and out["pipeline_parallel"]:
        if out["data_parallel"] * out["tensor_parallel"] * out["pipeline_parallel"] != out["count"]:
            row.err("data_parallel", f"tensor x pipeline x data parallel = {out['tensor_parallel']} x "
                                     f"{out['pipeline_parallel']} x {out['data_parallel']}, not the {out['count']} accelerators")
    if len(errors) == start and out["tokens_per_s"] and out["step_time_s"] and out["global_batch_size"]:
        from_step = out["global_batch_size"] * out["sequence_length"] / out["step_time_s"]
        if abs(from_step - out["tokens_per_s"]) > 0.1 * out["tokens_per_s"]:
            row.err("step_time_s", f"global batch x sequence length / step time = {from_step:,.0f} tokens/s, more "
                                   f"than 10% from tokens_per_s {out['tokens_per_s']:,.0f}")
    if len(errors) == start and acc is not None:
        implied = fit.implied_training_efficiency(out, acc)
        field = "tokens_per_s" if out["tokens_per_s"] else "step_time_s"
        if implied["mfu"] > 1.0:
            row.err(field, f"implies {implied['mfu']:.0%} of {acc.model}'s dense peak: more than the chip can do")
        elif not implied["mfu"] >= MIN_PLAUSIBLE_MFU:
            row.err(field, f"implies {implied['mfu']:.3g} of {acc.model}'s dense peak, below {MIN_PLAUSIBLE_MFU:g}: "
                           "no real run is that slow (check the units)")
        goodput = fit.raw_goodput(out)
        hours_field = "wall_clock_hours" if out["wall_clock_hours"] else "gpu_hours"
        if goodput is not None and goodput > GOODPUT_ROUNDING:
            row.err(hours_field, f"the run's {out['total_tokens']:.4g} tokens at the measured speed take longer than "
                                 f"its wall-clock (goodput {goodput:.2f} > 1)")
        elif goodput is not None and not goodput >= MIN_GOODPUT:
            row.err(hours_field, f"the run's {out['total_tokens']:.4g} tokens at the measured speed fill only "
                                 f"{goodput:.2g} of its wall-clock, below the engine's {MIN_GOODPUT:g} (check the units)")
    return out if len(errors) == start else None
