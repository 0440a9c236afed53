"""DeepSeek-V4 hyper-connections (mHC): the per-layer work by hand and its physical limits
(docs/SIZING.md "Hyper-connections (DeepSeek-V4 mHC)", planner/engine/hyper_connections.py)."""

from dataclasses import replace

import numpy as np
import pytest

from planner.engine import hyper_connections as hc
from planner.engine.presets import preset_arch
from planner.engine.serving_layout import evaluate_layout, make_engine
from planner.engine.serving_replay_ix import accelerator


@pytest.fixture(scope="module")
def v4():
    return preset_arch("deepseek-v4-pro")


def test_catalog_reads_hc_mult_from_the_config(v4):
    # config.json of deepseek-ai/DeepSeek-V4-Pro: "hc_mult": 4 (copy at ai-dynamo/aiconfigurator@095f58a51c4c)
    assert v4.hc_mult == 4 and hc.has_hyper_connections(v4)
    assert not hc.has_hyper_connections(preset_arch("deepseek-r1-0528"))


def test_one_layer_and_one_step_by_hand(v4):
    # two sites x (pre: streams read twice + input written; post: streams + output read, streams written)
    # = 2 x (4 x 4 + 2) x 7168 values x 2 bytes
    assert hc.bytes_per_token_per_layer(v4) == 2 * 18 * 7168 * 2 == 516_096
    fixed, per_token = hc.step_costs(v4, bytes_s=8e12, tp=8, dpa=False)
    assert fixed == pytest.approx(61 * 31.8e-6)  # 1.94 ms per step, whatever the batch
    assert per_token == pytest.approx(61 * 516_096 / 8e12)  # 3.9 us per token on every TP rank
    # data-parallel attention: a rank holds 1/8 of the tokens; one MTP draft pass adds the MTP layer
    fixed_d, per_token_d = hc.step_costs(v4, bytes_s=8e12, tp=8, dpa=True, draft_share=1 / 61)
    assert per_token_d == pytest.approx(per_token / 8)
    assert fixed_d == pytest.approx(62 * 31.8e-6)


def test_models_without_hyper_connections_are_unchanged():
    r1 = preset_arch("deepseek-r1-0528")
    assert hc.step_costs(r1, bytes_s=8e12, tp=8, dpa=False) == (0.0, 0.0)
    acc = accelerator("b200")
    kw = dict(accelerator=acc, runtime="sglang", weights="fp4", compute="fp4", kv_cache="fp8", input_tokens=1024,
              output_tokens=1024, concurrency=16, tensor_parallel=8)
    a = evaluate_layout(arch=r1, **kw)
    b = evaluate_layout(arch=replace(r1, hc_mult=1), **kw)
    assert float(a["tpot_ms"]) == float(b["tpot_ms"]) and float(a["ttft_ms"]) == float(b["ttft_ms"])


@pytest.mark.parametrize("gpu,runtime,weights", [("h200", "sglang", "fp8"), ("b200", "vllm", "fp4"),
                                                 ("b300", "trtllm", "fp4"), ("mi355x", "sglang", "fp4")])
def test_physical_limits(v4, gpu, runtime, weights):
    acc = accelerator(gpu)
    eng, _, _ = make_engine(arch=v4, acc=acc, runtime=runtime, weights=weights, compute=weights, kv_precision="fp8",
                            tp=8, pp=1, isl=1024, osl=1024)
    # the streams never move faster than the chip's peak bandwidth
    rate = v4.layers * hc.bytes_per_token_per_layer(v4) / float(eng.hc_per_token_s)
    assert rate <= acc.memory_bandwidth_gb_s * 1e9 * (1 + 1e-9)
    # one decode step takes at least every layer's mHC latency, and the mHC adds to what the step was
    no_hc, _, _ = make_engine(arch=replace(v4, hc_mult=0), acc=acc, runtime=runtime, weights=weights, compute=weights,
                              kv_precision="fp8", tp=8, pp=1, isl=1024, osl=1024)
    n = np.array([1.0, 16.0, 256.0])
    t, *_ = eng.step_s(n, 0.0)
    t0, *_ = no_hc.step_s(n, 0.0)
    assert np.all(t >= v4.layers * hc.MHC_LAYER_LATENCY_S)
    assert np.allclose(t - t0, v4.layers * hc.MHC_LAYER_LATENCY_S + n * float(eng.hc_per_token_s))
