"""DeepSeek-V4's measured attention-module latency (docs/SIZING.md "Compressed-attention modules",
planner/engine/compressed_attention.module_floor_s) and the weights a V4 "fp8" InferenceX row runs
(serving_replay_ix.served_weights)."""

import numpy as np
import pytest

from planner.engine import compressed_attention as ca
from planner.engine.hardware import generation_of
from planner.engine.precision import WeightFormat
from planner.engine.presets import preset_arch
from planner.engine.serving_layout import evaluate_layout, make_engine
from planner.engine.serving_replay_ix import accelerator, served_weights


@pytest.fixture(scope="module")
def v4():
    return preset_arch("deepseek-v4-pro")


def test_the_table_is_the_extracted_one():
    # every engine with a V4 table on Blackwell; Hopper lacks TensorRT-LLM's; no AMD table at all
    assert {("sglang", "blackwell"), ("vllm", "blackwell"), ("trtllm", "blackwell"), ("sglang", "hopper"),
            ("vllm", "hopper")} == set(ca.MODULE_FLOORS_S)
    assert "sparse_attention" in ca.MODULE_SOURCE and "module_perf" in ca.MODULE_SOURCE
    for t in ca.MODULE_FLOORS_S.values():
        assert set(t) == {"csa_short", "csa_long", "hca", "csa_prefill", "hca_prefill"}
        for name, regime in t.items():
            v = [regime[h] for h in sorted(regime)]
            if name.endswith("_prefill"):  # seconds per prompt token: tenths of a microsecond to a few
                assert all(0.05e-6 < x < 3e-6 for x in v)
                assert v[-1] > v[0]
            else:
                assert all(20e-6 < x < 500e-6 for x in v)  # tens to hundreds of microseconds per module
                assert v == sorted(v)  # more heads on the GPU never run faster


def test_one_step_by_hand(v4):
    t = ca.MODULE_FLOORS_S[("sglang", "blackwell")]
    _, csa, hca = ca.layer_counts(v4)
    assert (csa, hca) == (30, 31)
    # TP8: 16 of the 128 heads per GPU; 1.5k of context: below the top-k threshold (1,024 x 4 tokens)
    short = ca.module_floor_s(v4, runtime="sglang", generation="blackwell", heads_per_gpu=16, ctx=1536)
    assert short == pytest.approx(30 * t["csa_short"][16.0] + 31 * t["hca"][16.0])
    long = ca.module_floor_s(v4, runtime="sglang", generation="blackwell", heads_per_gpu=16, ctx=8704)
    assert long == pytest.approx(30 * t["csa_long"][16.0] + 31 * t["hca"][16.0])
    assert long > short
    # between two measured head counts: linear in log2(heads)
    mid = ca.module_floor_s(v4, runtime="sglang", generation="blackwell", heads_per_gpu=np.sqrt(16 * 32), ctx=1536)
    assert mid == pytest.approx((short + ca.module_floor_s(v4, runtime="sglang", generation="blackwell",
                                                           heads_per_gpu=32, ctx=1536)) / 2)


def test_unknown_stays_zero(v4):
    assert ca.module_floor_s(v4, runtime="atom", generation="cdna", heads_per_gpu=16, ctx=1024) == 0.0
    assert ca.module_floor_s(v4, runtime="trtllm", generation="hopper", heads_per_gpu=16, ctx=1024) == 0.0
    r1 = preset_arch("deepseek-r1-0528")
    assert ca.module_floor_s(r1, runtime="sglang", generation="blackwell", heads_per_gpu=16, ctx=1024) == 0.0


def _kw(gpu="b200", runtime="sglang"):
    return dict(accelerator=accelerator(gpu), runtime=runtime, weights="fp4", compute="fp4", kv_cache="fp8",
                input_tokens=1024, output_tokens=1024, concurrency=4, tensor_parallel=8)


def test_the_step_carries_the_modules_less_their_weight_read(v4, monkeypatch):
    acc = accelerator("b200")
    kw = dict(arch=v4, acc=acc, runtime="sglang", weights="fp4", compute="fp4", kv_precision="fp8", tp=8, pp=1,
              isl=1024, osl=1024)
    with_modules, _, _ = make_engine(**kw)
    dpa, _, _ = make_engine(**kw, dpa=True)
    floor = ca.module_floor_s(v4, runtime="sglang", generation="blackwell", heads_per_gpu=16, ctx=1024 + 512)
    monkeypatch.setattr(ca, "MODULE_FLOORS_S", {})
    without, _, _ = make_engine(**kw)
    added = float(with_modules.overhead_s) - float(without.overhead_s)
    # the attention weights a rank reads (about 0.3 ms of 3.9 at 8 TB/s) are charged once, by the step's bytes
    assert 0.85 * floor < added < floor
    # with data-parallel attention a rank runs all 128 heads: a slower module
    assert float(dpa.overhead_s) > float(with_modules.overhead_s)


def test_other_models_are_unchanged(monkeypatch):
    r1 = preset_arch("deepseek-r1-0528")
    a = evaluate_layout(arch=r1, **_kw())
    monkeypatch.setattr(ca, "MODULE_FLOORS_S", {})
    b = evaluate_layout(arch=r1, **_kw())
    assert float(a["tpot_ms"]) == float(b["tpot_ms"]) and float(a["ttft_ms"]) == float(b["ttft_ms"])


