"""Measured-run files and rows: read, validate, resolve against the catalog (pure; no database).

Formats (docs/CALIBRATION.md):
- vLLM `vllm bench serve --save-result` / `benchmarks/benchmark_serving.py --save-result`: one
  JSON object; field names as vllm/benchmarks/serve.py writes them (model_id, backend, date,
  request_rate ("inf" or a number), max_concurrency, num_prompts, completed, total_input_tokens,
  total_output_tokens, output_throughput, mean_/median_/std_/pNN_ttft_ms and _tpot_ms, where NN
  are the --metric-percentiles, default 99) plus any --metadata KEY=VALUE pairs.
- SGLang `python -m sglang.bench_serving --output-file`: JSON Lines, one object per benchmark
  (backend, request_rate, max_concurrency, completed, total_input_tokens, total_output_tokens,
  output_throughput, mean_ttft_ms, p99_ttft_ms, mean_tpot_ms, ..., server_info with model_path,
  tp_size and version when the server answered /get_server_info).
- Serving CSV and training CSV with the columns listed in SERVING_CSV_COLUMNS / TRAINING_CSV_COLUMNS.

Every error names the line (1-based; for JSON the line where the field is written) and the
field. A file with any error yields no record at all.
"""

from __future__ import annotations

import csv
import io
import json
import math
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import date, datetime

from catalog.domain.messages import Msg
from planner.engine.errors import SpecValidationError
from planner.engine.hardware import AcceleratorSpec
from planner.engine.precision import PRECISIONS, peak_tflops
from planner.engine.presets import get_preset, list_presets, preset_arch, resolve_preset_id
from planner.engine.resolve import resolve_accelerator
from planner.engine.spec import MIN_GOODPUT

from . import calibration_fit as fit

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


# -------------------------------------------------------------------------------- formats


def _decode(content: bytes) -> str:
    if len(content) > MAX_FILE_BYTES:
        raise RunFileError([RunError(None, "file", f"the file is {len(content) / 2**20:.1f} MB; at most "
                                                   f"{MAX_FILE_BYTES // 2**20} MB")])
    try:
        text = content.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = content[: exc.start].count(b"\n") + 1
        raise RunFileError([RunError(line, "file", "not UTF-8 text")]) from None
    if not text.strip():
        raise RunFileError([RunError(1, "file", "the file is empty")])
    return text


def _line_finder(text: str, base_line: int = 1) -> Callable[[str], int | None]:
    def find(key: str) -> int | None:
        m = re.search(r"\"" + re.escape(key) + r"\"\s*:", text)
        return base_line + text[: m.start()].count("\n") if m else None
    return find


_VLLM_META = {  # --metadata keys people use, by canonical field
    "accelerator": ("accelerator", "gpu", "gpu_type", "hardware"),
    "count": ("count", "num_gpus", "gpus", "gpu_count"),
    "tensor_parallel": ("tensor_parallel", "tensor_parallel_size", "tp", "tp_size"),
    "pipeline_parallel": ("pipeline_parallel", "pipeline_parallel_size", "pp"),
    "precision": ("precision", "dtype", "quantization"),
    "engine_version": ("engine_version", "version", "vllm_version"),
    "engine": ("engine", "runtime"),
}


def _meta(obj: dict, field: str):
    for key in _VLLM_META.get(field, ()):
        if obj.get(key) not in (None, ""):
            return obj[key]
    return None


def _runtime_from_backend(backend: str | None, default: str) -> str:
    """The engine a benchmark measured, from its --backend: sglang.bench_serving --backend vllm
    measures a vLLM server, vllm bench serve --backend sglang an SGLang one. An OpenAI-compatible
    client backend ("openai", "openai-chat") says nothing: the tool's own engine is assumed; any
    other backend is returned as written, so the engine check names it."""
    b = (backend or "").strip().lower()
    if b.startswith("sglang"):
        return "sglang"
    if b.startswith("vllm"):
        return "vllm"
    if b in ("tensorrt-llm", "trt", "trtllm", "trt-llm", "tensorrt_llm"):
        return "trtllm"
    if not b or b.startswith("openai") or b in ("oai", "oai-chat"):
        return default
    return b


