"""The serving search explores expert parallel, data-parallel attention and MTP where the spec leaves
them open (issue 22, Build 4): per layout, the variants the runtime runs (serving_moe.RUNTIME_MECHANISMS),
picked by the same rule as the layouts; a pinned value stays; a dense model is unchanged."""

from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from planner.engine import parse_workload_spec, search, size_workload
from planner.engine.catalog_csv import load_accelerators_csv
from planner.engine.launch import serving_launch
from planner.engine.result import Configuration
from planner.engine.serving_moe import RUNTIME_MECHANISMS

ROOT = Path(__file__).resolve().parents[2]
ACCS = load_accelerators_csv(ROOT / "catalog" / "data" / "accelerators.csv")
NVIDIA = [a for a in ACCS if not a.id.startswith("amd-")]
AMD = [a for a in ACCS if a.id.startswith("amd-")]
SERVING = {"input_tokens": 2000, "output_tokens": 400, "requests_per_second": 5}
PINNED_OFF_HW = {"expert_parallel": 1, "data_parallel_attention": False}


def _spec(preset="deepseek-r1-0528", runtime="sglang", hardware=None, **serving):
    d = {"kind": "inference", "model": {"preset": preset}, "serving": {**SERVING, "runtime": runtime, **serving}}
    if hardware:
        d["hardware"] = hardware
    return parse_workload_spec(d)


def _size(spec, accs=NVIDIA, **kw):
    return size_workload(spec=spec, accelerators=accs, **kw).to_dict()


@pytest.mark.parametrize("runtime", ["vllm", "sglang", "trtllm"])
def test_deepseek_r1_gets_expert_parallel_and_no_more_gpus_than_plain_tp(runtime):
    open_ = _size(_spec(runtime=runtime))
    plain = _size(_spec(runtime=runtime, hardware=PINNED_OFF_HW, speculative="none"))
    rec, base = open_["recommendation"], plain["recommendation"]
    assert rec["layout"]["expert_parallel"] == rec["layout"]["tensor_parallel"] > 1
    assert open_["serving"]["meets_targets"] and plain["serving"]["meets_targets"]
    assert rec["count"] <= base["count"]
    assert (base["layout"]["expert_parallel"], base["layout"]["data_parallel_attention"],
            base["layout"]["speculative"]) == (1, False, "none")


def test_the_variants_compete_and_the_candidates_carry_them():
    r = _size(_spec(runtime="sglang"))
    seen = {(c["layout"]["data_parallel_attention"], c["layout"]["speculative"]) for c in r["candidates"]["ranked"]}
    assert len(seen) > 1  # DPA and MTP variants of the layouts are ranked beside the plain ones
    assert all(c["layout"]["expert_parallel"] in (1, c["layout"]["tensor_parallel"]) for c in r["candidates"]["ranked"])
    assert r["memory"]["layout"]["expert_parallel"] == r["recommendation"]["layout"]["expert_parallel"]


def test_a_runtime_without_a_mechanism_never_gets_it():
    arch = _spec().model
    base = dict(arch=arch, weights="fp8", compute_precision="fp8", kv_precision="fp8", context_length=2400,
                input_tokens=2000, output_tokens=400, concurrency=1, requests_per_second=5.0, ttft_ms=None,
                tpot_ms=None, expert_parallel=None, data_parallel_attention=None, mtp=None)
    eager = search.serving_variants(search.ServingInputs(**base, runtime="hf_transformers"))
    assert (eager["ep"] == 1).all() and not eager["dpa"].any() and not eager["mtp"].any()
    atom = search.serving_variants(search.ServingInputs(**base, runtime="atom"))
    assert "dpa" not in RUNTIME_MECHANISMS["atom"] and not atom["dpa"].any()
    assert (atom["ep"] == atom["tp"]).all() and atom["mtp"].any()
    r = _size(_spec(runtime="atom"), accs=AMD)
    assert r["recommendation"]["layout"]["expert_parallel"] > 1
    assert not any(c["layout"]["data_parallel_attention"] for c in r["candidates"]["ranked"])


