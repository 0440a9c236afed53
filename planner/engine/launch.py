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

from .hardware import AcceleratorSpec
from .launch_flags import ONLINE_QUANT, TRTLLM_CONFIG, Group, engine_argv, router, trtllm_disagg_config
from .precision import WeightFormat
from .presets import get_preset
from .serving_constants import RUNTIME_SPECS
from .serving_moe import moe_a2a_backend, mtp_draft_tokens
from .spec import WorkloadSpec
from .spec_types import DisaggregationSpec, PoolSpec

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
# With expert parallelism, data-parallel attention, MTP or disaggregated pools the constants are the ones
# fitted on the InferenceX rows (serving_constants_ix.py), whose MoE rows with these mechanisms record
# newer images: per runtime the image most of serving_fit.csv's MoE rows with MTP, DPA or EP > 1
# record (vLLM 47 of 77, SGLang 78 of 443 (119 unrecorded), TensorRT-LLM 75 of 335 (114 unrecorded),
# ATOM 21 of 62). The versions of ENGINES predate those mechanisms' flags (vLLM's "mtp" method, TensorRT-LLM's
# attention_dp_config).
MOE_ENGINES = {
    "vllm": {"version": "0.20.0", "image": "vllm/vllm-openai:v0.20.0-cu130", "port": 8000},
    "sglang": {"version": "0.5.10.post1", "image": "lmsysorg/sglang:v0.5.10.post1-cu130", "port": 30000},
    "trtllm": {"version": "1.1.0rc2.post2", "image": "nvcr.io/nvidia/tensorrt-llm/release:1.1.0rc2.post2",
               "port": 8000},
    "atom": {"version": "0.1.1", "image": "rocm/atom:rocm7.2.0-ubuntu24.04-pytorch2.9-atom0.1.1", "port": 8000},
}


def _model_id(spec: WorkloadSpec) -> tuple[str, bool]:
    """The Hugging Face id of a preset model, or a placeholder for a model given by its architecture."""
    source = spec.model_source or ""
    preset = get_preset(source.split(":", 1)[1]) if source.startswith("preset:") else None
    if preset is not None and preset.hf_id:
        return preset.hf_id, True
    return "/models/your-model", False


def _quant(spec: WorkloadSpec) -> tuple[str | None, Msg | None]:
    """The load-time quantisation flag, or a note when the engines cannot quantise to the plan's format."""
    w = spec.precision.weights
    # The checkpoint's own format (precision.WeightFormat, or its class named explicitly) is read from
    # its config by the engine: no flag.
    own = getattr(spec.model, "checkpoint_weights", None)
    if isinstance(w, WeightFormat) or w == "bf16" or (own and str(WeightFormat(own)) == w):
        return None, None
    if w in ONLINE_QUANT:
        return ONLINE_QUANT[w], None
    return None, Msg("the plan assumed {w} weights, which the engine does not quantise to at load: replace the "
                     "model with a {w} checkpoint of it", w=w)


def _manifest(*, name: str, image: str, args: list[str], gpus: int, replicas: int, port: int,
              gpu_resource: str, config: str | None = None) -> dict:
    labels = {"app": name}
    probe = {"httpGet": {"path": "/health", "port": port}}
    mounts = [{"name": "shm", "mountPath": "/dev/shm"}]
    volumes = [{"name": "shm", "emptyDir": {"medium": "Memory", "sizeLimit": "16Gi"}}]
    if config is not None:  # TensorRT-LLM's extra options file, from a ConfigMap
        mounts.append({"name": "config", "mountPath": TRTLLM_CONFIG.rsplit("/", 1)[0]})
        volumes.append({"name": "config", "configMap": {"name": f"{name}-config"}})
    container = {
        "name": "engine", "image": image, "command": args[:1], "args": args[1:],
        "ports": [{"containerPort": port, "name": "http"}],
        "resources": {"limits": {gpu_resource: gpus}},
        # NCCL between the GPUs of a replica needs more shared memory than a container's default 64 MB
        "volumeMounts": mounts,
        # loading the weights takes minutes: the startup probe allows 30 min before liveness applies
        "startupProbe": {**probe, "periodSeconds": 10, "failureThreshold": 180},
        "readinessProbe": {**probe, "periodSeconds": 10},
        "livenessProbe": {**probe, "periodSeconds": 30, "failureThreshold": 3},
    }
    deployment = {
        "apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": name, "labels": labels},
        "spec": {"replicas": replicas, "selector": {"matchLabels": labels}, "template": {
            "metadata": {"labels": labels},
            "spec": {"containers": [container], "volumes": volumes}}},
    }
    service = {"apiVersion": "v1", "kind": "Service", "metadata": {"name": name, "labels": labels},
               "spec": {"selector": labels, "ports": [{"name": "http", "port": port, "targetPort": port}]}}
    out = {"deployment": deployment, "service": service}
    if config is not None:
        out["config_map"] = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": f"{name}-config"},
                             "data": {TRTLLM_CONFIG.rsplit("/", 1)[1]: config}}
    return out


