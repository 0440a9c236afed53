"""Everything around the GPUs: servers, power, CPU/RAM, storage, network, Kubernetes,
software stack, monitoring and pre-flight checks (REQUIREMENTS R2.5-R2.11, R5).

Rules of thumb here are stated as such in their explanations and in docs/SIZING.md.
"""

from __future__ import annotations

import math

from catalog.domain.messages import Msg

from .hardware import AcceleratorSpec, generation_of
from .shapes import ServerShape, server_shape, sold_shapes

GB = 1e9
GIB = 1024**3

HOST_BASE_W = 1500.0  # 2 CPUs, RAM, NICs, drives of a GPU server
COOLING_PSU_FACTOR = 1.2  # fans and power-supply losses on top of component power
RACK_BUDGET_KW = 15.0  # common air-cooled colocation rack budget; beyond ~40 kW needs liquid cooling

CPU_CORES_PER_GPU = {"llm_training": 8, "vision_training": 12, "inference": 4}
CHECKPOINT_STALL_SHARE = 0.05  # a synchronous checkpoint may cost at most 5 % of its interval
CPU_EMBED_GFLOPS_PER_CORE = 50.0  # effective fp32 throughput of one modern x86 core (assumption)

# Minimum driver for a CUDA toolkit (CUDA Toolkit release notes, "CUDA Toolkit and Corresponding
# Driver Versions", Linux x86_64 GA drivers).
CUDA_MIN_DRIVER = {
    "CUDA 9.0": "384.81", "CUDA 10.0": "410.48", "CUDA 11.0": "450.51.05", "CUDA 11.1": "455.23",
    "CUDA 11.8": "520.61.05", "CUDA 12.0": "525.60.13", "CUDA 12.8": "570.26", "CUDA 12.9": "575.51.03",
}
# Minimum PyTorch release with prebuilt wheels for the generation (PyTorch release notes).
MIN_PYTORCH = {
    "volta": Msg("any current release"), "turing": Msg("any current release"), "ampere": Msg("1.7 (CUDA 11.0 wheels)"),
    "ada": Msg("2.0 (CUDA 11.8 wheels)"), "hopper": Msg("2.0 (CUDA 11.8 wheels); FP8 needs Transformer Engine"),
    "blackwell": Msg("2.7 (CUDA 12.8 wheels)"),
}


def _q(value, unit: str, explain: str) -> dict:
    if isinstance(value, float) and not math.isfinite(value):
        value = None
    return {"value": value, "unit": unit, "explain": explain}


