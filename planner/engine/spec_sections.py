"""Reading the spec's training, serving and RAG sections and the hardware's serving layout."""

from __future__ import annotations

from collections.abc import Mapping

from catalog.domain.messages import Msg

from .presets import get_preset, preset_arch, preset_ids
from .serving_constants import DEFAULT_RUNTIME, RUNTIMES
from .spec_mechanisms import read_disaggregation, read_speculative
from .spec_reader import _UNSTORABLE, _Reader
from .spec_training_layout import exact_layout_batch
from .spec_types import (
    ADAPTER_PRECISIONS,
    ATTENTION_IMPLEMENTATIONS,
    CHECKPOINTING,
    CONTEXT_PARALLEL,
    GENERATORS,
    INDEXES,
    LORA_TARGETS,
    MASTER_WEIGHTS,
    MAX_SEQ,
    MAX_TOKENS,
    MIN_CHECKPOINT_EVERY_HOURS,
    MIN_GOODPUT,
    MIN_HOURS_PER_DAY,
    OPTIMIZERS,
    STATE_PRECISIONS,
    HardwareSpec,
    RagSpec,
    ServingSpec,
    TrainingSpec,
)


def _check_serving_layout(r: _Reader, hw: HardwareSpec, *, kind: str, model) -> None:
    tp, pp = hw.tensor_parallel, hw.pipeline_parallel
    if tp is None and pp is None:
        return
    if kind not in ("inference", "rag"):
        field = "hardware.tensor_parallel" if tp is not None else "hardware.pipeline_parallel"
        r.err(field, Msg("serving layouts only; for kind {kind} use training.tensor_parallel / "
                         "training.pipeline_parallel", kind=kind))
        return
    if model is not None and model.is_transformer:
        if tp and model.attention_heads and model.attention_heads % tp:
            r.err("hardware.tensor_parallel", Msg("must divide attention_heads ({heads}), got {tp}",
                                                  heads=model.attention_heads, tp=tp))
        if pp and pp > model.layers:
            r.err("hardware.pipeline_parallel", Msg("must be <= layers ({layers}), got {pp}", layers=model.layers, pp=pp))
    if hw.count and (tp or 1) * (pp or 1) > hw.count:
        r.err("hardware.tensor_parallel", Msg("tensor_parallel x pipeline_parallel ({n}) exceeds hardware.count ({count})",
                                              n=(tp or 1) * (pp or 1), count=hw.count))
    elif hw.count and tp and pp and hw.count % (tp * pp):
        r.err("hardware.count", Msg("must be a multiple of tensor_parallel x pipeline_parallel ({n}), got {count}",
                                    n=tp * pp, count=hw.count))


