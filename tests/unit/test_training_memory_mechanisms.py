"""Activation and logits memory mechanisms (docs/SIZING.md "Training memory") and the MoE GEMM width."""

import pytest

from planner.engine import compute, memory
from planner.engine.presets import preset_arch
from planner.engine.spec import SpecValidationError, parse_workload_spec


def _arch(name):
    return preset_arch(name)


def test_attention_field_is_validated_and_defaults_to_fused():
    s = parse_workload_spec({"kind": "finetuning", "model": {"preset": "llama-3-8b"}, "training": {"tokens": 1e8}})
    assert s.training.attention == "fused"
    with pytest.raises(SpecValidationError) as exc:
        parse_workload_spec({"kind": "finetuning", "model": {"preset": "llama-3-8b"},
                             "training": {"tokens": 1e8, "attention": "flash3000"}})
    assert "training.attention" in {e.field for e in exc.value.errors}


@pytest.mark.parametrize("tp", [1, 2, 8])
def test_eager_attention_adds_exactly_the_score_term_without_recompute(tp):
    a = _arch("llama-2-7b")
    args = dict(seq=1304, micro_batch=1, tp=tp, sequence_parallel=False)
    fused = float(memory.activation_bytes_per_layer(a, checkpointing="none", **args))
    eager = float(memory.activation_bytes_per_layer(a, checkpointing="none", attention="eager", **args))
    selective = float(memory.activation_bytes_per_layer(a, checkpointing="selective", attention="eager", **args))
    s, h, heads = 1304, a.hidden_size, a.attention_heads
    assert eager - fused == pytest.approx(s * h * 5 * heads * s / (h * tp))
    assert fused == pytest.approx(selective)  # fused attention stores what selective recompute stores
    # Llama 2 7B at 1,304 tokens: ~8.7 GB of attention scores over 32 layers (held-out finding)
    if tp == 1:
        assert 8.0e9 < a.layers * (eager - fused) < 9.5e9


def test_unfused_cross_entropy_costs_14_bytes_per_token_and_vocab_entry():
    a = _arch("llama-3.1-8b")
    args = dict(seq=8192, micro_batch=1, tp=1, pp=1, vpp=1, checkpointing="full", sequence_parallel=False,
                compute_precision="bf16")
    fused = float(memory.training_activation_bytes(a, cross_entropy="fused", **args))
    unfused = float(memory.training_activation_bytes(a, cross_entropy="unfused", **args))
    assert unfused - fused == pytest.approx(10.0 * 8192 * a.vocab_size)
    assert memory.cross_entropy_path("pretraining") == "fused"
    assert memory.cross_entropy_path("finetuning") == "unfused"


def test_dense_gemm_width_is_the_hidden_size():
    for name in ("llama-3-8b", "llama-2-70b", "gpt-3-175b"):
        a = _arch(name)
        assert compute.model_width(a) == a.hidden_size


@pytest.mark.parametrize("tp", [1, 2, 4])
def test_moe_gemm_width_is_the_flop_weighted_time_of_both_gemm_classes(tp):
    a = _arch("qwen3-30b-a3b")
    assert a.is_moe and a.moe_ffn_hidden_size < a.hidden_size
    w_eff = compute.model_width(a)
    assert a.moe_ffn_hidden_size < w_eff < a.hidden_size
    per_expert = 3 * a.hidden_size * a.moe_ffn_hidden_size
    share = (a.layers - a.dense_layers) * (a.experts_per_token + a.shared_experts) * per_expert / a.active_params
    expected = 1.0 / (share / float(compute.width_factor(a.moe_ffn_hidden_size / tp))
                      + (1 - share) / float(compute.width_factor(a.hidden_size / tp)))
    assert float(compute.width_factor(w_eff / tp)) == pytest.approx(expected)