def test_a_model_without_mtp_layers_never_gets_mtp():
    r = _size(_spec(preset="gpt-oss-120b"))
    assert {c["layout"]["speculative"] for c in r["candidates"]["ranked"]} == {"none"}


@pytest.mark.parametrize(("hardware", "serving", "key", "value"), [
    ({"expert_parallel": 4}, {}, "expert_parallel", None),
    ({"data_parallel_attention": True}, {}, "data_parallel_attention", True),
    ({"data_parallel_attention": False}, {}, "data_parallel_attention", False),
    ({}, {"speculative": "mtp"}, "speculative", "mtp"),
    ({}, {"speculative": "none"}, "speculative", "none"),
])
def test_a_pinned_mechanism_stays_pinned(hardware, serving, key, value):
    r = _size(_spec(hardware=hardware, **serving))
    for c in r["candidates"]["ranked"]:
        lay = c["layout"]
        want = min(4, lay["tensor_parallel"]) if key == "expert_parallel" else value
        if key == "data_parallel_attention" and lay["tensor_parallel"] == 1:
            want = False  # DPA is inside the TP group
        assert lay[key] == want, c


def test_a_dense_model_is_unchanged():
    spec = _spec(preset="llama-3.1-70b", runtime="vllm")
    pinned_off = replace(spec, hardware=replace(spec.hardware, data_parallel_attention=False),
                         serving=replace(spec.serving, speculative=replace(spec.serving.speculative, method="none")))
    open_, off = _size(spec, accs=ACCS), _size(pinned_off, accs=ACCS)
    assert open_["candidates"] == off["candidates"] and open_["recommendation"] == off["recommendation"]
    assert set(open_["recommendation"]["layout"]) == {"tensor_parallel", "pipeline_parallel", "replicas"}


def test_the_decided_variant_is_the_one_described_and_launched():
    spec = _spec(runtime="sglang")
    r = _size(spec)
    row = next(c for c in r["candidates"]["ranked"] if c["layout"]["data_parallel_attention"])
    chosen = _size(spec, chosen=Configuration.of_candidate(row))
    assert chosen["recommendation"]["layout"] == row["layout"]
    launch = serving_launch(spec=spec, accelerator_id=row["accelerator_id"], layout=row["layout"], gpus_per_server=8)
    argv = launch["argv"]
    tp = row["layout"]["tensor_parallel"]
    assert argv[argv.index("--ep-size") + 1] == str(tp) and "--enable-dp-attention" in argv
    assert ("--speculative-algorithm" in argv) == (row["layout"]["speculative"] == "mtp")
    assert launch["settings"]["expert_parallel"] == tp and launch["settings"]["data_parallel_attention"]


def test_mtp_variants_use_each_accelerators_own_accepted_tokens():
    """A catalog search with MTP: every chip generation its fitted constant (serving_constants_ix), not their mean."""
    from planner.engine.serving_constants import serving_constants

    spec = _spec(speculative="mtp")
    si = _inputs(spec)
    cat = search.catalog_arrays(NVIDIA, compute_precision=spec.precision.compute)
    res = search.search_serving(si, cat)
    spec_a = res["engine"].spec_a
    for i, acc in enumerate(NVIDIA):
        want = serving_constants(acc, "sglang", spec.precision.compute)["mtp_accepted_tokens"]
        assert float(spec_a.reshape(len(NVIDIA), -1)[i, 0]) == pytest.approx(want)


def _inputs(spec):
    from planner.engine.calibration import NO_CALIBRATIONS
    from planner.engine.sizing_serving import serving_inputs

    return serving_inputs(spec, NO_CALIBRATIONS)


@pytest.mark.parametrize(("preset", "runtime", "accs"), [
    ("deepseek-r1-0528", "sglang", NVIDIA), ("deepseek-r1-0528", "vllm", AMD), ("qwen3.5-397b-a17b", "trtllm", NVIDIA),
    ("minimax-m2.5", "atom", AMD)])
