"""Memory per GPU: model states, activations, KV cache and overhead (docs/SIZING.md).

Functions accept plain numbers or numpy arrays (the candidate search passes arrays of layouts),
so every formula here exists once.
"""

from __future__ import annotations

import numpy as np

from .architecture import ModelArch, embedding_and_head_params, kv_cache_bytes_per_sequence
from .precision import BYTES_PER_VALUE, WeightFormat, weight_bytes_per_param, weight_part_bytes
from .serving_model import moe_split

GIB = 1024**3

# Runtime memory outside tensors: CUDA context + framework + communication buffers (NCCL),
# measured typically at 0.5-1.5 GiB per process; we reserve the upper end.
CUDA_CONTEXT_BYTES = {"training": 1.5 * GIB, "inference": 1.0 * GIB}
# Fragmentation reserve of the caching allocator, as a share of tensor memory. Training
# (many differently sized temporaries) fragments more than paged KV-cache serving (vLLM).
FRAGMENTATION = {"training": 0.10, "inference": 0.05}

# Optimizer state bytes per *trainable* parameter (states only; the fp32 master copy is separate).
# AdamW keeps m and v (2 states); SGD with momentum 1; Adafactor (beta1 = 0, the default) keeps only
# a factored second moment: one row and one column vector per matrix, ~0 per parameter (we count
# 0.01 value/param). 8-bit optimizers (bitsandbytes, Dettmers et al. 2022, arXiv:2110.02861) keep
# each state in 1 byte with one fp32 absmax per block of 2048 values: 1 + 4/2048 bytes.
STATES_PER_PARAM = {"adamw": 2.0, "adamw_8bit": 2.0, "paged_adamw_8bit": 2.0, "sgd": 1.0, "adafactor": 0.01}
EIGHT_BIT_OPTIMIZERS = ("adamw_8bit", "paged_adamw_8bit")
PAGED_OPTIMIZERS = ("paged_adamw_8bit",)  # states in CUDA unified memory, evicted to host RAM
BLOCKWISE_STATE_BYTES = 1.0 + 4.0 / 2048
STATE_BYTES = {"fp32": 4.0, "bf16": 2.0, "int8": BLOCKWISE_STATE_BYTES}
# Mixed precision keeps an fp32 master copy of every trainable 16-bit weight (ZeRO paper, K = 12
# for AdamW: 4 master + 4 m + 4 v); with fp32 weights the weights are their own master.
MASTER_BYTES = {"fp32": 4.0, "none": 0.0}


def optimizer_state_bytes_per_param(*, optimizer: str, states: str) -> float:
    return STATES_PER_PARAM[optimizer] * STATE_BYTES[states]


def master_bytes_per_param(*, master: str, weights: str) -> float:
    return 0.0 if weights == "fp32" else MASTER_BYTES[master]


def optimizer_bytes_per_param(*, optimizer: str, weights: str, states: str | None = None, master: str = "fp32") -> float:
    """Master copy + states per trainable parameter (mixed AdamW: 4 + 8 = 12, the ZeRO paper's K)."""
    states = states or ("int8" if optimizer in EIGHT_BIT_OPTIMIZERS else "fp32")
    return master_bytes_per_param(master=master, weights=weights) + optimizer_state_bytes_per_param(
        optimizer=optimizer, states=states)


def grad_bytes_per_param(*, weights: str) -> float:
    return 4.0 if weights == "fp32" else 2.0


# QLoRA NF4 (Dettmers et al. 2023, arXiv:2305.14314, sec. 3): 4-bit values in blocks of 64 with one
# fp32 absmax each (0.5 bit/param); double quantisation stores those constants in 8 bits with one
# fp32 constant per 256 of them: 8/64 + 32/(64 x 256) = 0.127 bit/param.
NF4_BYTES_PER_PARAM = {True: 0.5 + (8 / 64 + 32 / (64 * 256)) / 8, False: 0.5 + (32 / 64) / 8}


def qlora_frozen_bytes(a: ModelArch, *, params, double_quant: bool):
    """NF4 bytes of the quantised linear weights + the embeddings and output head kept in 16 bits
    (bitsandbytes quantises nn.Linear layers only; the LM head is skipped)."""
    emb = embedding_params(a) * (1 if a.tied_embeddings else 2)
    emb = min(float(emb), float(a.params))
    share = np.asarray(params, dtype=float) / float(a.params)  # this GPU's share of the model
    return share * ((a.params - emb) * NF4_BYTES_PER_PARAM[double_quant] + emb * 2.0)