def _read_training(r: _Reader, t: Mapping, *, kind, model, precision, method) -> TrainingSpec | None:
    P = "training"
    n0 = len(r.errors)
    tokens = r.number(t, "tokens", P, minimum=1, maximum=MAX_TOKENS)
    samples = r.integer(t, "dataset_samples", P, minimum=1, maximum=10**13)
    epochs = r.number(t, "epochs", P, default=1.0, minimum=0, maximum=10_000, strict_min=True)
    max_seq = model.max_position_embeddings if model is not None and model.max_position_embeddings else None
    seq = r.integer(t, "sequence_length", P, default=min(4096, max_seq or 4096), minimum=1, maximum=MAX_SEQ)
    gbt = r.integer(t, "global_batch_tokens", P, minimum=1, maximum=10**9)
    gbs = r.integer(t, "global_batch_size", P, minimum=1, maximum=10**7)
    mbs = r.integer(t, "micro_batch_size", P, default=1, minimum=1, maximum=4096)
    lora_rank = r.integer(t, "lora_rank", P, default=16, minimum=1, maximum=4096)
    targets = t.get("lora_targets")
    lora_targets = LORA_TARGETS
    if targets is not None:
        if isinstance(targets, str):
            targets = {"all": LORA_TARGETS, "attention": ("q", "k", "v", "o")}.get(targets, [targets])
        if not isinstance(targets, list | tuple) or not targets or any(x not in LORA_TARGETS for x in targets):
            r.err(f"{P}.lora_targets", Msg("a list drawn from: {lora_targets} (or 'all' / 'attention')", lora_targets=', '.join(LORA_TARGETS)))
        else:
            lora_targets = tuple(dict.fromkeys(targets))
    optimizer = r.choice(t, "optimizer", P, OPTIMIZERS, default="adamw")
    eight_bit = optimizer in ("adamw_8bit", "paged_adamw_8bit")
    states = r.choice(t, "optimizer_states", P, STATE_PRECISIONS, default="int8" if eight_bit else "fp32")
    if optimizer is not None and eight_bit and states != "int8":
        r.err(f"{P}.optimizer_states", f"{optimizer} keeps its states in int8; remove optimizer_states or use adamw")
    elif states == "int8" and not eight_bit:
        r.err(f"{P}.optimizer_states", "int8 states need an 8-bit optimizer (adamw_8bit or paged_adamw_8bit)")
    master = r.choice(t, "master_weights", P, MASTER_WEIGHTS,
                      default="fp32" if (method or "full") == "full" else "none")
    adapter_precision = r.choice(t, "adapter_precision", P, ADAPTER_PRECISIONS, default="bf16")
    double_quant = r.boolean(t, "double_quant", P, default=True)
    cp = r.integer(t, "context_parallel", P, minimum=1, maximum=32)
    if cp is not None and cp not in CONTEXT_PARALLEL:
        r.err(f"{P}.context_parallel", Msg("one of {options}, got {cp}", options=", ".join(map(str, CONTEXT_PARALLEL)),
                                           cp=cp))
    elif cp and cp > 1 and seq and seq % (2 * cp):
        r.err(f"{P}.context_parallel", Msg(
            "sequence_length ({seq}) cannot be split over context_parallel {cp}: load-balanced context parallelism "
            "(Megatron-Core) cuts each sequence into 2 x CP = {chunks} equal chunks, so the sequence must be a "
            "multiple of {chunks}", seq=seq, cp=cp, chunks=2 * cp))
    goodput = r.number(t, "goodput", P, minimum=MIN_GOODPUT, maximum=1.0)
    zero = r.integer(t, "zero_stage", P, minimum=0, maximum=3)
    ckpt = r.choice(t, "activation_checkpointing", P, CHECKPOINTING, default=None)
    attention = r.choice(t, "attention", P, ATTENTION_IMPLEMENTATIONS, default="fused")
    sp = r.boolean(t, "sequence_parallel", P, default=True)
    expert_overlap = r.boolean(t, "expert_overlap", P, default=False)
    tp = r.integer(t, "tensor_parallel", P, minimum=1, maximum=64)
    pp = r.integer(t, "pipeline_parallel", P, minimum=1, maximum=256)
    vpp = r.integer(t, "virtual_pipeline_stages", P, minimum=1, maximum=64)
    dp = r.integer(t, "data_parallel", P, minimum=1, maximum=65536)
    ep = r.integer(t, "expert_parallel", P, minimum=1, maximum=1024)
    deadline = r.number(t, "deadline_hours", P, minimum=0, maximum=100_000, strict_min=True)
    every = r.number(t, "checkpoint_every_hours", P, default=2.0, minimum=MIN_CHECKPOINT_EVERY_HOURS, maximum=10_000)
    kept = r.integer(t, "checkpoints_kept", P, default=3, minimum=1, maximum=1000)
    method = method or "full"
    if kind == "classic_training":
        if samples is None:
            r.err(f"{P}.dataset_samples", Msg("required for classic_training"))
        if method != "full":
            r.err(f"{P}.method", Msg("classic_training supports only full training"))
    elif tokens is None:
        r.err(f"{P}.tokens", Msg("required for {kind} (dataset tokens x epochs)", kind=kind))
    if kind == "pretraining" and method != "full":
        r.err(f"{P}.method", Msg("pretraining trains all weights: use method full"))
    if method == "qlora" and precision.weights != "int4":
        r.err("precision.weights", Msg("QLoRA keeps the frozen base weights in int4"))
    if method != "qlora" and precision.weights in ("int8", "int4", "fp4") and kind != "classic_training" and method == "full":
        r.err("precision.weights", Msg("full training needs fp32/bf16/fp16 (or fp8) weights; use lora/qlora to train on quantised weights"))
    if gbt is not None and seq and mbs and gbt < seq * mbs:
        r.err(f"{P}.global_batch_tokens", Msg("must be >= micro_batch_size x sequence_length ({mbs})", mbs=mbs * seq))
    if model is not None and model.is_transformer:
        if tp and model.attention_heads and model.attention_heads % tp:
            r.err(f"{P}.tensor_parallel", Msg("must divide attention_heads ({attention_heads}), got {tp}", attention_heads=model.attention_heads, tp=tp))
        if pp and pp > model.layers:
            r.err(f"{P}.pipeline_parallel", Msg("must be <= layers ({layers}), got {pp}", layers=model.layers, pp=pp))
        if max_seq and seq > max_seq * 4:
            r.err(f"{P}.sequence_length", Msg("{seq} is far beyond the model's context ({max_seq})", seq=seq, max_seq=max_seq))
    if kind == "classic_training" and cp and cp > 1:
        r.err(f"{P}.context_parallel", Msg("context parallelism splits token sequences: not for classic_training"))
    if "double_quant" in t and method != "qlora":
        r.err(f"{P}.double_quant", Msg("only for method qlora (NF4 base weights)"))
    if "expert_overlap" in t and model is not None and not model.is_moe:
        r.err(f"{P}.expert_overlap", Msg("only for mixture-of-experts models (expert-parallel all-to-all)"))
    if len(r.errors) > n0:
        return None
    if kind != "classic_training" and gbt is None:
        # Llama-style default of ~4M tokens for pretraining; 128 sequences for fine-tuning.
        gbt = max(seq * mbs, 4 * 1024 * 1024 if kind == "pretraining" else 128 * seq)
    if kind == "classic_training" and gbs is None:
        gbs = 256
    gbt, gbs = exact_layout_batch(r, t, kind=kind, seq=seq, mbs=mbs, dp=dp, gbt=gbt, gbs=gbs)
    if len(r.errors) > n0:
        return None
    return TrainingSpec(
        tokens=tokens * epochs if tokens is not None and "epochs" in t else tokens,
        dataset_samples=samples, epochs=epochs, sequence_length=seq, global_batch_tokens=gbt,
        global_batch_size=gbs, micro_batch_size=mbs, method=method, lora_rank=lora_rank,
        lora_targets=lora_targets, optimizer=optimizer, zero_stage=zero, activation_checkpointing=ckpt,
        sequence_parallel=sp, tensor_parallel=tp, pipeline_parallel=pp, virtual_pipeline_stages=vpp,
        deadline_hours=deadline, checkpoint_every_hours=every, checkpoints_kept=kept,
        optimizer_states=states, master_weights=master, adapter_precision=adapter_precision,
        double_quant=double_quant, context_parallel=cp, goodput=goodput, attention=attention,
        expert_overlap=bool(expert_overlap), data_parallel=dp, expert_parallel=ep,
    )


