"""Issue 22, 5. Ready to run: the decided serving layout's engine command and Kubernetes manifest carry
the settings the serving model assumed (layout, context, the engine's scheduler defaults, formats)."""

import json
import shlex

import pytest
import yaml
from django.utils import translation

from planner.engine.launch import ENGINES, MOE_ENGINES, serving_launch
from planner.engine.serving_constants import RUNTIME_SPECS
from planner.engine.serving_model import DP_BALANCE_TIMEOUT_STEPS
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


# --- issue 22: MoE mechanisms (EP, data-parallel attention, MTP), disaggregated pools, checkpoint formats ---


def moe_spec(runtime, *, ep=8, dpa=True, mtp=True, count=8, kv="fp8", disagg=None, model="deepseek-r1-0528",
             weights=None):
    hw = {"count": count}
    if disagg is None:
        hw.update({"expert_parallel": ep, "data_parallel_attention": dpa})
    serving = {"runtime": runtime, "context_length": 8192, "input_tokens": 1024, "output_tokens": 1024,
               "speculative": "mtp" if mtp else "none"}
    if disagg is not None:
        serving["disaggregation"] = disagg
    precision = {"kv_cache": kv, **({"weights": weights} if weights else {})}
    return parse_workload_spec({"kind": "inference", "model": {"preset": model}, "hardware": hw,
                                "precision": precision, "serving": serving})


def dsr1(runtime, **kw):
    return serving_launch(spec=moe_spec(runtime, **kw), accelerator_id="nvidia-b200-sxm-180gb",
                          layout={"tensor_parallel": 8, "replicas": 1}, gpus_per_server=8)


def test_dsr1_ep8_dpa_mtp_on_vllm_is_dp8_attention_with_expert_parallel_and_mtp():
    out = dsr1("vllm")
    args = out["argv"]
    tp, dp = int(flag(args, "--tensor-parallel-size")), int(flag(args, "--data-parallel-size"))
    assert (tp, dp) == (1, 8) and tp * dp == out["gpus_per_replica"] == 8  # TP x DP = the group's GPUs
    assert "--enable-expert-parallel" in args
    # vLLM's InferenceX MTP recipes run 2 drafts (serving_moe.MTP_DRAFT_TOKENS_BY_RUNTIME)
    assert json.loads(flag(args, "--speculative-config")) == {"method": "mtp", "num_speculative_tokens": 2}
    assert flag(args, "--kv-cache-dtype") == "fp8"
    assert "--quantization" not in args  # DeepSeek-R1-0528 ships fp8 (block scales): the engine reads it
    assert flag(args, "--max-num-seqs") == str(RUNTIME_SPECS["vllm"].max_running_seqs)  # per DP engine
    assert out["engine_version"] == MOE_ENGINES["vllm"]["version"] and out["image"] == MOE_ENGINES["vllm"]["image"]
    s = out["settings"]
    assert (s["expert_parallel"], s["data_parallel_attention"], s["speculative"]) == (8, True, "mtp")
    assert out["kubernetes"]["deployment"]["spec"]["template"]["spec"]["containers"][0]["args"] == args[1:]


def test_dsr1_ep8_dpa_mtp_on_sglang_takes_ep_dp_attention_and_eagle_mtp():
    out = dsr1("sglang")
    args = out["argv"]
    assert (flag(args, "--tp-size"), flag(args, "--ep-size"), flag(args, "--dp-size")) == ("8", "8", "8")
    assert "--enable-dp-attention" in args
    assert flag(args, "--speculative-algorithm") == "EAGLE"
    # aggregated SGLang keeps its 3 drafts with data-parallel attention (its recipes do)
    assert flag(args, "--speculative-num-steps") == "3"
    assert flag(args, "--speculative-num-draft-tokens") == "4"
    assert flag(args, "--speculative-eagle-topk") == "1"
    assert flag(args, "--kv-cache-dtype") == "fp8_e4m3"
    # SGLang splits --max-running-requests over the DP ranks: the plan's per-rank cap x 8
    assert flag(args, "--max-running-requests") == str(RUNTIME_SPECS["sglang"].max_running_seqs * 8)
    assert out["engine_version"] == MOE_ENGINES["sglang"]["version"]
    # the plan's memory budget is SGLang's own computed default (from the chunk size passed here), not a
    # fixed fraction: the command must not override it
    assert "--mem-fraction-static" not in args
    assert flag(args, "--chunked-prefill-size") == str(RUNTIME_SPECS["sglang"].step_token_budget)


