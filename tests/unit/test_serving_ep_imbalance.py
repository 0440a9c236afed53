"""Decode-step mechanisms of h/tpotdpa (docs/SIZING.md "MoE serving mechanisms"): with expert parallelism the
step waits for the EP rank that touched the most of its own experts; TensorRT-LLM Blackwell's fixed time per
MLA layer (mla_layer_overhead_s) applies to MLA models only."""

from pathlib import Path

import numpy as np
import pytest

from planner.engine.catalog_csv import load_accelerators_csv
from planner.engine.presets import preset_arch
from planner.engine.serving_constants_ix import FITTED_IX
from planner.engine.serving_layout import evaluate_layout, make_engine
from planner.engine.serving_moe import expert_parallel_max_z

ROOT = Path(__file__).resolve().parents[2]
BY_ID = {a.id: a for a in load_accelerators_csv(ROOT / "catalog" / "data" / "accelerators.csv")}
B200 = BY_ID["nvidia-b200-sxm-180gb"]
DSR1 = preset_arch("deepseek-r1-0528")
GPTOSS = preset_arch("gpt-oss-120b")


def _engine(arch, ep, tp=8, runtime="trtllm"):
    eng, _, _ = make_engine(arch=arch, acc=B200, runtime=runtime, weights="fp4", compute="fp4", kv_precision="fp8",
                            tp=tp, pp=1, isl=1024.0, osl=1024.0, ep=ep)
    return eng


def test_expected_maximum_of_normals_matches_the_exact_values():
    # Harter's table of the expected largest of n standard normals
    exact = {2: 0.5642, 4: 1.0294, 8: 1.4236, 16: 1.7660, 32: 2.0697, 64: 2.3268}
    z = expert_parallel_max_z(np.array(list(exact), dtype=float))
    assert np.allclose(z, list(exact.values()), rtol=0.05)
    assert expert_parallel_max_z(1.0) == 0.0
    assert np.all(np.diff(z) > 0)


@pytest.mark.parametrize("tokens", [2.0, 8.0, 32.0])
def test_the_most_loaded_ep_rank_matches_a_routing_simulation(tokens):
    """Uniform top-k routing of `tokens` tokens over E experts held E / EP per rank: the model's share of a
    rank's experts the busiest rank reads against the simulated mean of that maximum."""
    ep, E, k = 8, DSR1.experts, DSR1.experts_per_token
    rng = np.random.default_rng(7)
    trials = 1000
    top = rng.random((trials, int(tokens), E)).argpartition(k, axis=2)[:, :, :k]  # k distinct experts per token
    hit = np.zeros((trials, E), dtype=bool)
    np.put_along_axis(hit, top.reshape(trials, -1), True, axis=1)
    per_rank = hit.reshape(trials, ep, E // ep).sum(axis=2)
    simulated = per_rank.max(axis=1).mean() / (E // ep)
    eng = _engine(DSR1, ep=ep)
    plain = _engine(DSR1, ep=1)
    k_ = eng._moe_k
    share = (eng.weight_read_s(tokens) - k_["dense_s"]) / k_["w_s"]
    assert float(share) == pytest.approx(simulated, rel=0.08)
    # tensor-parallel experts (a slice of every expert on every rank) read the mean share: no spread
    mean = 1 - (1 - k / E) ** tokens
    kp = plain._moe_k
    assert float((plain.weight_read_s(tokens) - kp["dense_s"]) / kp["w_s"]) == pytest.approx(mean)
    assert float(share) > mean


def test_imbalance_never_reads_more_than_the_ranks_experts_and_vanishes_when_all_are_touched():
    eng = _engine(DSR1, ep=8)
    k_ = eng._moe_k
    for tokens in (1.0, 16.0, 256.0, 4096.0):
        share = float((eng.weight_read_s(tokens) - k_["dense_s"]) / k_["w_s"])
        assert 0.0 < share <= 1.0
    assert float((eng.weight_read_s(4096.0) - k_["dense_s"]) / k_["w_s"]) == pytest.approx(1.0)


def test_ep_is_slower_than_tp_at_low_load_and_the_same_at_high_load():
    row = dict(arch=DSR1, accelerator=B200, tensor_parallel=8, runtime="trtllm", weights="fp4", kv_cache="fp8",
               input_tokens=1024, output_tokens=1024)
    lo_tp = evaluate_layout(**row, concurrency=4)
    lo_ep = evaluate_layout(**row, concurrency=4, expert_parallel=8)
    assert float(lo_ep["tpot_ms"]) > 1.05 * float(lo_tp["tpot_ms"])
    hi_tp = evaluate_layout(**row, concurrency=512)
    hi_ep = evaluate_layout(**row, concurrency=512, expert_parallel=8)
    assert float(hi_ep["tpot_ms"]) == pytest.approx(float(hi_tp["tpot_ms"]), rel=0.01)


def test_trtllm_blackwell_mla_layer_time_applies_to_mla_models_only():
    mla = FITTED_IX[("trtllm", "blackwell")]["mla_layer_overhead_s"]
    assert 10e-6 < mla < 200e-6  # tens of microseconds per layer, as on Hopper (73 us)
    ds = _engine(DSR1, ep=1)
    oss = _engine(GPTOSS, ep=1, tp=2)
    step = FITTED_IX[("trtllm", "blackwell")]["step_overhead_s"]
    assert float(ds.overhead_s) == pytest.approx(step + DSR1.layers * mla)
    assert float(oss.overhead_s) == pytest.approx(step)


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
