"""The broader training fit set of issue 24: sources, dates, coverage and error bounds per vendor group.

Rows: planner/engine/data/training_published.json (scripts/build_published_rows_issue24.py records how the
MLPerf and Megatron-Bridge rows were read); fit: scripts/fit_training_efficiency.py; evidence:
docs/BENCHMARKS.md "Training: broader fit set (issue 24)".
"""

from pathlib import Path

import numpy as np
import pytest

from planner.engine import compute
from planner.engine.catalog_csv import load_accelerators_csv
from planner.engine.training_reference import load_rows, throughput_rows

ROOT = Path(__file__).resolve().parents[2]
ACCS = load_accelerators_csv(ROOT / "catalog" / "data" / "accelerators.csv")
BY_ID = {a.id: a for a in ACCS}
ROWS = [r for r in throughput_rows(ACCS) if r.use == "efficiency"]
FIT = [r for r in ROWS if r.role == "fit"]


def _errors(rows):
    return np.array([r.predicted() / r.observed - 1 for r in rows])


def test_every_row_has_a_source_a_source_group_and_a_date():
    for r in load_rows():
        src = r["source"]
        assert src["title"] and src["where"], r["id"]
        assert src.get("url") or src.get("repo"), r["id"]
        assert r.get("source_group"), r["id"]
        assert r.get("date") and any(ch.isdigit() for ch in r["date"]), r["id"]
        if "github.com" in (src.get("url") or "") and src.get("commit"):  # rows read from a repository: pinned
            assert len(src["commit"]) == 40 and src["commit"] in src["url"], r["id"]


def test_fit_set_size_sources_and_coverage():
    """Issue 24: >= 60 fit rows from >= 5 independent sources covering H100/H200, Blackwell and AMD Instinct."""
    assert len(FIT) >= 60
    assert len({r.source_group for r in FIT}) >= 5
    accs = {r.acc.id for r in ROWS}
    for group in (("nvidia-h100-sxm5-80gb", "nvidia-h200-sxm-141gb"),
                  ("nvidia-b200-sxm-180gb", "nvidia-b300-sxm-288gb", "nvidia-gb200-186gb", "nvidia-gb300-288gb"),
                  ("amd-mi300x-192gb", "amd-mi325x-256gb", "amd-mi350x-288gb", "amd-mi355x-288gb")):
        for acc in group:
            assert acc in accs, acc


def test_fit_median_and_max_error():
    err = np.abs(_errors(FIT))
    assert np.median(err) <= 0.10
    # rows beyond 30%, each with its cause in docs/BENCHMARKS.md "Training: broader fit set (issue 24)": MosaicML's
    # 2023 FP8 table on 1B/3B models at 512-2048 tokens (early Transformer Engine FP8) and MPT-30B on A100 at 8192
    # tokens (the source's own MFU is 12 points below its 4096-token row)
    beyond = sorted(r.id for r, e in zip(FIT, err, strict=True) if e > 0.30)
    assert beyond == ["mpt_1b_h100_fp8_s512_g8", "mpt_30b_a100_bf16_s8192_g8", "mpt_3b_h100_fp8_s2048_g8",
                      "mpt_3b_h100_fp8_s512_g8"], beyond


@pytest.mark.parametrize("vendor_generation, median_max, max_max", [
    ("NVIDIA ampere", 0.10, 0.35),  # the MPT-30B A100 8192-token row (documented cause)
    ("NVIDIA hopper", 0.10, 0.45),  # MosaicML's 2023 FP8 rows of 1B/3B models (documented cause)
    ("NVIDIA blackwell", 0.10, 0.25),
    ("AMD cdna3", 0.20, 0.25),
    ("AMD cdna4", 0.12, 0.20),
])
def test_fit_error_per_vendor_and_generation(vendor_generation, median_max, max_max):
    rows = [r for r in FIT if f"{r.vendor} {r.generation}" == vendor_generation]
    assert rows, vendor_generation
    err = np.abs(_errors(rows))
    assert np.median(err) <= median_max, (vendor_generation, float(np.median(err)))
    assert err.max() <= max_max, (vendor_generation, float(err.max()))


