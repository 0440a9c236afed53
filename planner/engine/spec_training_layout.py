"""Validation of a pinned training layout (issue 24, 3.): training.data_parallel makes the layout exact.

With `training.data_parallel` the plan evaluates exactly TP x PP x CP x DP GPUs (training_layout.py), so
every rule Megatron-Core checks when it builds its process groups is a field error here, before anything
is written (megatron/core/parallel_state.py, initialize_model_parallel; megatron/training/arguments.py):

* world size = TP x PP x CP x DP (`hardware.count`, when given, must equal it);
* expert parallelism is carved out of the data- and context-parallel ranks of one pipeline stage (expert
  tensor parallelism defaulting to TP): EP must divide DP x CP, and the experts (`num_moe_experts % EP`);
* the global batch is whole micro-batches on every data-parallel rank: global batch (sequences) must be a
  multiple of micro_batch_size x DP (`global_batch_size % (micro_batch_size * data_parallel_size)`).

Layers need not split evenly into PP x VP model chunks (Megatron-Core splits 61 DeepSeek-V3 layers with an
explicit `pipeline_model_parallel_layout`, 94 Qwen3-235B layers with the embedding and loss counted as layers;
the fullest stage sets the step and the memory: compute.stage_balance), but every chunk holds a layer.

Context parallelism's rule (sequence a multiple of 2 x CP) is read with the field (spec_sections.py); FP8
on a chip without FP8 units needs the catalog and is judged where the accelerator is known
(training_layout.check_precision_on_chip).
"""

from __future__ import annotations

from collections.abc import Mapping

from catalog.domain.messages import Msg

from .spec_reader import _Reader

P = "training"


def exact_layout_batch(r: _Reader, t: Mapping, *, kind: str, seq: int, mbs: int, dp: int | None,
                       gbt: int | None, gbs: int | None) -> tuple[int | None, int | None]:
    """With data_parallel pinned: the global batch must be whole micro-batches on every rank. A given
    batch that is not is a field error; the default batch is rounded up to the next multiple."""
    if not dp:
        return gbt, gbs
    if kind == "classic_training":
        unit = mbs * dp
        if "global_batch_size" in t:
            if gbs % unit:
                r.err(f"{P}.global_batch_size", Msg(
                    "must be a multiple of micro_batch_size x data_parallel ({unit:,}) so every data-parallel rank "
                    "runs whole micro-batches, got {gbs:,}", unit=unit, gbs=gbs))
            return gbt, gbs
        return gbt, -(-gbs // unit) * unit
    unit = seq * mbs * dp
    if "global_batch_tokens" in t:
        if gbt % unit:
            r.err(f"{P}.global_batch_tokens", Msg(
                "must be a multiple of sequence_length x micro_batch_size x data_parallel ({unit:,} tokens) so every "
                "data-parallel rank runs whole micro-batches, got {gbt:,}", unit=unit, gbt=gbt))
        return gbt, gbs
    return -(-gbt // unit) * unit, gbs


def check_training_layout(r: _Reader, t, hw, *, kind: str, model) -> None:
    """The pinned layout against the GPU count and the model (t: the read TrainingSpec)."""
    if t is None:
        return
    ep = t.expert_parallel
    if ep is not None and ep > 1 and model is not None and not model.is_moe:
        r.err(f"{P}.expert_parallel", Msg("expert parallelism splits the experts of a mixture-of-experts model; "
                                          "{name} is dense", name=model.name))
        return
    if ep is not None and model is not None and model.is_moe and model.experts and model.experts % ep:
        r.err(f"{P}.expert_parallel", Msg("must divide the {experts} experts of {name}, got {ep}",
                                          experts=model.experts, name=model.name, ep=ep))
    dp = t.data_parallel
    if dp is None:
        if ep is not None:
            r.err(f"{P}.expert_parallel", Msg("pins an exact layout: give training.data_parallel too (the GPU count "
                                              "is then tensor x pipeline x context x data parallel)"))
        return
    if kind == "classic_training" and ((t.tensor_parallel or 1) > 1 or (t.pipeline_parallel or 1) > 1):
        r.err(f"{P}.tensor_parallel", Msg("classic_training runs data parallel only: tensor and pipeline "
                                          "parallel must be 1"))
        return
    tp, pp, cp = t.tensor_parallel or 1, t.pipeline_parallel or 1, t.context_parallel or 1
    n = tp * pp * cp * dp
    if n > 65536:
        r.err(f"{P}.data_parallel", Msg("tensor x pipeline x context x data parallel = {n:,} GPUs, more than the "
                                        "65,536 a plan holds", n=n))
    elif hw.count is not None and hw.count != n:
        r.err("hardware.count", Msg(
            "must equal tensor_parallel x pipeline_parallel x context_parallel x data_parallel = {tp} x {pp} x {cp} x "
            "{dp} = {n:,} when training.data_parallel pins the layout (each GPU holds one rank), got {count:,}",
            tp=tp, pp=pp, cp=cp, dp=dp, n=n, count=hw.count))
    if ep is not None and ep > 1 and (dp * cp) % ep:
        r.err(f"{P}.expert_parallel", Msg(
            "must divide data_parallel x context_parallel ({n}): Megatron-Core takes the expert-parallel ranks from "
            "the data- and context-parallel ranks of one pipeline stage, got {ep}", n=dp * cp, ep=ep))
    if model is not None and model.is_transformer and t.virtual_pipeline_stages and t.virtual_pipeline_stages > 1:
        if pp == 1:
            r.err(f"{P}.virtual_pipeline_stages", Msg("interleaving needs pipeline_parallel > 1"))
        elif model.layers < pp * t.virtual_pipeline_stages:
            # uneven splits are accepted (the fullest stage sets the step: compute.stage_balance); an empty chunk is not
            r.err(f"{P}.virtual_pipeline_stages", Msg(
                "pipeline_parallel x virtual_pipeline_stages = {n} model chunks need at least one layer each, and "
                "{name} has {layers} layers", n=pp * t.virtual_pipeline_stages, name=model.name, layers=model.layers))
