"""8-bit GEMMs speed up only their compute part, and MoE training pays the expert-parallel all-to-all.

docs/SIZING.md "Training efficiency" (GEMM memory part, expert-parallel all-to-all); held-out
replay: docs/BENCHMARKS.md "After acc_moe_train".
"""

from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from planner.engine import compute, implied_efficiency, moe_comm, parse_workload_spec, size_workload
from planner.engine.catalog_csv import load_accelerators_csv
from planner.engine.errors import SpecValidationError

ROOT = Path(__file__).resolve().parents[2]
ACCS = load_accelerators_csv(ROOT / "catalog" / "data" / "accelerators.csv")
BY_ID = {a.id: a for a in ACCS}


def qwen3_30b():
    return parse_workload_spec({"kind": "pretraining", "model": {"preset": "qwen3-30b-a3b"},
                                "training": {"tokens": 1e9}}).model


def run(spec):
    return size_workload(spec=parse_workload_spec(spec), accelerators=ACCS).to_dict()


def moe_spec(compute_precision="fp8", acc="nvidia-b200-sxm-180gb", count=8, **training):
    return {"kind": "pretraining", "model": {"preset": "qwen3-30b-a3b"}, "precision": {"compute": compute_precision},
            "training": {"tokens": 1e11, "sequence_length": 4096, "global_batch_tokens": 2097152,
                         "tensor_parallel": 1, "pipeline_parallel": 1, "context_parallel": 1, **training},
            "hardware": {"accelerator": acc, "count": count}}


# ------------------------------------------------------------------- GEMM memory part under fp8


def test_memory_scale_is_the_peak_ratio_at_16_bit_activations():
    assert float(compute.gemm_memory_scale(2.0, "fp8")) == 2.0  # H100/B200: fp8 peak = 2 x bf16
    assert float(compute.gemm_memory_scale(1.0, "bf16")) == 1.0
    assert float(compute.gemm_memory_scale(0.5, "fp32")) == 1.0  # tf32 peak / 2, activations 4 bytes


@settings(max_examples=200, deadline=None)
@given(narrow=st.integers(128, 2048), wide=st.integers(4096, 65536), ratio=st.floats(1.1, 4.0))
def test_fp8_gains_less_on_a_narrow_gemm_and_never_more_than_the_peak_ratio(narrow, wide, ratio):
    def gain(w):  # step-time ratio bf16 / fp8 of the GEMM part at the same base
        return ratio * float(compute.width_factor(w, memory_scale=ratio)) / float(compute.width_factor(w))
    assert gain(narrow) < gain(wide) <= ratio
    assert gain(narrow) >= 1.0 - 1e-12  # the compute part still speeds up: fp8 is never slower


def test_fp8_explanation_names_the_half_width():
    eff = run(moe_spec())["compute"]["mfu"]["explain"]
    assert f"half width {compute.GEMM_HALF_WIDTH * 2:.0f}" in eff
    bf = run(moe_spec("bf16"))["compute"]["mfu"]["explain"]
    assert f"half width {compute.GEMM_HALF_WIDTH:.0f}" in bf


# ------------------------------------------------------------------------ expert all-to-all


def test_all_to_all_bytes_per_token_from_the_architecture():
    a = qwen3_30b()
    moe_layers = a.layers - a.dense_layers
    got = float(moe_comm.all_to_all_bytes_per_token(a, ep=8, full_recompute=False))
    assert got == pytest.approx(2 * moe_layers * a.experts_per_token * a.hidden_size * (2 + 2) * 7 / 8)
    assert float(moe_comm.all_to_all_bytes_per_token(a, ep=8, full_recompute=True)) == pytest.approx(got * 1.5)
    assert float(moe_comm.all_to_all_bytes_per_token(a, ep=1, full_recompute=False)) == 0.0


