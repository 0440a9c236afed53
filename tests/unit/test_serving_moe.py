"""Serving mechanisms of issue 22: expert parallel, data-parallel attention, MTP, disaggregated
prefill/decode, the ATOM runtime (planner/engine/serving_moe.py, serving_disagg.py)."""

import dataclasses
from pathlib import Path

import numpy as np
import pytest

from planner.engine import SpecValidationError, parse_workload_spec
from planner.engine.architecture import kv_cache_bytes_per_token
from planner.engine.catalog_csv import load_accelerators_csv
from planner.engine.moe_comm import COMBINE_BYTES, DISPATCH_BYTES
from planner.engine.precision import weight_bytes_per_param
from planner.engine.presets import preset_arch
from planner.engine.serving_constants import ALLREDUCE_BUS_EFFICIENCY
from planner.engine.serving_disagg import NIC_GB_S, Pool, evaluate_disaggregated, kv_transfer_s
from planner.engine.serving_layout import evaluate_layout
from planner.engine.serving_moe import (
    MTP_DRAFT_TOKENS,
    a2a_latency_units,
    accepted_at,
    attention_weight_params,
    collectives,
    group_link,
    moe_a2a_backend,
    moe_gathers,
    mtp_draft_tokens,
)

ROOT = Path(__file__).resolve().parents[2]
BY_ID = {a.id: a for a in load_accelerators_csv(ROOT / "catalog" / "data" / "accelerators.csv")}
B200, GB200, H100 = BY_ID["nvidia-b200-sxm-180gb"], BY_ID["nvidia-gb200-186gb"], BY_ID["nvidia-h100-sxm5-80gb"]
MI355X = BY_ID["amd-mi355x-288gb"]
DSR1 = preset_arch("deepseek-r1-0528")
ROW = dict(arch=DSR1, accelerator=B200, tensor_parallel=8, runtime="sglang", weights="fp4", kv_cache="fp8",
           input_tokens=1024, output_tokens=1024)


def test_dpa_splits_mla_kv_by_sequences_and_replicates_attention_weights():
    tp = evaluate_layout(**ROW, concurrency=64)
    dpa = evaluate_layout(**ROW, concurrency=64, expert_parallel=8, data_parallel_attention=True)
    # MLA's latent KV is replicated on every TP rank; DPA holds each sequence once: 1/8 per GPU
    assert dpa["memory"]["kv_bytes_per_token_gpu"] == pytest.approx(tp["memory"]["kv_bytes_per_token_gpu"] / 8)
    extra = attention_weight_params(DSR1) * weight_bytes_per_param("fp4") * (1 - 1 / 8)
    assert dpa["memory"]["weights_bytes"] - tp["memory"]["weights_bytes"] == pytest.approx(extra)


def test_all_to_all_bytes_follow_the_routing_and_the_link():
    ep, tp, k, h = 8.0, 8.0, DSR1.experts_per_token, DSR1.hidden_size
    count, per_token = collectives(DSR1, tp=tp, ep=ep, dpa=True, link_gb_s=900.0, a2a_efficiency=0.5,
                                   allreduce_efficiency=ALLREDUCE_BUS_EFFICIENCY)
    ranks = ep * (1 - (1 - 1 / ep) ** k)
    moe_layers = DSR1.layers - DSR1.dense_layers
    a2a = moe_layers * ranks * h * (DISPATCH_BYTES + COMBINE_BYTES) * (ep - 1) / ep / (900e9 * 0.5) / tp
    ar = DSR1.dense_layers * 2 * (tp - 1) / tp * h * 2 / (900e9 * ALLREDUCE_BUS_EFFICIENCY)
    assert float(per_token) == pytest.approx(a2a + ar)
    assert float(count) == DSR1.layers  # one collective per layer instead of two all-reduces
    _, tp_only = collectives(DSR1, tp=tp, ep=ep, dpa=False, link_gb_s=900.0, a2a_efficiency=0.5,
                             allreduce_efficiency=ALLREDUCE_BUS_EFFICIENCY)
    assert float(tp_only) == pytest.approx(2 * DSR1.layers * 2 * (tp - 1) / tp * h * 2 / (900e9 * ALLREDUCE_BUS_EFFICIENCY))