def _read_serving(r: _Reader, s: Mapping, *, model) -> ServingSpec | None:
    P = "serving"
    n0 = len(r.errors)
    max_ctx = model.max_position_embeddings if model is not None and model.max_position_embeddings else None
    inp = r.integer(s, "input_tokens", P, default=1024, minimum=1, maximum=MAX_SEQ)
    out = r.integer(s, "output_tokens", P, default=256, minimum=1, maximum=MAX_SEQ)
    ctx = r.integer(s, "context_length", P, minimum=1, maximum=MAX_SEQ)
    conc = r.integer(s, "concurrency", P, default=8, minimum=1, maximum=1_000_000)
    rps = r.number(s, "requests_per_second", P, default=1.0, minimum=0, maximum=1_000_000)
    ttft = r.number(s, "ttft_p95_ms", P, minimum=0, maximum=3_600_000, strict_min=True)
    tpot = r.number(s, "tpot_p95_ms", P, minimum=0, maximum=600_000, strict_min=True)
    hpd = r.number(s, "hours_per_day", P, default=24.0, minimum=MIN_HOURS_PER_DAY, maximum=24)
    runtime = r.choice(s, "runtime", P, RUNTIMES, default=DEFAULT_RUNTIME)
    rpd = r.number(s, "requests_per_day", P, minimum=0, strict_min=True)
    model_api = _read_model_api(r, s.get("model_api"), f"{P}.model_api")
    speculative = read_speculative(r, s.get("speculative"), runtime=runtime)
    disaggregation = read_disaggregation(r, s.get("disaggregation"))
    if len(r.errors) > n0:
        return None
    if rpd is not None:
        most = rps * 3600.0 * hpd
        if rpd > most * (1 + 1e-12):
            r.err(f"{P}.requests_per_day", Msg(
                "at most {maximum:,.15g}: the peak of {rps:,.15g} requests/s held for {hours:,.15g} hours a day "
                "(requests_per_second x 3600 x hours_per_day); got {value:,.15g}",
                maximum=most, rps=rps, hours=hpd, value=rpd))
    if ctx is None:
        ctx = inp + out
    elif inp + out > ctx:
        r.err(f"{P}.context_length", Msg("must be >= input_tokens + output_tokens ({inp})", inp=inp + out))
    if max_ctx and ctx > max_ctx and model is not None and model.model_type == "decoder":
        r.err(f"{P}.context_length", Msg("{ctx} exceeds the model's maximum context ({max_ctx})", ctx=ctx, max_ctx=max_ctx))
    if len(r.errors) > n0:
        return None
    return ServingSpec(context_length=ctx, input_tokens=inp, output_tokens=out, concurrency=conc,
                       requests_per_second=rps, ttft_p95_ms=ttft, tpot_p95_ms=tpot, hours_per_day=hpd,
                       runtime=runtime, requests_per_day=rpd, model_api=model_api, speculative=speculative,
                       disaggregation=disaggregation)


