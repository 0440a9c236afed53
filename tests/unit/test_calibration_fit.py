"""Measured runs: parsing the benchmark tools' own files, the implied efficiencies checked
against hand calculations, bad input, and the engine using a calibration (no database)."""

import json
from pathlib import Path

import pytest

from planner.calibration import fit
from planner.calibration.formats import (
    MAX_FILE_BYTES,
    Resolver,
    RunFileError,
    parse_file,
    resolve_model,
)
from planner.engine import parse_workload_spec, size_workload
from planner.engine.calibration import Calibration, Calibrations
from planner.engine.catalog_csv import load_accelerators_csv

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT / "tests" / "data" / "calibration"
H100 = "nvidia-h100-sxm5-80gb"


@pytest.fixture(scope="module")
def accelerators():
    return load_accelerators_csv(ROOT / "catalog" / "data" / "accelerators.csv")


@pytest.fixture(scope="module")
def resolver(accelerators):
    return Resolver(accelerators)


def read(name: str) -> bytes:
    return (DATA / name).read_bytes()


def parse(content: bytes, resolver, fmt="auto", **context):
    return parse_file(content, fmt=fmt, context=context, resolver=resolver)


# ---------------------------------------------------------------------------- formats


def test_vllm_result_file_reads_its_own_field_names(resolver):
    fmt, [run] = parse(read("vllm_qwen3_32b_h100_tp2_c16.json"), resolver, precision="bf16")
    assert fmt == "vllm_json"
    # model_id, the --metadata keys gpu / tensor_parallel_size / version, and the metrics.
    assert run["model_preset"] == "qwen3-32b" and run["model_given"] == "Qwen/Qwen3-32B"
    assert run["accelerator"] == H100 and run["tensor_parallel"] == 2 and run["count"] == 2
    assert (run["runtime"], run["runtime_version"]) == ("vllm", "0.12.0")
    assert (run["input_tokens"], run["output_tokens"]) == (163840 // 160, 20480 // 160)
    assert run["concurrency"] == 16 and run["request_rate"] is None  # "inf": all at once, capped at 16
    assert (run["ttft_mean_ms"], run["tpot_mean_ms"]) == (187.938, 22.1835)
    assert run["ttft_p95_ms"] is None  # only p99 (vLLM's default --metric-percentiles) is in the file
    assert run["output_tokens_per_s"] == 681.5
    assert run["measured_on"].isoformat() == "2026-11-20"  # from "date": "20261120-142311"


def test_form_context_wins_over_the_files_metadata(resolver):
    _fmt, [run] = parse(read("vllm_qwen3_32b_h100_tp2_c16.json"), resolver, count=4, tensor_parallel=4,
                        precision="bf16", engine_version="0.12.0-custom")
    assert (run["count"], run["tensor_parallel"], run["runtime_version"]) == (4, 4, "0.12.0-custom")


def test_sglang_jsonl_one_run_per_line(resolver):
    fmt, runs = parse(read("sglang_qwen3_32b_h100.jsonl"), resolver, accelerator="H100 SXM", precision="bf16")
    assert fmt == "sglang_jsonl"
    assert [r["source_line"] for r in runs] == [1, 2]
    # server_info carries the model path, tp_size and version; request_rate Infinity = all at once.
    assert [(r["tensor_parallel"], r["count"]) for r in runs] == [(2, 2), (4, 4)]  # one server: tp x pp GPUs
    assert {r["model_preset"] for r in runs} == {"qwen3-32b"}
    assert {(r["runtime"], r["runtime_version"]) for r in runs} == {("sglang", "0.5.1.post1")}
    assert [r["ttft_mean_ms"] for r in runs] == [840.806, 492.761]


def test_serving_and_training_csv(resolver):
    fmt, runs = parse(read("serving_runs.csv"), resolver)
    assert fmt == "serving_csv" and [r["source_line"] for r in runs] == [2, 3, 4]
    assert [r["concurrency"] for r in runs] == [8, 16, 32]
    fmt, runs = parse(read("training_runs.csv"), resolver)
    assert fmt == "training_csv" and len(runs) == 2
    assert runs[1]["step_time_s"] == 8.9 and runs[1]["tokens_per_s"] is None


@pytest.mark.parametrize("text,expected", [
    ("meta-llama/Llama-3.1-8B-Instruct", "llama-3.1-8b"),
    ("meta-llama/Meta-Llama-3.1-8B-Instruct", "llama-3.1-8b"),
    ("Qwen/Qwen3-32B-FP8", "qwen3-32b"),
    ("mistralai/Mistral-7B-Instruct-v0.3", "mistral-7b-v0.3"),
    ("qwen3-30b-a3b", "qwen3-30b-a3b"),
])
def test_model_names_resolve_to_presets(text, expected):
    assert resolve_model(text) == expected


# -------------------------------------------------------------- implied, by hand


@pytest.mark.skipif(fit._evaluate_layout is not None, reason="hand calculation of the roofline serving model "
                    "(planner/engine/serving.py); the continuous-batching model is checked by the tests below")
def test_serving_fit_matches_the_hand_calculation(resolver, accelerators):
    _fmt, [run] = parse(read("vllm_qwen3_32b_h100_tp2_c16.json"), resolver, count=2, precision="bf16")
    acc = resolver.by_id[H100]
    # Qwen3-32B: 32,762,123,264 params, 64 layers x 64 heads x 128 head_dim, 8 KV heads.
    # H100 SXM: 989.5 TFLOP/s bf16 dense, 3350 GB/s. TP2: two all-reduces per layer.
    overhead_step = 64 * (20e-6 + 15e-6)
    # TTFT = prefill compute / s + step overhead + 2 ms request overhead.
    prefill_flops = 1024 * (2 * 32_762_123_264 + 4 * 64 * 64 * 128 * 512)
    prefill_at_preset = prefill_flops / (2 * 989.5e12 * 0.5)
    s_prefill = prefill_at_preset / (187.938e-3 - overhead_step - 2e-3)
    # TPOT = (weights + 16 sequences x KV of 1088 tokens) / (2 x bandwidth x MBU 0.7 x s) + overhead.
    kv_seq = 2 * 64 * 8 * 128 * 2 * (1024 + 128 // 2)
    decode_at_preset = (2 * 32_762_123_264 + 16 * kv_seq) / (2 * 3350e9 * 0.7)
    s_decode = decode_at_preset / (22.1835e-3 - overhead_step)

    got = fit.fit_serving_run(run, acc)
    assert got.preset.ttft_ms == pytest.approx((prefill_at_preset + overhead_step + 2e-3) * 1000, rel=1e-9)
    assert got.preset.tpot_ms == pytest.approx((decode_at_preset + overhead_step) * 1000, rel=1e-9)
    assert got.prefill_scale == pytest.approx(s_prefill, rel=1e-6)  # 0.375
    assert got.decode_scale == pytest.approx(s_decode, rel=1e-6)  # 0.749
    assert not got.notes
    values = fit.serving_values(acc, "vllm", "bf16", prefill_scale=got.prefill_scale, decode_scale=got.decode_scale)
    assert values["prefill_efficiency"] == pytest.approx(0.5 * s_prefill, abs=1e-6)
    assert values["mbu"] == pytest.approx(0.7 * s_decode, abs=1e-6)
    # With the fitted scales the engine reproduces the measurement.
    again = fit.predict_serving(run, acc, prefill_scale=got.prefill_scale, decode_scale=got.decode_scale)
    assert again.ttft_ms == pytest.approx(187.938, rel=1e-6)
    assert again.tpot_ms == pytest.approx(22.1835, rel=1e-6)


def test_the_fit_reproduces_the_measurement_within_the_chips_limits(resolver):
    """Whichever serving model the engine has: the fitted constants are the presets x the scales,
    none above 1, and with them the engine predicts the measured TTFT and TPOT."""
    _fmt, [run] = parse(read("vllm_qwen3_32b_h100_tp2_c16.json"), resolver, count=2, precision="bf16")
    acc = resolver.by_id[H100]
    got = fit.fit_serving_run(run, acc)
    presets = fit.serving_preset_constants(acc, "vllm", "bf16")
    values = fit.serving_values(acc, "vllm", "bf16", prefill_scale=got.prefill_scale, decode_scale=got.decode_scale)
    assert set(values) == set(presets) and all(0 < v <= 1 for v in values.values())
    assert values["prefill_efficiency"] == pytest.approx(presets["prefill_efficiency"] * got.prefill_scale, abs=1e-6)
    assert got.preset.ttft_ms != pytest.approx(187.938, rel=0.05)  # the presets are off for this run
    again = fit.predict_serving(run, acc, prefill_scale=got.prefill_scale, decode_scale=got.decode_scale)
    assert again.ttft_ms == pytest.approx(187.938, rel=1e-3)
    assert again.tpot_ms == pytest.approx(22.1835, rel=1e-3)


def test_training_mfu_and_goodput_match_the_hand_calculation(resolver):
    _fmt, runs = parse(read("training_runs.csv"), resolver)
    acc = resolver.by_id[H100]
    flops_per_token = 6 * 8_030_261_248  # Llama-3.1-8B, full training
    first = fit.implied_training_efficiency(runs[0], acc)
    assert first["mfu"] == pytest.approx(120_000 * flops_per_token / (16 * 989.5e12), rel=1e-9)  # 0.365
    useful_h = 1.0e11 / 120_000 / 3600
    assert first["goodput"] == pytest.approx(useful_h / (4200 / 16), rel=1e-9)  # 0.88
    second = fit.implied_training_efficiency(runs[1], acc)
    assert second["mfu"] == pytest.approx(256 * 8192 / 8.9 * flops_per_token / (32 * 989.5e12), rel=1e-9)
    assert second["goodput"] is None  # no whole-run figures


def test_an_impossibly_fast_run_is_bounded_at_the_chips_peak(resolver):
    _fmt, [run] = parse(read("vllm_qwen3_32b_h100_tp2_c16.json"), resolver, count=2, precision="bf16")
    run = {**run, "ttft_mean_ms": 6.0}
    acc = resolver.by_id[H100]
    got = fit.fit_serving_run(run, acc)
    values = fit.serving_values(acc, "vllm", "bf16", prefill_scale=got.prefill_scale, decode_scale=got.decode_scale)
    assert all(v <= 1.0 for v in values.values())
    assert any("100% of peak" in n for n in got.notes)


# ---------------------------------------------------------------------- bad files


def errors_of(content: bytes, resolver, fmt="auto", **context):
    with pytest.raises(RunFileError) as info:
        parse(content, resolver, fmt=fmt, **context)
    return [(e.line, e.field, e.message) for e in info.value.errors]


def test_not_json_names_the_line(resolver):
    errs = errors_of(b'{\n  "model_id": "x",\n  "mean_ttft_ms": ,\n}', resolver, fmt="vllm_json")
    assert errs[0][0] == 3 and errs[0][1] == "file"


def test_missing_metrics_are_named(resolver):
    errs = errors_of(b'{"model_id": "Qwen/Qwen3-32B", "completed": 3}', resolver, fmt="vllm_json")
    assert {f for _l, f, _m in errs} == {"mean_ttft_ms", "mean_tpot_ms"}


def test_negative_value_names_the_line_of_its_field(resolver):
    text = read("vllm_qwen3_32b_h100_tp2_c16.json").decode().replace('"mean_tpot_ms": 22.1835', '"mean_tpot_ms": -3')
    errs = errors_of(text.encode(), resolver, count=2, precision="bf16")
    line = next(n for n, t in enumerate(text.splitlines(), 1) if '"mean_tpot_ms"' in t)
    assert (line, "mean_tpot_ms") in [(n, f) for n, f, _m in errs]


def test_unknown_model_and_accelerator(resolver):
    csv = read("serving_runs.csv").decode().replace("Qwen/Qwen3-32B,H100 SXM,4", "acme/NotAModel-9B,Z9000,4")
    errs = errors_of(csv.encode(), resolver)
    assert [(n, f) for n, f, _m in errs] == [(3, "model"), (3, "accelerator")]


def test_csv_wrong_columns_and_values(resolver):
    assert errors_of(b"model,accelerator,gpus\nx,y,1\n", resolver, fmt="serving_csv")[0][:2] == (1, "gpus")
    csv = read("serving_runs.csv").decode().replace(",16,,149.362", ",sixteen,,149.362")
    assert [(n, f) for n, f, _m in errors_of(csv.encode(), resolver)] == [(3, "concurrency")]


def test_physically_impossible_runs_are_refused(resolver):
    # TPOT below one read of the weights at full bandwidth: 65.5 GB / 2 / 3350 GB/s = 9.8 ms.
    csv = read("serving_runs.csv").decode().replace(",18.0370,", ",5.0,")
    assert [(n, f) for n, f, _m in errors_of(csv.encode(), resolver)] == [(2, "tpot_mean_ms")]
    # Training faster than the chips' dense peak.
    csv = read("training_runs.csv").decode().replace(",120000,", ",1200000,")
    errs = errors_of(csv.encode(), resolver)
    assert [(n, f) for n, f, _m in errs] == [(2, "tokens_per_s")] and "more than the chip" in errs[0][2]
    # Layout that does not divide the accelerators.
    csv = read("serving_runs.csv").decode().replace("H100 SXM,4,4", "H100 SXM,6,4")
    assert [(n, f) for n, f, _m in errors_of(csv.encode(), resolver)] == [(3, "tensor_parallel")]


def test_too_large_and_not_text(resolver):
    errs = errors_of(b"a" * (MAX_FILE_BYTES + 1), resolver)
    assert errs[0][1] == "file" and "at most 5 MB" in errs[0][2]
    assert errors_of(b"model,accelerator\n\xff\xfe", resolver)[0][:2] == (2, "file")


# ------------------------------------------------------------------ the engine uses it


def _spec(kind="inference", accelerator="H100 SXM"):
    if kind == "inference":
        return parse_workload_spec({"kind": "inference", "model": {"preset": "qwen3-32b"},
                                    "hardware": {"accelerator": accelerator},
                                    "serving": {"concurrency": 16, "input_tokens": 1024, "output_tokens": 128}})
    return parse_workload_spec({"kind": "pretraining", "model": {"preset": "llama-3.1-8b"},
                                "hardware": {"accelerator": accelerator, "count": 16},
                                "training": {"tokens": 1e11, "sequence_length": 8192, "global_batch_size": 128}})


def test_serving_calibration_replaces_the_presets_on_its_accelerator_only(accelerators):
    label = "efficiency prefill 0.19 from 1 run(s) on H100 SXM5 80GB, vLLM 0.12.0, 2026-11-20"
    h100 = next(a for a in accelerators if a.id == H100)
    values = fit.serving_values(h100, "vllm", "bf16", prefill_scale=0.375, decode_scale=0.75)
    cals = Calibrations(serving={(H100, "vllm", "bf16"): Calibration(label, values)})
    base = size_workload(spec=_spec(), accelerators=accelerators).to_dict()
    calibrated = size_workload(spec=_spec(), accelerators=accelerators, calibrations=cals).to_dict()
    # Lower efficiencies than the presets: a slower first token, and the explanation names the calibration.
    assert calibrated["serving"]["ttft_ms"]["value"] > base["serving"]["ttft_ms"]["value"]
    assert label in json.dumps(calibrated["serving"])
    # Another accelerator is not touched by an H100 calibration.
    other = _spec(accelerator="A100 SXM 80GB")
    assert (size_workload(spec=other, accelerators=accelerators, calibrations=cals).to_dict()["serving"]
            == size_workload(spec=other, accelerators=accelerators).to_dict()["serving"])


def test_training_calibration_replaces_mfu_and_applies_goodput(accelerators):
    def compute_with(mfu, goodput):
        label = f"MFU {mfu:.2f}, goodput {goodput:.2f} from 2 run(s) on H100 SXM5 80GB, 2026-11-12"
        cals = Calibrations(training={H100: Calibration(label, {"mfu": mfu, "goodput": goodput})})
        out = size_workload(spec=_spec("pretraining"), accelerators=accelerators, calibrations=cals).to_dict()
        return label, out["compute"]

    label, cal = compute_with(0.36, 0.88)
    assert cal["mfu"]["value"] == 0.36 and label in cal["mfu"]["explain"]
    # Same executed FLOPs on the same layout: wall-clock goes as 1 / MFU and 1 / goodput.
    wall = cal["wall_clock_hours"]["value"]
    assert compute_with(0.18, 0.88)[1]["wall_clock_hours"]["value"] == pytest.approx(2 * wall, rel=1e-3)
    assert compute_with(0.36, 0.44)[1]["wall_clock_hours"]["value"] == pytest.approx(2 * wall, rel=1e-3)
    base = size_workload(spec=_spec("pretraining"), accelerators=accelerators).to_dict()["compute"]
    assert label not in json.dumps(base)


@pytest.mark.parametrize("content,fmt", [
    (b"[" * 100_000 + b"]" * 100_000, "vllm_json"),
    (b"[" * 100_000 + b"]" * 100_000, "sglang_jsonl"),
    (b"model,accelerator\nqwen3-32b,H\x00100\n", "serving_csv"),
    (b'model,accelerator\n"' + b"x" * 200_000 + b'",H100\n', "serving_csv"),
    (b'{"mean_ttft_ms": 1e400, "mean_tpot_ms": NaN, "completed": true}', "vllm_json"),
], ids=["deep-json", "deep-jsonl", "nul-byte", "huge-field", "non-finite"])
def test_hostile_files_are_messages_not_crashes(resolver, content, fmt):
    assert errors_of(content, resolver, fmt=fmt)