def test_sglang_without_an_a2a_backend_gathers_the_whole_step_on_every_rank():
    """SGLang's default MoE exchange with DPA all-gathers and reduce-scatters every rank's tokens: per step token
    2 x (tp-1)/tp x 2h bytes on every rank (not 1/tp of them), two collectives per MoE layer; the recipes' DeepEP
    (NVL72) and MoRI (AMD disaggregated) pools run the all-to-all."""
    tp, h = 8.0, DSR1.hidden_size
    moe_layers = DSR1.layers - DSR1.dense_layers
    kw = dict(tp=tp, ep=8.0, dpa=True, link_gb_s=900.0, a2a_efficiency=0.5, allreduce_efficiency=ALLREDUCE_BUS_EFFICIENCY)
    count, gathered = collectives(DSR1, **kw, gather=True, gather_efficiency=0.25)
    _, a2a = collectives(DSR1, **kw)
    ar = DSR1.dense_layers * 2 * (tp - 1) / tp * h * 2 / (900e9 * ALLREDUCE_BUS_EFFICIENCY)
    assert float(gathered) == pytest.approx(ar + moe_layers * 2 * (tp - 1) / tp * 2 * h * 2 / (900e9 * 0.25))
    assert float(count) == DSR1.layers + moe_layers
    assert float(gathered) > float(a2a)  # every rank moves the whole step: more than its own tokens' dispatch
    # without expert parallel there is nothing to gather for: the all-reduce-equivalent as before
    assert collectives(DSR1, **{**kw, "ep": 1.0}, gather=True)[1] == pytest.approx(collectives(DSR1, **{**kw, "ep": 1.0})[1])
    sg = lambda acc, **kw: moe_a2a_backend("sglang", acc, **kw)  # noqa: E731
    assert (sg(GB200), sg(B200), sg(H100)) == ("deepep", None, None)
    assert (sg(MI355X), sg(MI355X, disaggregated=True)) == (None, "mori")
    assert (moe_a2a_backend("vllm", GB200), moe_a2a_backend("vllm", B200)) == ("flashinfer_nvlink_one_sided", None)
    assert moe_gathers("sglang", B200) and moe_gathers("vllm", H100) and not moe_gathers("sglang", GB200)
    assert not moe_gathers("trtllm", B200) and not moe_gathers("atom", MI355X)  # their all-to-all


def test_the_gather_path_slows_an_sglang_dpa_step_not_a_deepep_one():
    """The same EP8 DPA layout: SGLang on an HGX B200 pays the gather, TensorRT-LLM (all-to-all) does not."""
    base = dict(ROW, concurrency=256, expert_parallel=8, data_parallel_attention=True,
                consts={"all_to_all_efficiency": 0.5, "moe_gather_efficiency": 0.5})
    sg = evaluate_layout(**base)
    trt = evaluate_layout(**{**base, "runtime": "trtllm"})
    assert sg["notes"]["constants_values"]["moe_gather_efficiency"] == 0.5
    comm = lambda r: float(r["engine"].comm_per_token_s)  # noqa: E731
    assert comm(sg) > comm(trt)


