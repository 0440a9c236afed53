"""Model architecture as numbers, and the exact arithmetic on it: parameters and KV-cache bytes.

Conventions (docs/SIZING.md): decoders are Llama-style (RMSNorm with one weight vector, no
linear biases unless `attention_bias`), encoders are BERT-style (biases everywhere, LayerNorm
with bias, learned positions, 2 token types, pooler). MoE layers hold `experts` routed experts
plus `shared_experts` always-on experts of width `moe_ffn_hidden_size` and a router.
MLA (DeepSeek-V3) caches `kv_lora_rank + qk_rope_head_dim` values per token per layer.
Hybrid models (Qwen3.5) have `linear_attention_layers` (Gated DeltaNet) that cache nothing per
token but hold a fixed recurrent state of `linear_state_values_per_layer` values per sequence,
kept in float32 (the config's `mamba_ssm_dtype`).
"""

from __future__ import annotations

from dataclasses import dataclass

from . import compressed_attention
from .precision import BYTES_PER_VALUE

MODEL_TYPES = ("decoder", "encoder", "vision", "other")


@dataclass(frozen=True, kw_only=True)
class ModelArch:
    name: str
    model_type: str = "decoder"
    params: int  # parameters used for memory (all experts for MoE)
    params_explain: str = ""
    active_params: int  # parameters used per token (MoE: routed top-k + shared)
    layers: int | None = None
    hidden_size: int | None = None
    attention_heads: int | None = None
    kv_heads: int | None = None
    head_dim: int | None = None
    ffn_hidden_size: int | None = None
    gated_ffn: bool = True
    vocab_size: int | None = None
    tied_embeddings: bool = False
    max_position_embeddings: int | None = None
    attention_bias: bool = False
    qk_norm: bool = False  # Qwen3/Gemma 3: one RMSNorm weight per head dim for q and for k
    norms_per_layer: int = 2  # Gemma 2/3 have 4
    experts: int = 0
    experts_per_token: int = 0
    shared_experts: int = 0
    moe_ffn_hidden_size: int | None = None
    dense_layers: int = 0  # leading dense layers of an MoE model (DeepSeek-V3: 3)
    kv_lora_rank: int | None = None  # MLA
    q_lora_rank: int | None = None
    qk_rope_head_dim: int | None = None
    v_head_dim: int | None = None
    sliding_window: int | None = None
    local_layers: int = 0  # layers whose attention is limited to sliding_window
    flops_per_sample: float | None = None  # non-transformers: forward FLOPs (2 per MAC)
    embedding_dim: int | None = None  # embedding models: output vector size
    linear_attention_layers: int = 0  # hybrid models: layers with a fixed state instead of a KV cache
    linear_state_values_per_layer: int = 0  # values of that state per sequence per layer
    mtp_layers: int = 0  # multi-token-prediction layers shipped with the checkpoint (not in params)
    # DeepSeek-V4 compressed attention (compressed_attention.py): per-layer compress ratio (0 window only,
    # 4 CSA, 128 HCA) of the main layers, the CSA indexer and the grouped output projection.
    compress_ratios: tuple[int, ...] = ()
    index_topk: int = 0
    index_heads: int = 0
    index_head_dim: int = 0
    o_lora_rank: int | None = None
    o_groups: int = 0
    # Hyper-connections (DeepSeek-V4 mHC, hyper_connections.py): residual streams per token (config
    # hc_mult); 0 or 1: a plain residual.
    hc_mult: int = 0
    checkpoint_weights: str = ""  # the published checkpoint's storage per part (precision.WeightFormat); "" = 16-bit
    checkpoint_weights_source: str = ""  # the config it was read from, and when
    preset_id: str = ""
    source: str = ""

    @property
    def is_transformer(self) -> bool:
        return self.layers is not None and self.hidden_size is not None

    @property
    def is_moe(self) -> bool:
        return self.experts > 0

    @property
    def moe_layers(self) -> int:
        """Layers with routed experts (all but the leading dense ones; 0 for a dense model)."""
        return max((self.layers or 0) - (self.dense_layers or 0), 0) if self.is_moe else 0

    @property
    def is_mla(self) -> bool:
        return self.kv_lora_rank is not None

    @property
    def is_compressed_attention(self) -> bool:
        return bool(self.compress_ratios)

    @property
    def has_kv_cache(self) -> bool:
        return self.model_type == "decoder" and self.is_transformer


def _attention_params(a: ModelArch) -> int:
    h, heads = a.hidden_size, a.attention_heads
    if a.is_mla:
        rope = a.qk_rope_head_dim or 0
        nope = (a.head_dim or 0) - rope
        v_dim = a.v_head_dim or nope
        if a.q_lora_rank:
            q = h * a.q_lora_rank + a.q_lora_rank + a.q_lora_rank * heads * (nope + rope)
        else:
            q = h * heads * (nope + rope)
        kv = h * (a.kv_lora_rank + rope) + a.kv_lora_rank + a.kv_lora_rank * heads * (nope + v_dim)
        return q + kv + heads * v_dim * h
    hd = a.head_dim
    q = h * heads * hd
    kv = 2 * h * a.kv_heads * hd
    o = heads * hd * h
    bias = (heads * hd + 2 * a.kv_heads * hd) if a.attention_bias else 0
    return q + kv + o + bias + (2 * hd if a.qk_norm else 0)


def _ffn_params(h: int, width: int, gated: bool) -> int:
    return (3 if gated else 2) * h * width