def lora_adapter_params(a: ModelArch, *, rank: int, targets: tuple[str, ...]) -> int:
    """r x (d_in + d_out) per adapted matrix, every layer (MoE: every expert's FFN)."""
    if not a.is_transformer:
        return 0
    h, hd = a.hidden_size, a.head_dim
    q_out = a.attention_heads * hd
    kv_out = (a.kv_lora_rank + (a.qk_rope_head_dim or 0)) if a.is_mla else a.kv_heads * hd
    ffn = a.moe_ffn_hidden_size if a.is_moe and a.moe_ffn_hidden_size else a.ffn_hidden_size
    ffn_copies = (a.experts + a.shared_experts) if a.is_moe else 1
    shapes = {
        "q": (h, q_out, 1), "k": (h, kv_out, 1), "v": (h, kv_out, 1), "o": (q_out, h, 1),
        "gate": (h, ffn, ffn_copies if a.gated_ffn else 0), "up": (h, ffn, ffn_copies),
        "down": (ffn, h, ffn_copies),
    }
    per_layer = sum(rank * (i + o) * n for t, (i, o, n) in shapes.items() if t in targets)
    return int(a.layers * per_layer)


def embedding_params(a: ModelArch) -> int:
    return (a.vocab_size or 0) * (a.hidden_size or 0)


def fullest_stage_layers(a: ModelArch, pp):
    """Layers on the fullest pipeline stage: ceil(L/PP) when they do not split evenly (compute.stage_balance);
    None without a layer count (the caller splits evenly)."""
    pp = np.asarray(pp, dtype=float)
    if not (a.is_transformer and a.layers):
        return None
    return np.ceil(float(a.layers) / pp)


def params_per_gpu(a: ModelArch, *, tp, pp):
    """Parameters one GPU holds before ZeRO: layers split by tp x pp (the fullest stage's ceil(L/PP) layers),
    input embedding on stage 0."""
    emb = embedding_params(a)
    most = fullest_stage_layers(a, pp)
    share = 1.0 / np.asarray(pp, dtype=float) if most is None else most / float(a.layers)
    return (a.params - emb) * share / tp + emb / tp


def activation_bytes_per_layer(a: ModelArch, *, seq, micro_batch, tp, checkpointing, sequence_parallel,
                               bytes_per_value=2.0, attention="fused"):
    """Korthikanti et al. 2022 (arXiv:2205.05198), 16-bit activations of one transformer layer.

    none:      s*b*h*(34/t) with sequence parallelism, s*b*h*(10 + 24/t) without; with eager
               attention (attention="eager") + s*b*h*5*a*s/(h*t) for the scores, softmax and mask
    selective: s*b*h*(34/t) or s*b*h*(10 + 24/t) (the attention core is recomputed)
    full:      only each layer's input is kept: 2*s*b*h (split by t with sequence parallelism)

    Korthikanti's no-recompute formula has the 5*a*s/(h*t) term for the s x s attention scores,
    softmax and dropout mask. Fused attention kernels (FlashAttention 1-3, PyTorch SDPA's flash and
    memory-efficient backends, cuDNN attention in Transformer Engine) never materialise them: they
    keep the output and one fp32 log-sum-exp per row and recompute the scores in the backward
    pass, which is exactly what selective recomputation stores. Every current training stack
    (Megatron-Core/NeMo, PyTorch FSDP + SDPA, HF Transformers with sdpa/flash_attention_2,
    LitGPT, torchtitan, DeepSpeed) uses them by default, so the planner assumes fused attention
    (training.attention = "fused", the default) and counts that term only for "eager"; the backward recompute of the
    scores is in the attention-core cost (compute.ATTENTION_COST) for every layout alike.
    """
    s, b, h, heads = seq, micro_batch, a.hidden_size or 0, a.attention_heads or 1
    sbh = s * b * h
    sp = np.asarray(sequence_parallel) & (np.asarray(tp) > 1)
    linear = np.where(sp, 34.0 / tp, 10.0 + 24.0 / tp)
    scores = 5.0 * heads * s / (h * tp) if h and attention == "eager" else 0.0
    if checkpointing == "none":
        coef = linear + scores
    elif checkpointing == "selective":
        coef = linear
    else:
        coef = np.where(sp, 2.0 / tp, 2.0)
    return sbh * coef * (bytes_per_value / 2.0)