def _per_request(obj: dict, line: Callable, errors: list[RunError]) -> tuple[int | None, int | None]:
    completed = obj.get("completed")
    if not isinstance(completed, int | float) or isinstance(completed, bool) or completed < 1:
        errors.append(RunError(line("completed"), "completed", "required: the number of completed requests (>= 1)"))
        return None, None
    means = []
    for key in ("total_input_tokens", "total_output_tokens"):
        v = obj.get(key)
        if not isinstance(v, int | float) or isinstance(v, bool) or v < 1:
            errors.append(RunError(line(key), key, "required: a positive token count"))
            means.append(None)
        else:
            means.append(max(1, round(v / completed)))
    return means[0], means[1]


_COUNTED_NAME = re.compile(r"^\s*(?P<count>[1-9]\d{0,4})\s*[x×]\s*(?P<name>\S.*)$", re.IGNORECASE)


def _serving_from_bench(obj: dict, *, context: dict, line_of: Callable, errors: list[RunError],
                        default_runtime: str, latency: dict) -> dict:
    """Canonical serving fields from a vLLM or SGLang result object plus the form's context
    (`latency`: the TTFT and TPOT _latencies() chose)."""
    server = obj.get("server_info") if isinstance(obj.get("server_info"), dict) else {}
    n_in, n_out = _per_request(obj, line_of, errors)
    rate = obj.get("request_rate")
    if isinstance(rate, str) and rate.strip().lower() in ("inf", "infinity"):
        rate = None
    elif isinstance(rate, float) and math.isinf(rate):
        rate = None
    elif rate == "trace":
        errors.append(RunError(line_of("request_rate"), "request_rate", "trace-timed runs have no fixed load"))
        rate = None

    def pick(field, *from_file):
        if context.get(field) not in (None, ""):
            return context[field]
        for v in from_file:
            if v not in (None, ""):
                return v
        return None

    p95 = obj.get("p95_ttft_ms"), obj.get("p95_tpot_ms")
    tp = pick("tensor_parallel", _meta(obj, "tensor_parallel"), server.get("tp_size"))
    pp = pick("pipeline_parallel", _meta(obj, "pipeline_parallel"), server.get("pp_size"))
    accelerator = pick("accelerator", _meta(obj, "accelerator"))
    counted = _COUNTED_NAME.match(str(accelerator)) if isinstance(accelerator, str) else None
    if counted:  # "--metadata gpu=4xNVIDIA_L40S": four L40S
        accelerator = counted["name"]
    count = pick("count", _meta(obj, "count"), int(counted["count"]) if counted else None)
    if count is None and tp is not None:
        # A benchmark drives one server: it runs on tp x pp (x data-parallel) GPUs.
        try:
            count = int(tp) * int(pp or 1) * int(server.get("dp_size") or 1)
        except (TypeError, ValueError):
            count = None  # the tensor_parallel error is reported by the validator
    return {
        "model": pick("model", obj.get("model_id"), server.get("model_path"), obj.get("model")),
        "accelerator": accelerator,
        "count": count,
        "tensor_parallel": tp,
        "pipeline_parallel": pp,
        "precision": pick("precision", _meta(obj, "precision")),
        "engine": pick("engine", _meta(obj, "engine"), _runtime_from_backend(obj.get("backend"), default_runtime)),
        "engine_version": pick("engine_version", _meta(obj, "engine_version"), server.get("version")),
        "input_tokens": n_in, "output_tokens": n_out,
        "concurrency": obj.get("max_concurrency"),
        "request_rate": rate,
        "num_prompts": obj.get("num_prompts") or obj.get("completed"),
        "ttft_mean_ms": latency["ttft"], "ttft_p95_ms": p95[0],
        "tpot_mean_ms": latency["tpot"], "tpot_p95_ms": p95[1],
        "output_tokens_per_s": obj.get("output_throughput"),
        "measured_on": pick("measured_on", obj.get("date")),
    }


