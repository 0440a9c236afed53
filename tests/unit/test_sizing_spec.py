"""parse_workload_spec: valid inputs become frozen dataclasses; every bad field is named."""

import dataclasses
import math

import pytest

from planner.engine import SpecValidationError, parse_workload_spec

LLAMA = {"preset": "llama-3-8b"}


def errors_of(data) -> dict[str, str]:
    with pytest.raises(SpecValidationError) as exc:
        parse_workload_spec(data)
    return {e.field: e.message for e in exc.value.errors}


def test_minimal_inference_spec_gets_documented_defaults():
    spec = parse_workload_spec({"kind": "inference", "model": LLAMA})
    assert (spec.serving.input_tokens, spec.serving.output_tokens, spec.serving.context_length) == (1024, 256, 1280)


def test_spec_is_frozen():
    spec = parse_workload_spec({"kind": "inference", "model": LLAMA})
    with pytest.raises(dataclasses.FrozenInstanceError):
        spec.kind = "rag"


def test_unknown_kind_lists_allowed_values():
    assert "allowed: pretraining, finetuning" in errors_of({"kind": "mining", "model": LLAMA})["kind"]


def test_kv_heads_must_divide_attention_heads():
    arch = {"layers": 2, "hidden_size": 64, "attention_heads": 8, "kv_heads": 3, "vocab_size": 10, "ffn_hidden_size": 128}
    msg = errors_of({"kind": "inference", "model": {"architecture": arch}})["model.architecture.kv_heads"]
    assert msg.startswith("must divide attention_heads (8)")


def test_all_errors_are_collected_not_just_the_first():
    errs = errors_of({"kind": "inference", "model": LLAMA, "serving": {"input_tokens": -1, "output_tokens": "x"},
                      "precision": {"weights": "int3"}})
    assert {"serving.input_tokens", "serving.output_tokens", "precision.weights"} <= set(errs)


@pytest.mark.parametrize("bad", [math.nan, math.inf, -math.inf])
def test_non_finite_numbers_are_rejected(bad):
    assert "finite" in errors_of({"kind": "inference", "model": LLAMA, "serving": {"requests_per_second": bad}})[
        "serving.requests_per_second"]


def test_booleans_are_not_numbers():
    assert "serving.concurrency" in errors_of({"kind": "inference", "model": LLAMA, "serving": {"concurrency": True}})


def test_absurd_parameter_count_is_rejected():
    errs = errors_of({"kind": "pretraining", "model": {"architecture": {"params": 1e20}}, "training": {"tokens": 1e9}})
    assert "model.architecture.params" in errs


def test_unknown_field_is_an_error_with_the_allowed_list():
    assert "unknown field" in errors_of({"kind": "inference", "model": LLAMA, "serving": {"input_tokes": 5}})[
        "serving.input_tokes"]


def test_unknown_preset_is_named():
    assert "unknown preset" in errors_of({"kind": "inference", "model": {"preset": "gpt-9"}})["model.preset"]


def test_model_needs_exactly_one_source():
    assert "exactly one" in errors_of({"kind": "inference", "model": {"preset": "llama-3-8b", "hf_config": {}}})["model"]


def test_pretraining_requires_tokens():
    assert errors_of({"kind": "pretraining", "model": LLAMA, "training": {}})["training.tokens"].startswith("required")


def test_qlora_requires_int4_weights():
    errs = errors_of({"kind": "finetuning", "model": LLAMA, "precision": {"weights": "bf16"},
                      "training": {"tokens": 1e6, "method": "qlora"}})
    assert "precision.weights" in errs


def test_qlora_defaults_weights_to_int4():
    spec = parse_workload_spec({"kind": "finetuning", "model": LLAMA, "training": {"tokens": 1e6, "method": "qlora"}})
    assert spec.precision.weights == "int4"


def test_tensor_parallel_must_divide_heads():
    errs = errors_of({"kind": "pretraining", "model": LLAMA, "training": {"tokens": 1e9, "tensor_parallel": 3}})
    assert "training.tensor_parallel" in errs


def test_context_must_hold_input_and_output():
    errs = errors_of({"kind": "inference", "model": LLAMA,
                      "serving": {"context_length": 1000, "input_tokens": 900, "output_tokens": 200}})
    assert "serving.context_length" in errs


def test_context_beyond_model_maximum_is_rejected():
    errs = errors_of({"kind": "inference", "model": LLAMA, "serving": {"context_length": 100_000}})
    assert "exceeds the model's maximum context (8192)" in errs["serving.context_length"]


def test_epochs_multiply_tokens():
    spec = parse_workload_spec({"kind": "finetuning", "model": LLAMA, "training": {"tokens": 1e6, "epochs": 3}})
    assert spec.training.tokens == 3e6


def test_external_api_needs_no_model():
    assert parse_workload_spec({"kind": "external_api"}).model is None


def test_rag_requires_documents():
    assert "rag" in errors_of({"kind": "rag", "model": LLAMA})


def test_rag_embedding_model_must_be_an_encoder_preset():
    errs = errors_of({"kind": "rag", "model": LLAMA, "rag": {"documents": 10, "embedding_model": "llama-3-8b"}})
    assert "rag.embedding_model" in errs


def test_vision_model_cannot_be_served_as_llm():
    assert "model" in errors_of({"kind": "inference", "model": {"preset": "resnet-50"}})


def test_root_must_be_an_object():
    assert "(root)" in errors_of([1, 2])


def test_error_string_lists_field_paths():
    with pytest.raises(SpecValidationError) as exc:
        parse_workload_spec({"kind": "inference", "model": LLAMA, "serving": {"input_tokens": 0}})
    assert str(exc.value).startswith("serving.input_tokens: must be at least 1")


def test_hf_config_missing_key_is_named():
    cfg = {"model_type": "llama", "num_hidden_layers": 2, "hidden_size": 64, "vocab_size": 100, "intermediate_size": 128}
    errs = errors_of({"kind": "inference", "model": {"hf_config": cfg}})
    assert errs["model.hf_config.num_attention_heads"] == "required in the Hugging Face config"


def test_hf_config_unknown_keys_are_ignored():
    cfg = {"model_type": "llama", "num_hidden_layers": 2, "hidden_size": 64, "num_attention_heads": 4,
           "vocab_size": 100, "intermediate_size": 128, "rope_scaling": {"type": "yarn"}, "torch_dtype": "bfloat16"}
    assert parse_workload_spec({"kind": "inference", "model": {"hf_config": cfg}}).model.layers == 2


@pytest.mark.parametrize("goodput", [5e-324, 0.005, 0])
def test_a_vanishing_goodput_is_a_field_error(goodput):
    """Found by schemathesis: goodput 5e-324 made the GPU-hours overflow the cost engine's Decimals."""
    spec = {"kind": "pretraining", "model": {"preset": "llama-3.2-1b"}, "training": {"tokens": 1e9, "goodput": goodput}}
    assert "training.goodput" in errors_of(spec)