def test_dsr1_ep8_dpa_mtp_on_trtllm_writes_the_extra_options_file():
    out = dsr1("trtllm")
    args = out["argv"]
    assert (flag(args, "--tp_size"), flag(args, "--ep_size")) == ("8", "8")
    path = flag(args, "--extra_llm_api_options")
    assert out["config_file"]["path"] == path
    cfg = yaml.safe_load(out["config_file"]["content"])
    assert cfg["enable_attention_dp"] is True
    assert cfg["attention_dp_config"] == {"enable_balance": True, "batching_wait_iters": 0,
                                          "timeout_iters": int(DP_BALANCE_TIMEOUT_STEPS)}
    # TensorRT-LLM with data-parallel attention launches one draft (its recipes: MTP=1 if DP_ATTENTION)
    assert cfg["speculative_config"] == {"decoding_type": "MTP", "num_nextn_predict_layers": 1}
    assert out["settings"]["mtp_draft_tokens"] == 1
    assert cfg["kv_cache_config"]["dtype"] == "fp8"
    assert cfg["moe_config"]["backend"] == "CUTLASS"
    assert flag(args, "--max_batch_size") == str(RUNTIME_SPECS["trtllm"].max_running_seqs)  # per attention-DP rank
    kube = out["kubernetes"]
    assert yaml.safe_load(kube["config_map"]["data"][path.rsplit("/", 1)[1]]) == cfg
    mounts = kube["deployment"]["spec"]["template"]["spec"]["containers"][0]["volumeMounts"]
    assert {"name": "config", "mountPath": path.rsplit("/", 1)[0]} in mounts
    assert out["engine_version"] == MOE_ENGINES["trtllm"]["version"]


def test_ep_without_dpa_keeps_tensor_parallel_attention():
    args = dsr1("vllm", dpa=False, mtp=False)["argv"]
    assert flag(args, "--tensor-parallel-size") == "8" and "--data-parallel-size" not in args
    assert "--enable-expert-parallel" in args and "--speculative-config" not in args
    sg = dsr1("sglang", dpa=False, mtp=False)["argv"]
    assert flag(sg, "--ep-size") == "8" and "--enable-dp-attention" not in sg
    trt = dsr1("trtllm", dpa=False, mtp=False)
    assert "enable_attention_dp" not in yaml.safe_load(trt["config_file"]["content"])  # kv fp8 only
    tp_mtp = yaml.safe_load(dsr1("trtllm", dpa=False)["config_file"]["content"])
    assert tp_mtp["speculative_config"]["num_nextn_predict_layers"] == 3  # tensor-parallel attention: 3 drafts


def test_disaggregated_pools_launch_the_decode_pools_draft_count():
    """SGLang decode pools with data-parallel attention run one draft (the MoRI DEP8 recipes); the prefill pool
    launches the same, as the recipes set it on both; a tensor-parallel decode pool keeps 3."""
    def pools(decode_dpa):
        disagg = {"prefill": {"workers": 1, "tensor_parallel": 4, "expert_parallel": 4, "data_parallel_attention": True},
                  "decode": {"workers": 1, "tensor_parallel": 8, "expert_parallel": 8,
                             "data_parallel_attention": decode_dpa}}
        out = serving_launch(spec=moe_spec("sglang", count=12, disagg=disagg), accelerator_id="nvidia-b200-sxm-180gb",
                             layout={"tensor_parallel": 8}, gpus_per_server=8)
        return [flag(p["argv"], "--speculative-num-steps") for p in out["pools"]]
    assert pools(True) == ["1", "1"]
    assert pools(False) == ["3", "3"]


