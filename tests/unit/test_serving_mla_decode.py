"""Decode-step mechanisms of h/tpotdpa (docs/SIZING.md "One engine step"): MLA decodes absorbed, at the KV cache
format's rate; TensorRT-LLM Blackwell's fixed time per MLA layer (mla_layer_overhead_s) applies to MLA models only."""

from pathlib import Path

import pytest

from planner.engine.catalog_csv import load_accelerators_csv
from planner.engine.presets import preset_arch
from planner.engine.serving_constants_ix import FITTED_IX
from planner.engine.serving_layout import make_engine

ROOT = Path(__file__).resolve().parents[2]
BY_ID = {a.id: a for a in load_accelerators_csv(ROOT / "catalog" / "data" / "accelerators.csv")}
B200 = BY_ID["nvidia-b200-sxm-180gb"]
DSR1 = preset_arch("deepseek-r1-0528")
GPTOSS = preset_arch("gpt-oss-120b")


def _engine(arch, ep, tp=8, runtime="trtllm"):
    eng, _, _ = make_engine(arch=arch, acc=B200, runtime=runtime, weights="fp4", compute="fp4", kv_precision="fp8",
                            tp=tp, pp=1, isl=1024.0, osl=1024.0, ep=ep)
    return eng


def test_trtllm_blackwell_mla_layer_time_applies_to_mla_models_only():
    mla = FITTED_IX[("trtllm", "blackwell")]["mla_layer_overhead_s"]
    assert 10e-6 < mla < 200e-6  # tens of microseconds per layer, as on Hopper (73 us)
    ds = _engine(DSR1, ep=1)
    oss = _engine(GPTOSS, ep=1, tp=2)
    step = FITTED_IX[("trtllm", "blackwell")]["step_overhead_s"]
    moe = FITTED_IX[("trtllm", "blackwell")].get("moe_layer_overhead_s", 0.0)
    assert float(ds.overhead_s) == pytest.approx(step + DSR1.layers * mla + (DSR1.layers - DSR1.dense_layers) * moe)
    assert float(oss.overhead_s) == pytest.approx(step + GPTOSS.layers * moe)


def test_mla_decode_attention_is_absorbed_and_runs_in_the_kv_format():
    """DeepSeek's MLA decodes in the latent space: 2 x (2 x 512 + 64) FLOPs per head per context token per
    layer (scores over latent + rope, sum over the latent), in the KV cache's format (fp8 here: half the fp4
    rate on B200), never at the fp4 matmul peak."""
    eng = _engine(DSR1, ep=1)
    ctx = 1024.0 + 1024.0 / 2
    assert float(eng.dec_attn) == pytest.approx(2 * DSR1.layers * DSR1.attention_heads * (2 * 512 + 64) * ctx)
    assert float(eng.dec_attn_rate) == pytest.approx(B200.fp8_tflops_dense / B200.fp4_tflops_dense)
    # the prefill (unabsorbed) form keeps head_dim: 4 x 192 per head per context token
    assert float(eng.pre_attn) == pytest.approx(4 * DSR1.layers * DSR1.attention_heads * DSR1.head_dim * 1024.0 / 2)
    # a GQA model is unchanged: its decode attention is the linear form; bf16 KV runs at the bf16 rate
    oss, _, _ = make_engine(arch=GPTOSS, acc=B200, runtime="trtllm", weights="fp4", compute="fp4", kv_precision="bf16",
                            tp=2, pp=1, isl=1024.0, osl=1024.0)
    assert float(oss.dec_attn) == pytest.approx(float(oss.attn_flops_per_ctx) * ctx)
    assert float(oss.dec_attn_rate) == pytest.approx(B200.bf16_tflops_dense / B200.fp4_tflops_dense)


def test_with_dpa_the_absorbed_mla_attention_and_not_the_kv_read_sets_the_attention_time():
    """8k prompts, 256 decoding sequences on 8 x B200: tensor-parallel MLA reads every sequence's latent KV on
    every rank (the KV read dominates); data-parallel attention reads only its own sequences' KV, and the
    absorbed attention FLOPs (2.8x the head_dim form, at the fp8 rate) become the larger term."""
    kw = dict(arch=DSR1, acc=B200, runtime="trtllm", weights="fp4", compute="fp4", kv_precision="fp8",
              tp=8, pp=1, isl=8192.0, osl=1024.0, ep=8)
    for dpa, attention_bound in ((False, False), (True, True)):
        eng, _, _ = make_engine(**kw, dpa=dpa)
        n = 256.0
        attn = n * float(eng.dec_attn) / (8 * float(eng.flops_s) * float(eng.dec_attn_rate))
        kv = n * float(eng.dec_kv) / float(eng.bytes_s)
        assert (attn > kv) is attention_bound
        unabsorbed = n * float(eng.attn_flops_per_ctx) * (8192 + 512) / (8 * float(eng.flops_s))
        assert attn > 2.8 * unabsorbed  # 2176 / 768 FLOPs per head, at half the rate


