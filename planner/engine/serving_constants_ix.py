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

2026-12-04 (h/ttft): refitted when the replay began comparing the median TTFT (InferenceX publishes medians; the
closed loop's start-up cohort is in the mean, not the median) and scheduler_poll_steps joined (SGLang Blackwell /
CDNA only): `scripts/fit_serving_moe.py --rounds 4` from the presets; SGLang Blackwell from `--only
sglang,blackwell --names request_overhead_s,ttft_cohort_factor,prefill_efficiency,scheduler_poll_steps,
disagg_handoff_s --rounds 3` (lower loss on its rows); SGLang Hopper's fitted poll (1.83) dropped to 1 (no
polling flag in its recipe; serving_measured.csv's H100 SGLang rows) and a presets-only ('vllm', 'hopper') entry
dropped. docs/SIZING.md "Closed-loop TTFT: median and mean", docs/BENCHMARKS.md "Closed-loop TTFT".

2026-12-04 (h/tpotdpa): MLA decode attention is absorbed and runs at the KV cache format's rate (docs/SIZING.md
"One engine step"); the groups it moves were refitted on the constants named in FITTED_IX_ROWS
(`scripts/fit_serving_moe.py --only GROUP --names ... --rounds 3 --write`, the rest held as written; TensorRT-LLM
Blackwell from the values a first refit reached, loss 0.346 -> 0.333). TensorRT-LLM Blackwell now carries its own
mla_layer_overhead_s (80 us). SGLang Blackwell's refit did not improve the replay's MdAPE and was not kept.
Merged (lead, 2026-12-04): h/ttft's refit as the base, h/tpotdpa's decode constants over it for the four groups it
refitted (FITTED_IX_ROWS says which).

