"""Plain Hugging Face transformers inference memory with eager attention (issue 24, 4.).

`serving.runtime: hf_transformers` is `model.generate()` with `attn_implementation="eager"`: the prompt's
forward pass materialises every layer's s x s attention scores, one layer at a time, instead of the O(s)
state of FlashAttention / SDPA / paged kernels. What is alive at the peak follows the code of
`eager_attention_forward` (transformers, models/llama/modeling_llama.py; Mistral, Qwen2/3, Gemma and the
other Llama-derived models share it):

    key_states = repeat_kv(key, n_rep)             # K and V expanded to every query head: 2 x s x heads x d
    attn_weights = torch.matmul(query, key_states.transpose(2, 3)) * scaling
                                                   # the product and the scaled copy: 2 x b
    attn_weights = attn_weights + causal_mask      # a new tensor while the old is alive: 2 x b
    attn_weights = softmax(attn_weights, dim=-1, dtype=torch.float32).to(query.dtype)
                                                   # input (b) + fp32 result (4) + the cast back (b): 2b + 4

so the scores peak at (2 x b + 4) bytes per element for a 16-bit model (b = 2: 8 bytes), 8 bytes in fp32
(the cast back is then a no-op), times batch x heads x s x s (heads split over TP). The 4-D causal mask
the model builds once per forward for eager attention (batch x 1 x s x s in the model's dtype) is alive
across all layers. HF's DynamicCache grows each layer's K/V by `torch.cat`, so during a decode step one
layer's cache exists twice: 1/layers of the KV cache on top (transformers, cache_utils.py,
DynamicLayer.update). The HF docs' own arithmetic of one score copy, heads x 2 bytes x N^2 in bf16
("Optimizing LLMs for Speed and Memory", section 2: 40 heads, N = 16,000 -> "19 GB"), is the
(`copies=1`) term of this; its measured eager-vs-flash peaks of OctoCoder are cited in docs/SIZING.md.
"""

from __future__ import annotations

import numpy as np

from .architecture import ModelArch
from .precision import BYTES_PER_VALUE

EAGER_ATTENTION_RUNTIMES = ("hf_transformers",)
SOFTMAX_BYTES = BYTES_PER_VALUE["fp32"]  # softmax(..., dtype=torch.float32)


def model_dtype_bytes(compute_precision: str) -> float:
    """Bytes per activation value: fp32 models run in fp32, everything else in a 16-bit dtype (the
    weights of int8/int4/fp8 checkpoints are dequantised to bf16/fp16 for the matmuls)."""
    return BYTES_PER_VALUE["fp32" if compute_precision == "fp32" else "bf16"]


def score_bytes_per_element(compute_precision: str, copies: int | None = None) -> float:
    """Bytes per score element alive at the peak (copies=1: one score tensor in the model's dtype)."""
    b = model_dtype_bytes(compute_precision)
    if copies == 1:
        return b
    return 2.0 * b + SOFTMAX_BYTES if b < SOFTMAX_BYTES else 2.0 * SOFTMAX_BYTES


def eager_attention_bytes(a: ModelArch, *, tokens, tp, compute_precision: str, batch=1.0) -> np.ndarray:
    """Peak bytes per GPU the eager attention of one prompt forward pass adds: one layer's scores at their
    peak + the repeated K/V of that layer + the 4-D causal mask (kept for the whole forward)."""
    if not a.is_transformer or not a.attention_heads:
        return np.zeros(np.broadcast(np.asarray(tokens, dtype=float), np.asarray(tp, dtype=float)).shape)
    s = np.asarray(tokens, dtype=float)
    tp = np.asarray(tp, dtype=float)
    heads = a.attention_heads / tp
    b = model_dtype_bytes(compute_precision)
    scores = batch * heads * s * s * score_bytes_per_element(compute_precision)
    repeated_kv = 2.0 * batch * heads * s * float(a.head_dim or (a.hidden_size // a.attention_heads)) * b
    mask = batch * s * s * b
    return scores + repeated_kv + mask


def dynamic_cache_transient_share(a: ModelArch) -> float:
    """Extra share of the KV cache alive while DynamicCache concatenates one layer's new K/V."""
    return 1.0 / max(a.layers or 1, 1)
