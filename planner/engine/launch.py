"""Ready to run (issue 22, 5.): the serving engine's launch command and a Kubernetes manifest for the
decided layout, with the settings the plan's serving model assumed (the engine defaults of
serving_constants.RUNTIME_SPECS: memory share, sequences in flight, step token budget) and the
engine version whose measured rows the constants were fitted on.

Pure: values in, strings and a dict out. The manifest is one replica per pod when a replica's
GPUs fit one server; a replica spanning servers needs a multi-node launcher (LeaderWorkerSet or
Ray), which the plan says instead of printing a manifest that would not start.
"""

from __future__ import annotations

import shlex

from catalog.domain.messages import Msg

from .precision import WeightFormat
from .presets import get_preset
from .serving_constants import RUNTIME_SPECS
from .spec import WorkloadSpec

# The engine version of the serving_measured.csv rows each runtime's constants were fitted on (the
# majority version of FITTED_ROWS: vLLM 90 of 93 rows, SGLang 78 of 84, TensorRT-LLM 353 of 357), and
# its container image, named as the project publishes it (the InferenceX rows of
# shared/reference/inferencex/serving_fit.csv record images of the same names).
ENGINES = {
    "vllm": {"version": "0.12.0", "image": "vllm/vllm-openai:v0.12.0", "port": 8000},
    "sglang": {"version": "0.5.1.post1", "image": "lmsysorg/sglang:v0.5.1.post1", "port": 30000},
    "trtllm": {"version": "1.0.0rc3", "image": "nvcr.io/nvidia/tensorrt-llm/release:1.0.0rc3", "port": 8000},
    # ATOM: the image most InferenceX ATOM rows of serving_fit.csv record (87 of 182 rows)
    "atom": {"version": "0.1.1", "image": "rocm/atom:rocm7.1.1-ubuntu24.04-pytorch2.9-atom0.1.1-MI350x",
             "port": 8000},
}
# KV-cache and weight formats as each engine's flags name them (None: the engine's default, bf16).
_KV = {"vllm": {"fp8": "fp8"}, "sglang": {"fp8": "fp8_e4m3"}, "trtllm": {}, "atom": {"fp8": "fp8"}}
_ONLINE_QUANT = {"fp8": "fp8"}  # bf16 checkpoints quantised to fp8 at load (vLLM, SGLang --quantization fp8)


def _model_id(spec: WorkloadSpec) -> tuple[str, bool]:
    """The Hugging Face id of a preset model, or a placeholder for a model given by its architecture."""
    source = spec.model_source or ""
    preset = get_preset(source.split(":", 1)[1]) if source.startswith("preset:") else None
    if preset is not None and preset.hf_id:
        return preset.hf_id, True
    return "/models/your-model", False


def _command(runtime: str, *, model: str, tp: int, pp: int, max_len: int, spec: WorkloadSpec) -> list[str]:
    rt, eng = RUNTIME_SPECS[runtime], ENGINES[runtime]
    kv = _KV[runtime].get(spec.precision.kv_cache)
    # The checkpoint's own format (precision.WeightFormat) is read from its config by the engine: no flag.
    own = isinstance(spec.precision.weights, WeightFormat)
    quant = _ONLINE_QUANT.get(spec.precision.weights) if spec.precision.weights != "bf16" and not own else None
    if runtime == "vllm":
        args = ["vllm", "serve", model, "--host", "0.0.0.0", "--port", str(eng["port"]),
                "--tensor-parallel-size", str(tp), "--pipeline-parallel-size", str(pp),
                "--max-model-len", str(max_len), "--max-num-seqs", str(rt.max_running_seqs),
                "--max-num-batched-tokens", str(rt.step_token_budget),
                "--gpu-memory-utilization", f"{rt.gpu_memory_fraction:g}"]
        args += ["--kv-cache-dtype", kv] if kv else []
        args += ["--quantization", quant] if quant else []
    elif runtime == "sglang":
        args = ["python3", "-m", "sglang.launch_server", "--model-path", model, "--host", "0.0.0.0",
                "--port", str(eng["port"]), "--tp-size", str(tp), "--pp-size", str(pp),
                "--context-length", str(max_len), "--max-running-requests", str(rt.max_running_seqs),
                "--chunked-prefill-size", str(rt.step_token_budget),
                "--mem-fraction-static", f"{rt.gpu_memory_fraction:g}"]
        args += ["--kv-cache-dtype", kv] if kv else []
        args += ["--quantization", quant] if quant else []
    elif runtime == "atom":
        # ROCm/ATOM's OpenAI server with the flags its serving guide shows; max_num_seqs 512 and
        # max_num_batched_tokens 16384 are its Config defaults (the values RUNTIME_SPECS["atom"] assumes)
        args = ["python3", "-m", "atom.entrypoints.openai_server", "--model", model, "--host", "0.0.0.0",
                "--port", str(eng["port"]), "--tensor-parallel-size", str(tp),
                "--gpu-memory-utilization", f"{rt.gpu_memory_fraction:g}"]
        args += ["--kv_cache_dtype", kv] if kv else []
    else:  # trtllm
        args = ["trtllm-serve", model, "--host", "0.0.0.0", "--port", str(eng["port"]), "--backend", "pytorch",
                "--tp_size", str(tp), "--pp_size", str(pp), "--max_seq_len", str(max_len),
                "--max_batch_size", str(rt.max_running_seqs), "--max_num_tokens", str(rt.step_token_budget),
                "--kv_cache_free_gpu_memory_fraction", f"{rt.gpu_memory_fraction:g}"]
    return args


