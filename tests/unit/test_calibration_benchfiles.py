"""Benchmark files as the tools write them (issue 23, part 8): vLLM --append-result (one run per
line), SGLang outputs with medians only, GPU names as nvidia-smi/rocm-smi/providers write them,
failed or empty requests, negative latencies. Real files from public repositories are kept in
tests/data/calibration/ with their sources (README.md); every file there is read."""

import json
from pathlib import Path

import pytest

from planner.calibration.formats import Resolver, RunFileError, detect_format, parse_file
from planner.engine.catalog_csv import load_accelerator_aliases, load_accelerators_csv
from planner.engine.errors import SpecValidationError
from planner.engine.resolve import resolve_accelerator

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT / "tests" / "data" / "calibration"
VLLM_APPENDED = "vllm_append_llama32_3b_l40s_nerdalert.jsonl"
SGLANG_MEDIANS = "sglang_medians_llama33_70b_h200_datacrunch.jsonl"
# What the upload form would say about each file the file itself does not say (README.md).
CONTEXTS = {
    VLLM_APPENDED: {"precision": "bf16"},
    SGLANG_MEDIANS: {"model": "meta-llama/Llama-3.3-70B-Instruct", "accelerator": "NVIDIA H200", "count": 4,
                     "tensor_parallel": 4, "precision": "bf16"},
    "sglang_qwen3_32b_h100.jsonl": {"accelerator": "NVIDIA H100 80GB HBM3", "precision": "bf16"},
    "vllm_qwen3_32b_h100_tp2_c16.json": {"count": 2, "precision": "bf16"},
    "serving_runs.csv": {},
    "training_runs.csv": {},
}


@pytest.fixture(scope="module")
def accelerators():
    return load_accelerators_csv(ROOT / "catalog" / "data" / "accelerators.csv")


@pytest.fixture(scope="module")
def aliases():
    return load_accelerator_aliases(ROOT / "catalog" / "data" / "accelerator_aliases.csv")


@pytest.fixture(scope="module")
def resolver(accelerators, aliases):
    return Resolver(accelerators, aliases)


def parse(content: bytes, resolver, fmt="auto", **context):
    return parse_file(content, fmt=fmt, context=context, resolver=resolver)


def errors_of(content: bytes, resolver, fmt="auto", **context) -> list[str]:
    with pytest.raises(RunFileError) as exc:
        parse(content, resolver, fmt=fmt, **context)
    return [str(e) for e in exc.value.errors]


def test_every_sample_file_is_read(resolver):
    names = sorted(p.name for p in DATA.iterdir() if p.suffix in (".json", ".jsonl", ".csv"))
    assert set(names) == set(CONTEXTS)  # a new file gets its context (and README entry) here
    for name in names:
        _fmt, runs = parse((DATA / name).read_bytes(), resolver, **CONTEXTS[name])
        assert runs, name


# ------------------------------------------------------------------- vLLM --append-result


def test_vllm_appended_runs_are_read_one_per_line(resolver):
    content = (DATA / VLLM_APPENDED).read_bytes()
    assert detect_format(content) == "vllm_json"
    fmt, runs = parse(content, resolver, **CONTEXTS[VLLM_APPENDED])
    assert fmt == "vllm_json"
    assert [r["source_line"] for r in runs] == list(range(1, 10))
    first, third = runs[0], runs[2]
    assert first["model_preset"] == "llama-3.2-3b" and first["runtime"] == "vllm"
    # --metadata gpu=4xNVIDIA_L40S: four L40S (tensor parallel not given: 1)
    assert first["accelerator"] == "nvidia-l40s-48gb" and first["count"] == 4 and first["tensor_parallel"] == 1
    # 299700 input and 80945 output tokens over 300 completed requests
    assert first["input_tokens"] == 999 and first["output_tokens"] == 270
    assert first["ttft_mean_ms"] == pytest.approx(54.59561144333596)
    assert first["tpot_mean_ms"] == pytest.approx(13.710971568239172)
    assert first["request_rate"] == 10.0 and first["num_prompts"] == 300
    assert first["measured_on"].isoformat() == "2025-05-30"
    assert third["request_rate"] is None and third["num_prompts"] == 900  # "inf": a burst of 900
    assert all(not r["notes"] for r in runs)