def test_the_all_to_all_latency_grows_with_the_ranks_exchanged_and_only_where_it_runs():
    """all_to_all_latency_s x log2(EP) per MoE layer per step where the MoE layers run the all-to-all (DPA, EP > 1,
    not gathered); nothing for tensor-parallel MoE, EP 1, SGLang's gather or a dense model."""
    moe_layers = DSR1.layers - DSR1.dense_layers
    units = a2a_latency_units(DSR1, ep=np.array([1.0, 8.0, 32.0, 8.0, 8.0]), dpa=np.array([True, True, True, False, True]),
                              gather=np.array([False, False, False, False, True]))
    assert units.tolist() == [0.0, moe_layers * 3.0, moe_layers * 5.0, 0.0, 0.0]
    assert float(a2a_latency_units(preset_arch("llama-3.1-8b"), ep=8.0, dpa=True)) == 0.0
    base = dict(ROW, accelerator=GB200, concurrency=64, expert_parallel=8, data_parallel_attention=True)
    step = lambda lat, **kw: evaluate_layout(**{**base, **kw, "consts": {"all_to_all_latency_s": lat}})  # noqa: E731
    fixed = lambda r: float(r["engine"].comm_fixed_s)  # noqa: E731
    assert fixed(step(20e-6)) - fixed(step(0.0)) == pytest.approx(20e-6 * moe_layers * 3.0)
    assert fixed(step(20e-6, tensor_parallel=32, expert_parallel=32)) - fixed(step(0.0, tensor_parallel=32, expert_parallel=32)) \
        == pytest.approx(20e-6 * moe_layers * 5.0)
    assert float(step(20e-6)["tpot_ms"]) > float(step(0.0)["tpot_ms"])
    # tensor-parallel MoE (no DPA) does not run it
    assert fixed(step(20e-6, data_parallel_attention=False)) == pytest.approx(fixed(step(0.0, data_parallel_attention=False)))


def test_a_runtime_without_all_to_all_rows_takes_its_generations_fitted_all_to_all():
    """The all-to-all constants are fitted where rows run it; another runtime on the same chip generation takes the
    median of those (same fabric), its own fit wins, and a generation with none keeps the presets."""
    from planner.engine import serving_constants as sc
    fitted = {("trtllm", "blackwell"): {"all_to_all_efficiency": 1.0, "all_to_all_latency_s": 10e-6},
              ("sglang", "blackwell"): {"all_to_all_efficiency": 0.4, "all_to_all_latency_s": 20e-6},
              ("vllm", "blackwell"): {"step_overhead_s": 1e-3}}
    assert sc.generation_all_to_all("blackwell", fitted) == pytest.approx(
        {"all_to_all_efficiency": 0.7, "all_to_all_latency_s": 15e-6})
    assert sc.generation_all_to_all("hopper", fitted) == {}
    written = sc.generation_all_to_all("blackwell")
    assert written and written["all_to_all_latency_s"] > 0
    vllm = sc.serving_constants(GB200, "vllm", "fp4")
    assert {n: vllm[n] for n in sc.ALL_TO_ALL_NAMES} == pytest.approx(written)
    own = sc.FITTED_IX[("sglang", "blackwell")]
    assert sc.serving_constants(GB200, "sglang", "fp4")["all_to_all_latency_s"] == own["all_to_all_latency_s"]
    # the plan's source line says so for a MoE model on the engine that borrows, not for its own fit or a dense model
    said = lambda rt, arch: "MoE all-to-all" in str(sc.constants_source(GB200, rt, arch).template)  # noqa: E731
    assert said("vllm", DSR1) and not said("sglang", DSR1) and not said("vllm", preset_arch("llama-3.1-8b"))


def test_dp_attention_pools_recorded_per_attention_rank_run_expert_parallel_over_the_worker():
    """Dynamo SGLang on GB200 records tp 1 / ep 1 under DP attention (per attention rank); its recipes set
    ep-size = tp-size = dp-size = the worker's GPUs. Pools that record their EP keep it."""
    from planner.engine.serving_replay_ix import _pool
    assert _pool(1, 1, 1, True, 48) == (1, 48, 48, True)
    assert _pool(4, 1, 1, True, 16) == (4, 4, 4, True)
    assert _pool(1, 1, 8, True, 8) == (1, 8, 8, True)  # MoRI SGLang: tp 1, ep 8 recorded
    assert _pool(1, 8, 1, True, 8) == (1, 8, 1, True)  # TP 8 recorded with EP 1: as recorded
    assert _pool(1, 4, 1, False, 4) == (1, 4, 1, False)  # no DP attention: tensor-parallel MoE


def test_beyond_the_scale_up_domain_the_nic_carries_the_collective():
    assert group_link(B200, 8)[2] == "nvlink"
    assert group_link(B200, 16) == (NIC_GB_S, pytest.approx(10e-6), "network")
    assert group_link(GB200, 32)[2] == "nvlink"  # NVL72: 72 GPUs on one NVLink domain