def test_a_disaggregated_spec_gets_one_command_per_pool_and_a_router():
    disagg = {"prefill": {"workers": 1, "tensor_parallel": 4, "expert_parallel": 4, "data_parallel_attention": True},
              "decode": {"workers": 1, "tensor_parallel": 8, "expert_parallel": 8, "data_parallel_attention": True}}
    out = serving_launch(spec=moe_spec("sglang", count=12, disagg=disagg), accelerator_id="nvidia-b200-sxm-180gb",
                         layout={"tensor_parallel": 8}, gpus_per_server=8)
    pre, dec = out["pools"]
    assert (pre["role"], dec["role"]) == ("prefill", "decode")
    assert flag(pre["argv"], "--disaggregation-mode") == "prefill" and flag(dec["argv"], "--disaggregation-mode") == "decode"
    assert (flag(pre["argv"], "--tp-size"), flag(pre["argv"], "--ep-size")) == ("4", "4")
    assert (flag(dec["argv"], "--tp-size"), flag(dec["argv"], "--dp-size")) == ("8", "8")
    assert pre["gpus_per_worker"] * pre["workers"] + dec["gpus_per_worker"] * dec["workers"] == 12
    assert "--pd-disaggregation" in out["router"]["argv"]
    assert out["command"].count("sglang.launch_server") == 2 and "sglang_router" in out["command"]
    assert out["kubernetes"] is None and "pool" in str(out["kubernetes_note"])
    limits = pre["kubernetes"]["deployment"]["spec"]["template"]["spec"]["containers"][0]["resources"]["limits"]
    assert limits == {"nvidia.com/gpu": 4}
    assert pre["kubernetes"]["deployment"]["metadata"]["name"].endswith("-prefill")
    trt = serving_launch(spec=moe_spec("trtllm", count=12, disagg=disagg), accelerator_id="nvidia-b200-sxm-180gb",
                         layout={"tensor_parallel": 8}, gpus_per_server=8)
    assert "cache_transceiver_config" in yaml.safe_load(trt["pools"][0]["config_file"]["content"])
    routes = yaml.safe_load(trt["router"]["config_file"]["content"])
    assert routes["context_servers"]["num_instances"] == 1 and routes["generation_servers"]["num_instances"] == 1
    vl = serving_launch(spec=moe_spec("vllm", count=12, disagg=disagg), accelerator_id="nvidia-b200-sxm-180gb",
                        layout={"tensor_parallel": 8}, gpus_per_server=8)
    assert all("--kv-transfer-config" in p["argv"] for p in vl["pools"]) and vl["router"]["argv"] is None
    assert "Dynamo" in str(vl["router"]["note"])


def test_gpt_oss_runs_its_own_mxfp4_checkpoint_without_a_quantisation_flag():
    s = parse_workload_spec({"kind": "inference", "model": {"preset": "gpt-oss-120b"},
                             "serving": {"runtime": "vllm", "context_length": 8192}})
    for runtime in ("vllm", "sglang"):
        s2 = parse_workload_spec({"kind": "inference", "model": {"preset": "gpt-oss-120b"},
                                  "serving": {"runtime": runtime, "context_length": 8192}})
        args = serving_launch(spec=s2, accelerator_id="nvidia-h100-sxm5-80gb", layout={"tensor_parallel": 1},
                              gpus_per_server=8)["argv"]
        assert "--quantization" not in args and args.count("openai/gpt-oss-120b") == 1
    out = serving_launch(spec=s, accelerator_id="nvidia-h100-sxm5-80gb", layout={"tensor_parallel": 1},
                         gpus_per_server=8)
    assert out["engine_version"] == ENGINES["vllm"]["version"] and "notes" not in out  # no MoE mechanism: unchanged


def test_fp4_weights_on_an_fp8_checkpoint_say_a_fp4_checkpoint_is_needed():
    out = dsr1("vllm", weights="fp4", mtp=False, dpa=False, ep=1)
    assert "--quantization" not in out["argv"] and "fp4 checkpoint" in str(out["notes"][0])


def test_a_dense_model_is_unchanged_by_the_moe_settings():
    out = serving_launch(spec=spec(weights="fp8", kv="fp8"), accelerator_id="nvidia-h100-sxm5-80gb",
                         layout={"tensor_parallel": 4, "pipeline_parallel": 2, "replicas": 3}, gpus_per_server=8)
    assert out["command"] == (
        "vllm serve meta-llama/Llama-3.1-70B --host 0.0.0.0 --port 8000 --tensor-parallel-size 4 "
        "--pipeline-parallel-size 2 --max-model-len 8192 --max-num-seqs 1024 --max-num-batched-tokens 8192 "
        "--gpu-memory-utilization 0.9 --kv-cache-dtype fp8 --quantization fp8")
    assert out["engine_version"] == ENGINES["vllm"]["version"] and "config_map" not in out["kubernetes"]
    assert (out["settings"]["expert_parallel"], out["settings"]["speculative"]) == (1, "none")
    trt = serving_launch(spec=spec(runtime="trtllm"), accelerator_id="nvidia-h100-sxm5-80gb",
                         layout={"tensor_parallel": 2}, gpus_per_server=8)
    assert "--extra_llm_api_options" not in trt["argv"] and "config_file" not in trt