def _name(runtime: str, model: str, role: str | None = None) -> str:
    base = f"{runtime}-{model.rsplit('/', 1)[-1]}".lower().replace(".", "-").replace("_", "-")[:40].strip("-")
    return f"{base}-{role}" if role else base


def _kube(out: dict, *, name: str, eng: dict, args: list[str], gpus: int, replicas: int, per_server: int,
          gpu_resource: str, config: str | None) -> None:
    """The manifest of one group, or the multi-node note when its GPUs span servers."""
    if gpus > per_server:
        out["kubernetes"] = None
        servers = -(-gpus // per_server)
        out["kubernetes_note"] = Msg(
            "a replica spans {servers} servers ({gpus} GPUs, {per} per server): run it with a multi-node "
            "launcher (LeaderWorkerSet or Ray), one leader and {workers} workers per replica",
            servers=servers, gpus=gpus, per=per_server, workers=servers - 1)
    else:
        out["kubernetes"] = _manifest(name=name, image=eng["image"], args=args, gpus=gpus, replicas=replicas,
                                      port=eng["port"], gpu_resource=gpu_resource, config=config)


def _settings(runtime: str, g: Group, *, max_len: int, spec: WorkloadSpec) -> dict:
    rt = RUNTIME_SPECS[runtime]
    return {"tensor_parallel": g.tp, "pipeline_parallel": g.pp, "max_model_len": max_len,
            "max_running_seqs": rt.max_running_seqs, "step_token_budget": rt.step_token_budget,
            "gpu_memory_fraction": rt.gpu_memory_fraction, "weights": spec.precision.weights,
            "kv_cache": spec.precision.kv_cache, "expert_parallel": g.ep, "data_parallel_attention": g.dpa,
            "attention_data_parallel": g.tp if g.dpa else 1, "speculative": "mtp" if g.drafts else "none",
            "mtp_draft_tokens": g.drafts, "mtp_accepted_tokens": spec.serving.speculative.accepted_tokens}


def serving_launch(*, spec: WorkloadSpec, accelerator_id: str, layout: dict, gpus_per_server: int | None,
                   accelerator: AcceleratorSpec | None = None) -> dict:
    """How to start the decided serving layout: command, manifest and the settings behind them.

    accelerator: the decided accelerator's spec, for the settings that follow the hardware (SGLang's MoE
    all-to-all backend, serving_moe.moe_a2a_backend); None: those stay the engine's defaults."""
    runtime = spec.serving.runtime
    if runtime not in ENGINES:
        return {"runtime": runtime, "command": None,
                "note": Msg("no serving engine: {runtime} serves one request at a time; launch vLLM, SGLang or "
                            "TensorRT-LLM for a service", runtime=RUNTIME_SPECS[runtime].label)}
    tp = int(layout.get("tensor_parallel") or 1)
    pp = int(layout.get("pipeline_parallel") or 1)
    replicas = int(layout.get("replicas") or 1)
    hw, s = spec.hardware, spec.serving
    # the mechanisms the decided layout was evaluated with (the search's variant, serving_candidates.
    # mechanisms), else the spec's; EP and DPA inside the layout's TP group, as the search evaluates them
    method = layout.get("speculative", s.speculative.method)
    ep = layout.get("expert_parallel", hw.expert_parallel)
    dpa = bool(layout.get("data_parallel_attention", hw.data_parallel_attention)) and tp > 1
    # the decided layout's pools (a searched disaggregated candidate, search_disagg.layout_of), else the spec's
    disagg = _pools(layout.get("disaggregated")) or s.disaggregation
    # the draft count the evaluation ran (serving_moe.mtp_draft_tokens); both pools launch the decode pool's
    d_dpa, d_only = (disagg.decode.data_parallel_attention, True) if disagg is not None else (dpa, False)
    drafts = int(mtp_draft_tokens(runtime, d_dpa, decode_only=d_only)) if method == "mtp" else 0
    # the MoE exchange the evaluation charged (serving_moe.moe_a2a_backend); a disaggregated plan's pools are its engines
    backend = moe_a2a_backend(runtime, accelerator, disagg is not None) if accelerator is not None else None
    group = Group(tp=tp, pp=pp, ep=min(int(ep or 1), tp), dpa=dpa, drafts=drafts, a2a_backend=backend)
    moe = bool(group.ep > 1 or group.dpa or drafts or disagg is not None)
    eng, rt = (MOE_ENGINES if moe else ENGINES)[runtime], RUNTIME_SPECS[runtime]
    model, known = _model_id(spec)
    max_len, (quant, quant_note) = s.context_length, _quant(spec)
    gpu_resource = "amd.com/gpu" if accelerator_id.startswith("amd-") else "nvidia.com/gpu"
    per_server = gpus_per_server or tp * pp
    argv = lambda g: engine_argv(runtime, g, model=model, port=eng["port"], max_len=max_len,  # noqa: E731
                                 kv_cache=spec.precision.kv_cache, quant=quant)
    args, config, notes = argv(group)
    why = (Msg("the settings the plan's serving model assumed (expert parallel, data-parallel attention, MTP and the "
               "{engine} scheduler defaults); engine version {version}, the one most InferenceX rows with these "
               "mechanisms record (its MoE constants were fitted on them; newer than {base}, the version of its "
               "dense constants)", engine=rt.label, version=eng["version"], base=ENGINES[runtime]["version"])
           if moe else
           Msg("the settings the plan's serving model assumed (the {engine} defaults for sequences in flight, "
               "the step's token budget and the memory share); engine version {version}, the one its "
               "constants were fitted on", engine=rt.label, version=eng["version"]))
    out = {
        "runtime": runtime, "engine": rt.label, "engine_version": eng["version"], "image": eng["image"],
        "command": shlex.join(args), "argv": args, "gpus_per_replica": tp * pp, "replicas": replicas,
        "settings": _settings(runtime, group, max_len=max_len, spec=spec),
        "why": why, "settings_source": rt.source,
    }
    if config is not None:
        out["config_file"] = {"path": TRTLLM_CONFIG, "content": config}
    if not known:
        out["note"] = Msg("the model was given by its architecture: replace /models/your-model with its "
                          "checkpoint (a Hugging Face id or a path)")
    first = [quant_note] if quant_note else []
    notes = first + notes
    if disagg is not None:
        return _disaggregated(out, runtime=runtime, disagg=disagg, drafts=drafts, argv=argv, eng=eng,
                              a2a_backend=backend,
                              model=model, max_len=max_len, spec=spec, per_server=gpus_per_server,
                              gpu_resource=gpu_resource, notes=first)
    if notes:
        out["notes"] = notes
    _kube(out, name=_name(runtime, model), eng=eng, args=args, gpus=tp * pp, replicas=replicas,
          per_server=per_server, gpu_resource=gpu_resource, config=config)
    return out


def _pools(d: dict | None) -> DisaggregationSpec | None:
    if not d:
        return None
    pool = lambda p: PoolSpec(workers=int(p["workers"]), tensor_parallel=int(p["tensor_parallel"]),  # noqa: E731
                              expert_parallel=int(p.get("expert_parallel") or 1),
                              data_parallel_attention=bool(p.get("data_parallel_attention")))
    return DisaggregationSpec(prefill=pool(d["prefill"]), decode=pool(d["decode"]))


def _disaggregated(out: dict, *, runtime, disagg, drafts, argv, eng, model, max_len, spec, per_server,
                   gpu_resource, notes, a2a_backend=None) -> dict:
    """One command (and manifest) per pool, and what routes between them."""
    pools, notes = [], list(notes)
    for role, pool in (("prefill", disagg.prefill), ("decode", disagg.decode)):
        g = Group(tp=pool.tensor_parallel, ep=min(pool.expert_parallel, pool.tensor_parallel),
                  dpa=pool.data_parallel_attention and pool.tensor_parallel > 1, drafts=drafts, role=role,
                  a2a_backend=a2a_backend)
        args, config, n = argv(g)
        notes += n
        entry = {"role": role, "workers": pool.workers, "gpus_per_worker": pool.tensor_parallel,
                 "command": shlex.join(args), "argv": args,
                 "settings": _settings(runtime, g, max_len=max_len, spec=spec)}
        if config is not None:
            entry["config_file"] = {"path": TRTLLM_CONFIG, "content": config}
        _kube(entry, name=_name(runtime, model, role), eng=eng, args=args, gpus=pool.tensor_parallel,
              replicas=pool.workers, per_server=per_server or pool.tensor_parallel, gpu_resource=gpu_resource,
              config=config)
        pools.append(entry)
    route, route_note = router(runtime, prefill_port=eng["port"], decode_port=eng["port"])
    route_out = {"command": shlex.join(route) if route else None, "argv": route, "note": route_note}
    if runtime == "trtllm":
        route_out["config_file"] = {"path": "/config/disagg.yml", "content": trtllm_disagg_config(
            prefill_workers=disagg.prefill.workers, decode_workers=disagg.decode.workers, port=eng["port"])}
    lines = [f"# {p['role']}: {p['workers']} x {p['gpus_per_worker']} GPU(s)\n{p['command']}" for p in pools]
    if route:
        lines.append("# router\n" + shlex.join(route))
    dec = pools[1]
    out.update({"command": "\n".join(lines), "argv": dec["argv"], "gpus_per_replica": dec["gpus_per_worker"],
                "replicas": dec["workers"], "settings": dec["settings"], "pools": pools,
                "router": route_out,
                "kubernetes": None,
                "kubernetes_note": Msg("disaggregated: one Deployment per pool (pools[].kubernetes), and the router "
                                       "in front of them: {router}", router=route_note)})
    out.pop("config_file", None)
    if notes:
        out["notes"] = notes
    return out
