"""Exact arithmetic: parameter counts, active parameters, KV bytes, hf_config mapping, presets."""

import csv
from pathlib import Path

import pytest

from planner.engine import parse_workload_spec
from planner.engine.architecture import kv_cache_bytes_per_sequence, kv_cache_bytes_per_token
from planner.engine.presets import PRESETS_CSV, list_presets, preset_arch

# Presets whose published count is exact (not rounded) per the shared table's notes.
EXACT = ["llama-2-7b", "llama-3-8b", "mistral-7b-v0.1", "mistral-7b-v0.3", "mixtral-8x7b", "qwen2.5-0.5b",
         "qwen2.5-32b", "qwen2.5-72b", "qwen3-8b", "qwen3-32b", "qwen3-30b-a3b", "qwen3-235b-a22b", "gemma-2-9b",
         "gemma-2-27b", "phi-3-mini-4k", "bert-base-uncased", "bge-large-en-v1.5", "all-minilm-l6-v2"]


def published(preset_id):
    with PRESETS_CSV.open(encoding="utf-8") as f:
        return next(int(r["total_params"]) for r in csv.DictReader(f) if r["id"] == preset_id)


@pytest.mark.parametrize("preset_id", EXACT)
def test_parameter_count_matches_the_published_exact_count(preset_id):
    a = preset_arch(preset_id)
    assert a.params == published(preset_id)
    assert a.params_explain.startswith("counted exactly")


def test_deepseek_v3_count_with_mla_and_shared_expert():
    assert preset_arch("deepseek-v3").params == 671_026_419_200  # config arithmetic in the shared notes


def test_mixtral_active_params_count_two_of_eight_experts():
    assert preset_arch("mixtral-8x7b").active_params == 12_879_925_248  # shared notes: computed from config


def test_gqa_kv_bytes_use_kv_heads():
    # Llama 3 8B: 2 x 32 layers x 8 KV heads x 128 x 2 bytes = 131072, a quarter of MHA.
    assert kv_cache_bytes_per_token(preset_arch("llama-3-8b"), kv_precision="bf16") == 131072


def test_mla_kv_bytes_use_the_latent_not_the_heads():
    # DeepSeek-V3: (512 + 64) x 61 layers x 2 bytes.
    assert kv_cache_bytes_per_token(preset_arch("deepseek-v3"), kv_precision="bf16") == 576 * 61 * 2


def test_sliding_window_caps_kv_of_local_layers():
    a = preset_arch("mistral-7b-v0.1")  # every layer windowed at 4096
    assert kv_cache_bytes_per_sequence(a, tokens=32768, kv_precision="bf16") == kv_cache_bytes_per_sequence(
        a, tokens=4096, kv_precision="bf16")


def test_encoder_has_no_kv_cache():
    assert kv_cache_bytes_per_token(preset_arch("bert-base-uncased"), kv_precision="bf16") == 0


def test_at_least_twenty_presets_each_with_a_source():
    presets = list_presets()
    assert len(presets) >= 20
    assert all(p["source"] for p in presets)


def test_preset_list_filters_by_type():
    assert {p["model_type"] for p in list_presets(model_type="encoder")} == {"encoder"}


def test_preset_data_keeps_source_columns():
    header = PRESETS_CSV.read_text(encoding="utf-8").splitlines()[0].split(",")
    assert {"source_title", "source_where", "verified", "notes"} <= set(header)


