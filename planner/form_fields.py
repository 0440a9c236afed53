"""The workload form's fields, declared once with the WorkloadSpec path each fills (FIELDS), the
steps they are shown in and the cost options' field names; planner.forms builds the forms from them."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from django import forms
from django.utils.translation import get_language
from django.utils.translation import gettext_lazy as _

from .choices import WorkloadKind

PRECISION_CHOICES = [(p, p) for p in ("fp32", "bf16", "fp16", "fp8", "int8", "int4", "fp4")]
ALL_KINDS = tuple(WorkloadKind.values)
TRAINING_KINDS = ("pretraining", "finetuning", "classic_training")
LLM_KINDS = ("pretraining", "finetuning", "inference", "rag")
SERVING_KINDS = ("inference", "rag", "external_api")


@dataclass(frozen=True)
class SpecField:
    path: str  # dotted WorkloadSpec path, e.g. "serving.context_length"
    make: object  # a callable returning the form field
    kinds: tuple[str, ...] = ALL_KINDS
    step: str = "model"
    sources: tuple[str, ...] = field(default=())  # model sources it belongs to, if any

    @property
    def name(self) -> str:
        return self.path.replace(".", "__")


class _TypedText(forms.TextInput):
    """A text box for a number: the browser keeps whatever was typed (a number input silently
    drops "abc" and submits nothing), so the server can answer "Enter a number." on the field."""

    def __init__(self, inputmode: str):
        super().__init__(attrs={"inputmode": inputmode, "autocomplete": "off"})


_GROUPED = re.compile(r"^[+-]?\d{1,3}(,\d{3})+(\.\d*)?$")


def _normalise_number(value):
    """What people type for a number, as Python reads it: spaces (a thousands separator in
    Russian) are dropped; "1,000" is a thousand in English; "0,5" is a half on a Russian page."""
    if not isinstance(value, str):
        return value
    value = value.strip().replace("\u00a0", "").replace("\u202f", "").replace(" ", "")
    if _GROUPED.match(value) and not (get_language() or "").startswith("ru"):
        return value.replace(",", "")
    if value.count(",") == 1 and "." not in value:
        return value.replace(",", ".")
    return value


class NumberField(forms.FloatField):
    widget = _TypedText("decimal")

    def to_python(self, value):
        return super().to_python(_normalise_number(value))


class WholeNumberField(forms.IntegerField):
    widget = _TypedText("numeric")

    def to_python(self, value):
        return super().to_python(_normalise_number(value))


def _int(label, help_text, initial=None, min_value=0, max_value=None):
    return lambda: WholeNumberField(label=label, help_text=help_text, initial=initial, required=False,
                                    min_value=min_value, max_value=max_value)


def _num(label, help_text, initial=None, min_value=0, max_value=None):
    return lambda: NumberField(label=label, help_text=help_text, initial=initial, required=False,
                               min_value=min_value, max_value=max_value)


def _choice(label, help_text, choices, initial=None):
    return lambda: forms.ChoiceField(label=label, help_text=help_text, initial=initial, required=False,
                                     choices=[("", _("default"))] + list(choices))


def _model_api_field():
    """The model API(s) the agent calls: the ones priced in the catalog, with their provider."""
    from planner.model_apis import priced_model_apis

    return forms.MultipleChoiceField(
        label=_("Model API"), required=False, choices=priced_model_apis(), widget=forms.CheckboxSelectMultiple,
        help_text=_("The model API(s) the agent calls, priced per token; several are compared. "
                    "None chosen: every priced model API is compared and the plan names the cheapest."))


def _bool(label, help_text):
    return lambda: forms.NullBooleanField(
        label=label, help_text=help_text, required=False,
        widget=forms.Select(choices=[("unknown", _("default")), ("true", _("yes")), ("false", _("no"))]),
    )


ARCH = ("architecture",)


def _encoder_presets():
    try:
        from planner.engine.presets import list_presets
    except ImportError:
        return []
    return [(p["id"], p["name"]) for p in list_presets(model_type="encoder")]

FIELDS: tuple[SpecField, ...] = (
    # Model architecture (used when the model source is "architecture").
    SpecField("model.architecture.params", _num(_("Parameters"), _("Total parameter count, e.g. 7e9. Unit: parameters. Default: derived from the architecture."), min_value=1), LLM_KINDS + ("classic_training",), sources=ARCH),
    SpecField("model.architecture.flops_per_sample", _num(_("FLOPs per sample"), _("Forward-pass FLOPs per input sample (non-transformer nets). Unit: FLOP. No default."), min_value=1), ("classic_training",), sources=ARCH),
    SpecField("model.architecture.layers", _int(_("Layers"), _("Transformer blocks. Unit: count. No default."), min_value=1), LLM_KINDS, sources=ARCH),
    SpecField("model.architecture.hidden_size", _int(_("Hidden size"), _("Model dimension d_model. Unit: count. No default."), min_value=1), LLM_KINDS, sources=ARCH),
    SpecField("model.architecture.attention_heads", _int(_("Attention heads"), _("Query heads per layer. Unit: count. No default."), min_value=1), LLM_KINDS, sources=ARCH),
    SpecField("model.architecture.kv_heads", _int(_("KV heads"), _("Key/value heads. Fewer than the attention heads is grouped-query attention (GQA), which shrinks the KV cache; must divide the attention heads. Unit: count. Default: equal to attention heads."), min_value=1), LLM_KINDS, sources=ARCH),
    SpecField("model.architecture.head_dim", _int(_("Head dimension"), _("Unit: count. Default: hidden size / attention heads."), min_value=1), LLM_KINDS, sources=ARCH),
    SpecField("model.architecture.ffn_hidden_size", _int(_("FFN hidden size"), _("Intermediate size of the feed-forward block. Unit: count. Default: 4 × hidden size."), min_value=1), LLM_KINDS, sources=ARCH),
    SpecField("model.architecture.gated_ffn", _bool(_("Gated FFN (SwiGLU)"), _("SwiGLU and other gated feed-forward blocks (FFN) of Llama, Qwen, Mistral: three weight matrices instead of two. Default: no.")), LLM_KINDS, sources=ARCH),
    SpecField("model.architecture.vocab_size", _int(_("Vocabulary size"), _("Unit: tokens. No default."), min_value=1), LLM_KINDS, sources=ARCH),
    SpecField("model.architecture.tied_embeddings", _bool(_("Tied embeddings"), _("Input and output embeddings share weights. Default: no.")), LLM_KINDS, sources=ARCH),
    SpecField("model.architecture.experts", _int(_("MoE experts"), _("Mixture of experts (MoE): each layer holds several expert blocks and a token passes through only a few of them. Experts per layer; empty for a dense model. Unit: count. Default: dense."), min_value=1), LLM_KINDS, sources=ARCH),
    SpecField("model.architecture.experts_per_token", _int(_("Experts per token"), _("Active experts per token (MoE). Unit: count. Default: dense."), min_value=1), LLM_KINDS, sources=ARCH),
    # Precision.
    SpecField("precision.weights", _choice(_("Weights precision"), _("Storage format of the weights: bf16/fp16 take 2 bytes per parameter, fp8/int8 1 byte, int4/fp4 half a byte. Default: bf16; when a catalog model is served, its published checkpoint's own format (gpt-oss: MXFP4 experts, DeepSeek-V3/R1: FP8)."), PRECISION_CHOICES), LLM_KINDS + ("classic_training",)),
    SpecField("precision.compute", _choice(_("Compute precision"), _("Format the matrix multiplications run in. Default: bf16."), PRECISION_CHOICES), LLM_KINDS + ("classic_training",)),
    SpecField("precision.kv_cache", _choice(_("KV cache precision"), _("KV cache: the attention keys and values kept for every token in context; it grows with context length and concurrent requests. Its storage format. Default: bf16."), PRECISION_CHOICES), ("inference", "rag")),
    # Training.
    SpecField("training.method", _choice(_("Fine-tuning method"), _("Full: every weight is trained. LoRA: the model stays frozen and small adapter matrices are trained. QLoRA: LoRA over a model quantised to 4 bits, the least memory. Default: full."), [("full", _("full")), ("lora", "LoRA"), ("qlora", "QLoRA")]), ("finetuning",), "workload"),
    SpecField("training.lora_rank", _int(_("LoRA rank"), _("Rank of the LoRA adapter matrices: higher trains more parameters and needs more memory. Unit: count. Default: 16."), min_value=1), ("finetuning",), "workload"),
    SpecField("training.tokens", _num(_("Training tokens"), _("Tokens processed over the whole run, e.g. 1e12. Unit: tokens. No default."), min_value=1), ("pretraining", "finetuning"), "workload"),
    SpecField("training.dataset_samples", _int(_("Dataset samples"), _("Samples in the training set. Unit: samples. Required for classic training."), min_value=1), ("classic_training",), "workload"),
    SpecField("training.epochs", _num(_("Epochs"), _("Passes over the data; multiplies the training tokens or samples. Unit: count. Default: 1."), min_value=0.01), TRAINING_KINDS, "workload"),
    SpecField("training.global_batch_size", _int(_("Global batch size"), _("Samples per optimizer step. Unit: samples. Default: chosen by the engine."), min_value=1), ("classic_training",), "workload"),
    SpecField("training.sequence_length", _int(_("Sequence length"), _("Unit: tokens. Default: 4096."), min_value=1), ("pretraining", "finetuning"), "workload"),
    SpecField("training.global_batch_tokens", _int(_("Global batch"), _("Tokens per optimizer step. Unit: tokens. Default: 4 Mi tokens for pre-training, 128 sequences for fine-tuning."), min_value=1), ("pretraining", "finetuning"), "workload"),
    SpecField("training.micro_batch_size", _int(_("Micro-batch size"), _("Sequences per GPU per step. Unit: sequences. Default: 1."), min_value=1), TRAINING_KINDS, "workload"),
    SpecField("training.optimizer", _choice(_("Optimizer"), _("Default: adamw (16 bytes per parameter with mixed precision)."), [("adamw", "AdamW"), ("adamw_8bit", "AdamW 8-bit"), ("paged_adamw_8bit", _("Paged AdamW 8-bit (states in host RAM)")), ("sgd", "SGD"), ("adafactor", "Adafactor")]), TRAINING_KINDS, "workload"),
    SpecField("training.optimizer_states", _choice(_("Optimizer state precision"), _("Format of the optimizer states. Default: fp32 (int8 for the 8-bit optimizers)."), [("fp32", "fp32"), ("bf16", "bf16"), ("int8", "int8")]), TRAINING_KINDS, "workload"),
    SpecField("training.master_weights", _choice(_("Master weights"), _("An fp32 copy of 16-bit trainable weights. Default: fp32 for full training, none for LoRA/QLoRA adapters."), [("fp32", "fp32"), ("none", _("none"))]), TRAINING_KINDS, "workload"),
    SpecField("training.adapter_precision", _choice(_("Adapter precision"), _("Format of LoRA/QLoRA adapter weights and gradients. Default: bf16."), [("fp32", "fp32"), ("bf16", "bf16"), ("fp16", "fp16")]), ("finetuning",), "workload"),
    SpecField("training.double_quant", _bool(_("Double quantisation (QLoRA)"), _("Quantise the NF4 quantisation constants again (QLoRA only). Default: yes.")), ("finetuning",), "workload"),
    SpecField("training.expert_overlap", _bool(_("Overlap expert all-to-all"), _("MoE only: the expert-parallel all-to-all runs concurrently with compute (DeepSeek DualPipe, Megatron-Bridge overlap_moe_expert_parallel_comm). Default: no.")), ("pretraining", "finetuning"), "workload"),
    SpecField("training.context_parallel", _choice(_("Context parallelism"), _("Split each sequence over this many GPUs (long contexts). Default: chosen by the planner."), [(str(c), str(c)) for c in (1, 2, 4, 8, 16, 32)]), ("pretraining", "finetuning"), "workload"),
    # The exact layout (issue 24, 3.): with data parallelism given, the plan evaluates exactly TP x PP x CP x DP GPUs.
    SpecField("training.tensor_parallel", _int(_("Tensor-parallel degree (training)"), _("Each layer is split over this many GPUs of one server (NVLink). Must divide the attention heads. Default: searched."), min_value=1, max_value=64), ("pretraining", "finetuning"), "workload"),
    SpecField("training.pipeline_parallel", _int(_("Pipeline stages (training)"), _("The layers are split into this many consecutive stages. Default: searched."), min_value=1, max_value=256), ("pretraining", "finetuning"), "workload"),
    SpecField("training.data_parallel", _int(_("Data-parallel replicas"), _("Copies of the model, each training on its share of the batch. Given, it fixes the layout: GPUs = TP x PP x CP x DP, and the plan evaluates exactly that layout. Default: searched."), min_value=1, max_value=65536), TRAINING_KINDS, "workload"),
    SpecField("training.expert_parallel", _int(_("Expert-parallel degree"), _("Mixture-of-experts models only: the routed experts are split over this many GPUs of the data- and context-parallel ranks. Needs data-parallel replicas. Default: chosen by the planner."), min_value=1, max_value=1024), ("pretraining", "finetuning"), "workload"),
    SpecField("training.goodput", _num(_("Goodput"), _("Goodput: the share of wall-clock time spent in useful training steps (restarts after failures and stalls excluded), 0–1. Default: by GPU count from published interruption rates."), min_value=0.01, max_value=1), TRAINING_KINDS, "workload"),
    SpecField("training.zero_stage", _choice(_("ZeRO stage"), _("ZeRO splits the training state across the data-parallel (DP) GPUs, each of which trains on its own share of the batch: stage 1 splits optimizer states, 2 also gradients, 3 also weights (FSDP). Default: the smallest stage that fits."), [("0", "0"), ("1", "1"), ("2", "2"), ("3", "3 / FSDP")]), ("pretraining", "finetuning"), "workload"),
    SpecField("training.activation_checkpointing", _choice(_("Activation checkpointing"), _("Activations are the intermediate results kept for the backward pass; recomputing them saves memory at the cost of compute. Default: chosen by the planner when empty (selective, or full when memory needs it)."), [("none", _("none")), ("selective", _("selective")), ("full", _("full"))]), ("pretraining", "finetuning"), "workload"),
    SpecField("training.deadline_hours", _num(_("Deadline"), _("Wall-clock time the run must finish in. Unit: hours. Default: none."), min_value=0.1), TRAINING_KINDS, "workload"),
    SpecField("training.checkpoint_every_hours", _num(_("Checkpoint every"), _("Unit: hours. Default: 2."), min_value=0.01), TRAINING_KINDS, "workload"),
    SpecField("training.checkpoints_kept", _int(_("Checkpoints kept"), _("Unit: count. Default: 3."), min_value=1), TRAINING_KINDS, "workload"),
    # Serving.
    SpecField("serving.context_length", _int(_("Context length"), _("Longest prompt + answer served. Unit: tokens. Default: input + output tokens."), min_value=1), SERVING_KINDS, "workload"),
    SpecField("serving.input_tokens", _int(_("Input tokens per request"), _("Unit: tokens. Default: 1024."), min_value=1), SERVING_KINDS, "workload"),
    SpecField("serving.output_tokens", _int(_("Output tokens per request"), _("Unit: tokens. Default: 256."), min_value=1), SERVING_KINDS, "workload"),
    SpecField("serving.concurrency", _int(_("Concurrent requests"), _("Requests in flight at peak. Unit: requests. Default: 8."), min_value=1), SERVING_KINDS, "workload"),
    SpecField("serving.requests_per_second", _num(_("Requests per second"), _("Peak arrival rate. Unit: requests/s. Default: 1."), min_value=0), SERVING_KINDS, "workload"),
    SpecField("serving.ttft_p95_ms", _num(_("Time to first token, p95"), _("TTFT: time from sending a request to the first token of the answer, met by 95 % of requests (p95). Latency target. Unit: ms. Default: none."), min_value=1), ("inference", "rag"), "workload"),
    SpecField("serving.tpot_p95_ms", _num(_("Time per output token, p95"), _("TPOT: time between two tokens of one answer (how fast it is written), met by 95 % of requests (p95). Latency target. Unit: ms. Default: none."), min_value=1), ("inference", "rag"), "workload"),
    SpecField("serving.runtime", _choice(_("Serving engine"), _("Runtime that serves the model (vLLM, SGLang, TensorRT-LLM); sets memory budgets and measured efficiencies. Default: vllm."), [("vllm", "vLLM"), ("sglang", "SGLang"), ("trtllm", "TensorRT-LLM"), ("hf_transformers", "Hugging Face Transformers")]), ("inference", "rag"), "workload"),
    SpecField("serving.model_api", lambda: _model_api_field(), ("external_api", "rag"), "workload"),
    SpecField("serving.hours_per_day", _num(_("Hours per day in service"), _("Unit: hours. Default: 24."), min_value=0, max_value=24), SERVING_KINDS, "workload"),
    SpecField("serving.requests_per_day", _num(_("Requests per day"), _("Volume: requests served in a day, e.g. 300 employees x 20 requests = 6000. Prices model-API tokens, traffic and the useful share of GPU time; requests per second is the peak that sizes the GPUs. At most requests per second x 3600 x hours per day. Unit: requests/day. Default: that maximum x 0.3 (a business-hours service averages about a third of its peak)."), min_value=0), SERVING_KINDS, "workload"),
    # RAG.
    SpecField("rag.documents", _int(_("Documents"), _("Documents in the corpus. Unit: count. Required for RAG."), min_value=1), ("rag", "external_api"), "workload"),
    SpecField("rag.tokens_per_document", _int(_("Tokens per document"), _("Unit: tokens. Default: 1000."), min_value=1), ("rag", "external_api"), "workload"),
    SpecField("rag.chunk_tokens", _int(_("Chunk size"), _("Unit: tokens. Default: 512."), min_value=16), ("rag", "external_api"), "workload"),
    SpecField("rag.embedding_model", lambda: forms.ChoiceField(label=_("Embedding model"), required=False, choices=[("", _("default"))] + _encoder_presets(), help_text=_("An encoder preset that embeds the chunks. Default: the engine's default embedding model.")), ("rag", "external_api"), "workload"),
    SpecField("rag.embedding_dimension", _int(_("Embedding dimension"), _("Vector length. Unit: values. Default: the embedding model's dimension."), min_value=1), ("rag", "external_api"), "workload"),
    SpecField("rag.top_k", _int(_("Chunks per query"), _("Retrieved chunks added to each prompt. Unit: count. Default: 5."), min_value=1), ("rag", "external_api"), "workload"),
    SpecField("rag.generator", _choice(_("Generating LLM"), _("Self-hosted on GPUs or a paid external API (no GPU for it). Default: self-hosted."), [("self_hosted", _("self-hosted")), ("external_api", _("external API"))]), ("rag",), "workload"),
    SpecField("rag.index", _choice(_("Vector index"), _("HNSW: a graph index, fast, keeps vectors in memory; IVF-PQ: compressed vectors, less memory, slightly less exact; flat: exact search over every vector. Default: hnsw."), [("flat", "flat"), ("hnsw", "HNSW"), ("ivf_pq", "IVF-PQ")]), ("rag", "external_api"), "workload"),
    SpecField("rag.queries_per_second", _num(_("Queries per second"), _("Retrieval queries at peak. Unit: queries/s. Default: 1."), min_value=0), ("rag", "external_api"), "workload"),
    # Data.
    SpecField("data.dataset_gb", _num(_("Dataset size"), _("Unit: GB (10^9 bytes). Default: 0."), min_value=0), ALL_KINDS, "data"),
    SpecField("data.growth_gb_per_month", _num(_("Dataset growth"), _("Unit: GB per month. Default: 0."), min_value=0), ALL_KINDS, "data"),
    SpecField("data.logs_gb_per_month", _num(_("Logs"), _("Unit: GB per month. Default: 0."), min_value=0), ALL_KINDS, "data"),
    SpecField("data.retention_months", _int(_("Retention"), _("How long logs and data are kept. Unit: months. Default: 12."), min_value=1), ALL_KINDS, "data"),
    # Hardware pins (optional).
    SpecField("hardware.accelerator", lambda: forms.CharField(label=_("Accelerator"), required=False, max_length=120, help_text=_("Pin an accelerator of the catalog by its name (the list opens as you type), e.g. \"H100 SXM5 80GB\". Default: the best fit from the catalog.")), LLM_KINDS + ("classic_training",), "data"),
    SpecField("hardware.count", _int(_("GPU count"), _("Pin the number of accelerators. Unit: GPUs. Default: the smallest count that meets the targets."), min_value=1, max_value=65536), LLM_KINDS + ("classic_training",), "data"),
    SpecField("hardware.tensor_parallel", _int(_("Tensor-parallel degree"), _("Tensor parallelism (TP): each layer is split over this many GPUs of one replica (they need a fast link such as NVLink). With accelerator and count the plan evaluates exactly this layout. Must divide the attention heads. Default: searched."), min_value=1, max_value=64), ("inference", "rag"), "data"),
    SpecField("hardware.pipeline_parallel", _int(_("Pipeline stages"), _("Pipeline parallelism (PP): one replica's layers are split into this many consecutive stages on different GPUs. Default: searched."), min_value=1, max_value=256), ("inference", "rag"), "data"),
    SpecField("hardware.gpus_per_server", _int(_("GPUs per server"), _("Unit: GPUs. Default: chosen by the engine."), min_value=1, max_value=16), LLM_KINDS + ("classic_training",), "data"),
    SpecField("hardware.power_budget_kw", _num(_("Site power budget"), _("IT power the site can give the servers at full load. Unit: kW. Bought (on-prem) options that need more are not chosen, and the plan says how many GPUs the budget allows. Default: no limit."), min_value=0.001, max_value=1000000), LLM_KINDS + ("classic_training",), "data"),
    SpecField("hardware.racks", _int(_("Racks available"), _("Racks free for the servers (air-cooled racks of 15 kW, as the sizing assumes). Unit: racks. Default: no limit."), min_value=1, max_value=100000), LLM_KINDS + ("classic_training",), "data"),
    SpecField("hardware.mfu", _num(_("Model FLOPs utilisation"), _("MFU: the share of the GPUs' peak compute a training run actually uses, 0–1 (typically 0.3–0.5). Default: a documented preset by GPU generation and scale."), min_value=0.01, max_value=1), LLM_KINDS + ("classic_training",), "data"),
)
FIELD_BY_PATH = {f.path: f for f in FIELDS}

MODEL_SOURCES = [("preset", _("Preset")), ("architecture", _("Architecture")), ("hf_config", _("Hugging Face config.json"))]

# Step headings, in order.
STEPS = [
    ("basics", _("1. Workload")),
    ("model", _("2. Model")),
    ("workload", _("3. Scale")),
    ("data", _("4. Data and hardware")),
    ("costs", _("5. Costs")),
]


def preset_choices():
    from planner.engine.presets import list_presets

    return [(p["id"], p.get("name") or p["id"]) for p in (_preset_dict(p) for p in list_presets())]


def _preset_dict(preset) -> dict:
    if isinstance(preset, dict):
        return preset
    if hasattr(preset, "to_dict"):
        return preset.to_dict()
    return {k: getattr(preset, k) for k in ("id", "name") if hasattr(preset, k)}


COST_FIELDS = ("horizon_months", "currency", "include_vat", "utilisation", "efficiency", "runs", "runs_per_month",
               "discount_rate", "vat_recoverable", "downtime_cost_per_hour", "decision_basis", "data_residency",
               "overrides", "more")
OPTIONAL_SHARES = ("utilisation", "efficiency")  # left out of the options when empty
# optional cost options (issue 13), left out when empty
OPTIONAL_COSTS = ("runs", "runs_per_month", "discount_rate", "downtime_cost_per_hour")
