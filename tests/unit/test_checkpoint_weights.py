"""Issue 22, item 2: a served catalog model's weights default to its published checkpoint's own format
(planner/engine/data/checkpoint_weights.csv), each part in its own bytes (docs/SIZING.md "Weight formats")."""

import copy
import json
import pickle
import re
from pathlib import Path

import pytest

from planner.engine import parse_workload_spec, size_workload
from planner.engine.architecture import embedding_and_head_params
from planner.engine.catalog_csv import load_accelerators_csv
from planner.engine.launch import serving_launch
from planner.engine.memory import inference_weight_bytes
from planner.engine.precision import WeightFormat, weight_bytes_per_param, weight_part_bytes
from planner.engine.presets import get_preset, list_presets, preset_arch, preset_ids
from planner.engine.serving_model import moe_split

ROOT = Path(__file__).resolve().parents[2]
H100 = "nvidia-h100-sxm5-80gb"
SERVE = {"input_tokens": 1000, "output_tokens": 1000, "concurrency": 8, "tpot_p95_ms": 50}


@pytest.fixture(scope="module")
def accelerators():
    return load_accelerators_csv(ROOT / "catalog" / "data" / "accelerators.csv")


def spec(preset, kind="inference", precision=None, hardware=None):
    d = {"kind": kind, "model": {"preset": preset}}
    if kind == "inference":
        d["serving"] = SERVE
    if precision:
        d["precision"] = precision
    if hardware:
        d["hardware"] = hardware
    return parse_workload_spec(d)


def test_scale_bytes_of_each_format():
    assert weight_bytes_per_param("fp4") == 0.5 + 1 / 16  # NVFP4: one E4M3 scale per 16
    assert WeightFormat("experts=mxfp4;rest=bf16").experts_bytes == 0.5 + 1 / 32  # MXFP4: E8M0 per 32
    assert WeightFormat("rest=nvfp4").experts_bytes == weight_bytes_per_param("fp4")
    assert WeightFormat("rest=fp8-block128").experts_bytes == 1 + 4 / 128**2
    assert WeightFormat("experts=int4-group32;rest=bf16").experts_bytes == 0.5 + 2 / 32
    assert weight_part_bytes("bf16", rest_params=10.0, expert_params=5.0, embedding_params=3.0) == (20.0, 10.0)
    w = WeightFormat("experts=mxfp4;rest=bf16")
    assert pickle.loads(pickle.dumps(w)).parts == w.parts and copy.deepcopy(w).text == w.text
    assert json.dumps({"weights": w}) == '{"weights": "fp4"}'
    with pytest.raises(ValueError):
        WeightFormat("experts=mxfp4")  # no rest
    with pytest.raises(ValueError):
        WeightFormat("experts=mxfp5;rest=bf16")


def test_every_catalog_checkpoint_format_parses_and_carries_its_source_and_date():
    filled = [p for p in preset_ids() if get_preset(p).row["checkpoint_weights"]]
    assert {"gpt-oss-120b", "gpt-oss-20b", "deepseek-v3", "deepseek-r1-0528", "kimi-k2.5"} <= set(filled)
    for pid in filled:
        row = get_preset(pid).row
        WeightFormat(row["checkpoint_weights"])
        assert "config" in row["checkpoint_weights_source"] and re.search(r"20\d\d-\d\d-\d\d", row["checkpoint_weights_source"])