def test_mtp_divides_the_step_by_the_accepted_tokens_and_pays_the_drafts():
    plain = evaluate_layout(**ROW, concurrency=1)
    for accepted in (1.0, 2.0, 3.0):
        mtp = evaluate_layout(**ROW, concurrency=1, speculative="mtp", mtp_accepted_tokens=accepted)
        assert float(mtp["tpot_ms"]) == pytest.approx(float(mtp["step_s"]) * 1e3 / accepted, rel=1e-6)
        # the verification step (1 + drafts tokens, the draft passes) is never cheaper than a plain step
        assert float(mtp["step_s"]) >= float(plain["step_s"])
    one = evaluate_layout(**ROW, concurrency=1, speculative="mtp", mtp_accepted_tokens=1.0)
    assert float(one["tpot_ms"]) > float(plain["tpot_ms"])  # nothing accepted: drafting is pure cost
    # a model without MTP layers is unchanged by the flag
    llama = dict(ROW, arch=preset_arch("llama-3.1-70b"), weights="fp8")
    assert float(evaluate_layout(**llama, concurrency=4, speculative="mtp")["tpot_ms"]) == pytest.approx(
        float(evaluate_layout(**llama, concurrency=4)["tpot_ms"]))


@pytest.mark.parametrize("clients", [1, 64, 512])
def test_mtp_closed_loop_keeps_littles_law(clients):
    r = evaluate_layout(**ROW, concurrency=clients, speculative="mtp", mtp_accepted_tokens=2.4)
    cycle = (float(r["ttft_ms"]) + (1024 - 1) * float(r["tpot_ms"])) / 1e3
    assert float(r["output_tokens_per_s_per_gpu"]) == pytest.approx(clients * 1024 / cycle / 8, rel=0.02)


PRE, DEC = Pool(1, 4, 4, True), Pool(1, 8, 8, True)


@pytest.mark.parametrize("clients", [1, 128, 1024])
def test_disaggregated_ttft_tpot_and_throughput_agree(clients):
    d = evaluate_disaggregated(arch=DSR1, accelerator=B200, prefill=PRE, decode=DEC, runtime="sglang", weights="fp4",
                               kv_cache="fp8", input_tokens=1024, output_tokens=1024, concurrency=clients)
    cycle = (float(d["ttft_ms"]) + 1023 * float(d["tpot_ms"])) / 1e3
    assert float(d["output_tokens_per_s_per_decode_gpu"]) == pytest.approx(clients * 1024 / cycle / 8, rel=0.02)
    assert float(d["output_tokens_per_s_per_gpu"]) == pytest.approx(float(d["output_tokens_per_s_per_decode_gpu"]) * 8 / 12)
    # the first token needs the prompt's prefill on the prefill pool and the KV moved to the decode pool
    pre_alone = evaluate_layout(**dict(ROW, tensor_parallel=4), concurrency=1, expert_parallel=4,
                                data_parallel_attention=True)
    assert float(d["ttft_ms"]) >= float(pre_alone["unloaded_ttft_ms"]) + float(d["kv_transfer_ms"]) - 1e-6


def test_kv_transfer_is_the_prompts_kv_over_the_network_or_nvl72():
    kv = 8192 * kv_cache_bytes_per_token(DSR1, kv_precision="fp8")
    t = kv_transfer_s(DSR1, B200, isl=8192, kv_precision="fp8", prefill=PRE, decode=DEC)
    assert float(t) == pytest.approx(kv / (4 * NIC_GB_S * 1e9))
    t72 = kv_transfer_s(DSR1, GB200, isl=8192, kv_precision="fp8", prefill=PRE, decode=DEC)
    assert float(t72) == pytest.approx(kv / (4 * GB200.interconnect_gb_s / 2 * 1e9))