2026-12-04 (h/ttft2): the replay takes SGLang's poll interval from the InferenceX recipes
(serving_replay_ix.recipe_poll_steps) and a prompt waits for the prompts batched with it over the poll window
(docs/SIZING.md "Scheduler polling"); SGLang Blackwell refitted with `--only sglang,blackwell --names
request_overhead_s,ttft_cohort_factor,prefill_efficiency,disagg_handoff_s --rounds 3 --write` with its
scheduler_poll_steps set to 1 (the default; its rows whose recipe sets the flag take the recipe's value).
docs/BENCHMARKS.md "SGLang's poll window".

2026-12-04 (h/tpotm): the step mix joined the steady state (serving_model.Engine._step_mix) and the Hopper decode
constants of FITTED were refitted on serving_measured.csv (allreduce_latency_s among them). The groups fitted here
with the 10 us all-reduce latency preset keep it (`allreduce_latency_s`: 1e-05, the value their constants were
fitted with); the Hopper groups' mla_layer_overhead_s, all_to_all_efficiency and mtp_accepted_tokens were refitted
over the new FITTED (`--only trtllm,hopper` / `--only sglang,hopper --names
mla_layer_overhead_s,mtp_accepted_tokens,all_to_all_efficiency --rounds 5`, the last pass with
ALLREDUCE_BUS_EFFICIENCY 0.50), and vLLM Blackwell's decode constants (`--names
decode_bandwidth_efficiency,step_overhead_s,mtp_accepted_tokens,all_to_all_efficiency --rounds 5`, twice: step
overhead 2.105 -> 2.016 ms, bandwidth share 0.771 -> 0.805, all-to-all 0.191 -> 0.057, MTP accepted 1.189 -> 1.09).

2026-12-05 (this file as it stands): every group refitted from the presets in one run, `scripts/fit_serving_moe.py
--report --write`, replacing the chain of per-group refits above (whose notes are kept as history): the expanding
pattern search on the mean absolute log error; moe_layer_overhead_s (new: a fixed time per MoE layer per forward pass)
fitted for every group; DeepSeek-V4-Pro rows scored but not fitted on (fit_serving_moe.NOT_FITTED_ON: its CSA/HCA
attention latency is not modelled); SGLang Blackwell's poll interval the recipe's where set, else SGLang's default 1;
the serving_measured.csv guard at today's 22.6 / 6.6 %; allreduce_latency_s held at the value each group's constants
were fitted with. The same command with --exclude-gpu / --exclude-model is the leave-one-out check
(docs/BENCHMARKS.md "Leave-one-out refits: what the fit may learn from").

2026-12-06 (this file as it stands): the same one-run refit, `scripts/fit_serving_moe.py --report --write`, after the
replay began launching SGLang servers for their clients (serving_constants.sglang_launch_cuda_graph_max_bs): 52 DP-attention
rows (14 H100, 38 GB200, DeepSeek-R1 fp8) that SGLang's default CUDA-graph reserve had refused now hold the model and
count in the loss. Only SGLang Blackwell and SGLang Hopper moved; docs/BENCHMARKS.md "SGLang launched for its load".

2026-12-06, evening (this file as it stands): the same one-run refit after TensorRT-LLM and vLLM began scheduling a step
token budget per attention-DP rank (serving_moe.PER_RANK_BUDGET_RUNTIMES). Only the TensorRT-LLM groups moved (Blackwell:
decode constants, cohort factor, MTP accepted 2.56 -> 2.505, handoff 11 -> 17 ms; Hopper: MLA overhead, all-to-all,
handoff); docs/BENCHMARKS.md "Per-rank step budget".

2026-12-06, night: the MTP draft count became a launch setting (serving_moe.mtp_draft_tokens: one draft with
data-parallel attention in TensorRT-LLM and in SGLang decode pools, vLLM 2); mtp_accepted_tokens stays stated at the
runtime's reference drafts (3; vLLM 2; ATOM 1) and is carried to the drafts run by geometric acceptance. The values below
are kept as written: with the rule they replay serving_fit.csv at 22.9 / 10.7 / 10.8 % and serving_measured.csv at
22.4 / 6.6 %, where the one-run refit after the rule (MTP accepted at 3 drafts: TensorRT-LLM Blackwell 2.505 -> 2.645,
Hopper 1.996 -> 2.107) gave 23.1 / 10.5 / 11.3 % and 22.6 / 6.6 %; docs/BENCHMARKS.md "MTP draft count as a launch setting".

2026-12-07: SGLang (and vLLM) without an all-to-all backend gather a DPA step's MoE tokens on every rank (serving_moe.moe_gathers;
moe_gather_efficiency, new). The two groups with such rows were refitted on their own rows, the rest kept as written:
`scripts/fit_serving_moe.py --report --only sglang,blackwell` (the same values as the one-run refit reached for it) and
`--only sglang,hopper`. SGLang Hopper's all_to_all_efficiency went: none of its rows runs an all-to-all (HGX boards).
The one-run refit of every group gave 23.3 / 10.5 / 11.2 % and was not kept (docs/BENCHMARKS.md "SGLang's MoE gather").

2026-12-07, later: the all-to-all takes all_to_all_latency_s x log2(EP) per MoE layer (new; serving_moe.a2a_latency_units),
and Dynamo SGLang's GB200 DP-attention pools recorded as tp 1 / ep 1 replay with EP = the worker's GPUs (their recipes'
ep-size). The four groups whose rows run an all-to-all were refitted on their own rows, each with `scripts/fit_serving_moe.py
--report --only sglang,blackwell` (and sglang,cdna; trtllm,hopper), the rest kept as written; TensorRT-LLM Blackwell with
`--only trtllm,blackwell --guard-ttft 0.224 --names <its eleven constants>` from its written values, the serving_measured.csv
guard at 22.4 / 6.6 % (from the presets the guard held the search at TTFT 43 %; unguarded it cost serving_measured.csv 0.2 points)
(docs/BENCHMARKS.md "MoE all-to-all latency").
"""

FITTED_IX: dict[tuple[str, str], dict[str, float]] = {
    ('atom', 'cdna'): {"prefill_efficiency": 0.1905, "decode_bandwidth_efficiency": 1, "step_overhead_s": 0.0001, "request_overhead_s": 0.02873, "ttft_cohort_factor": 1.812, "moe_layer_overhead_s": 6.547e-05, "mla_layer_overhead_s": 5.301e-05, "mtp_accepted_tokens": 1.882, "allreduce_latency_s": 1e-05},
    ('sglang', 'blackwell'): {"prefill_efficiency": 0.2231, "decode_bandwidth_efficiency": 0.8075, "step_overhead_s": 0.003421, "request_overhead_s": 0.1019, "ttft_cohort_factor": 3.379, "moe_layer_overhead_s": 2.378e-05, "mla_layer_overhead_s": 6.209e-06, "all_to_all_efficiency": 0.346, "all_to_all_latency_s": 1.719e-05, "moe_gather_efficiency": 0.1928, "mtp_accepted_tokens": 2.039, "disagg_handoff_s": 0.3152, "allreduce_latency_s": 1e-05},
    ('sglang', 'cdna'): {"prefill_efficiency": 0.1722, "decode_bandwidth_efficiency": 0.584, "step_overhead_s": 0.00614, "request_overhead_s": 0.03131, "ttft_cohort_factor": 1.653, "moe_layer_overhead_s": 1.745e-05, "mla_layer_overhead_s": 1.091e-06, "all_to_all_efficiency": 1, "all_to_all_latency_s": 6.089e-05, "mtp_accepted_tokens": 2.335, "disagg_handoff_s": 0.1079, "scheduler_poll_steps": 3.513, "allreduce_latency_s": 1e-05},
    ('sglang', 'hopper'): {"moe_layer_overhead_s": 8.724e-05, "mla_layer_overhead_s": 2.378e-05, "moe_gather_efficiency": 0.1487, "mtp_accepted_tokens": 1.522, "disagg_handoff_s": 0.1542},
    ('trtllm', 'blackwell'): {"prefill_efficiency": 0.2635, "decode_bandwidth_efficiency": 0.8435, "step_overhead_s": 0.001176, "request_overhead_s": 0.03149, "ttft_cohort_factor": 0.8237, "moe_layer_overhead_s": 2e-06, "mla_layer_overhead_s": 8.145e-05, "all_to_all_efficiency": 1, "mtp_accepted_tokens": 2.451, "disagg_handoff_s": 0.01768, "allreduce_latency_s": 1e-05, "all_to_all_latency_s": 1.164e-05},
    ('trtllm', 'hopper'): {"moe_layer_overhead_s": 6.304e-05, "mla_layer_overhead_s": 7.241e-05, "all_to_all_efficiency": 0.2527, "all_to_all_latency_s": 5.75e-05, "mtp_accepted_tokens": 2.095, "disagg_handoff_s": 0.6655},
    ('vllm', 'blackwell'): {"prefill_efficiency": 0.3261, "decode_bandwidth_efficiency": 0.9524, "step_overhead_s": 0.001653, "request_overhead_s": 0.03308, "ttft_cohort_factor": 0.8868, "moe_layer_overhead_s": 1.384e-05, "allreduce_latency_s": 1e-05},
    ('vllm', 'cdna'): {"prefill_efficiency": 0.27, "decode_bandwidth_efficiency": 0.7071, "step_overhead_s": 0.002939, "request_overhead_s": 0.0355, "ttft_cohort_factor": 1.774, "moe_layer_overhead_s": 3.536e-06, "allreduce_latency_s": 1e-05},
    ('vllm', 'hopper'): {"moe_layer_overhead_s": 1.414e-05},
}
FITTED_IX_ROWS: dict[tuple[str, str], dict] = {
    ('atom', 'cdna'): {'rows': 181, 'engines': ('ATOM',), 'gpus': ('MI355X',), 'models': ('deepseek-r1-0528', 'gpt-oss-120b', 'qwen3.5-397b-a17b')},
    ('sglang', 'blackwell'): {'rows': 908, 'engines': ('Dynamo SGLang', 'SGLang'), 'gpus': ('B200', 'B300', 'GB200'), 'models': ('deepseek-r1-0528', 'qwen3.5-397b-a17b')},
    ('sglang', 'cdna'): {'rows': 780, 'engines': ('MoRI SGLang', 'SGLang'), 'gpus': ('MI300X', 'MI355X'), 'models': ('deepseek-r1-0528', 'qwen3.5-397b-a17b')},
    ('sglang', 'hopper'): {'rows': 174, 'engines': ('Dynamo SGLang', 'SGLang'), 'gpus': ('H100', 'H200'), 'models': ('deepseek-r1-0528', 'qwen3.5-397b-a17b')},
    ('trtllm', 'blackwell'): {'rows': 763, 'engines': ('Dynamo TensorRT-LLM', 'TensorRT-LLM'), 'gpus': ('B200', 'B300', 'GB200'), 'models': ('deepseek-r1-0528', 'gpt-oss-120b')},
    ('trtllm', 'hopper'): {'rows': 231, 'engines': ('Dynamo TensorRT-LLM', 'TensorRT-LLM'), 'gpus': ('H100', 'H200'), 'models': ('deepseek-r1-0528', 'gpt-oss-120b')},
    ('vllm', 'blackwell'): {'rows': 170, 'engines': ('vLLM',), 'gpus': ('B200',), 'models': ('gpt-oss-120b',)},
    ('vllm', 'cdna'): {'rows': 85, 'engines': ('vLLM',), 'gpus': ('MI300X', 'MI355X'), 'models': ('gpt-oss-120b',)},
    ('vllm', 'hopper'): {'rows': 261, 'engines': ('vLLM',), 'gpus': ('H100', 'H200'), 'models': ('gpt-oss-120b',)},
}
