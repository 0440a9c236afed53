"""Any JSON-like input either parses or raises SpecValidationError (never another exception),
and whatever parses can be sized: bad input must never become a server error."""

from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from planner.engine import SpecValidationError, parse_workload_spec, size_workload
from planner.engine.catalog_csv import load_accelerators_csv
from planner.engine.spec import ARCH_FIELDS, DataSpec, HardwareSpec, ServingSpec, TrainingSpec

ROOT = Path(__file__).resolve().parents[2]
ACCS = load_accelerators_csv(ROOT / "catalog" / "data" / "accelerators.csv")

scalars = st.one_of(st.none(), st.booleans(), st.integers(-10, 10**6), st.floats(allow_nan=True, allow_infinity=True),
                    st.sampled_from(["bf16", "int4", "lora", "full", "hnsw", "abc", "", "12", "llama-3-8b", "H100"]),
                    st.lists(st.sampled_from(["q", "v", "x"]), max_size=3))


def section(fields):
    return st.dictionaries(st.sampled_from(sorted(fields) + ["bogus"]), scalars, max_size=6)


BASE_ARCH = {"layers", "hidden_size", "attention_heads", "vocab_size", "ffn_hidden_size"}
arch = st.fixed_dictionaries({"layers": st.integers(1, 8), "hidden_size": st.sampled_from([64, 128]),
                              "attention_heads": st.sampled_from([4, 8]), "vocab_size": st.integers(10, 1000),
                              "ffn_hidden_size": st.integers(1, 512)},
                             optional={k: scalars for k in ARCH_FIELDS[:12] if k not in BASE_ARCH})
models = st.one_of(st.fixed_dictionaries({"preset": st.sampled_from(["llama-3-8b", "mixtral-8x7b", "resnet-50",
                                                                     "bge-large-en-v1.5", "nope"])}),
                   st.fixed_dictionaries({"architecture": arch}), st.fixed_dictionaries({"hf_config": section(
                       {"num_hidden_layers", "hidden_size", "num_attention_heads", "vocab_size", "intermediate_size",
                        "model_type", "num_key_value_heads"})}), scalars)
specs = st.fixed_dictionaries(
    {"kind": st.sampled_from(["pretraining", "finetuning", "inference", "rag", "classic_training", "external_api", "x"])},
    optional={"model": models,
              "training": section(TrainingSpec.__dataclass_fields__),
              "serving": section(ServingSpec.__dataclass_fields__),
              "rag": section({"documents", "tokens_per_document", "chunk_tokens", "index", "generator", "top_k"}),
              "data": section(DataSpec.__dataclass_fields__),
              "hardware": section(HardwareSpec.__dataclass_fields__),
              "precision": section({"weights", "compute", "kv_cache"})})


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(specs)
def test_parse_then_size_never_raises_anything_else(data):
    try:
        spec = parse_workload_spec(data)
    except SpecValidationError as exc:
        assert exc.errors and all(e.field and e.message for e in exc.errors)
        return
    try:
        size_workload(spec=spec, accelerators=ACCS).to_dict()
    except SpecValidationError as exc:  # an ambiguous/unknown accelerator pin is a field error too
        assert exc.errors[0].field == "hardware.accelerator"


PREC = st.sampled_from(["fp32", "bf16", "fp16", "fp8", "int8", "int4"])
LLMS = st.sampled_from(["llama-3.2-1b", "qwen2.5-0.5b", "mixtral-8x7b", "deepseek-v3", "gemma-2-9b", "mistral-7b-v0.1",
                        "qwen3-30b-a3b", "phi-3-mini-4k"])
precision = st.fixed_dictionaries({}, optional={"weights": PREC, "compute": PREC, "kv_cache": PREC})
hardware = st.fixed_dictionaries({}, optional={
    "accelerator": st.sampled_from(["nvidia-h100-sxm5-80gb", "A100 80GB", "L4", "MI300X", "google-tpu-v5e-16gb"]),
    "count": st.integers(1, 2048), "mfu": st.floats(0.05, 0.9), "gpus_per_server": st.integers(1, 8)})
training_opts = {
    "epochs": st.floats(0.5, 5), "sequence_length": st.integers(16, 4096), "micro_batch_size": st.integers(1, 8),
    "optimizer": st.sampled_from(["adamw", "adamw_8bit", "sgd", "adafactor"]), "zero_stage": st.integers(0, 3),
    "activation_checkpointing": st.sampled_from(["none", "selective", "full"]),
    "tensor_parallel": st.sampled_from([1, 2, 4, 8]), "pipeline_parallel": st.sampled_from([1, 2, 4]),
    "deadline_hours": st.floats(1, 1e4)}
serving = st.fixed_dictionaries({}, optional={
    "input_tokens": st.integers(1, 3000), "output_tokens": st.integers(1, 1000), "concurrency": st.integers(1, 1000),
    "requests_per_second": st.floats(0, 1000), "ttft_p95_ms": st.floats(10, 10_000), "tpot_p95_ms": st.floats(5, 500)})
plausible = st.one_of(
    st.fixed_dictionaries({"kind": st.just("pretraining"), "model": st.fixed_dictionaries({"preset": LLMS}),
                           "training": st.fixed_dictionaries({"tokens": st.floats(1e3, 1e13)}, optional=training_opts)},
                          optional={"hardware": hardware, "precision": st.just({"weights": "bf16"})}),
    st.fixed_dictionaries({"kind": st.just("finetuning"), "model": st.fixed_dictionaries({"preset": LLMS}),
                           "training": st.fixed_dictionaries({"tokens": st.floats(1e3, 1e10), "method": st.sampled_from(
                               ["full", "lora", "qlora"])}, optional=training_opts)}, optional={"hardware": hardware}),
    st.fixed_dictionaries({"kind": st.just("classic_training"), "model": st.fixed_dictionaries({"preset": st.sampled_from(
        ["resnet-50", "vit-b-16", "yolov8n", "yolov8x"])}), "training": st.fixed_dictionaries(
        {"dataset_samples": st.integers(1, 10**7)}, optional={"epochs": st.floats(0.5, 300)})},
        optional={"hardware": hardware}),
    st.fixed_dictionaries({"kind": st.just("inference"), "model": st.fixed_dictionaries({"preset": LLMS})},
                          optional={"precision": precision, "serving": serving, "hardware": hardware}),
    st.fixed_dictionaries({"kind": st.just("rag"), "model": st.fixed_dictionaries({"preset": LLMS}),
                           "rag": st.fixed_dictionaries({"documents": st.integers(1, 10**7)}, optional={
                               "index": st.sampled_from(["flat", "hnsw", "ivf_pq"]),
                               "generator": st.sampled_from(["self_hosted", "external_api"])})},
                          optional={"serving": serving, "hardware": hardware}),
)


def _numbers(obj):
    # Figures of the result; the parameters of its texts (`*_i18n`) are not figures.
    if isinstance(obj, dict):
        for k, v in obj.items():
            if not str(k).endswith("_i18n"):
                yield from _numbers(v)
    elif isinstance(obj, list):
        for v in obj:
            yield from _numbers(v)
    elif isinstance(obj, int | float) and not isinstance(obj, bool):
        yield obj


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(plausible)
def test_plausible_specs_size_to_finite_non_negative_numbers(data):
    try:
        spec = parse_workload_spec(data)
    except SpecValidationError:
        return
    try:
        result = size_workload(spec=spec, accelerators=ACCS).to_dict()
    except SpecValidationError as exc:
        assert exc.errors[0].field == "hardware.accelerator"
        return
    assert all(n == n and abs(n) != float("inf") and n >= 0 for n in _numbers(result))
