"""The engine flags of one serving group (a replica, or a worker of a disaggregated pool) for
planner/engine/launch.py (issue 22, 5.): tensor/pipeline parallel, expert parallel, data-parallel
attention, MTP speculative decoding, KV-cache dtype, the scheduler caps and the disaggregation role,
each with the engine's own flag names.

Sources (flag names as the engine versions of launch.MOE_ENGINES take them):
- vLLM: `--tensor-parallel-size 1 --data-parallel-size N --enable-expert-parallel` for data-parallel
  attention, `--tensor-parallel-size N --enable-expert-parallel` for EP alone (SemiAnalysisAI/InferenceX
  benchmarks/*vllm*.sh PARALLEL_ARGS; docs.vllm.ai/en/latest/serving/data_parallel_deployment: the
  expert layers form a DP x TP group, EP with --enable-expert-parallel); MTP
  `--speculative-config '{"method": "mtp", "num_speculative_tokens": n}'` (docs.vllm.ai features/
  speculative_decoding MTP); `--all2all-backend flashinfer_nvlink_one_sided` on NVL72 racks and `mori_low_latency` in
  AMD disaggregated pools (serving_moe.moe_a2a_backend); disaggregation `--kv-transfer-config` with the NixlConnector
  (docs.vllm.ai features/nixl_connector_usage). `--max-num-seqs` is per DP engine (each engine core
  schedules its own sequences).
- SGLang: `--tp-size N --ep-size E --enable-dp-attention --dp-size N`, with `--moe-a2a-backend deepep
  --deepep-mode normal|low_latency|auto` on NVL72 racks and `--moe-a2a-backend mori` in AMD disaggregated pools
  (serving_moe.moe_a2a_backend names the recipes); MTP `--speculative-algorithm
  EAGLE --speculative-num-steps s --speculative-eagle-topk 1 --speculative-num-draft-tokens s+1`
  (InferenceX benchmarks/dsr1_fp8_b200_mtp.sh@574bcd35; docs.sglang.io basic_usage/deepseek MTP);
  `--kv-cache-dtype fp8_e4m3` (same recipe); `--max-running-requests` is the server's total, split
  by dp_size over the DP ranks (sglang/srt/managers/scheduler.py: per_dp_max_running_requests =
  max_running_requests // dp_size); disaggregation `--disaggregation-mode prefill|decode
  --disaggregation-transfer-backend mooncake` and the router `python3 -m sglang_router.launch_router
  --pd-disaggregation --prefill URL --decode URL` (docs.sglang.io advanced_features/pd_disaggregation).
- TensorRT-LLM: `trtllm-serve MODEL --backend pytorch --tp_size --ep_size --max_batch_size
  --max_num_tokens --max_seq_len --extra_llm_api_options FILE`, the file holding `enable_attention_dp`,
  `attention_dp_config {enable_balance, batching_wait_iters 0, timeout_iters 60}`, `moe_config
  {backend: CUTLASS}` with attention DP, `speculative_config {decoding_type: MTP,
  num_nextn_predict_layers}` and `kv_cache_config {dtype, free_gpu_memory_fraction}` (InferenceX
  benchmarks/dsr1_fp4_b200_trt_mtp.sh@13dd0c2a); `max_batch_size` is per attention-DP rank there
  (MAX_BATCH_SIZE = CONC / TP). Disaggregation: `cache_transceiver_config {backend: DEFAULT}` per
  worker and `trtllm-serve disaggregated -c FILE` in front (TensorRT-LLM docs, disaggregated serving).
- ATOM: `--enable-expert-parallel`, `--method mtp` (one draft token), `--kv_cache_dtype fp8`
  (InferenceX benchmarks/dsr1_fp8_mi355x_atom_mtp.sh@6da3382b); no data-parallel attention or
  disaggregated mode in its recipes.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

import yaml

from catalog.domain.messages import Msg

from .serving_constants import RUNTIME_SPECS
from .serving_model import DP_BALANCE_TIMEOUT_STEPS

# KV-cache and online weight formats as each engine's flags name them (None: the engine's default).
KV = {"vllm": {"fp8": "fp8"}, "sglang": {"fp8": "fp8_e4m3"}, "trtllm": {"fp8": "fp8"}, "atom": {"fp8": "fp8"}}
ONLINE_QUANT = {"fp8": "fp8"}  # bf16 checkpoints quantised to fp8 at load (vLLM, SGLang --quantization fp8)
TRTLLM_CONFIG = "/config/extra-llm-api-config.yml"
VLLM_NIXL = {"kv_connector": "NixlConnector", "kv_role": "kv_both"}


@dataclass(frozen=True)
class Group:
    """One engine process group: `tp` GPUs (x `pp` stages); `ep` experts split inside it; `dpa` the
    attention data-parallel over its `tp` ranks; `drafts` MTP draft tokens (0: none); `role`
    prefill / decode for a disaggregated pool (None: both)."""

    tp: int
    pp: int = 1
    ep: int = 1
    dpa: bool = False
    drafts: int = 0
    role: str | None = None
    a2a_backend: str | None = None  # the MoE all-to-all backend flag (serving_moe.moe_a2a_backend; None: default)


def _caps(runtime: str, g: Group) -> dict:
    """The scheduler caps the serving model assumed, as the engine's flag counts them: the cap per
    attention rank (serving_layout: n_max = cap x tp with DPA) and the step's token budget."""
    rt = RUNTIME_SPECS[runtime]
    per_rank = rt.max_running_seqs
    # SGLang's flag is the server's total (divided by dp_size); vLLM's and TensorRT-LLM's are per rank
    flag = per_rank * g.tp if (runtime == "sglang" and g.dpa) else per_rank
    return {"max_running_seqs_flag": flag, "max_running_seqs_per_rank": per_rank,
            "step_token_budget": rt.step_token_budget}