_CONTEXT_NAMES = {"model": "model_id", "accelerator": "accelerator", "count": "count"}


def _raw_summary(obj: dict) -> dict:
    """The source record without its per-request arrays (kept small and auditable)."""
    return {k: v for k, v in obj.items() if not isinstance(v, list) and k != "server_info"} | (
        {"server_info": {k: obj["server_info"].get(k) for k in ("model_path", "tp_size", "version", "dtype",
                                                                 "quantization") if k in obj["server_info"]}}
        if isinstance(obj.get("server_info"), dict) else {})


def _json_safe(v):
    if isinstance(v, float) and not math.isfinite(v):
        return str(v)
    return v


# What each tool writes that the other does not (detect_format; a file with neither is refused).
_VLLM_KEYS = ("model_id", "tokenizer_id", "date", "endpoint_type", "burstiness", "request_goodput")
_SGLANG_KEYS = ("server_info", "random_input_len", "sharegpt_output_len", "total_output_tokens_retokenized",
                "random_range_ratio", "total_input_text_tokens")
_BENCH_NAMES = {"model": "model_id", "concurrency": "max_concurrency", "ttft_p95_ms": "p95_ttft_ms",
                "tpot_p95_ms": "p95_tpot_ms", "output_tokens_per_s": "output_throughput", "measured_on": "date"}
# The central TTFT/TPOT a file may give, best first: the means, else medians (p50), else for TPOT the
# inter-token latency (older sglang.bench_serving wrote only median_ttft_ms and median_itl_ms).
_TTFT_KEYS = ("mean_ttft_ms", "median_ttft_ms")
_TPOT_KEYS = ("mean_tpot_ms", "median_tpot_ms", "median_itl_ms", "mean_itl_ms")
_PER_REQUEST_MS = {"ttfts": 1000.0, "itls": 1000.0, "e2els": 1000.0, "latencies": 1000.0}  # seconds -> ms


def _json_objects(text: str) -> list[tuple[int, int, object]]:
    """Every JSON value of a file, as (first line, end offset, value): one object (vllm bench serve
    --save-result, possibly indented), or one per line (--append-result, sglang --output-file)."""
    decoder = json.JSONDecoder()
    out, pos, n = [], 0, len(text)
    while True:
        while pos < n and text[pos] in " \t\r\n":
            pos += 1
        if pos >= n:
            return out
        line = text.count("\n", 0, pos) + 1
        if len(out) >= MAX_RECORDS:
            raise RunFileError([RunError(line, "file", f"at most {MAX_RECORDS} results per file")])
        try:
            value, end = decoder.raw_decode(text, pos)
        except json.JSONDecodeError as exc:
            raise RunFileError([RunError(exc.lineno, "file", f"not JSON: {exc.msg}")]) from None
        except RecursionError:
            raise RunFileError([RunError(line, "file", "JSON nested too deeply")]) from None
        out.append((line, end, value))
        pos = end


def _tool_of(obj: dict) -> str | None:
    if any(k in obj for k in _SGLANG_KEYS):
        return "sglang_jsonl"
    if any(k in obj for k in _VLLM_KEYS):
        return "vllm_json"
    return None


