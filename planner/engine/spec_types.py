"""The WorkloadSpec's vocabularies, bounds and frozen dataclasses (one per section); parsed by planner.engine.spec."""

from __future__ import annotations

from dataclasses import dataclass

from .architecture import ModelArch

KINDS = ("pretraining", "finetuning", "inference", "rag", "classic_training", "external_api")
METHODS = ("full", "lora", "qlora")
OPTIMIZERS = ("adamw", "adamw_8bit", "paged_adamw_8bit", "adafactor", "sgd")
STATE_PRECISIONS = ("fp32", "bf16", "int8")
MASTER_WEIGHTS = ("fp32", "none")
ADAPTER_PRECISIONS = ("fp32", "bf16", "fp16")
CONTEXT_PARALLEL = (1, 2, 4, 8, 16, 32)
CHECKPOINTING = ("none", "selective", "full")
# fused: FlashAttention / PyTorch SDPA / cuDNN attention (scores never stored); eager: s x s scores kept
ATTENTION_IMPLEMENTATIONS = ("fused", "eager")
INDEXES = ("flat", "hnsw", "ivf_pq")
GENERATORS = ("self_hosted", "external_api")
LORA_TARGETS = ("q", "k", "v", "o", "gate", "up", "down")
LLM_KINDS = ("pretraining", "finetuning", "inference", "rag")

# Upper bounds that catch unit mistakes (bytes typed as GB, etc.), far above any real workload.
MAX_PARAMS = 1e14
MAX_TOKENS = 1e16
MAX_SEQ = 10_000_000
# Checkpoint interval floor (36 s, the web form's bound): a checkpoint takes tens of seconds
# to write, and an interval near zero divided the checkpoint bandwidth by zero (schemathesis,
# issue 16: 5e-324 h).
MIN_CHECKPOINT_EVERY_HOURS = 0.01
# Below 1 % useful hours the run is not a plan but a unit mistake (0.5 typed as 0.005 %); a
# vanishing goodput would make the GPU-hours overflow every money figure.
MIN_GOODPUT = 0.01


@dataclass(frozen=True, kw_only=True)
class PrecisionSpec:
    weights: str = "bf16"
    compute: str = "bf16"
    kv_cache: str = "bf16"


@dataclass(frozen=True, kw_only=True)
class TrainingSpec:
    tokens: float | None = None  # total tokens processed (dataset tokens x epochs)
    dataset_samples: int | None = None  # classic_training
    epochs: float = 1.0
    sequence_length: int = 4096
    global_batch_tokens: int | None = None
    global_batch_size: int | None = None  # classic_training: samples per step
    micro_batch_size: int = 1
    method: str = "full"
    lora_rank: int = 16
    lora_targets: tuple[str, ...] = LORA_TARGETS
    optimizer: str = "adamw"
    zero_stage: int | None = None  # None: the engine picks the smallest stage that fits
    activation_checkpointing: str | None = None  # None: searched (selective first, full when needed)
    sequence_parallel: bool = True
    tensor_parallel: int | None = None  # None: searched
    pipeline_parallel: int | None = None  # None: searched
    virtual_pipeline_stages: int | None = None  # interleaved 1F1B schedule (Megatron); None: searched
    deadline_hours: float | None = None
    checkpoint_every_hours: float = 2.0
    checkpoints_kept: int = 3
    optimizer_states: str = "fp32"  # precision of the optimizer states (int8 for the 8-bit optimizers)
    master_weights: str = "fp32"  # fp32 master copy of 16-bit trainable weights, or none
    adapter_precision: str = "bf16"  # LoRA/QLoRA adapter weights and gradients
    double_quant: bool = True  # QLoRA: NF4 quantisation constants quantised again (8-bit)
    context_parallel: int | None = None  # None: searched for long sequences
    goodput: float | None = None  # None: default by GPU count (docs/SIZING.md "Goodput")
    attention: str = "fused"  # attention kernel: fused (FlashAttention/SDPA, the default) or eager
    expert_overlap: bool = False  # MoE: expert-parallel all-to-all overlapped with compute (DualPipe, EP overlap)
    # Exact layout (planner/engine/training_layout.py): data_parallel pins TP x PP x CP x DP = the GPU count.
    data_parallel: int | None = None  # None: searched (count / (TP x PP x CP))
    expert_parallel: int | None = None  # MoE, exact layout only; None: moe_comm.expert_parallel's rule


# At least 6 minutes a day: below that no service is run (and 5e-324 h once overflowed the costing).
MIN_HOURS_PER_DAY = 0.1


@dataclass(frozen=True, kw_only=True)
class SpeculativeSpec:
    """serving.speculative: "none" | "mtp" (the checkpoint's multi-token-prediction layers draft);
    None: not stated, the serving search tries MTP where the model and the runtime have it."""

    method: str | None = None
    accepted_tokens: float | None = None  # per decode step; None: the runtime's fitted constant