def test_decode_pool_does_no_prefill_work():
    """A decode-only engine's step with the same running batch is no longer than an aggregated one's."""
    d = evaluate_disaggregated(arch=DSR1, accelerator=B200, prefill=PRE, decode=DEC, runtime="sglang", weights="fp4",
                               kv_cache="fp8", input_tokens=8192, output_tokens=1024, concurrency=256)
    agg = evaluate_layout(**dict(ROW, input_tokens=8192), concurrency=256, expert_parallel=8,
                          data_parallel_attention=True)
    assert float(d["tpot_ms"]) < float(agg["tpot_ms"])


def test_dp_attention_pool_on_h100_runs_when_launched_for_its_clients():
    """InferenceX's Dynamo-SGLang DeepSeek-R1 fp8 on 2 + 2 nodes of H100 (decode TP16 / EP16 with DP attention,
    MTP): launched for its 1-64 clients it holds the model (SGLang's default CUDA graphs would not), and the
    predicted TPOT rises with the clients."""
    run = lambda c: evaluate_disaggregated(  # noqa: E731
        arch=DSR1, accelerator=H100, prefill=Pool(1, 16), decode=Pool(1, 16, 16, True), runtime="sglang",
        weights="fp8", kv_cache="bf16", input_tokens=1024, output_tokens=1024, concurrency=c, speculative="mtp")
    low, high = run(1), run(64)
    assert bool(low["fits"]) and bool(high["fits"])
    assert 0 < float(low["tpot_ms"]) < float(high["tpot_ms"]) < 1e3


@pytest.mark.parametrize("runtime, per_rank", [("trtllm", True), ("vllm", True), ("sglang", False)])
def test_attention_dp_ranks_schedule_their_own_step_budget_where_the_engine_does(runtime, per_rank):
    """TensorRT-LLM's max_num_tokens and vLLM's max_num_batched_tokens count per attention-DP rank, so an 8-rank
    prefill worker carries 8 x the budget per step and sustains more prompts than one budget allows; SGLang divides
    its --chunked-prefill-size over the ranks (its step carries the server's budget). A prompt's chunk is still one
    rank's budget."""
    from planner.engine.serving_constants import RUNTIME_SPECS
    from planner.engine.serving_layout import make_engine
    kw = dict(arch=DSR1, acc=B200, runtime=runtime, weights="fp4", compute="fp4", kv_precision="fp8", tp=8, pp=1,
              isl=8192, osl=1.0, ep=8)
    dpa, tp_only = make_engine(**kw, dpa=True)[0], make_engine(**kw, dpa=False)[0]
    budget = RUNTIME_SPECS[runtime].step_token_budget
    assert float(dpa.budget) == float(tp_only.budget) == budget  # the flag's value: one rank's, and a prompt's chunk
    assert float(dpa.step_budget) == (8 * budget if per_rank else budget)
    assert float(tp_only.step_budget) == budget
    # 8k prompts on a prefill worker: one budget holds one prompt per step, eight ranks hold eight (less queueing)
    one_budget = dataclasses.replace(dpa, budget_ranks=1.0)
    more, fewer = float(dpa.max_stable_rate()), float(one_budget.max_stable_rate())
    assert (more > 1.05 * fewer) if per_rank else (more == pytest.approx(fewer))
    assert (8192 * more * 2 * DSR1.active_params) / 8 <= B200.fp4_tflops_dense * 1e12  # never above the chip's peak


# ------------------------------------------------------------------------------------------ spec

BASE = {"kind": "inference", "model": {"preset": "deepseek-r1-0528"}}


def _fields(d):
    with pytest.raises(SpecValidationError) as exc:
        parse_workload_spec(d)
    return {e.field for e in exc.value.errors}


def test_mechanisms_are_read_into_the_spec():
    s = parse_workload_spec({**BASE, "hardware": {"count": 12, "accelerator": "nvidia-b200-sxm-180gb"},
                             "serving": {"speculative": {"method": "mtp", "accepted_tokens": 2.5},
                                         "disaggregation": {"prefill": {"workers": 1, "tensor_parallel": 4,
                                                                        "expert_parallel": 4},
                                                            "decode": {"workers": 1, "tensor_parallel": 8,
                                                                       "expert_parallel": 8,
                                                                       "data_parallel_attention": True}}}})
    assert s.serving.speculative.accepted_tokens == 2.5
    assert s.serving.disaggregation.decode.data_parallel_attention is True
    assert s.serving.disaggregation.prefill.gpus + s.serving.disaggregation.decode.gpus == 12


