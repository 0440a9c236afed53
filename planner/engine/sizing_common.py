"""What every kind's sizing shares: the engine version, the stated assumptions, the model section."""

from __future__ import annotations

from catalog.domain.messages import Msg

from . import memory
from .architecture import (
    embedding_and_head_params,
    kv_cache_bytes_per_token,
    kv_layers,
    kv_values_per_token_per_layer,
    linear_state_bytes_per_sequence,
)
from .precision import WEIGHT_SCHEMES, WeightFormat, weight_bytes_per_param
from .result import q
from .serving_model import moe_split
from .spec import WorkloadSpec

ENGINE_VERSION = "1.1.0"  # 1.1: serving on the continuous-batching model fitted on measured engines
GIB = memory.GIB

GIB_ASSUMPTION = Msg("1 GiB = 2^30 bytes; accelerator memory is taken as memory_gib x 2^30 bytes.")
# What a plan states it assumed, by the kind of work: a serving plan does not list optimizer states.
TRAINING_ASSUMPTIONS = (
    GIB_ASSUMPTION,
    Msg("Optimizer state convention: mixed-precision AdamW = 16 bytes/parameter (2 weights + 2 gradients + "
        "12 fp32 master+m+v), as in the ZeRO paper (K=12)."),
    Msg("Training efficiency is a fitted model of GEMM width per GPU, attention share, pipeline bubble, accelerator "
        "generation and compute format (docs/SIZING.md); goodput (useful share of wall-clock) defaults by GPU count "
        "from Llama 3's interruption rate. Override with hardware.mfu / training.goodput. Time ranges use 0.75x-1.2x "
        "the efficiency."),
    Msg("Training activations assume fused attention (FlashAttention / PyTorch SDPA / cuDNN; "
        "training.attention = eager counts them): the s x s attention scores are recomputed in the backward pass, "
        "never stored. The logits and cross-entropy are "
        "counted fused for pre-training (one fp32 value per token and vocabulary entry, Megatron-Core) and unfused "
        "for fine-tuning (HF: 16-bit logits, fp32 copy, fp32 log-softmax and its gradient, 14 bytes)."),
)
SERVING_ASSUMPTIONS = (
    GIB_ASSUMPTION,
    Msg("Serving: continuous-batching engine steps (max of compute and memory traffic per step) with per-runtime "
        "constants fitted on 552 measured points (serving_measured.csv; error in docs/BENCHMARKS.md); replicas are "
        "planned so the p95 TTFT/TPOT hold at the stated load (open loop at requests_per_second, closed loop at "
        "concurrency)."),
)


# Activation checkpointing modes as texts (the layout itself keeps the codes).
CKPT_TEXT = {"none": Msg("none"), "selective": Msg("selective"), "full": Msg("full")}


def _fmt_gib(b: float) -> str:
    return Msg("{b:,.1f} GiB", b=b / GIB)


# ------------------------------------------------------------------------------------- model


def checkpoint_assumption(spec: WorkloadSpec) -> tuple:
    """The stated assumption when the weights default to the checkpoint's own format (spec.py)."""
    w = spec.precision.weights
    if not isinstance(w, WeightFormat):
        return ()
    return (Msg("Weights in the published checkpoint's own format ({format}), as its config says: {source}. "
                "Matmuls default to {compute} where the chip has units for it, else the weights are dequantised "
                "in the kernel (weight-only). precision.weights sizes another format (bf16: the 16-bit weights).",
                format=w.text, source=spec.model.checkpoint_weights_source, compute=spec.precision.compute),)