def test_forcing_either_json_format_reads_the_appended_file(resolver):
    content = (DATA / VLLM_APPENDED).read_bytes()
    for fmt in ("vllm_json", "sglang_jsonl"):
        _fmt, runs = parse(content, resolver, fmt=fmt, **CONTEXTS[VLLM_APPENDED])
        assert len(runs) == 9
        # the SGLang reader reads model_id and keeps backend "vllm" as vLLM
        assert {r["model_preset"] for r in runs} == {"llama-3.2-3b"} and {r["runtime"] for r in runs} == {"vllm"}


def test_sglang_tool_benchmarking_a_vllm_server_is_a_vllm_run(resolver):
    line = json.loads((DATA / "sglang_qwen3_32b_h100.jsonl").read_text().splitlines()[0].replace("Infinity", '"inf"'))
    line["backend"] = "vllm"
    _fmt, [run] = parse(json.dumps(line).encode(), resolver, **CONTEXTS["sglang_qwen3_32b_h100.jsonl"])
    assert run["runtime"] == "vllm"
    line["backend"] = "lmdeploy"
    errs = errors_of(json.dumps(line).encode(), resolver, **CONTEXTS["sglang_qwen3_32b_h100.jsonl"])
    assert any("engine" in e and "'lmdeploy' is not one of" in e for e in errs)


def test_json_with_neither_tools_keys_is_refused_naming_them(resolver):
    errs = errors_of(b'{"mean_ttft_ms": 50, "mean_tpot_ms": 10, "completed": 5}\n', resolver)
    assert "model_id" in errs[0] and "server_info" in errs[0]


# ------------------------------------------------------------------- SGLang medians only


def test_sglang_medians_only_are_taken_as_p50_and_said_so(resolver):
    content = (DATA / SGLANG_MEDIANS).read_bytes()
    assert detect_format(content) == "sglang_jsonl"
    _fmt, runs = parse(content, resolver, **CONTEXTS[SGLANG_MEDIANS])
    assert len(runs) == 7
    first = runs[0]
    assert first["model_preset"] == "llama-3.3-70b" and first["accelerator"] == "nvidia-h200-sxm-141gb"
    assert first["runtime"] == "sglang" and first["count"] == 4
    assert first["ttft_mean_ms"] == pytest.approx(85.74514742940664)  # median_ttft_ms
    assert first["tpot_mean_ms"] == pytest.approx(13.638956006616354)  # median_itl_ms
    assert first["input_tokens"] == 509 and first["output_tokens"] == 534  # 152612 / 300, 160347 / 300
    assert first["num_prompts"] == 300 and first["request_rate"] == 1.0
    notes = [str(n) for n in first["notes"]]
    assert any("median (85.75 ms) is taken as the mean (p50" in n for n in notes)
    assert any("median inter-token latency (13.64 ms) is taken as the mean TPOT" in n for n in notes)


def test_sglang_file_without_any_ttft_names_what_it_lacks(resolver):
    obj = {"backend": "sglang", "random_input_len": 1024, "completed": 10, "total_input_tokens": 10240,
           "total_output_tokens": 1280, "median_itl_ms": 14.0}
    errs = errors_of(json.dumps(obj).encode(), resolver, **CONTEXTS[SGLANG_MEDIANS])
    assert errs == ["line 1, mean_ttft_ms: missing: the file records no time to first token (mean_ttft_ms, "
                    "median_ttft_ms); run the benchmark with streaming on a generative model"]
    assert not any("not an sglang" in e for e in errs)


# ------------------------------------------------------------------- failed and empty requests


def _vllm_run(**changes) -> dict:
    run = json.loads((DATA / "vllm_qwen3_32b_h100_tp2_c16.json").read_text())
    run.update(changes)
    return run


def test_empty_responses_warn_how_low_the_mean_ttft_is(resolver):
    # 10 requests, 2 answered nothing (TTFT 0, no tokens): the mean over 10 is 8/10 of the true one.
    ttfts = [0.2] * 8 + [0.0, 0.0]
    run = _vllm_run(num_prompts=10, completed=10, failed=0, total_input_tokens=10240, total_output_tokens=1024,
                    mean_ttft_ms=160.0, ttfts=ttfts, output_lens=[128] * 8 + [0, 0])
    _fmt, [rec] = parse(json.dumps(run).encode(), resolver, count=2, precision="bf16")
    assert [str(n) for n in rec["notes"]] == [
        "2 of 10 requests returned nothing (TTFT 0): the mean TTFT is about 20 % low, and the output throughput "
        "counts no tokens for them."]
    assert rec["ttft_mean_ms"] == 160.0  # the file's figure, as recorded


