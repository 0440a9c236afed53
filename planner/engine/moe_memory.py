"""Expert parallelism in training memory: each EP rank holds 1/EP of a pipeline stage's routed experts.

Megatron-Core lays the routed experts of a stage over EP ranks taken from the data- and
context-parallel ranks (expert tensor parallelism = TP by default), so per GPU the replicated
weights, gradients and optimizer states of the routed experts shrink by (1 - 1/EP). A ZeRO-sharded
part is unchanged: it is sharded over DP x CP / EP expert-data-parallel ranks instead of DP x CP,
E / (TP PP EP) x b / (DP CP / EP) = E / (TP PP) x b / (DP CP). Applied where EP is pinned
(training.expert_parallel); otherwise the experts are counted split by TP x PP only (moe_comm.py).
"""

from __future__ import annotations

import numpy as np

from .architecture import _ffn_params
from .memory import NF4_BYTES_PER_PARAM, fullest_stage_layers
from .precision import weight_bytes_per_param


def routed_expert_params(a) -> float:
    """Parameters of the routed experts (the part expert parallelism splits); 0 for a dense model."""
    if not a.is_moe or not a.hidden_size:
        return 0.0
    width = a.moe_ffn_hidden_size or a.ffn_hidden_size
    return float(max(a.layers - a.dense_layers, 0) * a.experts * _ffn_params(a.hidden_size, width, a.gated_ffn))


def expert_parallel_saving(a, *, method: str, weights: str, double_quant: bool, bpp: dict, states_pp: float,
                           tp, pp, ep, zero):
    """Bytes per GPU EP removes from (weights, gradients, optimizer). `bpp`: bytes per trainable parameter
    (search.trainable_bytes_per_param); `states_pp`: optimizer-state bytes on the GPU (0 when paged)."""
    tp, pp, zero = (np.asarray(x, dtype=float) for x in (tp, pp, zero))
    ep = float(ep or 1)
    most = fullest_stage_layers(a, pp)  # the fullest stage's ceil(L/PP) layers (memory.params_per_gpu)
    share = 1.0 / pp if most is None else most / float(a.layers)
    cut = routed_expert_params(a) * share / tp * (1.0 - 1.0 / ep)
    if method != "full":  # the routed experts are frozen base weights
        frozen = NF4_BYTES_PER_PARAM[double_quant] if method == "qlora" else weight_bytes_per_param(weights)
        return np.where(zero < 3, cut * frozen, 0.0), np.zeros_like(cut), np.zeros_like(cut)
    return (np.where(zero < 3, cut * bpp["weights"], 0.0), np.where(zero < 2, cut * bpp["gradients"], 0.0),
            np.where(zero < 1, cut * (bpp["master"] + states_pp), 0.0))