def _weight_bytes_explain(spec: WorkloadSpec) -> Msg:
    a, w = spec.model, spec.precision.weights
    if not isinstance(w, WeightFormat):
        bpp = weight_bytes_per_param(w)
        return (Msg("{params:,} parameters x {bpp:g} bytes ({weights}", params=a.params, bpp=bpp, weights=w)
                + (Msg(", incl. group-128 scales") if w == "int4" else "") + ")")
    rest, routed = moe_split(a)
    emb = embedding_and_head_params(a) if w.parts["embeddings"] != w.parts["rest"] else 0
    b = {part: WEIGHT_SCHEMES[scheme][1] for part, scheme in w.parts.items()}
    out = Msg("checkpoint format: ")
    if routed:
        out += Msg("{params:,.0f} routed-expert parameters x {bpp:g} bytes ({scheme}) + ",
                   params=routed, bpp=b["experts"], scheme=w.parts["experts"])
    out += Msg("{params:,.0f} other parameters x {bpp:g} bytes ({scheme})",
               params=rest - emb, bpp=b["rest"], scheme=w.parts["rest"])
    if emb:
        out += Msg(" + {params:,.0f} embedding and lm_head parameters x {bpp:g} bytes ({scheme})",
                   params=emb, bpp=b["embeddings"], scheme=w.parts["embeddings"])
    return out + Msg("; bytes include the block/group scales (docs/SIZING.md)")


def _model_section(spec: WorkloadSpec) -> dict:
    a, p = spec.model, spec.precision
    out = {
        "name": a.name,
        "preset_id": a.preset_id,  # None for a typed architecture: the cost engine's like-for-like API check
        "source": a.source or spec.model_source,
        "model_type": a.model_type,
        "params": q(a.params, "params", a.params_explain),
        "active_params": q(a.active_params, "params",
                           Msg("MoE: {experts_per_token} of {experts} routed experts", experts_per_token=a.experts_per_token, experts=a.experts)
                           + (Msg(" + {shared_experts} shared", shared_experts=a.shared_experts) if a.shared_experts else "")
                           + Msg(" per token")
                           if a.is_moe else Msg("dense model: every parameter is used for every token")),
        "weight_bytes": q(memory.inference_weight_bytes(a, weights=p.weights), "bytes", _weight_bytes_explain(spec)),
    }
    if a.has_kv_cache:
        per_layer = kv_values_per_token_per_layer(a)
        how = (Msg("MLA latent: (kv_lora_rank {kv_lora_rank} + rope {qk_rope_head_dim}) x {layers} layers", kv_lora_rank=a.kv_lora_rank, qk_rope_head_dim=a.qk_rope_head_dim, layers=a.layers)
               if a.is_mla else Msg("2 (K,V) x {layers} layers x {kv_heads} KV heads x {head_dim} head_dim", layers=a.layers, kv_heads=a.kv_heads, head_dim=a.head_dim))
        note = ""
        if a.sliding_window and a.local_layers:
            note = Msg("; {local_layers} layers keep at most {sliding_window} tokens (sliding window)", local_layers=a.local_layers, sliding_window=a.sliding_window)
        if a.linear_attention_layers:
            how = Msg("2 (K,V) x {layers} full-attention layers x {kv_heads} KV heads x {head_dim} head_dim", layers=kv_layers(a), kv_heads=a.kv_heads, head_dim=a.head_dim)
            note += Msg("; {linear_layers} linear-attention layers hold no per-token KV but a fixed state of {state_bytes:,.0f} bytes per sequence", linear_layers=a.linear_attention_layers, state_bytes=linear_state_bytes_per_sequence(a))
        out["kv_cache_bytes_per_token"] = q(kv_cache_bytes_per_token(a, kv_precision=p.kv_cache), "bytes",
                                            Msg("{how} x {v:g} bytes ({kv_cache}){note}", how=how, v=per_layer and (kv_cache_bytes_per_token(a, kv_precision=p.kv_cache) / (kv_layers(a) * per_layer)), kv_cache=p.kv_cache, note=note))
    else:
        out["kv_cache_bytes_per_token"] = q(0, "bytes", Msg("no KV cache: not an autoregressive decoder"))
    if a.flops_per_sample:
        out["flops_per_sample"] = q(a.flops_per_sample, "FLOP", Msg("forward FLOPs per input (2 FLOPs per multiply-accumulate)"))
    return out