def test_held_out_rows_of_the_file_per_vendor():
    """The dense rows of the file never fitted (MLPerf v5.1 MI300X/MI325X, MLPerf and Megatron-Bridge H100/GB200
    repeats, the earlier held-out runs): median within 15%, every AMD and Blackwell row within 25%. The MoE
    rows (held out too) have their own test below."""
    held = [r for r in ROWS if r.role == "held_out" and not r.arch.is_moe]
    assert len(held) == 45
    err = np.abs(_errors(held))
    assert np.median(err) <= 0.15
    beyond = sorted(r.id for r, e in zip(held, err, strict=True)
                    if r.generation in ("blackwell", "cdna3", "cdna4") and e > 0.25)
    # MLPerf v5.1 NVFP4 LoRA on 8 B300 (+33%): the same system's FP8 LoRA is +9% and NVFP4 8B +7%; the model's
    # FP4/FP8 gain for 70B-wide GEMMs (1.7x) is above the measured 1.36x (docs/BENCHMARKS.md, issue 24 B300 rows)
    assert beyond == ["mlperf51_nebius_b300_llama270b_nvfp4_8gpu"], beyond


def test_cdna_generations_have_their_own_bases_and_mi325x_is_not_an_mi300x():
    mi300, mi325, mi355 = BY_ID["amd-mi300x-192gb"], BY_ID["amd-mi325x-256gb"], BY_ID["amd-mi355x-288gb"]
    assert compute.training_generation(mi300.architecture) == compute.training_generation(mi325.architecture) == "cdna3"
    assert compute.training_generation(mi355.architecture) == compute.training_generation(
        BY_ID["amd-mi350x-288gb"].architecture) == "cdna4"
    assert compute.BASE[("cdna4", "8")][0] > compute.BASE[("cdna3", "8")][0]
    # MI325X: same CDNA 3 compute as MI300X, more and faster memory and a higher power limit (catalog rows)
    assert mi325.memory_gib > mi300.memory_gib and mi325.memory_bandwidth_gb_s > mi300.memory_bandwidth_gb_s
    assert (mi325.tdp_w or 0) > (mi300.tdp_w or 0)


def test_mi350x_datasheet_peaks():
    a = BY_ID["amd-mi350x-288gb"]
    assert (a.memory_gib, a.memory_bandwidth_gb_s, a.bf16_tflops_dense, a.fp8_tflops_dense) == (288, 8000, 2300, 4600)
    assert a.fp4_tflops_dense == 9200 and a.tdp_w == 1000
    assert a.fp8_tflops_dense < BY_ID["amd-mi355x-288gb"].fp8_tflops_dense  # same silicon at a lower clock and power


def test_blackwell_ultra_attention_speedup_only_on_blackwell_ultra():
    assert compute.attention_speedup(BY_ID["nvidia-gb300-288gb"].architecture) == 2.0
    assert compute.attention_speedup(BY_ID["nvidia-b300-sxm-288gb"].architecture) == 2.0
    for acc in ("nvidia-gb200-186gb", "nvidia-b200-sxm-180gb", "nvidia-h100-sxm5-80gb", "amd-mi355x-288gb"):
        assert compute.attention_speedup(BY_ID[acc].architecture) == 1.0, acc


def test_token_side_lowers_efficiency_of_short_micro_batches_and_context_parallel():
    common = dict(base=0.6, hidden_size=8192, tp=1, x_attn=0.0, peak_ratio=1.0, pp=1, microbatches=1, vpp=1)
    long_ = float(compute.training_efficiency(**common, tokens_per_gpu=8192))
    cp8 = float(compute.training_efficiency(**common, tokens_per_gpu=1024))
    assert cp8 < long_ < float(compute.training_efficiency(**common))


def test_tp_traffic_only_where_the_stack_does_not_overlap_it():
    a100, h100 = BY_ID["nvidia-a100-sxm4-80gb"], BY_ID["nvidia-h100-sxm5-80gb"]
    kw = dict(tp=8, hidden_size=8192, peak_tflops=312.0)
    assert float(compute.tp_comm_coefficient(generation="ampere", link_gb_s=compute.tp_link_gb_s(a100, 8), **kw)) > 0
    assert float(compute.tp_comm_coefficient(generation="hopper", link_gb_s=compute.tp_link_gb_s(h100, 8), **kw)) == 0
    assert float(compute.tp_comm_coefficient(generation="ampere", link_gb_s=compute.tp_link_gb_s(a100, 1),
                                             **{**kw, "tp": 1})) == 0
    # a scale-up fabric without a bandwidth in the catalog: unknown, no term (not the PCIe fallback)
    assert np.isnan(compute.tp_link_gb_s(BY_ID["amd-mi250x-128gb"], 8))


