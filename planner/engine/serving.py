"""Serving sizing, public face (docs/SIZING.md, "Serving model").

The model lives in three modules:
- serving_constants.py: runtimes (vllm, sglang, trtllm, hf_transformers), their memory budgets and
  the few fitted efficiency constants; `serving_constants(accelerator, runtime, precision)`;
- serving_model.py: engine steps under continuous batching and the load (open and closed loop);
- serving_layout.py: one exact layout, `evaluate_layout(...)`; serving_replay.py replays measured rows.
"""

from __future__ import annotations

from .serving_constants import RUNTIMES, serving_constants
from .serving_layout import evaluate_layout

# Encoder embedding (RAG ingest): share of dense peak an encoder's batched forward pass reaches.
# Assumption (no measured embedding rows): the vLLM prefill efficiency fitted on H100, rounded.
EMBEDDING_EFFICIENCY = 0.5

__all__ = ["RUNTIMES", "embedding_throughput_tokens_s", "evaluate_layout", "serving_constants"]


def embedding_throughput_tokens_s(*, params: float, peak_tflops, efficiency=EMBEDDING_EFFICIENCY):
    """Encoder embedding throughput: 2 FLOPs per parameter per token at the embedding efficiency."""
    return peak_tflops * 1e12 * efficiency / (2.0 * params)