def test_vllm_mla_layer_time_is_the_measured_module_latency_where_nothing_was_fitted():
    """vLLM has no MLA row in the fit set: its MLA layer time is AIConfigurator's measured module latency less the
    module's weight read (serving_constants.MLA_LAYER_OVERHEAD_PRESET_S), not 0; SGLang, with no module table, 0
    where nothing was fitted; a fitted group keeps its own value."""
    from planner.engine.serving_constants import MLA_LAYER_OVERHEAD_PRESET_S, serving_constants

    h200 = BY_ID["nvidia-h200-sxm-141gb"]
    preset = MLA_LAYER_OVERHEAD_PRESET_S[("vllm", "hopper")]
    # the module's measured latency at batch 1 (113.3 us on H200) bounds it; its weight read (7.6 us) is below
    assert 100e-6 < preset < 113.3e-6
    assert serving_constants(h200, "vllm", "fp8")["mla_layer_overhead_s"] == preset
    assert serving_constants(B200, "vllm", "fp4")["mla_layer_overhead_s"] == MLA_LAYER_OVERHEAD_PRESET_S[("vllm", "blackwell")]
    assert serving_constants(h200, "sglang", "fp8")["mla_layer_overhead_s"] == FITTED_IX[("sglang", "hopper")][
        "mla_layer_overhead_s"]
    mi300x = BY_ID["amd-mi300x-192gb"]
    assert serving_constants(mi300x, "vllm", "fp8")["mla_layer_overhead_s"] == 0.0  # unknown stays unknown
    ds = _engine(DSR1, ep=1, runtime="vllm")
    oss = _engine(GPTOSS, ep=1, tp=2, runtime="vllm")
    moe = FITTED_IX[("vllm", "blackwell")].get("moe_layer_overhead_s", 0.0)
    assert float(ds.overhead_s) - float(oss.overhead_s) == pytest.approx(
        DSR1.layers * MLA_LAYER_OVERHEAD_PRESET_S[("vllm", "blackwell")]
        + (DSR1.layers - DSR1.dense_layers - GPTOSS.layers) * moe)


def test_moe_layer_time_is_charged_per_moe_layer_and_per_forward_pass():
    """moe_layer_overhead_s: a fixed time per MoE layer per forward pass (DeepSeek-R1: 61 layers, the first 3
    dense; gpt-oss-120b: every one of its 36 layers); a dense model pays none; the MTP draft layer pays it too."""
    dense = preset_arch("llama-3.3-70b")

    def overhead(arch, value, **kw):
        eng, _, _ = make_engine(arch=arch, acc=B200, runtime="trtllm", weights="fp4", compute="fp4",
                                kv_precision="fp8", tp=8, pp=1, isl=1024.0, osl=1024.0,
                                consts={"moe_layer_overhead_s": value}, **kw)
        return float(eng.overhead_s)

    assert overhead(DSR1, 20e-6) - overhead(DSR1, 0.0) == pytest.approx((DSR1.layers - DSR1.dense_layers) * 20e-6)
    assert DSR1.layers - DSR1.dense_layers == 58 and GPTOSS.dense_layers == 0
    assert overhead(GPTOSS, 20e-6) - overhead(GPTOSS, 0.0) == pytest.approx(GPTOSS.layers * 20e-6)
    assert overhead(dense, 20e-6) == overhead(dense, 0.0)
    with_mtp = overhead(DSR1, 20e-6, mtp=True) - overhead(DSR1, 0.0, mtp=True)
    # the draft passes run the one MTP layer per draft token: a few percent more per step, not another forward
    assert 58 * 20e-6 < with_mtp < 58 * 20e-6 * 1.2


def test_the_constants_source_names_only_the_fitted_constants_the_model_uses():
    """A dense model's plan does not say a MoE or MLA layer time was fitted for it; a MoE/MLA model's plan does.
    vLLM Hopper's only InferenceX constant is the MoE layer time (gpt-oss rows): a dense plan there runs on the
    serving_measured.csv constants, and says so."""
    from planner.engine.serving_constants import constants_source

    h200 = BY_ID["nvidia-h200-sxm-141gb"]
    assert set(FITTED_IX[("vllm", "hopper")]) == {"moe_layer_overhead_s"}
    dense = constants_source(h200, "vllm", preset_arch("llama-3.3-70b"))
    assert "InferenceX" not in dense and "generation factor" in dense
    moe = constants_source(h200, "vllm", preset_arch("gpt-oss-120b"))
    assert "moe_layer_overhead_s fitted on the InferenceX rows" in moe
    r1 = constants_source(BY_ID["nvidia-b200-sxm-180gb"], "trtllm", preset_arch("deepseek-r1-0528"))
    llama = constants_source(BY_ID["nvidia-b200-sxm-180gb"], "trtllm", preset_arch("llama-3.3-70b"))
    assert "mla_layer_overhead_s" in r1 and "mtp_accepted_tokens" in r1 and "all_to_all_efficiency" in r1
    assert "prefill_efficiency" in llama
    assert not any(n in llama for n in ("mla_layer_overhead_s", "moe_layer_overhead_s", "mtp_accepted_tokens",
                                        "all_to_all_efficiency"))