def engine_argv(runtime: str, g: Group, *, model: str, port: int, max_len: int, kv_cache: str,
                quant: str | None) -> tuple[list[str], str | None, list[Msg]]:
    """(argv, the TensorRT-LLM extra options file's YAML or None, notes)."""
    rt = RUNTIME_SPECS[runtime]
    kv = KV[runtime].get(kv_cache)
    caps = _caps(runtime, g)
    notes: list[Msg] = []
    config = None
    if runtime == "vllm":
        par = (["--tensor-parallel-size", "1", "--data-parallel-size", str(g.tp)] if g.dpa
               else ["--tensor-parallel-size", str(g.tp)])
        args = ["vllm", "serve", model, "--host", "0.0.0.0", "--port", str(port), *par,
                "--pipeline-parallel-size", str(g.pp), "--max-model-len", str(max_len),
                "--max-num-seqs", str(caps["max_running_seqs_flag"]),
                "--max-num-batched-tokens", str(caps["step_token_budget"]),
                "--gpu-memory-utilization", f"{rt.gpu_memory_fraction:g}"]
        if g.ep > 1:
            args += ["--enable-expert-parallel"]
            if g.dpa and g.a2a_backend:
                args += ["--all2all-backend", g.a2a_backend]
            if g.ep != g.tp:
                notes.append(Msg("vLLM splits the experts over the whole group (EP = TP x DP = {group}); the plan "
                                 "assumed EP {ep}: the command runs EP {group}", group=g.tp, ep=g.ep))
        if g.drafts:
            args += ["--speculative-config", json.dumps({"method": "mtp", "num_speculative_tokens": g.drafts})]
        if g.role:
            args += ["--kv-transfer-config", json.dumps(VLLM_NIXL)]
        args += ["--kv-cache-dtype", kv] if kv else []
        args += ["--quantization", quant] if quant else []
    elif runtime == "sglang":
        args = ["python3", "-m", "sglang.launch_server", "--model-path", model, "--host", "0.0.0.0",
                "--port", str(port), "--tp-size", str(g.tp), "--pp-size", str(g.pp)]
        args += ["--ep-size", str(g.ep)] if g.ep > 1 else []
        args += ["--enable-dp-attention", "--dp-size", str(g.tp)] if g.dpa else []
        if g.dpa and g.ep > 1 and g.a2a_backend:
            # DeepEP: its normal kernels for prefill batches, low-latency for decode (`auto` picks per batch)
            mode = {"prefill": "normal", "decode": "low_latency"}.get(g.role or "", "auto")
            args += ["--moe-a2a-backend", g.a2a_backend] + (["--deepep-mode", mode] if g.a2a_backend == "deepep" else [])
        args += ["--context-length", str(max_len), "--max-running-requests", str(caps["max_running_seqs_flag"]),
                 "--chunked-prefill-size", str(caps["step_token_budget"])]
        # no --mem-fraction-static: the plan assumed SGLang's own default, which it computes from the GPU's
        # memory, this chunk size, TP x PP, DP attention and the draft model (serving_constants.
        # sglang_mem_fraction_static); a fixed figure here would run another memory budget than the plan's
        if g.drafts:
            args += ["--speculative-algorithm", "EAGLE", "--speculative-num-steps", str(g.drafts),
                     "--speculative-eagle-topk", "1", "--speculative-num-draft-tokens", str(g.drafts + 1)]
        if g.role:
            args += ["--disaggregation-mode", g.role, "--disaggregation-transfer-backend", "mooncake"]
        args += ["--kv-cache-dtype", kv] if kv else []
        args += ["--quantization", quant] if quant else []
    elif runtime == "atom":
        # ROCm/ATOM's OpenAI server; max_num_seqs 512 and max_num_batched_tokens 16384 are its Config
        # defaults (the values RUNTIME_SPECS["atom"] assumes). Its HTTP port is --server-port: --port is
        # the engine's internal one (ROCm/ATOM@0c686bb4 atom/entrypoints/openai_server.py main()).
        args = ["python3", "-m", "atom.entrypoints.openai_server", "--model", model, "--host", "0.0.0.0",
                "--server-port", str(port), "--tensor-parallel-size", str(g.tp),
                "--gpu-memory-utilization", f"{rt.gpu_memory_fraction:g}"]
        args += ["--enable-expert-parallel"] if g.ep > 1 else []
        args += ["--method", "mtp"] if g.drafts else []
        args += ["--kv_cache_dtype", kv] if kv else []
        if g.dpa:
            notes.append(Msg("ATOM has no data-parallel attention flag in its recipes: the command runs the "
                             "attention tensor-parallel"))
    else:  # trtllm
        args = ["trtllm-serve", model, "--host", "0.0.0.0", "--port", str(port), "--backend", "pytorch",
                "--tp_size", str(g.tp), "--pp_size", str(g.pp)]
        args += ["--ep_size", str(g.ep)] if g.ep > 1 else []
        args += ["--max_seq_len", str(max_len), "--max_batch_size", str(caps["max_running_seqs_flag"]),
                 "--max_num_tokens", str(caps["step_token_budget"]),
                 "--kv_cache_free_gpu_memory_fraction", f"{rt.gpu_memory_fraction:g}"]
        extra = _trtllm_options(g, kv=kv, fraction=rt.gpu_memory_fraction)
        if extra:
            config = yaml.safe_dump(extra, sort_keys=False)
            args += ["--extra_llm_api_options", TRTLLM_CONFIG]
    return args, config, notes