def _manifest(*, name: str, image: str, args: list[str], gpus: int, replicas: int, port: int,
              gpu_resource: str) -> dict:
    labels = {"app": name}
    probe = {"httpGet": {"path": "/health", "port": port}}
    container = {
        "name": "engine", "image": image, "command": args[:1], "args": args[1:],
        "ports": [{"containerPort": port, "name": "http"}],
        "resources": {"limits": {gpu_resource: gpus}},
        # NCCL between the GPUs of a replica needs more shared memory than a container's default 64 MB
        "volumeMounts": [{"name": "shm", "mountPath": "/dev/shm"}],
        # loading the weights takes minutes: the startup probe allows 30 min before liveness applies
        "startupProbe": {**probe, "periodSeconds": 10, "failureThreshold": 180},
        "readinessProbe": {**probe, "periodSeconds": 10},
        "livenessProbe": {**probe, "periodSeconds": 30, "failureThreshold": 3},
    }
    deployment = {
        "apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": name, "labels": labels},
        "spec": {"replicas": replicas, "selector": {"matchLabels": labels}, "template": {
            "metadata": {"labels": labels},
            "spec": {"containers": [container],
                     "volumes": [{"name": "shm", "emptyDir": {"medium": "Memory", "sizeLimit": "16Gi"}}]}}},
    }
    service = {"apiVersion": "v1", "kind": "Service", "metadata": {"name": name, "labels": labels},
               "spec": {"selector": labels, "ports": [{"name": "http", "port": port, "targetPort": port}]}}
    return {"deployment": deployment, "service": service}


def serving_launch(*, spec: WorkloadSpec, accelerator_id: str, layout: dict, gpus_per_server: int | None) -> dict:
    """How to start the decided serving layout: command, manifest and the settings behind them."""
    runtime = spec.serving.runtime
    if runtime not in ENGINES:
        return {"runtime": runtime, "command": None,
                "note": Msg("no serving engine: {runtime} serves one request at a time; launch vLLM, SGLang or "
                            "TensorRT-LLM for a service", runtime=RUNTIME_SPECS[runtime].label)}
    tp = int(layout.get("tensor_parallel") or 1)
    pp = int(layout.get("pipeline_parallel") or 1)
    replicas = int(layout.get("replicas") or 1)
    model, known = _model_id(spec)
    max_len = spec.serving.context_length
    args = _command(runtime, model=model, tp=tp, pp=pp, max_len=max_len, spec=spec)
    eng, rt = ENGINES[runtime], RUNTIME_SPECS[runtime]
    gpu_resource = "amd.com/gpu" if accelerator_id.startswith("amd-") else "nvidia.com/gpu"
    out = {
        "runtime": runtime, "engine": rt.label, "engine_version": eng["version"], "image": eng["image"],
        "command": shlex.join(args), "argv": args, "gpus_per_replica": tp * pp, "replicas": replicas,
        "settings": {"tensor_parallel": tp, "pipeline_parallel": pp, "max_model_len": max_len,
                     "max_running_seqs": rt.max_running_seqs, "step_token_budget": rt.step_token_budget,
                     "gpu_memory_fraction": rt.gpu_memory_fraction, "weights": spec.precision.weights,
                     "kv_cache": spec.precision.kv_cache},
        "why": Msg("the settings the plan's serving model assumed (the {engine} defaults for sequences in flight, "
                   "the step's token budget and the memory share); engine version {version}, the one its "
                   "constants were fitted on", engine=rt.label, version=eng["version"]),
        "settings_source": rt.source,
    }
    if not known:
        out["note"] = Msg("the model was given by its architecture: replace /models/your-model with its "
                          "checkpoint (a Hugging Face id or a path)")
    per_server = gpus_per_server or tp * pp
    if tp * pp > per_server:
        out["kubernetes"] = None
        out["kubernetes_note"] = Msg(
            "a replica spans {servers} servers ({gpus} GPUs, {per} per server): run it with a multi-node "
            "launcher (LeaderWorkerSet or Ray), one leader and {workers} workers per replica",
            servers=-(-tp * pp // per_server), gpus=tp * pp, per=per_server, workers=-(-tp * pp // per_server) - 1)
    else:
        name = f"{runtime}-{model.rsplit('/', 1)[-1]}".lower().replace(".", "-").replace("_", "-")[:50].strip("-")
        out["kubernetes"] = _manifest(name=name, image=eng["image"], args=args, gpus=tp * pp, replicas=replicas,
                                      port=eng["port"], gpu_resource=gpu_resource)
    return out
