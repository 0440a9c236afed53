"""DeepSeek-V4-Pro: the catalog row against its config.json, the compressed-attention KV arithmetic by
hand, and physical limits of its serving plans (docs/SIZING.md "Compressed attention (DeepSeek-V4)")."""

import numpy as np
import pytest

from planner.engine.architecture import (
    count_params,
    kv_cache_bytes_per_sequence,
    kv_cache_bytes_per_token,
    kv_fixed_bytes_per_sequence,
)
from planner.engine.precision import WeightFormat
from planner.engine.presets import preset_arch, resolve_preset_id
from planner.engine.serving_layout import evaluate_layout
from planner.engine.serving_replay_ix import accelerator

# deepseek-ai/DeepSeek-V4-Pro config.json as copied verbatim in
# ai-dynamo/aiconfigurator@095f58a51c4c:aic-core/src/aiconfigurator_core/model_configs/deepseek-ai--DeepSeek-V4-Pro_config.json
CONFIG = {"hidden_size": 7168, "num_hidden_layers": 61, "num_attention_heads": 128, "num_key_value_heads": 1,
          "head_dim": 512, "qk_rope_head_dim": 64, "q_lora_rank": 1536, "o_lora_rank": 1024, "o_groups": 16,
          "index_topk": 1024, "index_n_heads": 64, "index_head_dim": 128, "sliding_window": 128,
          "n_routed_experts": 384, "n_shared_experts": 1, "num_experts_per_tok": 6, "moe_intermediate_size": 3072,
          "vocab_size": 129280, "max_position_embeddings": 1048576, "num_nextn_predict_layers": 1}
RATIOS = [128, 128] + [4, 128] * 29 + [4]  # the config's 62 entries without the MTP layer's trailing 0


@pytest.fixture(scope="module")
def v4():
    return preset_arch("deepseek-v4-pro")


def test_catalog_row_matches_config(v4):
    c = CONFIG
    assert (v4.hidden_size, v4.layers, v4.attention_heads, v4.kv_heads, v4.head_dim) == (
        c["hidden_size"], c["num_hidden_layers"], c["num_attention_heads"], c["num_key_value_heads"], c["head_dim"])
    assert (v4.q_lora_rank, v4.qk_rope_head_dim, v4.o_lora_rank, v4.o_groups) == (
        c["q_lora_rank"], c["qk_rope_head_dim"], c["o_lora_rank"], c["o_groups"])
    assert (v4.index_topk, v4.index_heads, v4.index_head_dim, v4.sliding_window) == (
        c["index_topk"], c["index_n_heads"], c["index_head_dim"], c["sliding_window"])
    assert (v4.experts, v4.shared_experts, v4.experts_per_token, v4.moe_ffn_hidden_size) == (
        c["n_routed_experts"], c["n_shared_experts"], c["num_experts_per_tok"], c["moe_intermediate_size"])
    assert (v4.vocab_size, v4.max_position_embeddings, v4.mtp_layers) == (
        c["vocab_size"], c["max_position_embeddings"], c["num_nextn_predict_layers"])
    assert list(v4.compress_ratios) == RATIOS and len(RATIOS) == 61
    assert resolve_preset_id("deepseek-ai/DeepSeek-V4-Pro") == "deepseek-v4-pro"
    assert WeightFormat(v4.checkpoint_weights).parts == {"experts": "mxfp4", "rest": "fp8-block128",
                                                         "embeddings": "fp8-block128"}


def test_params_near_published(v4):
    total, active = count_params(v4)
    assert total == pytest.approx(1.6e12, rel=0.03)  # "1.6T total parameters, 49B activated"
    assert active == pytest.approx(49e9, rel=0.03)


def test_kv_bytes_by_hand_at_8192_tokens(v4):
    """fp8 KV, 8192 tokens: every layer 128 window entries of 512 bytes; 30 CSA layers 2048 entries of 512
    bytes + 2048 FP4 indexer keys of 64 bytes; 31 HCA layers 64 entries of 512 bytes; fp32 compressor state
    30 x (2 x 4 x 2 x 512 + 2 x 4 x 2 x 128) x 4 + 31 x 2 x 128 x 512 x 4."""
    window = 61 * 128 * 512
    csa = 30 * (2048 * 512 + 2048 * 64)
    hca = 31 * 64 * 512
    state = 30 * (8192 + 2048) * 4 + 31 * 131072 * 4
    assert kv_cache_bytes_per_sequence(v4, tokens=8192, kv_precision="fp8") == window + csa + hca + state
    # the linear view the serving engine uses: fixed part + bytes per token, exact at multiples of 128
    lin = kv_fixed_bytes_per_sequence(v4, kv_precision="fp8") + 8192 * kv_cache_bytes_per_token(v4, kv_precision="fp8")
    assert lin == window + csa + hca + state
    assert kv_cache_bytes_per_token(v4, kv_precision="fp8") == 30 * (512 + 64) / 4 + 31 * 512 / 128  # 4444 bytes
    # shorter than the window: only what was written
    assert kv_cache_bytes_per_sequence(v4, tokens=100, kv_precision="fp8") == 61 * 100 * 512 + 30 * 25 * 576 + state


@pytest.mark.parametrize("gpu,tp,weights", [("b200", 8, "fp4"), ("b300", 4, "fp4"), ("mi355x", 8, "fp4"),
                                            ("gb200", 8, "fp4"), ("b200", 8, "fp8")])
def test_physical_limits(v4, gpu, tp, weights):
    acc = accelerator(gpu)
    conc = np.array([1.0, 4.0, 32.0, 256.0])
    res = evaluate_layout(arch=v4, accelerator=acc, runtime="vllm", weights=weights, compute=weights,
                          kv_cache="fp8", input_tokens=np.full(4, 7372.8), output_tokens=np.full(4, 921.6),
                          concurrency=conc, tensor_parallel=np.full(4, float(tp)))
    fits = np.asarray(res["fits"], dtype=bool)
    if not fits.any():
        assert weights == "fp8"  # 1.6 TB of fp8 weights exceed 8 x 180 GB
        return
    mem = res["memory"]
    used = np.asarray(mem["weights_bytes"]) + np.asarray(mem["kv_pool_bytes"]) + np.asarray(mem["activations_bytes"])
    assert np.all(used <= np.asarray(mem["capacity_bytes"]) * (1 + 1e-9))
    peak = {"fp4": acc.fp4_tflops_dense or acc.fp8_tflops_dense, "fp8": acc.fp8_tflops_dense}[weights] * 1e12
    flops = np.asarray(res["sustained_flops_per_gpu"]) if "sustained_flops_per_gpu" in res else None
    if flops is not None:
        assert np.all(flops <= peak * (1 + 1e-9))
    tpot = np.asarray(res["tpot_ms"]) / 1e3
    out = np.asarray(res["output_tokens_per_s_per_gpu"])
    # each decode step reads at least the KV the running sequences attend to: bounded by bandwidth
    assert np.all(tpot > 0) and np.all(np.isfinite(tpot))
    assert np.all(out * tp <= conc / tpot * (1 + 1e-6))  # no more tokens than the clients' TPOT allows
    # the weights a step reads (at least the attention and shared parts) take time at peak bandwidth
    assert np.all(tpot >= 0.5 * np.asarray(mem["weights_bytes"]) * 0.02 / (acc.memory_bandwidth_gb_s * 1e9))