# Peak of the logits / cross-entropy transient per token and vocabulary entry, by loss path.
# unfused (HF Transformers' ForCausalLMLoss over torch.nn.functional.cross_entropy, PEFT/TRL,
# Unsloth's HF column): the 16-bit logits (2, kept in the model output), their fp32 copy (4), the
# fp32 log-softmax saved for the backward pass (4) and, in the backward pass, the fp32 gradient of
# the log-softmax output (4) while the gradient of its input is written (4), the fp32 copy freed by
# then: 2 + 4 + 4 + 4 = 14 bytes.
# fused (Megatron-Core's vocab-parallel cross-entropy, used by Megatron/NeMo pre-training, and
# NeMo AutoModel/TE): the softmax is computed in place in one fp32 buffer whose gradient overwrites
# it: 4 bytes.
# ASSUMPTION: pre-training runs on a fused stack, fine-tuning on the HF/PEFT unfused path.
LOGITS_BYTES_PER_VALUE = {"fused": 4.0, "unfused": 14.0}


def cross_entropy_path(kind: str) -> str:
    return "fused" if kind == "pretraining" else "unfused"


def inflight_layer_microbatches(a: ModelArch, *, pp, vpp, microbatches=None):
    """Layer x micro-batch activation sets the fullest pipeline stage holds at its peak (the multiplier of
    activation_bytes_per_layer), from the schedule's in-flight counts (Megatron-Core
    pipeline_parallel/schedules.py; Narayanan et al. 2021, arXiv:2104.04473; Korthikanti et al. 2022, sec. 4.2.3):

    1F1B (vpp = 1):   rank r runs min(pp - r - 1, M) warm-up forwards, then one more before its first
                      backward: min(pp - r, M) micro-batches of its layers in flight
    interleaved:      min(2 (pp - r - 1) + (vpp - 1) pp + 1, M vpp) model chunks of layers/vpp layers each
                      (all M vpp chunks when M = pp: "run all forward passes and then all backward passes")

    M = micro-batches per pipeline per step (None: not capped). Rank 0 uncapped is the classic
    pp x L/pp layers, x (1 + (pp-1)/(pp vpp)) when interleaved. Layers that do not split evenly
    (ceil(L/pp) on the fullest stage) leave deficit stages of one layer less; the first of them is the first
    stage, which holds the embedding and the most micro-batches (the Llama 3 paper, arXiv:2407.21783,
    sec. 3.3.2: "we reduce one Transformer layer each from the first and the last stages"; Megatron-Core's
    account_for_embedding_in_pipeline_split / account_for_loss_in_pipeline_split), so the fullest stage is the
    larger of rank 0 (one layer less) and rank 1 (ceil(L/pp) layers)."""
    p = np.asarray(pp, dtype=float)
    v = np.maximum(np.asarray(vpp, dtype=float), 1.0)
    most = fullest_stage_layers(a, p)
    q = (float(a.layers or 0) / p) if most is None else most
    first = q - np.where(q * p > float(a.layers or 0), 1.0, 0.0) if most is not None else q
    m = np.inf if microbatches is None else np.asarray(microbatches, dtype=float)

    def sets(rank, layers):
        chunks = np.minimum(2.0 * (p - rank - 1.0) + (v - 1.0) * p + 1.0, m * v)
        plain = np.minimum(p - rank, m)
        return np.where(v > 1, chunks * layers / v, plain * layers)

    return np.maximum(sets(0.0, first), np.where(p > 1, sets(1.0, q), 0.0))