@pytest.mark.parametrize(("spec", "field"), [
    ({**BASE, "hardware": {"count": 8, "tensor_parallel": 8, "expert_parallel": 3}}, "hardware.expert_parallel"),
    ({**BASE, "hardware": {"count": 4, "tensor_parallel": 4, "expert_parallel": 8}}, "hardware.expert_parallel"),
    ({"kind": "inference", "model": {"preset": "llama-3.1-8b"}, "hardware": {"expert_parallel": 2}},
     "hardware.expert_parallel"),
    ({"kind": "inference", "model": {"preset": "llama-3.1-8b"}, "serving": {"speculative": "mtp"}},
     "serving.speculative"),
    ({**BASE, "serving": {"speculative": {"method": "mtp", "accepted_tokens": 1 + MTP_DRAFT_TOKENS + 1}}},
     "serving.speculative.accepted_tokens"),
    ({**BASE, "hardware": {"count": 16}, "serving": {"disaggregation": {
        "prefill": {"workers": 1, "tensor_parallel": 4}, "decode": {"workers": 1, "tensor_parallel": 8}}}},
     "serving.disaggregation"),
    ({**BASE, "serving": {"disaggregation": {
        "prefill": {"workers": 1, "tensor_parallel": 4}, "decode": {"workers": 1, "tensor_parallel": 8}}}},
     "hardware.count"),
    ({**BASE, "hardware": {"accelerator": "nvidia-h200-sxm-141gb"}, "serving": {"runtime": "atom"}},
     "serving.runtime"),
    ({"kind": "pretraining", "model": {"preset": "deepseek-r1-0528"}, "training": {"tokens": 1e9},
      "hardware": {"expert_parallel": 8}}, "hardware.expert_parallel"),
])
def test_bad_mechanisms_are_field_errors_that_name_the_field(spec, field):
    assert field in _fields(spec)


def test_atom_constants_and_mtp_drafts_are_its_own():
    atom = evaluate_layout(**dict(ROW, accelerator=BY_ID["amd-mi355x-288gb"], runtime="atom", weights="fp8"),
                           concurrency=8, speculative="mtp", mtp_accepted_tokens=2.0)
    # ATOM drafts one token (num_speculative_tokens 1): 2 verified tokens per sequence per step
    assert float(atom["engine"].spec_q) == 2.0
    assert np.isfinite(atom["tpot_ms"]).all()


def test_accepted_tokens_follow_geometric_acceptance_across_draft_counts():
    # each draft kept with probability 0.5 given the one before: 1 + .5 + .25 + .125 at 3 drafts
    assert accepted_at(1.875, 3, 1) == pytest.approx(1.5, rel=1e-6)
    assert accepted_at(1.875, 3, 2) == pytest.approx(1.75, rel=1e-6)
    assert accepted_at(1.875, 3, 3) == pytest.approx(1.875)
    # the ends: nothing accepted stays 1; everything accepted keeps every draft
    assert accepted_at(1.0, 3, 1) == pytest.approx(1.0, abs=1e-6)
    assert accepted_at(4.0, 3, 1) == pytest.approx(2.0, rel=1e-6)
    # more drafts never keep fewer tokens, and never more than 1 + drafts
    d = np.arange(1, 6)
    acc = accepted_at(np.full(d.shape, 2.5), 3, d)
    assert (np.diff(acc) > 0).all() and (acc <= 1 + d).all() and (acc >= 1).all()


