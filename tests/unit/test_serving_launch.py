"""Issue 22, 5. Ready to run: the decided serving layout's engine command and Kubernetes manifest carry
the settings the serving model assumed (layout, context, the engine's scheduler defaults, formats)."""

import shlex

import pytest

from planner.engine.launch import ENGINES, serving_launch
from planner.engine.serving_constants import RUNTIME_SPECS
from planner.engine.spec import parse_workload_spec


def spec(runtime="vllm", weights="bf16", kv="bf16", model=None, ctx=8192):
    return parse_workload_spec({
        "kind": "inference", "model": model or {"preset": "llama-3.1-70b"},
        "precision": {"weights": weights, "kv_cache": kv, "compute": weights},
        "serving": {"runtime": runtime, "context_length": ctx, "input_tokens": 2000, "output_tokens": 400}})


def flag(args, name):
    return args[args.index(name) + 1]


def test_vllm_command_has_the_layout_context_and_the_defaults_the_model_assumed():
    out = serving_launch(spec=spec(weights="fp8", kv="fp8"), accelerator_id="nvidia-h100-sxm5-80gb",
                         layout={"tensor_parallel": 4, "pipeline_parallel": 2, "replicas": 3}, gpus_per_server=8)
    args = out["argv"]
    assert args[:3] == ["vllm", "serve", "meta-llama/Llama-3.1-70B"] and shlex.split(out["command"]) == args
    assert (flag(args, "--tensor-parallel-size"), flag(args, "--pipeline-parallel-size")) == ("4", "2")
    assert flag(args, "--max-model-len") == "8192"
    rt = RUNTIME_SPECS["vllm"]
    assert flag(args, "--max-num-seqs") == str(rt.max_running_seqs)
    assert flag(args, "--max-num-batched-tokens") == str(rt.step_token_budget)
    assert float(flag(args, "--gpu-memory-utilization")) == rt.gpu_memory_fraction
    assert flag(args, "--kv-cache-dtype") == "fp8" and flag(args, "--quantization") == "fp8"
    assert out["engine_version"] == ENGINES["vllm"]["version"] and out["gpus_per_replica"] == 8
    kube = out["kubernetes"]["deployment"]
    assert kube["spec"]["replicas"] == 3
    container = kube["spec"]["template"]["spec"]["containers"][0]
    assert container["resources"]["limits"] == {"nvidia.com/gpu": 8}
    assert container["command"] + container["args"] == args
    assert container["readinessProbe"]["httpGet"] == {"path": "/health", "port": 8000}
    assert out["kubernetes"]["service"]["spec"]["ports"][0]["port"] == 8000


def test_bf16_needs_no_quantisation_flag():
    args = serving_launch(spec=spec(), accelerator_id="nvidia-h100-sxm5-80gb",
                          layout={"tensor_parallel": 8}, gpus_per_server=8)["argv"]
    assert "--quantization" not in args and "--kv-cache-dtype" not in args


@pytest.mark.parametrize("runtime, tp_flag, head", [
    ("sglang", "--tp-size", ["python3", "-m", "sglang.launch_server", "--model-path"]),
    ("trtllm", "--tp_size", ["trtllm-serve"]),
])
def test_other_engines_take_their_own_flags(runtime, tp_flag, head):
    out = serving_launch(spec=spec(runtime=runtime), accelerator_id="nvidia-h200-sxm-141gb",
                         layout={"tensor_parallel": 2, "replicas": 1}, gpus_per_server=8)
    assert out["argv"][:len(head)] == head and flag(out["argv"], tp_flag) == "2"
    port = ENGINES[runtime]["port"]
    assert f"--port {port}" in out["command"]


def test_amd_gpus_are_requested_as_amd_gpus():
    out = serving_launch(spec=spec(), accelerator_id="amd-mi300x-192gb", layout={"tensor_parallel": 2},
                         gpus_per_server=8)
    limits = out["kubernetes"]["deployment"]["spec"]["template"]["spec"]["containers"][0]["resources"]["limits"]
    assert limits == {"amd.com/gpu": 2}


def test_a_replica_across_servers_gets_a_multi_node_note_not_a_manifest():
    out = serving_launch(spec=spec(), accelerator_id="nvidia-h100-sxm5-80gb",
                         layout={"tensor_parallel": 8, "pipeline_parallel": 2}, gpus_per_server=8)
    assert out["kubernetes"] is None
    assert "2 servers" in str(out["kubernetes_note"]) and "1 workers" in str(out["kubernetes_note"])


def test_no_serving_engine_for_eager_transformers():
    out = serving_launch(spec=spec(runtime="hf_transformers"), accelerator_id="nvidia-h100-sxm5-80gb",
                         layout={}, gpus_per_server=8)
    assert out["command"] is None and "one request at a time" in str(out["note"])