def training_activation_bytes(a: ModelArch, *, seq, micro_batch, tp, pp, vpp, checkpointing,
                              sequence_parallel, compute_precision, cross_entropy="fused", attention="fused",
                              microbatches=None):
    """Activations on the fullest pipeline stage: per-layer activations x the layer x micro-batch sets
    in flight (inflight_layer_microbatches; M = `microbatches` per pipeline and step caps them).
    The logits and cross-entropy transient is added (with 100k+ vocabularies it is GBs at long
    context): LOGITS_BYTES_PER_VALUE bytes per token and vocabulary entry, split by t."""
    if not a.is_transformer:
        return 0.0
    bpv = 4.0 if compute_precision == "fp32" else 2.0
    per_layer = activation_bytes_per_layer(a, seq=seq, micro_batch=micro_batch, tp=tp,
                                           checkpointing=checkpointing,
                                           sequence_parallel=sequence_parallel, bytes_per_value=bpv,
                                           attention=attention)
    logits = LOGITS_BYTES_PER_VALUE[cross_entropy] * seq * micro_batch * (a.vocab_size or 0) / tp
    return inflight_layer_microbatches(a, pp=pp, vpp=vpp, microbatches=microbatches) * per_layer + logits


def training_model_state_bytes(*, params_gpu, trainable_gpu, frozen_weight_bytes_pp, trainable_weight_bytes_pp,
                               grad_bytes_pp, optimizer_bytes_pp, zero_stage, dp):
    """(weights, gradients, optimizer) bytes per GPU with ZeRO sharding over dp.

    Stage 1 shards optimizer state, 2 also gradients, 3 (= FSDP full shard) also weights
    (Rajbhandari et al. 2020). LoRA: frozen base weights are never sharded by stages 1-2.
    """
    zero = np.asarray(zero_stage)
    dp = np.asarray(dp, dtype=float)
    frozen = (params_gpu - trainable_gpu) * frozen_weight_bytes_pp
    trainable_w = trainable_gpu * trainable_weight_bytes_pp
    weights = np.where(zero >= 3, (frozen + trainable_w) / dp, frozen + trainable_w)
    grads = trainable_gpu * grad_bytes_pp / np.where(zero >= 2, dp, 1.0)
    optim = trainable_gpu * optimizer_bytes_pp / np.where(zero >= 1, dp, 1.0)
    return weights, grads, optim


def overhead_bytes(*, tensors, mode: str):
    """CUDA context + fragmentation reserve on `tensors`: in training only the transient ones
    (activations, gradients) are allocated and freed every step; weights and optimizer states
    are allocated once and do not fragment."""
    return CUDA_CONTEXT_BYTES[mode] + FRAGMENTATION[mode] * tensors


def inference_weight_bytes(a: ModelArch, *, weights: str) -> float:
    """All weights of one replica; a checkpoint's mixed format counts each part in its own bytes."""
    if not isinstance(weights, WeightFormat):
        return a.params * weight_bytes_per_param(weights)
    rest, routed = moe_split(a)
    rest_bytes, expert_bytes = weight_part_bytes(weights, rest_params=rest, expert_params=routed,
                                                 embedding_params=embedding_and_head_params(a))
    return rest_bytes + expert_bytes


def inference_activation_bytes(a: ModelArch, *, tokens_in_flight, tp, compute_precision: str):
    """Working memory of one forward pass over `tokens_in_flight` tokens (chunked prefill):
    the residual stream, attention and FFN intermediates of one layer at a time (~ 4h + 2*ffn
    values per token) plus fp32 logits for one position per sequence; freed between layers."""
    if not a.is_transformer:
        return 0.0
    bpv = BYTES_PER_VALUE["fp32" if compute_precision == "fp32" else "bf16"]
    ffn = a.moe_ffn_hidden_size * a.experts_per_token if a.is_moe and a.moe_ffn_hidden_size else a.ffn_hidden_size
    return tokens_in_flight * (4 * a.hidden_size + 2 * ffn) * bpv / tp + 4.0 * (a.vocab_size or 0) * 256 / tp


def kv_split(a: ModelArch, tp):
    """KV heads split across tensor-parallel ranks; with fewer KV heads than ranks they replicate."""
    if a.is_mla:
        return np.ones_like(np.asarray(tp, dtype=float))  # MLA latent is replicated per rank
    return np.minimum(np.asarray(tp, dtype=float), a.kv_heads or 1)


def kv_bytes_per_sequence(a: ModelArch, *, tokens: int, kv_precision: str) -> float:
    return kv_cache_bytes_per_sequence(a, tokens=tokens, kv_precision=kv_precision)