def _negative_latencies(obj: dict, line_of: Callable) -> list[RunError]:
    """A latency below zero is a clock or parsing fault: the whole file is suspect."""
    errors = []
    for key, v in obj.items():
        if key.endswith("_ms") and isinstance(v, int | float) and not isinstance(v, bool) and v < 0:
            errors.append(RunError(line_of(key), key, f"{v:g} ms: a negative latency (the benchmark's clock or "
                                                      "its parser failed); the file cannot be used"))
    for key in _PER_REQUEST_MS:
        values = obj.get(key)
        if not isinstance(values, list):
            continue
        flat = [x for v in values for x in (v if isinstance(v, list) else [v])]
        bad = [x for x in flat if isinstance(x, int | float) and not isinstance(x, bool) and x < 0]
        if bad:
            errors.append(RunError(line_of(key), key, f"{len(bad)} negative per-request latencies (the lowest "
                                                      f"{min(bad):g} s); the file cannot be used"))
    return errors


def _latencies(obj: dict, line_of: Callable, errors: list[RunError], notes: list) -> dict:
    """The TTFT and TPOT to record: means when the file has them; otherwise the medians, taken as
    p50 and said so in the run's notes. A file with neither is refused, naming what it lacks."""
    out = {}
    for metric, keys, label in (("ttft", _TTFT_KEYS, "time to first token"),
                                ("tpot", _TPOT_KEYS, "time per output token")):
        key = next((k for k in keys if obj.get(k) is not None), None)
        if key is None:
            errors.append(RunError(line_of(keys[0]), keys[0], f"missing: the file records no {label} ("
                                   f"{', '.join(keys)}); run the benchmark with streaming on a generative model"))
            out[metric] = None
            continue
        out[metric] = obj[key]
        if key.startswith("median_") and isinstance(obj[key], int | float):
            if key.endswith("_itl_ms"):
                notes.append(Msg("The file records no TPOT: its median inter-token latency ({value:.4g} ms) is "
                                 "taken as the mean TPOT (p50, not a mean).", value=float(obj[key])))
            else:
                notes.append(Msg("The file records no mean {metric}: its median ({value:.4g} ms) is taken as the "
                                 "mean (p50, not a mean; a long tail makes the mean higher).",
                                 metric=metric.upper(), value=float(obj[key])))
        elif key == "mean_itl_ms" and isinstance(obj[key], int | float):
            notes.append(Msg("The file records no TPOT: its mean inter-token latency ({value:.4g} ms) is taken "
                             "as the mean TPOT.", value=float(obj[key])))
    return out


def _count_of(values, test) -> int:
    return sum(1 for v in values if test(v)) if isinstance(values, list) else 0


def _request_warnings(obj: dict, line_of: Callable, errors: list[RunError], notes: list) -> None:
    """Requests that failed or returned nothing: the tools leave failures out of their means and
    count an empty answer as completed with a TTFT of 0, which pulls the mean TTFT down."""
    completed = obj.get("completed")
    if not isinstance(completed, int) or isinstance(completed, bool) or completed < 1:
        return  # _per_request reports it
    sent = obj.get("num_prompts")
    failed = obj.get("failed")
    if isinstance(failed, int) and not isinstance(failed, bool) and failed > 0:
        sent = completed + failed
    if isinstance(sent, int) and not isinstance(sent, bool) and sent > completed:
        notes.append(Msg("{failed} of {sent} requests failed: the means cover only the {completed} that completed "
                         "(the failed ones, often the slowest under load, are left out, so the means may be low).",
                         failed=sent - completed, sent=sent, completed=completed))
    empty = _count_of(obj.get("ttfts"), lambda t: isinstance(t, int | float) and t == 0)
    if not empty:
        empty = _count_of(obj.get("output_lens"), lambda t: t == 0)
    if not empty:
        empty = _count_of(obj.get("generated_texts"), lambda t: t == "")
    median = obj.get("median_ttft_ms")
    if isinstance(median, int | float) and not isinstance(median, bool) and median == 0:
        errors.append(RunError(line_of("median_ttft_ms"), "median_ttft_ms", "0 ms: at least half the requests "
                               "returned nothing (TTFT 0); the file cannot be used"))
        return
    if empty:
        empty = min(empty, completed)
        notes.append(Msg("{empty} of {completed} requests returned nothing (TTFT 0): the mean TTFT is about "
                         "{percent:.0f} % low, and the output throughput counts no tokens for them.",
                         empty=empty, completed=completed, percent=100.0 * empty / completed))


