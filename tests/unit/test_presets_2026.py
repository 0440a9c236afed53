"""2026 catalog models (issue 22): Hugging Face ids as preset aliases and the new architecture fields,
checked against hand-computed numbers."""

import pytest

from planner.engine import SpecValidationError, parse_workload_spec
from planner.engine.architecture import kv_cache_bytes_per_sequence, kv_cache_bytes_per_token
from planner.engine.presets import list_presets, preset_arch, resolve_preset_id

SERVING = {"input_tokens": 1000, "output_tokens": 200}


@pytest.mark.parametrize("name, preset", [
    ("deepseek-ai/DeepSeek-R1-0528", "deepseek-r1-0528"),
    ("openai/gpt-oss-120b", "gpt-oss-120b"),
    ("OPENAI/GPT-OSS-120B", "gpt-oss-120b"),  # Hugging Face ids matched case-insensitively
    (" Qwen/Qwen3.5-397B-A17B ", "qwen3.5-397b-a17b"),
    ("meta-llama/Llama-3.3-70B-Instruct", "llama-3.3-70b"),
    ("deepseek-ai/DeepSeek-V3", "deepseek-v3"),
    ("glm-5", "glm-5"),  # the preset id itself still works
])
def test_hugging_face_id_is_an_alias_of_the_preset(name, preset):
    spec = parse_workload_spec({"kind": "inference", "model": {"preset": name}, "serving": SERVING})
    assert spec.model_source == f"preset:{preset}"
    assert spec.model.preset_id == preset
    assert resolve_preset_id(name) == preset


def test_unknown_hugging_face_id_is_a_field_error():
    with pytest.raises(SpecValidationError) as exc:
        parse_workload_spec({"kind": "inference", "model": {"preset": "deepseek-ai/DeepSeek-R2"}, "serving": SERVING})
    assert [e.field for e in exc.value.errors] == ["model.preset"]
    assert "Hugging Face id" in str(exc.value.errors[0].message)


def test_preset_ids_are_not_case_folded():
    assert resolve_preset_id("GLM-5") is None  # preset ids are exact; only HF ids fold case


def test_list_presets_names_the_hugging_face_id():
    by_id = {p["id"]: p for p in list_presets()}
    assert by_id["kimi-k2.5"]["hf_id"] == "moonshotai/Kimi-K2.5"
    assert by_id["llama-2-7b"]["hf_id"] is None


def test_api_schema_accepts_the_aliases():
    from planner.api.input_schema_model import _model

    enum = _model("llm")["oneOf"][0]["properties"]["preset"]["enum"]
    assert "deepseek-r1-0528" in enum and "deepseek-ai/DeepSeek-R1-0528" in enum and "openai/gpt-oss-20b" in enum


def test_minimax_m2_5_parameter_count_by_hand():
    # per layer: q 3072x6144 + k,v 2x3072x1024 + o 6144x3072 + qk-norm 2x128 = 44,040,448; norms 2x3072;
    # 256 experts x 3x3072x1536 = 3,623,878,656; router 3072x256 = 786,432 -> 3,668,711,680 x 62 layers
    # + untied embeddings 2 x 200064 x 3072 = 1,229,193,216 + final norm 3072
    assert preset_arch("minimax-m2.5").params == 3_668_711_680 * 62 + 1_229_193_216 + 3072 == 228_689_320_448


def test_qwen3_5_kv_only_in_full_attention_layers_plus_the_linear_state():
    a = preset_arch("qwen3.5-397b-a17b")
    # 15 full-attention layers x 2 (K,V) x 2 KV heads x 256 x 2 bytes (bf16)
    assert kv_cache_bytes_per_token(a, kv_precision="bf16") == 15 * 2 * 2 * 256 * 2 == 30_720
    # + 45 linear layers x (64 x 128 x 128 + 3 x 12,288) values x 4 bytes (float32 state)
    state = 45 * (64 * 128 * 128 + 3 * 12_288) * 4
    assert state == 195_379_200
    assert kv_cache_bytes_per_sequence(a, tokens=8192, kv_precision="bf16") == 30_720 * 8192 + state


def test_gpt_oss_sliding_layers_cap_at_the_window():
    a = preset_arch("gpt-oss-120b")
    per_layer_token = 2 * 8 * 64 * 2  # K,V x 8 KV heads x 64 x bf16
    # 18 full layers hold all 8192 tokens, 18 sliding layers at most 128
    assert kv_cache_bytes_per_sequence(a, tokens=8192, kv_precision="bf16") == per_layer_token * (18 * 8192 + 18 * 128)


def test_mla_models_cache_the_latent():
    for pid in ("deepseek-r1-0528", "kimi-k2.5", "glm-5"):
        a = preset_arch(pid)
        assert kv_cache_bytes_per_token(a, kv_precision="bf16") == a.layers * (512 + 64) * 2


@pytest.mark.parametrize("pid, mtp", [("deepseek-r1-0528", 1), ("deepseek-v3", 1), ("qwen3.5-397b-a17b", 1),
                                      ("glm-5", 1), ("minimax-m2.5", 3), ("kimi-k2.5", 0), ("gpt-oss-120b", 0)])
def test_multi_token_prediction_layers_from_the_config(pid, mtp):
    assert preset_arch(pid).mtp_layers == mtp


def test_qwen3_5_serving_memory_reserves_the_linear_state_per_sequence():
    from planner.engine.serving_layout import memory_plan

    a = preset_arch("qwen3.5-397b-a17b")
    plan = memory_plan(arch=a, capacity_bytes=192 * 1024**3, runtime="vllm", weights="fp8", compute="fp8",
                       kv_precision="bf16", tp=8.0, pp=1.0, isl=1000.0, osl=200.0)
    kv_gpu = 30_720 / 2  # 2 KV heads: split at most 2 ways
    reserve = float(plan["kv_per_seq_bytes"] - 195_379_200 / 8) / kv_gpu  # tokens reserved per sequence
    assert plan["kv_bytes_per_token_gpu"] == kv_gpu
    assert reserve in (1200.0, 1100.0)  # full reservation (isl + osl) or half the output
