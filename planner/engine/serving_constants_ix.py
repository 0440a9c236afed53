"""Serving constants fitted on the InferenceX rows (../shared/reference/inferencex/serving_fit.csv),
per (runtime, chip generation). Written by scripts/fit_serving_moe.py; docs/SIZING.md "Serving model"
and docs/BENCHMARKS.md "Serving: InferenceX fit set (issue 22)" list the rows and the error.

Refitted 2026-12-03 (afternoon, after the MI3xx Infinity Fabric links, the per-rank DPA scheduler cap,
TensorRT-LLM's attention-DP balancing and the disaggregated handoff joined the model) by
`scripts/fit_serving_moe.py --rounds 4`, then TensorRT-LLM Blackwell alone with `--only trtllm,blackwell`
under the serving_measured.csv guard (MEASURED_GUARD) (multiplicative coordinate search on the
mean absolute log error of TTFT, TPOT and output tokens/s per GPU, one third each) on every row of
serving_fit.csv the model expresses (3,487 rows). Hopper keeps its serving_measured.csv efficiencies
and overheads (FITTED); only its MoE and disaggregation constants (all-to-all efficiency, MTP accepted tokens, disaggregated
handoff) are fitted here. A group's value replaces the preset (and its generation factor) for that runtime and generation;
FITTED_IX_ROWS says which rows each group was fitted on. Bounds: efficiencies in (0, 1], accepted
tokens in [1, 1 + draft tokens]; a value at a bound (1.0) means the data asked for more than the
physics allows and the missing time sits in another mechanism (docs/BENCHMARKS.md lists them).

2026-12-04 (h/hop): the Hopper groups' `mla_layer_overhead_s` (new: a fixed time per MLA layer per forward
pass, serving_constants.MLA_LAYER_OVERHEAD_S) and `mtp_accepted_tokens` (which had absorbed that missing
time) refitted together, the rest held as written: `scripts/fit_serving_moe.py --only trtllm,hopper
--names mla_layer_overhead_s,mtp_accepted_tokens --rounds 4` (231 rows, 174 of them DeepSeek-R1), then the
same with `--only sglang,hopper` (180 rows, 169 DeepSeek-R1); docs/BENCHMARKS.md "Hopper DeepSeek-R1 FP8".
2026-12-04 (h/tpotdpa): MLA decode attention is absorbed and runs at the KV cache format's rate (docs/SIZING.md
"One engine step"); the groups it moves were refitted on the constants named in FITTED_IX_ROWS
(`scripts/fit_serving_moe.py --only GROUP --names ... --rounds 3 --write`, the rest held as written; TensorRT-LLM
Blackwell from the values a first refit reached, loss 0.346 -> 0.333). TensorRT-LLM Blackwell now carries its own
mla_layer_overhead_s (80 us). SGLang Blackwell's refit did not improve the replay's MdAPE and was not kept.
"""

FITTED_IX: dict[tuple[str, str], dict[str, float]] = {
    ('atom', 'cdna'): {"prefill_efficiency": 0.2015, "decode_bandwidth_efficiency": 0.5777, "step_overhead_s": 0.006493, "request_overhead_s": 0.02277, "ttft_cohort_factor": 0.1568, "mtp_accepted_tokens": 1.696},
    ('sglang', 'blackwell'): {"prefill_efficiency": 0.2184, "decode_bandwidth_efficiency": 0.7405, "step_overhead_s": 0.004907, "request_overhead_s": 0.1489, "ttft_cohort_factor": 1.36, "all_to_all_efficiency": 0.3817, "mtp_accepted_tokens": 2.017, "disagg_handoff_s": 0.1834},
    ('sglang', 'cdna'): {"prefill_efficiency": 0.7711, "decode_bandwidth_efficiency": 0.3626, "step_overhead_s": 0.005836, "request_overhead_s": 0.05265, "ttft_cohort_factor": 1.36, "all_to_all_efficiency": 0.227, "mtp_accepted_tokens": 2.853, "disagg_handoff_s": 0.1682},
    ('sglang', 'hopper'): {"all_to_all_efficiency": 0.0954, "mtp_accepted_tokens": 1.543, "disagg_handoff_s": 0.1834, "mla_layer_overhead_s": 5.657e-05},
    ('trtllm', 'blackwell'): {"prefill_efficiency": 0.2873, "decode_bandwidth_efficiency": 0.7396, "step_overhead_s": 0.001262, "request_overhead_s": 0.03149, "ttft_cohort_factor": 0.3944, "all_to_all_efficiency": 1, "mtp_accepted_tokens": 2.2, "disagg_handoff_s": 0.02293, "mla_layer_overhead_s": 8e-05},
    ('trtllm', 'hopper'): {"all_to_all_efficiency": 0.2699, "mtp_accepted_tokens": 2.2, "disagg_handoff_s": 0.1834, "mla_layer_overhead_s": 0.0001037},
    ('vllm', 'blackwell'): {"prefill_efficiency": 0.8976, "decode_bandwidth_efficiency": 0.917, "step_overhead_s": 0.002105, "request_overhead_s": 0.0322, "ttft_cohort_factor": 0.5273},
    ('vllm', 'cdna'): {"prefill_efficiency": 0.57, "decode_bandwidth_efficiency": 1, "step_overhead_s": 0.003861, "request_overhead_s": 0.02708, "ttft_cohort_factor": 0.8868},
}
FITTED_IX_ROWS: dict[tuple[str, str], str] = {
    ('atom', 'cdna'): 'serving_fit.csv: 181 rows, engines atom; GPUs mi355x; models dsr1, gptoss120b, qwen3.5',
    ('sglang', 'blackwell'): 'serving_fit.csv: 908 rows, engines dynamo-sglang, sglang; GPUs b200, b300, gb200; models dsr1, qwen3.5',
    ('sglang', 'cdna'): 'serving_fit.csv: 780 rows, engines mori-sglang, sglang; GPUs mi300x, mi355x; models dsr1, qwen3.5 (2026-12-04, h/tpotdpa: all_to_all_efficiency, mtp_accepted_tokens refitted on 805 rows, same mechanism)',
    ('sglang', 'hopper'): 'serving_fit.csv: 174 rows, engines dynamo-sglang, sglang; GPUs h100, h200; models dsr1, qwen3.5 (mla_layer_overhead_s, mtp_accepted_tokens: 180 rows, 2026-12-04) (2026-12-04, h/tpotdpa: all_to_all_efficiency refitted on 180 rows, same mechanism)',
    ('trtllm', 'blackwell'): 'serving_fit.csv: 763 rows, engines dynamo-trt, trt; GPUs b200, b300, gb200; models dsr1, gptoss120b (2026-12-04, h/tpotdpa: mla_layer_overhead_s, step_overhead_s, decode_bandwidth_efficiency, mtp_accepted_tokens, all_to_all_efficiency refitted on 819 rows with the absorbed MLA decode attention)',
    ('trtllm', 'hopper'): 'serving_fit.csv: 231 rows, engines dynamo-trt, trt; GPUs h100, h200; models dsr1, gptoss120b (mla_layer_overhead_s, mtp_accepted_tokens refitted 2026-12-04) (2026-12-04, h/tpotdpa: mla_layer_overhead_s, mtp_accepted_tokens refitted on 231 rows, same mechanism)',
    ('vllm', 'blackwell'): 'serving_fit.csv: 170 rows, engines vllm; GPUs b200; models gptoss120b',
    ('vllm', 'cdna'): 'serving_fit.csv: 75 rows, engines vllm; GPUs mi300x, mi355x; models gptoss120b',
}