def _read_bench(content: bytes, *, tool: str, context: dict, resolver: Resolver) -> list[dict]:
    """Every run of a vLLM (--save-result, --append-result) or SGLang (--output-file) result file."""
    text = _decode(content)
    objects = _json_objects(text)
    if not objects:
        raise RunFileError([RunError(1, "file", "no benchmark result in the file")])
    records, errors = [], []
    default_runtime = "vllm" if tool == "vllm_json" else "sglang"
    start = 0
    for line, end, obj in objects:
        chunk, base = text[start:end], text.count("\n", 0, start) + 1
        start = end
        if not isinstance(obj, dict):
            errors.append(RunError(line, "file", "expected a JSON object per benchmark run"))
            continue
        found = _line_finder(chunk, base)

        def line_of(key, found=found, line=line):
            return found(key) or line

        local: list[RunError] = _negative_latencies(obj, line_of)
        notes: list = []
        latency = _latencies(obj, line_of, local, notes)
        _request_warnings(obj, line_of, local, notes)
        if local:
            errors += local
            continue
        fields = _serving_from_bench(obj, context=context, line_of=line_of, errors=local,
                                     default_runtime=default_runtime, latency=latency)
        names = dict(_BENCH_NAMES)
        names["ttft_mean_ms"] = next(k for k in _TTFT_KEYS if obj.get(k) is not None)
        names["tpot_mean_ms"] = next(k for k in _TPOT_KEYS if obj.get(k) is not None)
        if "model_id" not in obj and isinstance(obj.get("server_info"), dict):
            names["model"] = "server_info.model_path"
        try:
            rec = _clean_bench(fields, names, line_of, resolver, local, base_line=line)
        except RunFileError as exc:
            errors += exc.errors
            if len(errors) >= MAX_ERRORS:
                break
            continue
        rec["raw"] = {k: _json_safe(v) for k, v in _raw_summary(obj).items()}
        rec["source_line"] = line
        rec["notes"] = notes
        records.append(rec)
    if errors:
        raise RunFileError(errors)
    return records


def parse_vllm_json(content: bytes, *, context: dict, resolver: Resolver) -> list[dict]:
    return _read_bench(content, tool="vllm_json", context=context, resolver=resolver)


def _clean_bench(fields, names, line_of, resolver, errors, base_line=None):
    """Validate canonical fields; errors name the file's own field (e.g. mean_ttft_ms)."""
    local: list[RunError] = []
    rec = clean_serving(fields, line=base_line, resolver=resolver, errors=local,
                        lines=lambda n: line_of(names.get(n, n)) or base_line)
    for e in local:
        errors.append(RunError(e.line or base_line, names.get(e.field, e.field), e.message))
    if errors:
        raise RunFileError(errors)
    return rec


def parse_sglang_jsonl(content: bytes, *, context: dict, resolver: Resolver) -> list[dict]:
    return _read_bench(content, tool="sglang_jsonl", context=context, resolver=resolver)


def _parse_csv(content: bytes, *, required: Sequence[str], optional: Sequence[str], clean, resolver) -> list[dict]:
    text = _decode(content)
    try:
        return _read_csv(text, required=required, optional=optional, clean=clean, resolver=resolver)
    except csv.Error as exc:  # NUL bytes, a field above the csv module's limit, a broken quote
        raise RunFileError([RunError(None, "file", f"not a readable CSV: {exc}")]) from None