@dataclass(frozen=True, kw_only=True)
class PoolSpec:
    """One pool of a disaggregated deployment: `workers` engines of `tensor_parallel` GPUs."""

    workers: int = 1
    tensor_parallel: int = 1
    expert_parallel: int = 1
    data_parallel_attention: bool = False

    @property
    def gpus(self) -> int:
        return self.workers * self.tensor_parallel


@dataclass(frozen=True, kw_only=True)
class DisaggregationSpec:
    """serving.disaggregation: prefill and decode on separate pools (hardware.count = both pools)."""

    prefill: PoolSpec
    decode: PoolSpec


@dataclass(frozen=True, kw_only=True)
class ServingSpec:
    context_length: int = 4096
    input_tokens: int = 1024
    output_tokens: int = 256
    concurrency: int = 8
    requests_per_second: float = 1.0
    ttft_p95_ms: float | None = None
    tpot_p95_ms: float | None = None
    hours_per_day: float = 24.0
    runtime: str = "vllm"  # serving engine: vllm | sglang | trtllm | atom (AMD) | hf_transformers
    speculative: SpeculativeSpec = SpeculativeSpec()
    disaggregation: DisaggregationSpec | None = None
    # Volume (average traffic), apart from the peak above that sizes capacity: what token-priced
    # options, egress and the useful share are priced on. None: AVERAGE_TO_PEAK_RATIO of the peak.
    requests_per_day: float | None = None
    # The model API(s) an agent calls, "provider/model" (several: compared); (): every priced one.
    # Checked against the catalog's API prices when the plan is priced (costs.adapters).
    model_api: tuple[str, ...] = ()

    @property
    def peak_requests_per_day(self) -> float:
        """The most a day can hold: the peak held through every serving hour."""
        return self.requests_per_second * 3600.0 * self.hours_per_day

    @property
    def volume_requests_per_day(self) -> float:
        """Requests a day that are priced: the given volume, else the peak x AVERAGE_TO_PEAK_RATIO."""
        if self.requests_per_day is not None:
            return self.requests_per_day
        return self.peak_requests_per_day * AVERAGE_TO_PEAK_RATIO


# Average traffic over the serving hours / the peak rate the capacity is sized for, used when
# serving.requests_per_day is not given (docs/WORKLOADSPEC.md "Peak and volume"). A planning
# assumption, not a measurement: the busiest hour of an office-hours service carries about 1.5-2x
# its average hour (telephony's busy-hour share: 10-15 % of a business line's daily traffic, which
# falls in 8-10 hours), and the peak a p95 latency target is planned for sits about 1.5-2x above
# that hour's mean (Poisson-like bursts over seconds-long windows). 1 / (2.25 ... 4) = 0.25-0.44;
# 0.3 lies in that band, nearer its low end. Give requests_per_day to price the real volume.
AVERAGE_TO_PEAK_RATIO = 0.3


@dataclass(frozen=True, kw_only=True)
class RagSpec:
    documents: int
    tokens_per_document: int = 1000
    chunk_tokens: int = 512
    embedding_model: ModelArch | None = None
    embedding_dimension: int = 1024
    index: str = "hnsw"
    queries_per_second: float = 1.0
    top_k: int = 5
    generator: str = "self_hosted"  # or "external_api": the LLM is a paid API, no GPU for it


@dataclass(frozen=True, kw_only=True)
class DataSpec:
    dataset_gb: float = 0.0
    growth_gb_per_month: float = 0.0
    logs_gb_per_month: float = 0.0
    retention_months: int = 12


@dataclass(frozen=True, kw_only=True)
class HardwareSpec:
    accelerator: str | None = None  # catalog id or unambiguous name; resolved by size_workload
    count: int | None = None
    mfu: float | None = None
    gpus_per_server: int | None = None
    tensor_parallel: int | None = None  # serving: pin the layout (with accelerator + count: exact what-if)
    pipeline_parallel: int | None = None
    # MoE serving inside the tensor-parallel group (serving_moe.py): experts split over expert_parallel
    # ranks; data_parallel_attention: attention replicated per rank, batch and KV split across ranks.
    # None: not stated, the serving search tries what the runtime runs (search_serving.serving_variants).
    expert_parallel: int | None = None
    data_parallel_attention: bool | None = None
    # What the site has (issue 20, 7.): IT power the servers may draw at full load, and racks free.
    # The decision keeps owned options within them; the plan says what they allow at most.
    power_budget_kw: float | None = None
    racks: int | None = None


@dataclass(frozen=True, kw_only=True)
class WorkloadSpec:
    kind: str
    name: str = ""
    model: ModelArch | None = None
    model_source: str = ""  # "preset:<id>" | "architecture" | "hf_config"
    precision: PrecisionSpec = PrecisionSpec()
    training: TrainingSpec | None = None
    serving: ServingSpec | None = None
    rag: RagSpec | None = None
    data: DataSpec = DataSpec()
    hardware: HardwareSpec = HardwareSpec()