def test_expert_parallel_stays_in_one_server_and_within_data_parallel_ranks():
    a = qwen3_30b()  # 128 experts
    ep = moe_comm.expert_parallel(a, dp=np.array([1, 2, 8, 64, 64]), cp=1, tp=np.array([1, 1, 1, 1, 2]),
                                  domain=8)
    assert ep.tolist() == [1, 2, 8, 8, 4]


@settings(max_examples=200, deadline=None)
@given(e=st.floats(0.01, 0.9), nbytes=st.floats(1e3, 1e9), bw=st.floats(10, 2000), peak=st.floats(100, 10000),
       flops=st.floats(1e9, 1e13))
def test_all_to_all_factor_is_a_share_and_overlap_never_slower(e, nbytes, bw, peak, flops):
    kw = dict(bytes_per_token=nbytes, link_gb_s=bw, peak_tflops=peak, exec_flops_per_token=flops)
    serial = float(moe_comm.all_to_all_factor(e, **kw))
    over = float(moe_comm.all_to_all_factor(e, overlapped=True, **kw))
    assert 0.0 < serial < 1.0 and serial <= over <= 1.0


def test_moe_step_pays_the_all_to_all_and_says_so():
    res = run(moe_spec())
    mfu = res["compute"]["mfu"]
    assert "expert-parallel all-to-all (EP8" in mfu["explain"] and "not overlapped" in mfu["explain"]
    over = run(moe_spec(expert_overlap=True))["compute"]["mfu"]
    assert over["value"] > mfu["value"] and "overlapped with compute" in over["explain"]
    # same chip, slower link, bigger share: H800 (NVLink 400 GB/s) against H100 (900 GB/s)
    h100 = run(moe_spec(acc="nvidia-h100-sxm5-80gb", count=16, pipeline_parallel=2))["compute"]["mfu"]
    h800 = run(moe_spec(acc="nvidia-h800-sxm5-80gb", count=16, pipeline_parallel=2))["compute"]["mfu"]

    def factor(text):
        return float(text.split(" expert-parallel all-to-all")[0].rsplit("x ", 1)[1])
    assert factor(h800["explain"]) < factor(h100["explain"]) < 1.0
    assert h800["value"] < h100["value"]


def test_dense_models_have_no_all_to_all():
    res = run({"kind": "pretraining", "model": {"preset": "llama-3-8b"}, "training": {"tokens": 1e10},
               "hardware": {"accelerator": "nvidia-h100-sxm5-80gb", "count": 8}})
    assert "all-to-all" not in res["compute"]["mfu"]["explain"]


def test_expert_overlap_only_for_moe():
    with pytest.raises(SpecValidationError) as e:
        parse_workload_spec({"kind": "pretraining", "model": {"preset": "llama-3-8b"},
                             "training": {"tokens": 1e10, "expert_overlap": True}})
    assert "training.expert_overlap" in {x.field for x in e.value.errors}
    with pytest.raises(SpecValidationError) as e:
        parse_workload_spec(moe_spec(expert_overlap="maybe"))
    assert "training.expert_overlap" in {x.field for x in e.value.errors}


def test_implied_efficiency_round_trips_an_moe_run():
    spec = moe_spec()
    res = run(spec)
    c = res["compute"]
    acc = BY_ID["nvidia-b200-sxm-180gb"]
    imp = implied_efficiency.implied_training_efficiency(
        arch=parse_workload_spec(spec).model, peak_tflops=acc.fp8_tflops_dense, peak_bf16_tflops=acc.bf16_tflops_dense,
        architecture=acc.architecture, compute_precision="fp8", gpus=8, sequence_length=4096,
        global_batch_tokens=2097152, tokens_per_second=c["tokens_per_second_per_gpu"]["value"] * 8, accelerator=acc)
    assert imp.model_efficiency == pytest.approx(c["mfu"]["value"], rel=2e-3)
    assert imp.mfu == pytest.approx(c["mfu"]["value"], rel=2e-3)