def servers_and_power(*, acc: AcceleratorSpec, count: int, gpus_per_server: int, tensor_parallel: int = 1,
                      as_instances: bool = False) -> dict:
    """Servers in a shape vendors sell (planner.engine.shapes): an SXM/OAM need is rounded up to a
    whole board (the spare GPUs are bought and draw power), PCIe servers hold the cards needed.
    `as_instances`: rented cloud instances of `gpus_per_server` GPUs each (the provider's shape)."""
    if as_instances:
        servers, per_server = math.ceil(count / max(1, gpus_per_server)), gpus_per_server
        out = {
            "servers": _q(servers, "servers", Msg("{count} {count:plural:GPU|GPUs} on cloud instances of {gpus} each",
                                                  count=count, gpus=per_server)),
            "gpus_per_server": _q(per_server, "GPUs", Msg("GPUs in each cloud instance")),
        }
    else:
        shape = server_shape(form_factor=acc.form_factor, count=count, max_per_server=gpus_per_server,
                             tensor_parallel=tensor_parallel)
        servers, per_server = shape.servers, shape.gpus_per_server
        out = {
            "servers": _q(servers, "servers", _servers_explain(shape, acc)),
            "gpus_per_server": _q(per_server, "GPUs", _per_server_explain(shape)),
        }
    if acc.tdp_w:
        server_w = (per_server * acc.tdp_w + HOST_BASE_W) * COOLING_PSU_FACTOR
        total_kw = server_w * servers / 1000
        per_rack = int(RACK_BUDGET_KW * 1000 // server_w)
        racks = math.ceil(servers / per_rack) if per_rack else servers
        rack_note = (Msg("servers per {rack_budget_kw:g} kW air-cooled rack: {per_rack}", rack_budget_kw=RACK_BUDGET_KW, per_rack=per_rack) if per_rack
                     else Msg("one server draws {server_w:.1f} kW: needs a high-density (liquid-cooled) rack", server_w=server_w / 1000))
        out["server_power_kw"] = _q(round(server_w / 1000, 2), "kW",
                                    Msg("({per_server} x {tdp_w:g} W GPU + {host_base_w:g} W host) x {cooling_psu_factor} fans/PSU losses", per_server=per_server, tdp_w=acc.tdp_w, host_base_w=HOST_BASE_W, cooling_psu_factor=COOLING_PSU_FACTOR))
        out["total_power_kw"] = _q(round(total_kw, 2), "kW", Msg("servers at full load: {servers}", servers=servers))
        out["racks"] = _q(racks, "racks", rack_note)
    else:
        out["server_power_kw"] = _q(None, "kW", Msg("unknown: the catalog has no board power for this accelerator"))
        out["total_power_kw"] = _q(None, "kW", "unknown")
        out["racks"] = _q(None, "racks", Msg("unknown (no board power)"))
    return out


def _servers_explain(shape: ServerShape, acc: AcceleratorSpec) -> Msg:
    if shape.sold_as == "board":
        return Msg("{count} {count:plural:GPU|GPUs} needed, {servers} x {gpus}-GPU {board} board ({form_factor}): {spare} spare",
                   count=shape.needed, servers=shape.servers, gpus=shape.gpus_per_server, board=shape.board_name,
                   form_factor=acc.form_factor, spare=shape.spare)
    if shape.sold_as == "chassis":
        return Msg("{count} {count:plural:GPU|GPUs} needed, {servers} x PCIe server with {gpus} of {slots} GPU slots filled: {spare} spare",
                   count=shape.needed, servers=shape.servers, gpus=shape.gpus_per_server, slots=shape.slots,
                   spare=shape.spare)
    return Msg("GPUs in total: {count}, at most {gpus_per_server} per server ({form_factor})", count=shape.needed,
               gpus_per_server=shape.gpus_per_server, form_factor=acc.form_factor)


def _per_server_explain(shape: ServerShape) -> Msg:
    if shape.sold_as == "board":
        return Msg("GPUs in each server: SXM/OAM GPUs are sold on whole boards of {sizes}",
                   sizes=" / ".join(str(s) for s in _sizes(shape)))
    if shape.sold_as == "chassis":
        return Msg("GPUs in each server: PCIe cards are sold one by one for chassis of {sizes} slots",
                   sizes=" / ".join(str(s) for s in _sizes(shape)))
    return Msg("GPUs in each server")


def _sizes(shape: ServerShape) -> tuple[int, ...]:
    return sold_shapes().get(shape.form_kind, ("", ()))[1]


def nvlink_needed(*, acc: AcceleratorSpec, tp: int, kind: str, count: int, zero: int = 0) -> dict:
    has = "nvlink" in acc.interconnect.lower() or "infinity fabric" in acc.interconnect.lower() or "ici" in acc.interconnect.lower()
    if tp > 1:
        need, why = True, Msg("tensor parallelism over {tp} GPUs all-reduces activations in every layer", tp=tp)
    elif kind in ("pretraining", "finetuning") and count > 1 and zero >= 3:
        need, why = True, Msg("ZeRO-3/FSDP gathers weights every step: a fast GPU-to-GPU link keeps it hidden")
    else:
        need, why = False, Msg("no per-layer GPU-to-GPU traffic in this layout (PCIe is enough)")
    if need and not has:
        why += Msg("; {model} has no NVLink-class link ({v}): expect lower efficiency", model=acc.model, v=acc.interconnect or Msg("PCIe only"))
    return {"value": need, "unit": "bool", "explain": why}


def host_cpu_ram(*, kind: str, per_server: int, acc: AcceleratorSpec, vision: bool,
                 extra_ram_bytes: float = 0.0, extra_ram_why: str = Msg("vector index held in RAM")) -> dict:
    """CPU and RAM of one server holding `per_server` GPUs: the GPUs servers_and_power put in it (a
    bought board's spare GPUs included, or the GPUs of the rented instance), so the host described
    is the one of the decided option."""
    if kind in ("pretraining", "finetuning", "classic_training"):
        key = "vision_training" if vision else "llm_training"
        cores = CPU_CORES_PER_GPU[key] * per_server + 4
        why = (Msg("{cpu_cores_per_gpu} cores per GPU for data loading", cpu_cores_per_gpu=CPU_CORES_PER_GPU[key])
               + (Msg(" and JPEG decode/augmentation") if vision else Msg(" and tokenisation")) + Msg(" + 4 for the OS/agents"))
        ram = 2.0 * per_server * acc.memory_gib * GIB
        ram_why = Msg("2x the GPU memory of the server: pinned staging buffers, data loaders, checkpoint assembly")
    else:
        cores = CPU_CORES_PER_GPU["inference"] * per_server + 4
        why = Msg("4 cores per GPU for the serving engine (tokenisation, scheduling, HTTP) + 4 for the OS")
        ram = 1.5 * per_server * acc.memory_gib * GIB
        ram_why = Msg("1.5x the GPU memory of the server: model loading and swap space for preempted sequences")
    ram += extra_ram_bytes
    if extra_ram_bytes:
        ram_why += Msg(" + {gib:.1f} GiB {why}", gib=extra_ram_bytes / GIB, why=extra_ram_why)
    return {"cpu_cores_per_server": _q(cores, "cores", why),
            "host_ram_per_server_bytes": _q(round(ram), "bytes", ram_why + Msg(" (RAM is not VRAM)"))}


def software_stack(acc: AcceleratorSpec) -> dict:
    gen = generation_of(acc.architecture)
    if acc.vendor.lower() == "nvidia":
        cuda = acc.min_cuda or "unknown"
        driver = acc.min_driver or CUDA_MIN_DRIVER.get(acc.min_cuda, "unknown")
        return {
            "layers": [Msg("Linux (kernel supported by the driver)"), Msg("NVIDIA driver >= {driver}", driver=driver),
                       Msg("CUDA >= {replace}", replace=cuda.replace('CUDA ', '')), Msg("cuDNN / NCCL matching the CUDA version"),
                       Msg("NVIDIA Container Toolkit"), Msg("PyTorch >= {get}", get=MIN_PYTORCH.get(gen, Msg("check the vendor matrix"))),
                       Msg("model / serving engine"), Msg("application")],
            "min_driver": driver, "min_cuda": cuda, "min_framework": Msg("PyTorch {get}", get=MIN_PYTORCH.get(gen, 'unknown')),
            "explain": Msg("minimum CUDA from the catalog (first toolkit that targets this GPU); driver from the CUDA release notes"),
        }
    if acc.vendor.lower() == "amd":
        return {"layers": ["Linux", Msg("amdgpu kernel driver"), Msg("ROCm >= {v}", v=acc.min_cuda.replace('ROCm ', '') or 'unknown'),
                           "RCCL", Msg("PyTorch ROCm build"), Msg("model / serving engine"), Msg("application")],
                "min_driver": Msg("amdgpu matching ROCm"), "min_cuda": acc.min_cuda or Msg("unknown"),
                "min_framework": Msg("PyTorch ROCm build for that ROCm release"),
                "explain": Msg("check AMD's ROCm compatibility matrix; unknown fields are left unknown")}
    return {"layers": [Msg("vendor runtime and framework integration (Intel Gaudi SynapseAI / Google Cloud TPU + JAX/PyTorch-XLA)")],
            "min_driver": Msg("unknown"), "min_cuda": Msg("not applicable"), "min_framework": Msg("vendor-specific"),
            "explain": Msg("not a CUDA device: the stack comes from the vendor")}


def network(*, kind: str, servers: int, required_inter_node_gb_s: float | None, rps: float = 0.0) -> dict:
    """Per R2.8: small LLM/RAG 10/25 GbE; fine-tuning 25/100 GbE; distributed training 100 GbE+
    or InfiniBand/RoCE with GPUDirect; mass inference 25/100 GbE+."""
    if servers <= 1:
        inter = Msg("none (single server: GPUs talk over NVLink/PCIe)")
    elif kind in ("pretraining", "finetuning", "classic_training"):
        need = required_inter_node_gb_s or 0.0
        gbit = need * 8
        if gbit > 100:
            inter = Msg("InfiniBand NDR / RoCE 400 Gb/s per GPU with GPUDirect RDMA (needs ~{gbit:.0f} Gb/s per GPU)", gbit=gbit)
        elif gbit > 25:
            inter = Msg("InfiniBand HDR / RoCE 100-200 Gb/s per server or better (needs ~{gbit:.0f} Gb/s per GPU)", gbit=gbit)
        else:
            inter = Msg("100 GbE RoCE per server (needs ~{gbit:.1f} Gb/s per GPU)", gbit=gbit)
    else:
        inter = Msg("25/100 GbE between serving nodes (pipeline stages or load balancer)")
    if kind in ("pretraining",) or (kind == "finetuning" and servers > 1):
        storage = Msg("separate 100 GbE+ storage network (checkpoints, datasets)")
    elif kind in ("finetuning", "classic_training"):
        storage = Msg("25/100 GbE to shared storage")
    else:
        storage = Msg("10/25 GbE to storage (model loading, logs)")
    user = Msg("10/25 GbE") if rps < 100 else Msg("25/100 GbE")
    out = {
        "intra_node": Msg("NVLink/NVSwitch where tensor parallel; PCIe Gen4/Gen5 x16 per GPU otherwise"),
        "inter_node": inter,
        "storage": storage,
        "user_traffic": Msg("{user} front-end (HTTP/gRPC; token streams are small)", user=user),
    }
    if kind in ("pretraining", "finetuning", "classic_training"):
        out["inter_node_required_gb_s_per_gpu"] = required_inter_node_gb_s
        out["explain"] = Msg("network tiers by workload size; the inter-node figure keeps gradient all-reduce "
                             "hidden behind compute")
    else:
        # Serving has no gradient traffic: what crosses nodes is requests, tokens and, between
        # pipeline stages, one activation per token.
        out["explain"] = Msg("network tiers by workload size; serving moves requests and tokens, "
                             "and between pipeline stages one activation per token")
    return out


def kubernetes(*, servers: int, replicas: int, services: int) -> dict:
    if servers > 1:
        return {"value": True, "explain": Msg("servers: {servers}; a scheduler with the GPU device plugin places jobs and restarts failures", servers=servers)}
    if replicas > 1 or services > 2:
        return {"value": True, "explain": Msg("several services/replicas with health checks and rolling updates: Kubernetes pays off")}
    return {"value": False, "explain": Msg("one GPU server running one workload: systemd or Docker Compose is simpler")}


def monitoring(kind: str) -> dict:
    metrics = [
        Msg("GPU utilisation, SM occupancy, memory used, temperature, power (DCGM exporter)"),
        Msg("GPU errors: XID, ECC, NVLink/PCIe replay counters"),
        Msg("host: CPU load, RAM, disk I/O and free space, network throughput and latency"),
    ]
    if kind in ("pretraining", "finetuning", "classic_training"):
        metrics += [Msg("step time split: data loading vs compute vs communication"), Msg("tokens (samples)/s, loss, gradient norm"),
                    Msg("checkpoint duration and size")]
    else:
        metrics += [Msg("request latency p50/p95/p99, TTFT, TPOT"), Msg("queue length, running/waiting sequences"),
                    Msg("KV-cache usage and preemptions"), Msg("error rate and tokens/s")]
    training = kind in ("pretraining", "finetuning", "classic_training")
    checklist = [
        Msg("driver, CUDA, NCCL, framework and container image versions pinned and recorded"),
        Msg("data loading measured: GPU utilisation stays high with the real data pipeline (no idle waiting on input)"),
        Msg("storage laid out for checkpoints, logs and caches with free space for the retention period"),
        Msg("monitoring and alerting on before the run starts"),
        Msg("recovery tested: resume from a checkpoint, replace a failed node"),
        Msg("secrets outside images and repositories; least-privilege access to data, checkpoints and logs"),
    ] if training else [
        # a service has no checkpoints or input pipeline: it goes live after a load test at its peak
        Msg("driver, CUDA, NCCL, framework and container image versions pinned and recorded"),
        Msg("load test at the stated peak with real prompt lengths: p95 TTFT and TPOT within the targets"),
        Msg("storage laid out for model weights, images and logs with free space for the retention period"),
        Msg("monitoring and alerting on before the service goes live"),
        Msg("recovery tested: a replica restarts and reloads the model, a failed replica is drained from the balancer"),
        Msg("secrets outside images and repositories; least-privilege access to models, prompts and logs"),
    ]
    if kind in ("pretraining", "finetuning"):
        checklist.insert(2, Msg("a short burn-in run at full scale (NCCL all-reduce test, a few hundred steps)"))
    return {"metrics": metrics, "preflight_checklist": checklist}