def _trtllm_options(g: Group, *, kv: str | None, fraction: float) -> dict:
    out: dict = {}
    if g.dpa:
        out["enable_attention_dp"] = True
        out["attention_dp_config"] = {"enable_balance": True, "batching_wait_iters": 0,
                                      "timeout_iters": int(DP_BALANCE_TIMEOUT_STEPS)}
        out["moe_config"] = {"backend": "CUTLASS"}
    if g.drafts:
        out["speculative_config"] = {"decoding_type": "MTP", "num_nextn_predict_layers": g.drafts}
    if kv:
        out["kv_cache_config"] = {"dtype": kv, "free_gpu_memory_fraction": fraction}
    if g.role:
        out["cache_transceiver_config"] = {"backend": "DEFAULT"}
        if g.role == "prefill":
            out["disable_overlap_scheduler"] = True
    return out


def trtllm_disagg_config(*, prefill_workers: int, decode_workers: int, port: int) -> str:
    """trtllm-serve disaggregated's file: the context (prefill) and generation (decode) servers by URL
    (TensorRT-LLM examples/disaggregated/disagg_config.yaml); the host names are placeholders."""
    return yaml.safe_dump({
        "hostname": "0.0.0.0", "port": 8000, "backend": "pytorch",
        "context_servers": {"num_instances": prefill_workers,
                            "urls": [f"prefill-{i}:{port}" for i in range(prefill_workers)]},
        "generation_servers": {"num_instances": decode_workers,
                               "urls": [f"decode-{i}:{port}" for i in range(decode_workers)]}}, sort_keys=False)


def router(runtime: str, *, prefill_port: int, decode_port: int) -> tuple[list[str] | None, Msg]:
    """What routes requests between the prefill and decode pools, per engine."""
    if runtime == "sglang":
        return (["python3", "-m", "sglang_router.launch_router", "--pd-disaggregation",
                 "--prefill", f"http://prefill:{prefill_port}", "--decode", f"http://decode:{decode_port}",
                 "--host", "0.0.0.0", "--port", "8000"],
                Msg("SGLang's router sends each request to a prefill and a decode worker, which hand the KV "
                    "cache over with Mooncake (list every worker's URL; NVIDIA Dynamo also routes SGLang pools)"))
    if runtime == "trtllm":
        return (["trtllm-serve", "disaggregated", "-c", "/config/disagg.yml"],
                Msg("trtllm-serve disaggregated routes between the pools: /config/disagg.yml lists the context "
                    "(prefill) servers and the generation (decode) servers by URL (NVIDIA Dynamo also routes them)"))
    if runtime == "vllm":
        return (None, Msg("vLLM has no router of its own: run NVIDIA Dynamo (or llm-d) in front of the pools; the "
                          "NIXL connector moves the KV cache from prefill to decode"))
    return (None, Msg("{engine} has no disaggregated mode: the InferenceX disaggregated AMD rows run SGLang with "
                      "MoRI; plan with runtime sglang for a disaggregated layout", engine=RUNTIME_SPECS[runtime].label))