def test_mlperf_rows_scale_out_monotone_in_the_data_and_the_model():
    """H100 Llama 3.1 405B from 512 to 8192 GPUs (MLPerf v5.0, TP8 PP8 VP8 CP2): the efficiency falls with
    scale as the micro-batches per pipeline fall (bubble); the model falls with it, within 25% at every scale
    (it stays 8-22% low: TP8 on Hopper)."""
    rows = [r for r in ROWS if r.id.startswith("mlperf50_nvidia_h100_llama31405b")]
    rows.sort(key=lambda r: int(r.id.rsplit("_", 1)[1].removesuffix("gpu")))
    assert len(rows) >= 4
    observed = [r.observed for r in rows]
    predicted = [r.predicted() for r in rows]
    assert observed == sorted(observed, reverse=True)
    assert predicted == sorted(predicted, reverse=True)
    for r, p in zip(rows, predicted, strict=True):
        assert abs(p / r.observed - 1) <= 0.25, r.id


def test_fp4_training_has_its_own_blackwell_base_and_runs_16_bit_without_fp4_units():
    """NVFP4 pre-training (Megatron-Bridge GB200/GB300 rows): the fitted 4-bit Blackwell base against the
    FP4 peak; on a chip without FP4 units (H100) the matmuls run in 16 bits, the 16-bit base at the bf16 peak;
    never faster than the peak ratio over BF16 of the same layout."""
    assert compute.base_efficiency("blackwell", "fp4")[0] == compute.BASE[("blackwell", "4")][0]
    assert compute.base_efficiency("hopper", "fp4", has_format_units=False)[0] == compute.BASE[("hopper", "16")][0]
    assert compute.base_efficiency("cdna4", "fp4")[0] == compute.BASE[("cdna4", "8")][0]  # no 4-bit AMD run: said so
    common = dict(hidden_size=8192, tp=1, x_attn=0.05, pp=1, microbatches=1, vpp=1, tokens_per_gpu=8192)
    e16 = float(compute.training_efficiency(base=compute.BASE[("blackwell", "16")][0], peak_ratio=1.0, **common))
    e4 = float(compute.training_efficiency(base=compute.BASE[("blackwell", "4")][0], peak_ratio=6.0,
                                           compute_precision="fp4", base_16bit=compute.BASE[("blackwell", "16")][0],
                                           **common))
    assert e4 * 6.0 <= e16 * 6.0 + 1e-12 and 1.0 < e4 * 6.0 / e16 < 6.0
    rows = [r for r in ROWS if r.fmt == "4"]
    assert len([r for r in rows if r.role == "fit"]) >= 4
    for r in rows:
        if r.id == "mlperf51_nebius_b300_llama270b_nvfp4_8gpu":  # held out, documented (see the held-out test)
            continue
        assert abs(r.predicted() / r.observed - 1) <= 0.20, r.id


# ------------------------------------------------------------------- MoE pre-training rows (issue 24, h/moe)

MOE = [r for r in ROWS if r.arch.is_moe]
MOE_JSON = {r["id"]: r for r in load_rows() if r["kind"] == "throughput" and r.get("ep")}