def test_failed_requests_warn_that_the_means_leave_them_out(resolver):
    run = _vllm_run(num_prompts=200, completed=160, failed=40)
    _fmt, [rec] = parse(json.dumps(run).encode(), resolver, count=2, precision="bf16")
    assert [str(n) for n in rec["notes"]] == [
        "40 of 200 requests failed: the means cover only the 160 that completed (the failed ones, often the "
        "slowest under load, are left out, so the means may be low)."]


def test_half_the_requests_empty_is_refused(resolver):
    errs = errors_of(json.dumps(_vllm_run(median_ttft_ms=0.0)).encode(), resolver, count=2, precision="bf16")
    assert errs == ["line 1, median_ttft_ms: 0 ms: at least half the requests returned nothing (TTFT 0); the "
                    "file cannot be used"]


def test_negative_latencies_are_refused_and_nothing_is_read(resolver):
    lines = (DATA / VLLM_APPENDED).read_text().splitlines()
    bad = json.loads(lines[4])
    bad["median_tpot_ms"] = -0.5
    lines[4] = json.dumps(bad)
    errs = errors_of("\n".join(lines).encode(), resolver, **CONTEXTS[VLLM_APPENDED])
    assert errs == ["line 5, median_tpot_ms: -0.5 ms: a negative latency (the benchmark's clock or its parser "
                    "failed); the file cannot be used"]
    per_request = _vllm_run(ttfts=[0.1, -0.02, 0.2])
    errs = errors_of(json.dumps(per_request, indent=2).encode(), resolver, count=2, precision="bf16")
    assert len(errs) == 1 and errs[0].startswith("line ") and "ttfts: 1 negative per-request latencies" in errs[0]


def test_negative_zero_is_not_negative(resolver):
    _fmt, [rec] = parse(json.dumps(_vllm_run(median_tpot_ms=-0.0)).encode(), resolver, count=2, precision="bf16")
    assert rec["tpot_mean_ms"] == pytest.approx(22.1835)


# ------------------------------------------------------------------- GPU names


@pytest.mark.parametrize("name, expected", [
    ("NVIDIA H100 80GB HBM3", "nvidia-h100-sxm5-80gb"),  # nvidia-smi
    ("NVIDIA H200", "nvidia-h200-sxm-141gb"),  # nvidia-smi (the NVL board says "NVIDIA H200 NVL")
    ("NVIDIA H200 NVL", "nvidia-h200-nvl-141gb"),
    ("AMD Instinct MI300X", "amd-mi300x-192gb"),  # rocm-smi
    ("B300 SXM6", "nvidia-b300-sxm-288gb"),  # providers
    ("NVIDIA B300 SXM6 AC", "nvidia-b300-sxm-288gb"),
    ("H100 SXM5 80GB", "nvidia-h100-sxm5-80gb"),
    ("NVIDIA A100-SXM4-80GB", "nvidia-a100-sxm4-80gb"),
    ("NVIDIA_L40S", "nvidia-l40s-48gb"),
])
def test_gpu_names_as_tools_and_providers_write_them(accelerators, aliases, name, expected):
    acc, note = resolve_accelerator(name, accelerators, aliases)
    assert acc.id == expected and note == ""


def test_ambiguous_names_stay_refused_with_the_candidates(accelerators, aliases):
    with pytest.raises(SpecValidationError) as exc:
        resolve_accelerator("H100", accelerators, aliases)
    message = str(exc.value.errors[0].message)
    assert "ambiguous" in message and "nvidia-h100-pcie-80gb" in message and "nvidia-h100-nvl-94gb" in message


def test_every_alias_names_a_catalog_accelerator_and_has_a_source(accelerators):
    import csv

    ids = {a.id for a in accelerators}
    with (ROOT / "catalog" / "data" / "accelerator_aliases.csv").open(encoding="utf-8", newline="") as f:
        rows = list(csv.DictReader(f))
    assert rows
    for row in rows:
        assert row["accelerator"] in ids, row
        assert row["written_by"] in ("nvidia-smi", "rocm-smi", "provider"), row
        assert row["source_url"].startswith("https://") and row["source_title"], row


def test_nvidia_smi_name_in_a_file_resolves(resolver):
    run = _vllm_run(gpu="NVIDIA H100 80GB HBM3")
    _fmt, [rec] = parse(json.dumps(run).encode(), resolver, count=2, precision="bf16")
    assert rec["accelerator"] == "nvidia-h100-sxm5-80gb" and rec["accelerator_given"] == "NVIDIA H100 80GB HBM3"