def test_draft_count_follows_the_runtime_and_data_parallel_attention():
    assert int(mtp_draft_tokens("trtllm", dpa=True)) == 1 and int(mtp_draft_tokens("trtllm", dpa=False)) == 3
    assert int(mtp_draft_tokens("sglang", dpa=True)) == MTP_DRAFT_TOKENS  # aggregated SGLang keeps its drafts
    assert int(mtp_draft_tokens("sglang", dpa=True, decode_only=True)) == 1
    assert int(mtp_draft_tokens("sglang", dpa=False, decode_only=True)) == MTP_DRAFT_TOKENS
    assert int(mtp_draft_tokens("vllm", dpa=True)) == 2 and int(mtp_draft_tokens("atom")) == 1
    # the evaluation runs what the launch states: one draft with TensorRT-LLM DPA, fewer tokens kept per step
    trt = dict(ROW, runtime="trtllm")
    dpa = evaluate_layout(**trt, concurrency=256, expert_parallel=8, data_parallel_attention=True, speculative="mtp")
    tp = evaluate_layout(**trt, concurrency=256, expert_parallel=8, speculative="mtp")
    assert (float(dpa["engine"].spec_q), float(tp["engine"].spec_q)) == (2.0, 4.0)
    assert 1.0 < float(dpa["engine"].spec_a) < float(tp["engine"].spec_a)


def test_a_stated_disaggregation_is_evaluated_in_the_plan():
    from planner.engine import size_workload  # noqa: PLC0415

    spec = parse_workload_spec({**BASE, "precision": {"weights": "fp4", "compute": "fp4", "kv_cache": "fp8"},
                                "serving": {"runtime": "sglang", "concurrency": 64, "requests_per_second": 0,
                                            "input_tokens": 1024, "output_tokens": 1024,
                                            "disaggregation": {"prefill": {"workers": 1, "tensor_parallel": 4},
                                                               "decode": {"workers": 1, "tensor_parallel": 8}}},
                                "hardware": {"accelerator": "nvidia-b200-sxm-180gb", "count": 12}})
    r = size_workload(spec=spec, accelerators=list(BY_ID.values())).to_dict()
    d = r["serving"]["disaggregated"]
    direct = evaluate_disaggregated(arch=DSR1, accelerator=B200, prefill=Pool(1, 4), decode=Pool(1, 8),
                                    runtime="sglang", weights="fp4", kv_cache="fp8", input_tokens=1024.0,
                                    output_tokens=1024.0, concurrency=64.0)
    assert d["tpot_p50_ms"]["value"] == pytest.approx(float(direct["tpot_p50_ms"]))
    assert d["output_tokens_per_s_per_decode_gpu"]["value"] == pytest.approx(
        d["output_tokens_per_s_per_gpu"]["value"] * 12 / 8)


@pytest.mark.parametrize(("runtime", "ranks"), [("trtllm", 8), ("sglang", 1)])
def test_the_plan_names_the_step_budget_the_engine_model_queued_for(runtime, ranks):
    """The TTFT explanation's "step token budget" is the one the M/D/1 queue used: x8 with 8 TensorRT-LLM DPA ranks."""
    from planner.engine import size_workload  # noqa: PLC0415
    from planner.engine.serving_constants import RUNTIME_SPECS  # noqa: PLC0415

    spec = parse_workload_spec({**BASE, "precision": {"weights": "fp4"},
                                "serving": {"runtime": runtime, "concurrency": 64, "requests_per_second": 1,
                                            "input_tokens": 1024, "output_tokens": 1024},
                                "hardware": {"accelerator": "nvidia-b200-sxm-180gb", "count": 8, "tensor_parallel": 8,
                                             "expert_parallel": 8, "data_parallel_attention": True}})
    ttft = size_workload(spec=spec, accelerators=list(BY_ID.values())).to_dict()["serving"]["ttft_ms"]
    assert ttft["explain_i18n"]["params"]["budget"] == ranks * RUNTIME_SPECS[runtime].step_token_budget