def _read_csv(text: str, *, required, optional, clean, resolver) -> list[dict]:
    reader = csv.DictReader(io.StringIO(text))
    header = [h.strip() for h in (reader.fieldnames or [])]
    errors: list[RunError] = []
    known = set(required) | set(optional)
    for h in header:
        if h not in known:
            errors.append(RunError(1, h or "(empty)", f"unknown column; expected {', '.join(required)}"))
    for h in required:
        if h not in header and h not in optional:
            errors.append(RunError(1, h, "missing column"))
    if errors:
        raise RunFileError(errors)
    reader.fieldnames = header
    records = []
    for row in reader:
        n = reader.line_num
        if len(records) >= MAX_RECORDS:
            raise RunFileError([RunError(n, "file", f"at most {MAX_RECORDS} rows per file")])
        if None in row:
            errors.append(RunError(n, "file", f"more values than the {len(header)} columns"))
            continue
        if not any((v or "").strip() for v in row.values()):
            continue
        rec = clean(dict(row), line=n, resolver=resolver, errors=errors)
        if rec is not None:
            rec["raw"] = dict(row)
            rec["source_line"] = n
            records.append(rec)
        if len(errors) >= MAX_ERRORS:
            break
    if errors:
        raise RunFileError(errors)
    if not records:
        raise RunFileError([RunError(2, "file", "no data rows")])
    return records


def parse_serving_csv(content: bytes, *, context: dict, resolver: Resolver) -> list[dict]:
    return _parse_csv(content, required=SERVING_CSV_COLUMNS, optional=SERVING_CSV_OPTIONAL,
                      clean=clean_serving, resolver=resolver)


def parse_training_csv(content: bytes, *, context: dict, resolver: Resolver) -> list[dict]:
    return _parse_csv(content, required=TRAINING_CSV_COLUMNS, optional=TRAINING_CSV_OPTIONAL,
                      clean=clean_training, resolver=resolver)


PARSERS = {"vllm_json": parse_vllm_json, "sglang_jsonl": parse_sglang_jsonl,
           "serving_csv": parse_serving_csv, "training_csv": parse_training_csv}


def detect_format(content: bytes) -> str:
    """Which of the four formats a file is in, from its content: a JSON result by the keys its
    tool writes (vLLM: model_id, date, ...; SGLang: server_info, random_input_len, ...)."""
    head = content[:4096].decode("utf-8-sig", errors="replace").lstrip()
    if head.startswith("{"):
        text = content.decode("utf-8-sig", errors="replace")
        try:
            objects = [obj for _line, _end, obj in _json_objects(text)]
        except RunFileError:  # unreadable further on: judge by the first line, the reader reports the rest
            try:
                objects = [json.loads(text.splitlines()[0])]
            except (json.JSONDecodeError, RecursionError, IndexError):
                objects = []
        for obj in objects:
            if isinstance(obj, dict) and _tool_of(obj):
                return _tool_of(obj)
        if not objects:
            raise RunFileError([RunError(1, "file", "not JSON: neither a vLLM/SGLang result nor a CSV")])
        raise RunFileError([RunError(1, "file", "a JSON result from neither vllm bench serve --save-result (it writes "
                                                "model_id and date) nor sglang.bench_serving --output-file (it writes "
                                                "server_info or random_input_len); choose its format")])
    first = head.splitlines()[0] if head else ""
    if "sequence_length" in first or "step_time_s" in first:
        return "training_csv"
    if "," in first:
        return "serving_csv"
    raise RunFileError([RunError(1, "file", "not a vLLM/SGLang result or a CSV with the documented columns")])


def parse_file(content: bytes, *, fmt: str, context: dict, resolver: Resolver) -> tuple[str, list[dict]]:
    """(format, validated records) or RunFileError; fmt "auto" detects the format."""
    _decode(content)  # size and encoding first, whatever the format
    if fmt == "auto":
        fmt = detect_format(content)
    return fmt, PARSERS[fmt](content, context=context, resolver=resolver)


def kind_of(fmt: str) -> str:
    return "training" if fmt == "training_csv" else "serving"