@pytest.mark.parametrize("gpu,runtime", [("b200", "sglang"), ("b300", "trtllm"), ("b200", "vllm"), ("h200", "vllm")])
def test_physical_limits(v4, gpu, runtime):
    # slower, never faster than the chip allows: a decode step at least every module's measured latency
    # less the weights a rank reads at the peak bandwidth
    acc = accelerator(gpu)
    w = "fp4" if acc.fp4_tflops_dense else served_weights(v4, "fp8")
    eng, _, _ = make_engine(arch=v4, acc=acc, runtime=runtime, weights=w, compute="fp8", kv_precision="fp8",
                            tp=8, pp=1, isl=1024, osl=1024)
    t, *_ = eng.step_s(np.array([1.0, 64.0]), 0.0)
    floor = ca.module_floor_s(v4, runtime=runtime, generation=generation_of(acc.architecture), heads_per_gpu=16,
                              ctx=1536)
    assert floor > 0 and np.all(t >= 0.85 * floor)


def test_a_v4_fp8_row_runs_the_published_checkpoint(v4):
    # FP8 with MXFP4 experts as published (InferenceX issue #2128: 103-104 GB per GPU at TP8 on H200), not all-FP8
    w = served_weights(v4, "fp8")
    assert isinstance(w, WeightFormat) and w.parts == {"experts": "mxfp4", "rest": "fp8-block128",
                                                       "embeddings": "fp8-block128"}
    assert served_weights(v4, "fp4") == "fp4"
    # a checkpoint whose experts are as wide as the label, or whose rest is wider, keeps the label's format
    assert served_weights(preset_arch("deepseek-r1-0528"), "fp8") == "fp8"
    assert served_weights(preset_arch("gpt-oss-120b"), "fp4") == "fp4"
    assert served_weights(preset_arch("qwen3.5-397b-a17b"), "fp8") == "fp8"
    # and so the replay holds it on 8 x H200 141 GB, where 1.57 T parameters in FP8 would not fit
    kw = dict(arch=v4, accelerator=accelerator("h200"), runtime="vllm", compute="fp8", kv_cache="fp8",
              input_tokens=1024, output_tokens=1024, concurrency=4, tensor_parallel=8)
    assert bool(evaluate_layout(weights=w, **kw)["fits"])
    assert not bool(evaluate_layout(weights="fp8", **kw)["fits"])


def test_prefill_by_hand(v4):
    t = ca.MODULE_FLOORS_S[("vllm", "blackwell")]
    per_token = ca.prefill_module_s_per_token(v4, runtime="vllm", generation="blackwell", heads_per_gpu=16, tp=8,
                                              dpa=False)
    assert per_token == pytest.approx(30 * t["csa_prefill"][16.0] + 31 * t["hca_prefill"][16.0])
    assert 10e-6 < per_token < 25e-6  # 16 us per prompt token: 131 ms for an 8k prompt on 8 x B200
    # data-parallel attention: a rank runs all 128 heads, for 1 / 8 of the prompt tokens
    dpa = ca.prefill_module_s_per_token(v4, runtime="vllm", generation="blackwell", heads_per_gpu=128, tp=8, dpa=True)
    assert dpa == pytest.approx((30 * t["csa_prefill"][128.0] + 31 * t["hca_prefill"][128.0]) / 8)
    assert ca.prefill_module_s_per_token(v4, runtime="atom", generation="cdna", heads_per_gpu=16, tp=8,
                                         dpa=False) == 0.0


def test_prefill_adds_the_modules_beyond_what_the_flops_charge(v4, monkeypatch):
    kw = dict(arch=v4, acc=accelerator("b200"), runtime="trtllm", weights="fp4", compute="fp4", kv_precision="fp8",
              tp=8, pp=1, isl=8192, osl=1024)
    eng, _, _ = make_engine(**kw)
    per_token = ca.prefill_module_s_per_token(v4, runtime="trtllm", generation="blackwell", heads_per_gpu=16, tp=8,
                                              dpa=False)
    # the engine adds the measured time less the attention matmuls and FLOPs it already charges per prompt token
    assert 0.5 * per_token < float(eng.prefill_module_s) < per_token
    ttft = float(evaluate_layout(arch=v4, **_kw("b200", "trtllm") | dict(input_tokens=8192, concurrency=1))["ttft_ms"])
    monkeypatch.setattr(ca, "MODULE_FLOORS_S", {})
    assert float(make_engine(**kw)[0].prefill_module_s) == 0.0
    ttft0 = float(evaluate_layout(arch=v4, **_kw("b200", "trtllm") | dict(input_tokens=8192, concurrency=1))["ttft_ms"])
    # an 8k prompt alone: about 0.1 s more (measured TensorRT-LLM 8k/1k at 1 client: 330-350 ms); a little more
    # than its own prefill's share, as the longer prefill steps also hold the closed loop's next request
    own = 8192 * float(eng.prefill_module_s) * 1e3
    assert own <= ttft - ttft0 < 1.15 * own


def test_the_plan_says_whether_the_modules_were_measured(v4):
    from planner.engine.serving_constants import constants_source
    measured = constants_source(accelerator("b200"), "vllm", v4)
    unknown = constants_source(accelerator("mi355x"), "sglang", v4)
    assert "latency measured" in measured.template and "no measured latency" in unknown.template
    # other models' source line is unchanged
    r1 = preset_arch("deepseek-r1-0528")
    assert "attention modules" not in str(constants_source(accelerator("b200"), "vllm", r1).template)
