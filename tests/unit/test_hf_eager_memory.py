"""Plain Hugging Face transformers inference memory with eager attention (issue 24, 4.): the prompt's
s x s attention scores are counted as the library allocates them (planner/engine/hf_eager_memory.py)."""

from pathlib import Path

import pytest

from planner.engine import parse_workload_spec, size_workload
from planner.engine.catalog_csv import load_accelerators_csv
from planner.engine.errors import SpecValidationError
from planner.engine.hf_eager_memory import eager_attention_bytes, score_bytes_per_element
from planner.engine.presets import preset_arch
from planner.engine.serving_layout import memory_plan

ROOT = Path(__file__).resolve().parents[2]
ACCS = load_accelerators_csv(ROOT / "catalog" / "data" / "accelerators.csv")
GIB = 1024**3


def test_one_score_copy_is_the_hugging_face_docs_arithmetic():
    """Source: Hugging Face transformers docs, "Optimizing LLMs for Speed and Memory" (llm_tutorial_optimization,
    section 2 "Flash Attention"): an LLM with 40 attention heads in bfloat16 needs 40 * 2 * N^2 bytes for
    the QK^T matrices, "for N=16000 we would need 19 GB". Tolerance 1 % (the docs round to whole GB)."""
    one_copy = 40 * 16000**2 * score_bytes_per_element("bf16", copies=1)
    assert one_copy / GIB == pytest.approx(19.0, rel=0.01)


def test_the_peak_counts_the_copies_the_eager_code_keeps():
    # bf16: product (2) ... masked copy (2), then the input (2) + fp32 softmax (4) + its cast back (2) = 8 B
    assert score_bytes_per_element("bf16") == 8.0
    assert score_bytes_per_element("fp16") == 8.0
    assert score_bytes_per_element("fp8") == 8.0  # fp8 weights run their activations in 16 bits
    assert score_bytes_per_element("fp32") == 8.0  # fp32 softmax input + output; the cast back is a no-op


def test_eager_attention_grows_with_the_square_of_the_prompt_and_splits_over_tp():
    a = preset_arch("llama-3.1-8b")
    short, long = (float(eager_attention_bytes(a, tokens=s, tp=1, compute_precision="bf16")) for s in (15000, 30000))
    assert long / short == pytest.approx(4.0, rel=0.01)
    scores = a.attention_heads * 30000**2 * 8.0
    assert long == pytest.approx(scores + 30000**2 * 2.0 + 2 * a.attention_heads * 30000 * a.head_dim * 2.0, rel=1e-9)
    tp4 = float(eager_attention_bytes(a, tokens=30000, tp=4, compute_precision="bf16"))
    assert tp4 < long / 3.5


def test_only_the_hugging_face_runtime_counts_it():
    a = preset_arch("llama-3.1-8b")
    args = dict(arch=a, capacity_bytes=80 * GIB, weights="bf16", compute="bf16", kv_precision="bf16", tp=1, pp=1,
                isl=30000, osl=256)
    hf, vllm = memory_plan(runtime="hf_transformers", **args), memory_plan(runtime="vllm", **args)
    assert float(hf["eager_attention_bytes"]) > 200 * GIB
    assert float(vllm["eager_attention_bytes"]) == 0.0
    assert float(hf["activations_bytes"]) - float(vllm["activations_bytes"]) > 200 * GIB
    assert not bool(hf["fits"]) and bool(vllm["fits"])
    # DynamicCache's torch.cat keeps one layer's K/V twice while it grows
    assert float(hf["kv_per_seq_bytes"]) > float(memory_plan(runtime="trtllm", **args)["kv_per_seq_bytes"])


def test_a_long_prompt_in_plain_transformers_needs_more_gpus():
    spec = {"kind": "inference", "model": {"preset": "llama-3.1-8b"},
            "serving": {"runtime": "hf_transformers", "input_tokens": 30000, "output_tokens": 256, "concurrency": 1,
                        "requests_per_second": 0},
            "hardware": {"accelerator": "nvidia-h100-sxm5-80gb", "count": 1}}
    with pytest.raises(SpecValidationError) as err:
        size_workload(spec=parse_workload_spec(spec), accelerators=ACCS)
    why = err.value.as_dict()["hardware.accelerator"][0]
    assert "eager attention scores of its 30000-token prompt" in why and "4 x H100" in why
    spec["hardware"]["count"] = 4
    out = size_workload(spec=parse_workload_spec(spec), accelerators=ACCS).to_dict()
    act = out["memory"]["components"]["activations_bytes"]
    assert act["value"] > 50 * GIB and "eager attention" in act["explain"]
    assert out["memory"]["per_gpu_bytes"]["value"] <= 80 * GIB