def test_every_searched_variant_meeting_the_targets_stays_within_the_chip(preset, runtime, accs):
    """Physical limits over the variants (EP, DPA, MTP): sustained matmul FLOP/s within the dense peak,
    a step's weight read within the memory bandwidth, weights + KV pool within the memory."""
    from planner.engine.precision import weight_bytes_per_param

    spec = _spec(preset=preset, runtime=runtime, concurrency=64)
    cat = search.catalog_arrays(accs, compute_precision=spec.precision.compute)
    res = search.search_serving(_inputs(spec), cat)
    a, s = spec.model, spec.serving
    ai, li = np.nonzero(res["meets"])
    assert len(ai) and res["mtp"][li].any() or not a.mtp_layers
    for i, j in zip(ai.tolist(), li.tolist(), strict=True):
        acc, tp, pp = cat.accelerators[i], int(res["tp"][j]), int(res["pp"][j])
        rate, step = float(res["op"]["rate"][i, j]), float(res["op"]["T"][i, j])
        peak = max(getattr(acc, c) or 0.0 for c in ("bf16_tflops_dense", "fp16_tflops_dense", "fp8_tflops_dense",
                                                      "fp4_tflops_dense", "int8_tops_dense", "fp32_tflops"))
        assert rate * (s.input_tokens + s.output_tokens) * 2.0 * a.active_params <= tp * pp * peak * 1e12
        dense_gpu = a.active_params * weight_bytes_per_param(spec.precision.weights) / (tp * pp)
        assert dense_gpu / step <= acc.memory_bandwidth_gb_s * 1e9
        mem = res["mem"]
        assert float(mem["weights_bytes"][i, j]) + float(mem["kv_pool_bytes"][i, j]) <= acc.memory_gib * 2**30


def test_layouts_are_ranked_by_the_time_a_request_takes():
    """With a TTFT target only, DeepSeek-R1 on SGLang over 8 x H200: TP8 completes a 400-token answer
    much sooner than TP1 x PP8 (TPOT ~11 vs ~16 ms) for a TTFT 12 ms longer. Ranked by TTFT + TPOT the
    PP8 layout won; by TTFT + 400 x TPOT the TP layout does."""
    spec = _spec(runtime="sglang", ttft_p95_ms=2000, hardware={"accelerator": "nvidia-h200-sxm-141gb", "count": 8})
    rec = _size(spec)["recommendation"]
    assert (rec["layout"]["tensor_parallel"], rec["layout"]["pipeline_parallel"]) == (8, 1)
    pp8 = _size(_spec(runtime="sglang", ttft_p95_ms=2000, hardware={
        "accelerator": "nvidia-h200-sxm-141gb", "count": 8, "tensor_parallel": 1, "pipeline_parallel": 8}))
    tp8 = _size(spec)

    def completion_ms(r):
        s = r["serving"]
        return s["ttft_ms"]["value"] + 400 * s["tpot_ms"]["value"]

    assert completion_ms(tp8) < completion_ms(pp8)


def test_gaudi_is_searched_with_plain_tensor_parallel_only():
    """Gaudi's engine forks document tensor parallel only: the search does not open EP, DPA or MTP there
    (a DeepSeek-R1 plan was decided as 40 x Gaudi 3 with SGLang EP8, DPA and MTP); pinned, they are still
    evaluated as stated."""
    gaudi = [a for a in ACCS if a.id == "intel-gaudi3-128gb"]
    rows = _size(_spec(runtime="sglang"), accs=gaudi)["candidates"]["ranked"]
    assert rows
    for row in rows:
        lay = row["layout"]
        assert (lay.get("expert_parallel", 1), lay.get("data_parallel_attention", False),
                lay.get("speculative", "none")) == (1, False, "none"), lay
    pinned = _size(_spec(runtime="sglang", hardware={"expert_parallel": 8}), accs=gaudi)["candidates"]["ranked"]
    assert any(r["layout"].get("expert_parallel") == 8 for r in pinned)
    nvidia = _size(_spec(runtime="sglang"), accs=[a for a in ACCS if a.id == "nvidia-h200-sxm-141gb"])
    assert any(r["layout"].get("expert_parallel", 1) > 1 for r in nvidia["candidates"]["ranked"])