def test_gpt_oss_120b_fits_one_h100_in_its_mxfp4_checkpoint(accelerators):
    s = spec("gpt-oss-120b", hardware={"accelerator": H100, "count": 1})
    assert isinstance(s.precision.weights, WeightFormat) and s.precision.weights.parts["experts"] == "mxfp4"
    assert s.precision.compute == "fp4" and s.precision.kv_cache == "bf16"  # H100: dequantised (weight-only)
    d = size_workload(spec=s, accelerators=accelerators).to_dict()
    rest, routed = moe_split(s.model)
    assert d["model"]["weight_bytes"]["value"] == pytest.approx(routed * (0.5 + 1 / 32) + rest * 2)
    assert 60 * 2**30 < d["model"]["weight_bytes"]["value"] < 62 * 2**30  # the published ~65 GB checkpoint
    assert d["recommendation"]["count"] == 1
    assert d["memory"]["components"]["weights_bytes"]["value"] == pytest.approx(d["model"]["weight_bytes"]["value"])
    said = [a for a in d["assumptions"] if "checkpoint's own format" in a]
    assert said and "mxfp4" in said[0] and "openai/gpt-oss-120b" in said[0]


def test_deepseek_r1_0528_weights_are_fp8_with_block_scales(accelerators):
    s = spec("deepseek-r1-0528")
    a = s.model
    got = inference_weight_bytes(a, weights=s.precision.weights)
    emb = embedding_and_head_params(a)
    assert got == pytest.approx(a.params * (1 + 4 / 128**2) + emb * (2 - (1 + 4 / 128**2)))
    assert 671e9 < got < 671e9 * 1.0003 + 1.9e9
    assert "embedding and lm_head" in size_workload(spec=s, accelerators=accelerators).to_dict()["model"]["weight_bytes"]["explain"]


def test_explicit_precision_still_wins_and_training_keeps_16_bit():
    s = spec("gpt-oss-120b", precision={"weights": "bf16"})
    assert not isinstance(s.precision.weights, WeightFormat) and s.precision.compute == "bf16"
    assert spec("deepseek-r1-0528").precision.compute == "fp8"
    assert spec("kimi-k2.5", precision={"compute": "bf16"}).precision.compute == "bf16"
    assert inference_weight_bytes(s.model, weights=s.precision.weights) == s.model.params * 2
    for kind in ("finetuning", "pretraining"):
        t = parse_workload_spec({"kind": kind, "model": {"preset": "gpt-oss-120b"},
                                 "training": {"tokens": 1e9, "method": "lora" if kind == "finetuning" else "full"}})
        assert t.precision.weights == "bf16" and not isinstance(t.precision.weights, WeightFormat)
    assert spec("llama-3.1-70b").precision.weights == "bf16"  # a 16-bit checkpoint: unchanged


def test_decode_reads_the_experts_and_the_rest_in_their_own_bytes():
    from planner.engine.serving_build import build_engine

    a = preset_arch("gpt-oss-120b")
    w = WeightFormat(a.checkpoint_weights)
    rest, routed = moe_split(a)
    consts = {k: 1.0 for k in ("prefill_efficiency", "decode_bandwidth_efficiency", "step_overhead_s",
                               "layer_overhead_s", "allreduce_latency_s", "ttft_cohort_factor", "request_overhead_s")}
    eng = build_engine(arch=a, weights=w, kv_precision="bf16", isl=1000, osl=1000, tp=1, pp=1, peak_tflops=989,
                       bandwidth_gb_s=3350, consts=consts, kernel=1.0, link_gb_s=450, link_latency_s=float("nan"),
                       budget=8192, n_max=64)
    assert float(eng.dense_weight_bytes) == pytest.approx(rest * 2)
    assert float(eng.expert_weight_bytes) == pytest.approx(routed * (0.5 + 1 / 32))


def test_launch_adds_no_quantization_flag_for_the_checkpoints_own_format():
    out = serving_launch(spec=spec("deepseek-r1-0528"), accelerator_id=H100,
                         layout={"tensor_parallel": 8, "pipeline_parallel": 1, "replicas": 1}, gpus_per_server=8)
    assert "--quantization" not in out["argv"]


def test_the_preset_list_names_the_checkpoint_format():
    by_id = {p["id"]: p for p in list_presets()}
    assert by_id["gpt-oss-120b"]["checkpoint_weights"] == "experts=mxfp4;rest=bf16"
    assert by_id["llama-3.1-70b"]["checkpoint_weights"] is None
