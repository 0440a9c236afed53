"""Benchmark JSON files: vLLM's benchmark_serving JSON and SGLang's bench_serving JSONL."""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable

from catalog.domain.messages import Msg

from .fields import (
    MAX_ERRORS,
    MAX_FILE_BYTES,
    MAX_RECORDS,
    Resolver,
    RunError,
    RunFileError,
    clean_serving,
)

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