def count_params(a: ModelArch) -> tuple[int, int]:
    """Exact (total, active-per-token) parameter counts of a transformer architecture."""
    h, L = a.hidden_size, a.layers
    if a.model_type == "encoder":
        # BERT: every linear has a bias, LayerNorms have weight+bias, pooler on top.
        hd_all = a.attention_heads * a.head_dim
        attn = 3 * (h * hd_all + hd_all) + hd_all * h + h
        ffn = h * a.ffn_hidden_size + a.ffn_hidden_size + a.ffn_hidden_size * h + h
        per_layer = attn + ffn + 4 * h
        emb = (a.vocab_size + (a.max_position_embeddings or 512) + 2) * h + 2 * h
        total = L * per_layer + emb + h * h + h
        return total, total
    attn = _attention_params(a)
    attn_all = L * attn
    if a.is_compressed_attention:
        attn_all = compressed_attention.attention_params_total(a)
    norms = a.norms_per_layer * h
    emb = a.vocab_size * h * (1 if a.tied_embeddings else 2)
    if a.is_moe:
        width = a.moe_ffn_hidden_size or a.ffn_hidden_size
        expert = _ffn_params(h, width, a.gated_ffn)
        router = h * a.experts + (a.experts if a.is_mla or a.is_compressed_attention else 0)  # DeepSeek routing bias
        moe_layers = L - a.dense_layers
        dense_ffn = _ffn_params(h, a.ffn_hidden_size, a.gated_ffn) if a.dense_layers else 0
        total = (
            attn_all + L * norms
            + a.dense_layers * dense_ffn
            + moe_layers * ((a.experts + a.shared_experts) * expert + router)
            + emb
            + h
        )
        inactive = moe_layers * (a.experts - a.experts_per_token) * expert
        return total, total - inactive
    total = attn_all + L * (norms + _ffn_params(h, a.ffn_hidden_size, a.gated_ffn)) + emb + h
    return total, total


def embedding_and_head_params(a: ModelArch) -> int:
    """Input embedding + lm_head parameters of a decoder (one matrix when tied)."""
    if not a.is_transformer or not a.vocab_size or not a.hidden_size:
        return 0
    return a.vocab_size * a.hidden_size * (1 if a.tied_embeddings else 2)


def kv_values_per_token_per_layer(a: ModelArch) -> int:
    """Cached values per token per layer: 2*kv_heads*head_dim (MHA/GQA) or the MLA latent."""
    if a.is_mla:
        return a.kv_lora_rank + (a.qk_rope_head_dim or 0)
    return 2 * a.kv_heads * a.head_dim


LINEAR_STATE_BYTES_PER_VALUE = 4  # float32: Qwen3.5 config `mamba_ssm_dtype`


def kv_layers(a: ModelArch) -> int:
    """Layers that cache K/V per token (all but the linear-attention layers of a hybrid model)."""
    return a.layers - a.linear_attention_layers


def linear_state_bytes_per_sequence(a: ModelArch) -> float:
    """Fixed recurrent state of the linear-attention layers, per sequence (0 for other models)."""
    return float(a.linear_attention_layers * a.linear_state_values_per_layer * LINEAR_STATE_BYTES_PER_VALUE)


def kv_cache_bytes_per_token(a: ModelArch, *, kv_precision: str) -> float:
    """Bytes of KV cache one token adds in every KV-caching layer (full-attention view; compressed
    attention: what each token adds past the window, kv_fixed_bytes_per_sequence holds the rest)."""
    if not a.has_kv_cache:
        return 0.0
    if a.is_compressed_attention:
        return compressed_attention.kv_bytes_per_context_token(a, kv_precision=kv_precision)
    return kv_layers(a) * kv_values_per_token_per_layer(a) * BYTES_PER_VALUE[kv_precision]


def kv_fixed_bytes_per_sequence(a: ModelArch, *, kv_precision: str) -> float:
    """KV bytes a sequence holds whatever its length, beyond kv_cache_bytes_per_token x tokens (compressed
    attention: the full windows and the compressor state; 0 for other models)."""
    if not (a.has_kv_cache and a.is_compressed_attention):
        return 0.0
    return compressed_attention.kv_fixed_bytes_per_sequence(a, kv_precision=kv_precision)


def kv_cache_bytes_per_sequence(a: ModelArch, *, tokens: int, kv_precision: str) -> float:
    """KV bytes for one sequence of `tokens`, local (sliding-window) layers capped at the window,
    plus the fixed state of linear-attention layers (compressed attention: compressed_attention.py)."""
    if not a.has_kv_cache:
        return 0.0
    if a.is_compressed_attention:
        return compressed_attention.kv_bytes_per_sequence(a, tokens=tokens, kv_precision=kv_precision)
    per_layer_token = kv_values_per_token_per_layer(a) * BYTES_PER_VALUE[kv_precision]
    local = a.local_layers if a.sliding_window else 0
    local_tokens = min(tokens, a.sliding_window) if a.sliding_window else tokens
    return (per_layer_token * ((kv_layers(a) - local) * tokens + local * local_tokens)
            + linear_state_bytes_per_sequence(a))


def forward_flops_per_token(a: ModelArch, *, context_tokens: int = 0) -> float:
    """2 FLOPs per active parameter plus attention score/value work over `context_tokens`."""
    base = 2.0 * a.active_params
    if a.is_transformer and a.attention_heads and context_tokens:
        qk_dim = a.head_dim or (a.hidden_size // a.attention_heads)
        base += 4.0 * a.layers * a.attention_heads * qk_dim * context_tokens
    return base