def test_moe_rows_parse_into_moe_models_with_the_published_expert_parallelism():
    """MoE pre-training rows, all held out: Megatron-Bridge (DeepSeek-V3, Qwen3-30B-A3B, Qwen3-235B-A22B,
    gpt-oss-120b on H100, B200, B300, GB200, GB300; 23 rows) and NeMo 25.04 (Mixtral 8x7B on GB200): each is a MoE
    model with its published EP, the experts' GEMM width and the expert-parallel all-to-all the engine charges."""
    assert len(MOE) == len(MOE_JSON) == 24
    assert {r.id for r in MOE} == set(MOE_JSON)
    assert {r.arch.name.split()[0] for r in MOE} >= {"DeepSeek-V3", "Qwen3", "gpt-oss-120b", "Mixtral"}
    assert {r.acc.id for r in MOE} == {"nvidia-h100-sxm5-80gb", "nvidia-b200-sxm-180gb", "nvidia-b300-sxm-288gb",
                                       "nvidia-gb200-186gb", "nvidia-gb300-288gb"}
    for r in MOE:
        row = MOE_JSON[r.id]
        assert r.role == "held_out" and r.source_group in ("megatron_bridge", "nemo_2502"), r.id
        assert r.arch.experts > 1 and r.arch.experts_per_token >= 1, r.id
        assert r.ep == row["ep"] > 1 and r.arch.experts % r.ep == 0, r.id
        where = row["source"]["where"]  # the published table line (or its cells) names the EP
        assert f"| {row['ep']} |" in where or f"EP {row['ep']}," in where, r.id
        assert r.hidden_size == pytest.approx(compute.model_width(r.arch)) and r.hidden_size <= r.arch.hidden_size
        assert r.a2a_bytes_per_token > 0 and r.a2a_link_gb_s > 0, r.id


def test_moe_rows_expert_parallelism_enters_the_prediction():
    """The published EP sets the tokens per expert (compute.gemm_tokens) and the all-to-all bytes: a row read
    at EP 1 has no all-to-all and narrower expert GEMMs; without `ep` the row takes the engine's own rule."""
    import dataclasses

    from planner.engine import moe_comm

    r = next(x for x in MOE if x.id == "mb260401_b200_deepseekv3_ep32_256gpu")
    ep1 = dataclasses.replace(r, ep=1, a2a_bytes_per_token=0.0)
    no_a2a = dataclasses.replace(r, a2a_bytes_per_token=0.0)
    assert no_a2a.predicted() > ep1.predicted()  # more tokens per expert GEMM
    assert r.predicted() < no_a2a.predicted()  # the non-overlapped all-to-all costs time
    assert r.a2a_bytes_per_token == pytest.approx(float(moe_comm.all_to_all_bytes_per_token(
        r.arch, ep=32, full_recompute=False)))


def test_moe_rows_error_bounds():
    """Out-of-sample check of the expert-parallel terms (docs/BENCHMARKS.md "Training: MoE pre-training rows").
    DeepSeek-V3 and Qwen3 (17 rows): median |error| 15.4 %, max 45.3 % (B200 Qwen3-235B EP8) at the time of
    writing; bounds 16 % and 50 %. gpt-oss-120b (6 rows) is overpredicted on every system, +40 % to +124 %
    (an attention-sink kernel and scale-out gradient gap, documented there): bound +130 %, and always above.
    Mixtral 8x7B (NeMo 25.04, GB200 EP8): +23.1 %, bound 30 %."""
    others = [r for r in MOE if r.arch.name.split()[0] in ("DeepSeek-V3", "Qwen3")]
    err = _errors(others)
    assert len(others) == 17
    assert np.median(np.abs(err)) <= 0.16, float(np.median(np.abs(err)))
    assert np.abs(err).max() <= 0.50, float(np.abs(err).max())
    oss = _errors([r for r in MOE if "gpt-oss" in r.arch.name])
    assert len(oss) == 6 and oss.min() > 0.30 and oss.max() <= 1.30, oss
    mixtral = _errors([r for r in MOE if "Mixtral" in r.arch.name])
    assert len(mixtral) == 1 and abs(mixtral[0]) <= 0.30, mixtral


def test_moe_rows_inside_one_nvlink_domain_are_not_overpredicted():
    """The pattern the rows show (the reading in docs/BENCHMARKS.md): DeepSeek-V3 and Qwen3 runs whose expert
    all-to-all stays inside one NVLink domain (GB200/GB300 NVL72, or one 8-GPU server) come out at or below the
    published throughput (below +5 %) with the non-overlapped all-to-all charged; runs whose EP group or expert replicas span
    HGX servers come out more than 10 % above it (scale-out traffic the engine does not charge)."""
    for r in MOE:
        if r.arch.name.split()[0] not in ("DeepSeek-V3", "Qwen3"):  # gpt-oss and Mixtral: other gaps, said above
            continue
        inside = r.acc.id in ("nvidia-gb200-186gb", "nvidia-gb300-288gb") or MOE_JSON[r.id]["gpus"] <= 8
        e = r.predicted() / r.observed - 1
        assert (e < 0.05) if inside else (e > 0.10), (r.id, e)
