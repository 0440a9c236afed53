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

This module detects the format and dispatches (``parse_file``); the fields and their cleaning are in
``fields``, the readers in ``bench_files`` (vLLM, SGLang) and ``csv_files``. The names callers use
are re-exported here.
"""

from __future__ import annotations

import json

from .bench_files import _decode, _json_objects, _tool_of, parse_sglang_jsonl, parse_vllm_json
from .csv_files import parse_serving_csv, parse_training_csv
from .fields import (
    CHECKPOINTING,
    COMMON_NUMBERS,
    ENGINE_VERSION_MAX,
    MAX_FILE_BYTES,
    RUNTIME_ALIASES,
    SERVING_CSV_COLUMNS,
    SERVING_LOAD_FIELDS,
    SERVING_NUMBERS,
    TRAINING_CSV_COLUMNS,
    TRAINING_NUMBERS,
    TRAINING_SPEED_FIELDS,
    DuplicateRunsError,
    NumberField,
    Resolver,
    RunError,
    RunFileError,
    clean_serving,
    clean_training,
    resolve_model,
)

__all__ = [
    "CHECKPOINTING",
    "COMMON_NUMBERS",
    "ENGINE_VERSION_MAX",
    "MAX_FILE_BYTES",
    "PARSERS",
    "RUNTIME_ALIASES",
    "SERVING_CSV_COLUMNS",
    "SERVING_LOAD_FIELDS",
    "SERVING_NUMBERS",
    "TRAINING_CSV_COLUMNS",
    "TRAINING_NUMBERS",
    "TRAINING_SPEED_FIELDS",
    "DuplicateRunsError",
    "NumberField",
    "Resolver",
    "RunError",
    "RunFileError",
    "clean_serving",
    "clean_training",
    "detect_format",
    "kind_of",
    "parse_file",
    "parse_serving_csv",
    "parse_sglang_jsonl",
    "parse_training_csv",
    "parse_vllm_json",
    "resolve_model",
]

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