def test_trtllm_dispatches_nvfp4_tokens_for_nvfp4_experts_only():
    from planner.engine.precision import WeightFormat
    from planner.engine.serving_moe import NVFP4_BYTES_PER_VALUE, dispatch_bytes_per_value
    gptoss = preset_arch("gpt-oss-120b")
    # TensorRT-LLM's post-quant all-to-all: NVFP4 tokens (4.5 bits) when the experts run NVFP4 ...
    assert dispatch_bytes_per_value(DSR1, runtime="trtllm", weights="fp4", compute_fmt="fp4") == pytest.approx(0.5625)
    # ... bf16 for fp8 experts, for the mxfp4 checkpoint of gpt-oss, on a chip without fp4 units, on other runtimes
    assert dispatch_bytes_per_value(DSR1, runtime="trtllm", weights="fp8", compute_fmt="fp8") == DISPATCH_BYTES
    assert dispatch_bytes_per_value(gptoss, runtime="trtllm", weights="fp4", compute_fmt="fp4") == DISPATCH_BYTES
    mx = WeightFormat("experts=mxfp4;rest=bf16")
    assert dispatch_bytes_per_value(DSR1, runtime="trtllm", weights=mx, compute_fmt="fp4") == DISPATCH_BYTES
    assert dispatch_bytes_per_value(DSR1, runtime="trtllm", weights="fp4", compute_fmt="bf16") == DISPATCH_BYTES
    assert dispatch_bytes_per_value(DSR1, runtime="sglang", weights="fp4", compute_fmt="fp4") == DISPATCH_BYTES
    # the all-to-all bytes scale with (dispatch + combine): 0.5625 + 2 against 2 + 2
    kw = dict(tp=8.0, ep=8.0, dpa=True, link_gb_s=900.0, a2a_efficiency=0.5, allreduce_efficiency=1.0)
    _, bf16 = collectives(DSR1, **kw)
    _, fp4 = collectives(DSR1, **kw, dispatch_bytes=NVFP4_BYTES_PER_VALUE)
    _, no_ep = collectives(DSR1, **{**kw, "ep": 1.0}, dispatch_bytes=NVFP4_BYTES_PER_VALUE)
    _, no_ep_bf16 = collectives(DSR1, **{**kw, "ep": 1.0})
    dense = DSR1.dense_layers * 2 * (7 / 8) * DSR1.hidden_size * 2 / 900e9
    assert (float(fp4) - dense) / (float(bf16) - dense) == pytest.approx((0.5625 + 2) / 4)
    assert float(no_ep) == pytest.approx(float(no_ep_bf16))  # EP 1: a gather + scatter, not a dispatch
    # and the engine carries it: one TensorRT-LLM B200 EP8 + DPA replica, NVFP4 against fp8 experts
    from planner.engine.serving_layout import make_engine
    kw = dict(arch=DSR1, acc=B200, runtime="trtllm", kv_precision="fp8", tp=8, pp=1, isl=1024, osl=1024,
              consts={"all_to_all_efficiency": 0.5}, ep=8, dpa=True)
    e4 = make_engine(weights="fp4", compute="fp4", **kw)[0]
    e8 = make_engine(weights="fp8", compute="fp8", **kw)[0]
    assert float(e4.comm_per_token_s) < 0.7 * float(e8.comm_per_token_s)


def test_skewed_routing_reads_fewer_experts_than_uniform_draws():
    from planner.engine.serving_model import MOE_ROUTING_SHAPE, experts_touched
    log_miss = np.log1p(-8 / 256)  # DeepSeek-R1: 8 of 256 experts per token
    n = np.array([1.0, 8.0, 32.0, 128.0, 1024.0, 1e6])
    uniform = -np.expm1(n * log_miss)
    assert experts_touched(n, log_miss, shape=np.inf) == pytest.approx(uniform)
    assert experts_touched(n, log_miss, shape=1e9) == pytest.approx(uniform, rel=1e-5)
    skew = experts_touched(n, log_miss)
    assert np.isfinite(MOE_ROUTING_SHAPE) and MOE_ROUTING_SHAPE > 0
    assert np.all(skew < uniform) and np.all(np.diff(skew) > 0)  # fewer, but more with every token
    assert skew[0] == pytest.approx(8 / 256, rel=0.05)  # one token still reads its k experts
    assert skew[-1] == pytest.approx(1.0, abs=1e-3)  # a large batch still reads every expert
    # the Gamma mixture in closed form: 1 - (1 + n x -ln(1 - k/E) / a)^-a
    assert experts_touched(32.0, log_miss, shape=2.0) == pytest.approx(1 - (1 - 32 * log_miss / 2) ** -2)