MAX_MODEL_APIS = 50


def _read_model_api(r: _Reader, value, field: str) -> tuple[str, ...]:
    """serving.model_api: one "provider/model" or a list of them (compared); the catalog check
    (is it priced?) comes when the plan is priced."""
    if value is None:
        return ()
    items = [value] if isinstance(value, str) else value
    if not isinstance(items, list | tuple) or len(items) > MAX_MODEL_APIS:
        r.err(field, Msg("a \"provider/model\" string or a list of at most {n} of them", n=MAX_MODEL_APIS))
        return ()
    out: list[str] = []
    for item in items:
        text = item.strip() if isinstance(item, str) else None
        provider, _, model = (text or "").partition("/")
        if not text or not provider.strip() or not model.strip() or len(text) > 200 or _UNSTORABLE.search(text):
            r.err(field, Msg("each model API is \"provider/model\" (e.g. OpenAI/gpt-4o-mini), got {value}",
                             value=repr(item)[:80]))
            return ()
        out.append(f"{provider.strip()}/{model.strip()}")
    return tuple(dict.fromkeys(out))


def _read_rag(r: _Reader, g: Mapping, *, required: bool) -> RagSpec | None:
    P = "rag"
    n0 = len(r.errors)
    if required:
        r.err(P, Msg("required for kind rag (at least rag.documents)"))
        return None
    docs = r.integer(g, "documents", P, minimum=1, maximum=10**11, required=True)
    tpd = r.integer(g, "tokens_per_document", P, default=1000, minimum=1, maximum=10**8)
    chunk = r.integer(g, "chunk_tokens", P, default=512, minimum=16, maximum=32768)
    emb = None
    em = g.get("embedding_model")
    if em is not None:
        pid = em.get("preset") if isinstance(em, Mapping) else em
        p = get_preset(pid) if isinstance(pid, str) else None
        if p is None or p.model_type != "encoder":
            allowed = [x for x in preset_ids() if get_preset(x).model_type == "encoder"]
            r.err(f"{P}.embedding_model", Msg("unknown embedding preset {pid}; allowed: {allowed}", pid=repr(pid), allowed=', '.join(allowed)))
        else:
            emb = preset_arch(pid)
    if emb is None and em is None:
        emb = preset_arch("bge-large-en-v1.5")
    default_dim = (emb.embedding_dim if emb is not None and emb.embedding_dim else 1024)
    dim = r.integer(g, "embedding_dimension", P, default=default_dim, minimum=1, maximum=65536)
    index = r.choice(g, "index", P, INDEXES, default="hnsw")
    qps = r.number(g, "queries_per_second", P, default=1.0, minimum=0, maximum=1_000_000)
    top_k = r.integer(g, "top_k", P, default=5, minimum=1, maximum=1000)
    gen = r.choice(g, "generator", P, GENERATORS, default="self_hosted")
    if emb is not None and emb.max_position_embeddings and chunk > emb.max_position_embeddings:
        r.err(f"{P}.chunk_tokens", Msg("must be <= the embedding model's input limit ({max_position_embeddings})", max_position_embeddings=emb.max_position_embeddings))
    if len(r.errors) > n0:
        return None
    return RagSpec(documents=docs, tokens_per_document=tpd, chunk_tokens=chunk, embedding_model=emb,
                   embedding_dimension=dim, index=index, queries_per_second=qps, top_k=top_k, generator=gen)