HF = {
    "llama": {"model_type": "llama", "num_hidden_layers": 32, "hidden_size": 4096, "num_attention_heads": 32,
              "num_key_value_heads": 8, "intermediate_size": 14336, "vocab_size": 128256, "tie_word_embeddings": False,
              "max_position_embeddings": 8192},
    "qwen2": {"model_type": "qwen2", "num_hidden_layers": 24, "hidden_size": 896, "num_attention_heads": 14,
              "num_key_value_heads": 2, "intermediate_size": 4864, "vocab_size": 151936, "tie_word_embeddings": True,
              "max_position_embeddings": 32768, "sliding_window": 32768, "use_sliding_window": False},
    "mixtral": {"model_type": "mixtral", "num_hidden_layers": 32, "hidden_size": 4096, "num_attention_heads": 32,
                "num_key_value_heads": 8, "intermediate_size": 14336, "vocab_size": 32000, "num_local_experts": 8,
                "num_experts_per_tok": 2, "max_position_embeddings": 32768},
    "gemma2": {"model_type": "gemma2", "num_hidden_layers": 42, "hidden_size": 3584, "num_attention_heads": 16,
               "num_key_value_heads": 8, "head_dim": 256, "intermediate_size": 14336, "vocab_size": 256000,
               "sliding_window": 4096, "max_position_embeddings": 8192},
    "deepseek_v3": {"model_type": "deepseek_v3", "num_hidden_layers": 61, "hidden_size": 7168, "num_attention_heads": 128,
                    "num_key_value_heads": 128, "intermediate_size": 18432, "moe_intermediate_size": 2048,
                    "n_routed_experts": 256, "n_shared_experts": 1, "num_experts_per_tok": 8, "first_k_dense_replace": 3,
                    "kv_lora_rank": 512, "q_lora_rank": 1536, "qk_rope_head_dim": 64, "qk_nope_head_dim": 128,
                    "v_head_dim": 128, "vocab_size": 129280, "tie_word_embeddings": False, "max_position_embeddings": 163840},
    "qwen3": {"model_type": "qwen3", "num_hidden_layers": 36, "hidden_size": 4096, "num_attention_heads": 32,
              "num_key_value_heads": 8, "head_dim": 128, "intermediate_size": 12288, "vocab_size": 151936,
              "tie_word_embeddings": False, "max_position_embeddings": 40960},
    "qwen3_moe": {"model_type": "qwen3_moe", "num_hidden_layers": 48, "hidden_size": 2048, "num_attention_heads": 32,
                  "num_key_value_heads": 4, "head_dim": 128, "intermediate_size": 6144, "moe_intermediate_size": 768,
                  "num_experts": 128, "num_experts_per_tok": 8, "vocab_size": 151936, "tie_word_embeddings": False,
                  "max_position_embeddings": 40960},
}
HF_EXPECTED = {"llama": 8_030_261_248, "qwen2": 494_032_768, "mixtral": 46_702_792_704, "gemma2": 9_241_705_984,
               "deepseek_v3": 671_026_419_200, "qwen3": 8_190_735_360, "qwen3_moe": 30_532_122_624}


@pytest.mark.parametrize("name", sorted(HF))
def test_hf_config_gives_the_exact_count(name):
    spec = parse_workload_spec({"kind": "inference", "model": {"hf_config": HF[name]}, "serving": {"input_tokens": 100}})
    assert spec.model.params == HF_EXPECTED[name]


def test_gemma3_nested_text_config_is_read():
    cfg = {"model_type": "gemma3", "text_config": {"model_type": "gemma3_text", "num_hidden_layers": 62, "hidden_size": 5376,
                                                    "num_attention_heads": 32, "num_key_value_heads": 16, "head_dim": 128,
                                                    "intermediate_size": 21504, "vocab_size": 262144, "sliding_window": 1024,
                                                    "max_position_embeddings": 131072}}
    spec = parse_workload_spec({"kind": "inference", "model": {"hf_config": cfg}})
    assert spec.model.params == 27_009_002_240  # the text decoder count in the shared notes


ADDED_CSV = PRESETS_CSV.with_name("model_architectures_added.csv")


def test_shared_table_and_engine_presets_agree_on_ids():
    shared = Path(__file__).resolve().parents[3] / "shared" / "data" / "model_architectures.csv"
    if not shared.exists():
        pytest.skip("shared data folder not present")
    with shared.open(encoding="utf-8") as f:
        ids = [r["id"] for r in csv.DictReader(f)]
    with ADDED_CSV.open(encoding="utf-8") as f:
        ids += [r["id"] for r in csv.DictReader(f)]
    assert ids == [p["id"] for p in list_presets()]


def test_committed_presets_equal_the_derivation_from_the_shared_table(tmp_path):
    import subprocess
    import sys

    shared = Path(__file__).resolve().parents[3] / "shared" / "data" / "model_architectures.csv"
    if not shared.exists():
        pytest.skip("shared data folder not present")
    out = tmp_path / "presets.csv"
    subprocess.run([sys.executable, str(PRESETS_CSV.with_name("derive_presets.py")), str(shared), str(out),
                    str(ADDED_CSV)], check=True, capture_output=True)
    assert out.read_text(encoding="utf-8") == PRESETS_CSV.read_text(encoding="utf-8")