def test_the_page_shows_each_pool_its_options_file_and_russian_texts():
    from django.template.loader import render_to_string

    from catalog.domain.messages import with_structured
    from planner.i18n import localise
    from planner.launch_view import launch_view

    disagg = {"prefill": {"workers": 1, "tensor_parallel": 4, "expert_parallel": 4, "data_parallel_attention": True},
              "decode": {"workers": 1, "tensor_parallel": 8, "expert_parallel": 8, "data_parallel_attention": True}}
    launch = serving_launch(spec=moe_spec("trtllm", count=12, disagg=disagg), accelerator_id="nvidia-b200-sxm-180gb",
                            layout={"tensor_parallel": 8}, gpus_per_server=8)
    stored = json.loads(json.dumps(with_structured({"decision": {"launch": launch}})))
    view = launch_view(localise(stored, "ru")["decision"])
    docs = list(yaml.safe_load_all(view["pools"][0]["manifest_yaml"]))
    assert [d["kind"] for d in docs] == ["ConfigMap", "Deployment", "Service"]
    with translation.override("ru"):
        html = render_to_string("planner/partials/launch.html", {"view": {"launch": view}})
    assert "Пул prefill" in html and "Пул decode" in html and "маршрутизатор" in html
    assert "trtllm-serve disaggregated" in html and "timeout_iters: 60" in html
    assert "one Deployment per pool" not in html and "routes between the pools" not in html


def test_atom_takes_its_moe_flags_and_its_http_port():
    out = serving_launch(spec=moe_spec("atom", dpa=False), accelerator_id="amd-mi355x-288gb",
                         layout={"tensor_parallel": 8}, gpus_per_server=8)
    args = out["argv"]
    assert flag(args, "--server-port") == str(MOE_ENGINES["atom"]["port"]) and "--port" not in args
    assert "--enable-expert-parallel" in args and flag(args, "--method") == "mtp"
    assert flag(args, "--kv_cache_dtype") == "fp8" and out["engine_version"] == MOE_ENGINES["atom"]["version"]


def test_sglang_launches_the_moe_a2a_backend_the_model_assumed():
    """SGLang with DPA + EP: DeepEP on an NVL72 rack (normal kernels in prefill pools, low-latency in decode pools),
    MoRI in AMD disaggregated pools, and no backend (SGLang's gather, which the model then charges) on an HGX board."""
    from pathlib import Path

    from planner.engine.catalog_csv import load_accelerators_csv
    by_id = {a.id: a for a in load_accelerators_csv(Path(__file__).resolve().parents[2] / "catalog" / "data" /
                                                    "accelerators.csv")}

    def argv(acc_id, **kw):
        return serving_launch(spec=moe_spec("sglang", **kw), accelerator_id=acc_id, accelerator=by_id[acc_id],
                              layout={"tensor_parallel": 8}, gpus_per_server=8)
    rack = argv("nvidia-gb200-186gb")["argv"]
    assert (flag(rack, "--moe-a2a-backend"), flag(rack, "--deepep-mode")) == ("deepep", "auto")
    assert "--moe-a2a-backend" not in argv("nvidia-b200-sxm-180gb")["argv"]
    assert "--moe-a2a-backend" not in argv("nvidia-gb200-186gb", dpa=False)["argv"]  # EP without DPA: no exchange
    disagg = {"prefill": {"workers": 1, "tensor_parallel": 8, "expert_parallel": 8, "data_parallel_attention": True},
              "decode": {"workers": 1, "tensor_parallel": 8, "expert_parallel": 8, "data_parallel_attention": True}}
    pools = argv("nvidia-gb200-186gb", count=16, disagg=disagg)["pools"]
    assert [flag(p["argv"], "--deepep-mode") for p in pools] == ["normal", "low_latency"]
    amd = argv("amd-mi355x-288gb", count=16, disagg=disagg)["pools"]
    assert [flag(p["argv"], "--moe-a2a-backend") for p in amd] == ["mori", "mori"]
    assert "--deepep-mode" not in amd[0]["argv"]
    assert "--moe-a2a-backend" not in argv("amd-mi355x-288gb")["argv"]  # aggregated on AMD: SGLang's gather


def test_vllm_launches_its_all2all_backend_on_nvl72_and_its_gather_default_elsewhere():
    from pathlib import Path

    from planner.engine.catalog_csv import load_accelerators_csv
    by_id = {a.id: a for a in load_accelerators_csv(Path(__file__).resolve().parents[2] / "catalog" / "data" /
                                                    "accelerators.csv")}
    def argv(acc_id, **kw):
        return serving_launch(spec=moe_spec("vllm", **kw), accelerator_id=acc_id, accelerator=by_id[acc_id],
                              layout={"tensor_parallel": 8}, gpus_per_server=8)["argv"]
    assert flag(argv("nvidia-gb200-186gb"), "--all2all-backend") == "flashinfer_nvlink_one_sided"
    assert "--all2all-backend" not in argv("nvidia-b200-sxm-180gb")
    assert "--all2all-backend" not in argv("nvidia-gb200-186gb", dpa=False)
