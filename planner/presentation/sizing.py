"""The sizing section of a plan page: quantities with units, the memory and serving charts, alternatives."""

from __future__ import annotations

from decimal import Decimal

from django.utils.translation import gettext_lazy as _

from .. import humanize  # h/form
from ..engine.result import candidate_id
from .card import short_option_label
from .common import _decimal, _is_quantity, unit_label, value_label
from .costs import OPTION_KINDS

# Labels of the engine's keys; a key not listed is shown humanised (units stay in the unit column).
KEY_LABELS = {
    "servers": _("Servers"), "gpus_per_server": _("GPUs per server"), "server_power_kw": _("Power per server"),
    "total_power_kw": _("Total power"), "racks": _("Racks"), "nvlink_needed": _("NVLink needed"),
    "cpu_cores_per_server": _("CPU cores per server"), "cpu_cores": _("CPU cores"),
    "host_ram_per_server_bytes": _("Host RAM per server"), "host_ram_bytes": _("Host RAM"),
    "storage": _("Storage"), "nvme_per_server_bytes": _("NVMe per server"), "nvme_bytes": _("NVMe"),
    "model_registry_bytes": _("Model registry"), "logs_bytes": _("Logs"), "datasets_bytes": _("Datasets"),
    "checkpoints_bytes": _("Checkpoints"), "vector_index_bytes": _("Vector index"), "caches_bytes": _("Caches"),
    "checkpoint_write_gb_s": _("Checkpoint write bandwidth"),
    "network": _("Network"), "intra_node": _("Inside a server"), "inter_node": _("Between servers"),
    "user_traffic": _("User traffic"), "inter_node_required_gb_s_per_gpu": _("Inter-node bandwidth needed per GPU"),
    "kubernetes": _("Kubernetes"), "software": _("Software stack"), "layers": _("Layers"),
    "min_driver": _("Minimum driver"), "min_cuda": _("Minimum CUDA / ROCm"), "min_framework": _("Minimum framework"),
    "gpu_needed": _("GPU needed"), "params": _("Parameters"), "active_params": _("Active parameters"),
    "weight_bytes": _("Weights"), "kv_cache_bytes_per_token": _("KV cache per token"), "name": _("Name"),
    "source": _("Source"), "model_type": _("Model type"), "per_gpu_bytes": _("Memory per GPU"),
    "total_bytes": _("Memory in total"), "layout": _("Layout"), "count": _("GPUs"),
    "tensor_parallel": _("Tensor parallel"), "pipeline_parallel": _("Pipeline parallel"), "replicas": _("Replicas"),
    "components": _("Components"), "weights_bytes": _("Weights"), "kv_cache_bytes": _("KV cache"),
    "activations_bytes": _("Activations"), "gradients_bytes": _("Gradients"), "optimizer_bytes": _("Optimizer state"),
    "adapter_bytes": _("Adapters"), "overhead_bytes": _("Runtime overhead"),
    "total_flops": _("Total compute"), "gpu_hours": _("GPU-hours"), "wall_clock_hours": _("Wall-clock time"),
    "mfu": _("Efficiency (MFU)"), "flops_per_output_token": _("Compute per output token"),
    "goodput": _("Goodput (useful share of wall-clock)"), "step_hours": _("Time in training steps"),
    "host_optimizer_bytes": _("Optimizer state in host RAM"), "context_parallel": _("Context parallel"),
    "virtual_pipeline_stages": _("Virtual pipeline stages"),
    "prefill_flops_per_request": _("Prefill compute per request"),
    "prefill_tokens_per_s": _("Prefill throughput"), "decode_tokens_per_s": _("Decode throughput"),
    "single_stream_tokens_per_s": _("Single-stream speed"), "ttft_ms": _("Time to first token"),
    "tpot_ms": _("Time per output token"), "max_concurrent_sequences": _("Sequences that fit in the KV cache"),
    "batch_per_replica": _("Batch per replica"), "replica_capacity_rps": _("Capacity per replica"),
    "meets_targets": _("Meets the targets"),
    "data_parallel": _("Data parallel"), "zero_stage": _("ZeRO stage"),
    "activation_checkpointing": _("Activation checkpointing"), "executed_flops": _("Executed compute"),
    "tokens": _("Tokens"), "tokens_per_param": _("Tokens per parameter"), "peak_tflops_per_gpu": _("Peak per GPU"),
    "tokens_per_second_per_gpu": _("Tokens per second per GPU"), "samples_per_second_per_gpu": _("Samples per second per GPU"),
    "flops_per_sample": _("Compute per sample"), "chunks": _("Chunks"), "chunk_text_bytes": _("Chunk text"),
    "embedding_model": _("Embedding model"), "embedding_dimension": _("Embedding dimension"),
    "ingest_cpu_core_hours": _("Ingest on CPU"), "ingest_gpu_hours": _("Ingest on GPU"),
    "query_embedding_cores": _("Cores for query embedding"), "index": _("Vector index"),
    "rack_power_kw": _("Power per rack"), "generator": _("Generating LLM"),
    "dataset_bytes": _("Dataset"), "host_ram_per_gpu_bytes": _("Host RAM per GPU"),
    "index_bytes": _("Index size"), "query_embedding_cpu_cores": _("CPU cores for query embedding"),
    "runtime": _("Serving engine"), "precision_on_hardware": _("Precision on this hardware"),
    "constants": _("Efficiency constants"), "prefill_ms": _("Prefill time (engine only)"),
    "ttft_p95_ms": _("Time to first token, p95"), "tpot_p95_ms": _("Time per output token, p95"),
    "tpot_p50_ms": _("Time per output token, median"), "output_tokens_per_s_per_gpu": _("Output tokens/s per GPU"),
    "ttft_p50_ms": _("Time to first token, median"), "ttft_p99_ms": _("Time to first token, p99"),
    "tpot_p99_ms": _("Time per output token, p99"), "total_tokens_per_s_per_gpu": _("Input and output tokens/s per GPU"),
    "in_flight_requests_per_replica": _("Requests in flight per replica"),
    "output_tokens_per_s_per_user": _("Speed per user"),
    "max_rps_per_replica_meeting_targets": _("Highest rate per replica within the targets"),
    "max_stable_rps_per_replica": _("Highest stable rate per replica"), "bottleneck": _("Bottleneck"),
    "training_layout": _("Exact training layout"), "step_time_s": _("Step time"),
    "efficiency": _("Efficiency on executed FLOPs"), "microbatches_per_pipeline": _("Micro-batches per pipeline"),
    "memory_per_gpu_bytes": _("Memory per GPU"), "gpu_memory_bytes": _("GPU memory"),
    "expert_parallel": _("Expert parallel"), "micro_batch_size": _("Micro-batch"), "fits": _("Fits"),
    "data_parallel_attention": _("Data-parallel attention"), "speculative": _("Speculative decoding"),
    "fits_explain": _("Why it fits or not"), "accelerator": _("Accelerator"), "accelerator_id": _("Accelerator id"),
}


def _label(key: str) -> str:
    return str(KEY_LABELS.get(key) or key.replace("_", " ").strip().capitalize())


def quantity_rows(section, prefix: str = "") -> list[dict]:
    """Flatten an engine section into display rows.

    Each row is {"label", "value", "unit", "explain", "list" (strings), "table" (dict rows)}:
    engine quantities ({"value", "unit", "explain"}) become one row; nested objects are
    walked with their key as a prefix; lists of strings become bullet lists; lists of objects
    become small tables.
    """
    rows: list[dict] = []
    if not isinstance(section, dict):
        return rows
    explain = section.get("explain") if isinstance(section.get("explain"), str) else ""
    for key, value in section.items():
        if key == "explain":
            continue
        label = f"{prefix} › {_label(key)}" if prefix else _label(key)
        if _is_quantity(value):
            unit = value.get("unit", "")
            # Keys carry their unit (`_bytes`); the unit text itself may already be translated
            # ("байты") when the result was localised before it got here.
            code = "bytes" if unit == "bytes" or str(key).endswith("_bytes") or "_bytes_per_" in str(key) else unit
            rows.append({"label": label, "value": value.get("value"), "unit_code": code,
                         "unit": unit_label(unit, value.get("value")),
                         "explain": value.get("explain", ""), "low": value.get("low"), "high": value.get("high")})
        elif isinstance(value, dict):
            rows.extend(quantity_rows(value, label))
        elif isinstance(value, list | tuple):
            if value and all(isinstance(v, dict) for v in value):
                columns = list(dict.fromkeys(k for v in value for k in v))
                rows.append({"label": label, "table": {"columns": columns, "rows": [
                    [_cell(v.get(c)) for c in columns] for v in value]}})
            else:
                rows.append({"label": label, "list": [str(v) for v in value]})
        else:
            if key == "bottleneck":  # h/form: "memory bandwidth", not memory_bandwidth
                value = humanize.bottleneck_label(value)
            rows.append({"label": label, "value": value_label(value), "unit": unit_label(_unit_from_key(key), value),
                         "explain": explain})
    return rows


# A plain figure's unit, from its key's suffix (names carry units).
KEY_UNITS = (("_gb_s", "GB/s"), ("_gbit_s", "Gbit/s"), ("_kw", "kW"), ("_w", "W"), ("_ms", "ms"),
             ("_gib", "GiB"), ("_hours", "h"), ("_s", "s"))


def _unit_from_key(key: str) -> str:
    key = str(key)
    for suffix in ("_per_gpu", "_per_server"):
        key = key.replace(suffix, "")
    return next((unit for suffix, unit in KEY_UNITS if key.endswith(suffix)), "")


def _cell(value):
    if _is_quantity(value):
        return f"{value.get('value')} {unit_label(value.get('unit', ''), value.get('value'))}".strip()
    if isinstance(value, dict | list):
        return ", ".join(f"{k}: {_cell(v)}" for k, v in value.items()) if isinstance(value, dict) else \
            ", ".join(str(_cell(v)) for v in value)
    return value


SIZING_SECTIONS = (
    ("model", _("Model")),
    ("memory", _("Memory")),
    ("compute", _("Compute")),
    ("serving", _("Serving")),
    ("rag", _("Retrieval (RAG)")),
)


MEMORY_COMPONENTS = {
    "weights_bytes": _("Weights"),
    "kv_cache_bytes": _("KV cache"),
    "activations_bytes": _("Activations"),
    "gradients_bytes": _("Gradients"),
    "optimizer_bytes": _("Optimizer state"),
    "adapter_bytes": _("Adapters"),
    "overhead_bytes": _("Runtime overhead"),
}
GIB = 1 << 30
MAX_ALTERNATIVES = 10
OPERATIONS_KEYS = ("metrics", "preflight_checklist", "monitoring")


def serving_curve_chart(sizing: dict, costs: dict | None = None) -> dict | None:
    """Throughput-latency curves of the shortlisted serving configurations (engine data, issue 10), with
    the cost per million output tokens along them where an option of the curve's accelerator is priced
    (planner.curve_costs, issue 22); the option each curve is priced on is named as the cost table names it."""
    curves = [c for c in ((sizing.get("candidates") or {}).get("curves") or []) if c.get("points")]
    if not curves:
        return None
    options = {o.get("id"): o for o in (costs or {}).get("options") or [] if isinstance(o, dict)}
    priced = [c for c in curves if c.get("priced_by")]
    currency = priced[0]["priced_by"].get("currency") if priced else None
    gross = bool(priced) and priced[0]["priced_by"].get("basis") == "gross"
    series = []
    for c in curves:
        by = c.get("priced_by") or {}
        option = options.get(by.get("option_id"))
        by_label = (f"{short_option_label(option)} ({OPTION_KINDS.get(option.get('kind'), option.get('kind'))})"
                    if option else by.get("label"))
        series.append({
            "label": "{} · {}".format(c.get("accelerator") or c.get("accelerator_id"), _layout(
                {**(c.get("layout") or {}), "replicas": 1})),
            "priced_by": by_label,
            "points": [{"x": p["output_tokens_per_s_per_gpu"], "tpot": p["tpot_p50_ms"], "ttft": p["ttft_p95_ms"],
                        "user": p.get("output_tokens_per_s_per_user"),
                        "cost": float(p["cost_per_1m_output_tokens"]) if p.get("cost_per_1m_output_tokens") else None}
                       for p in c["points"]]})
    return {
        "x_label": str(_("Output tokens/s per GPU")),
        "tpot_label": str(_("Time per output token, median (ms)")),
        "ttft_label": str(_("Time to first token, p95 (ms)")),
        "user_label": str(_("Output tokens/s per user")),
        # the currency and VAT basis of the plan's totals
        "cost_label": (str(_("%(currency)s per 1M output tokens, with VAT") if gross
                           else _("%(currency)s per 1M output tokens, without VAT")) % {"currency": currency}
                       if currency else ""),
        "priced": bool(priced),
        "series": series,
    }


def memory_chart(sizing: dict, accelerators: dict[str, dict]) -> dict | None:
    """Per-GPU memory components in GiB against the recommended accelerator's VRAM."""
    components = (sizing.get("memory") or {}).get("components") or {}
    parts = [
        {"label": str(label), "gib": round(components[key]["value"] / GIB, 2)}
        for key, label in MEMORY_COMPONENTS.items()
        if _is_quantity(components.get(key)) and components[key].get("value")
    ]
    if not parts:
        return None
    rec = sizing.get("recommendation") or {}
    acc = accelerators.get(rec.get("accelerator_id") or "") or {}
    return {
        "gpu_label": str(rec.get("accelerator") or _("per GPU")),
        "components": parts,
        "vram_gib": acc.get("memory_gib"),
        "vram_label": str(_("VRAM")),
    }


def _layout(layout) -> str:
    """ "TP2 × PP1 × DP4": tensor, pipeline and data parallel (replicas when serving)."""
    if not isinstance(layout, dict):
        return ""
    if isinstance(layout.get("disaggregated"), dict):
        return _pools_text(layout)
    dp = layout.get("replicas", layout.get("data_parallel"))
    if dp is None and all(isinstance(layout.get(k), int) for k in ("count", "tensor_parallel", "pipeline_parallel")):
        dp = layout["count"] // max(1, layout["tensor_parallel"] * layout["pipeline_parallel"])
    parts = [f"TP{layout.get('tensor_parallel', 1)}", f"PP{layout.get('pipeline_parallel', 1)}"]
    if dp is not None:
        parts.append(f"DP{dp}")
    # the MoE mechanisms the serving layout was evaluated with (engine flag names, not translated)
    mechanisms = [f"EP{layout['expert_parallel']}" if (layout.get("expert_parallel") or 1) > 1 else "",
                  "DPA" if layout.get("data_parallel_attention") else "",
                  "MTP" if layout.get("speculative") == "mtp" else ""]
    text = " × ".join(parts)
    return ", ".join([text, *filter(None, mechanisms)])


def _pools_text(layout: dict) -> str:
    """A disaggregated layout, both pools: "prefill 4 × TP4 (EP4) + decode 1 × TP8 (EP8, DPA), MTP"."""
    def pool(name, p):
        mech = [f"EP{p['expert_parallel']}" if (p.get("expert_parallel") or 1) > 1 else "",
                "DPA" if p.get("data_parallel_attention") else ""]
        mech_text = ", ".join(filter(None, mech))
        return f"{name} {p.get('workers')} × TP{p.get('tensor_parallel')}" + (f" ({mech_text})" if mech_text else "")
    d = layout["disaggregated"]
    text = str(_("disaggregated: {prefill} + {decode}")).format(
        prefill=pool(str(_("prefill")), d.get("prefill") or {}), decode=pool(str(_("decode")), d.get("decode") or {}))
    return text + (", MTP" if layout.get("speculative") == "mtp" else "")


# The site's share of a recommendation: the team's own power and racks, not a rented instance's.
SITE_KEYS = ("server_power_kw", "total_power_kw", "racks")


def sizing_view(sizing: dict, *, rented: bool = False) -> dict | None:
    """``rented``: the decision rents the hardware (cloud, a dedicated server): its power and racks are the
    provider's, so the hardware table leaves them out as the headline does (planner.plan_decision)."""
    if not sizing:
        return None
    recommendation = dict(sizing.get("recommendation") or {})
    if rented:
        for key in SITE_KEYS:
            recommendation.pop(key, None)
    operations = {k: recommendation.pop(k) for k in OPERATIONS_KEYS if k in recommendation}
    # no GPU (an agent on a model API): the server's reason leads, not a "GPU needed: no" row
    no_gpu = recommendation.pop("gpu_needed", None) if sizing.get("gpu_required") is False else None
    headline = {
        "accelerator": recommendation.pop("accelerator", None),
        "accelerator_id": recommendation.pop("accelerator_id", None),
        "count": recommendation.pop("count", None),
        "layout": _layout(recommendation.pop("layout", None)),
        "why": recommendation.pop("why", "") or ((no_gpu or {}).get("explain") or ""),
    }
    # Never "meets the targets" next to a warning that says no layout does: a recommendation that
    # misses them (a pin that cannot, or nothing in the catalog that can) says so in the headline.
    ranked_all = (sizing.get("candidates") or {}).get("ranked") or []
    met = recommendation.get("meets_targets")
    if isinstance(met, dict):
        met = met.get("value")
    if met is None and isinstance((sizing.get("serving") or {}).get("meets_targets"), bool):
        met = sizing["serving"]["meets_targets"]
    if met is None and ranked_all:
        met = next((ranked_all[0][k] for k in ("meets_target", "meets_targets", "meets_deadline")
                    if k in ranked_all[0]), None)
    headline["meets"] = met
    if met is False:
        headline["why"] = _("The closest configuration is shown: it does NOT meet the targets (see the warnings).")
    candidates = sizing.get("candidates") or {}
    ranked = [
        {**c, "layout_text": _layout(c.get("layout"))} for c in (candidates.get("ranked") or [])[:MAX_ALTERNATIVES]
    ]
    return {
        "training": sizing.get("kind") in ("pretraining", "finetuning", "classic_training"),
        "gpu_required": sizing.get("gpu_required"),
        "warnings": sizing.get("warnings") or [],
        "assumptions": sizing.get("assumptions") or [],
        "headline": headline,
        "recommendation": quantity_rows(recommendation),
        "operations": operations,
        "sections": [(title, quantity_rows(sizing.get(key))) for key, title in SIZING_SECTIONS if sizing.get(key)],
        "ranking": candidates.get("ranking", ""),
        "evaluated": candidates.get("evaluated"),
        "ranked": ranked,
        "ranked_total": candidates.get("ranked_total") or len(candidates.get("ranked") or []),
        "not_fitting": (candidates.get("not_fitting") or [])[:MAX_ALTERNATIVES],
        "not_fitting_total": len(candidates.get("not_fitting") or []),
    }


def meets_by_candidate(sizing: dict) -> dict[str, bool]:
    """{"nvidia-h100-sxm5-80gb x8": True, ...}: what the sizing says of each candidate it ranked."""
    out = {}
    cands = sizing.get("candidates") or {}
    # the best configuration of each accelerator too: the decision of a training plan reads it (plan_decision)
    for c in [*(cands.get("best_per_accelerator") or []), *(cands.get("one_server_per_accelerator") or []),
              *(cands.get("ranked") or []), *(cands.get("disaggregated") or [])]:
        met = next((c[k] for k in ("meets_target", "meets_targets", "meets_deadline") if k in c), None)
        if c.get("accelerator_id") and c.get("count") is not None and met is not None:
            out[candidate_id(c)] = bool(met)
    return out


def in_decision_order(view: dict, sizing: dict, costs: dict) -> None:
    """The sizing's table in the decision's order (issue 20: the sizing's own ranking stops competing):
    the configurations the cost engine priced first, each at its first option in the decision's order (the
    decided one, the eligible ones by total, then those it would not recommend, e.g. spot for a service)
    with that option's total, then the others by the sizing's rule. A QLoRA's cheapest GPU time
    may sit at 144 GPUs (a layout that shards memory enough to recompute less), yet the team runs the
    8 the decision picks: that row leads, the unpriced 144-GPU ones follow."""
    options = costs.get("options") or []
    # the decision's order (costs.engine.decision: the decided option, then the eligible ones by total, then
    # those it would not recommend, e.g. spot for a service); positions in `options`
    order = [i for i in (costs.get("decision") or {}).get("order") or [] if isinstance(i, int) and 0 <= i < len(options)]
    order += [i for i in range(len(options)) if i not in set(order)]
    totals: dict[tuple, tuple[int, Decimal]] = {}
    for rank, i in enumerate(order):
        o = options[i]
        total = _decimal((o.get("totals") or {}).get("decision"))
        if not o.get("candidate") or total is None:
            continue
        d = o.get("detail") or {}
        for key in ((o["candidate"], d.get("tensor_parallel"), d.get("pipeline_parallel")), (o["candidate"],)):
            totals.setdefault(key, (rank, total))
    if not totals:
        return
    laid_out = {k[0] for k in totals if len(k) == 3 and k[1] is not None}
    cands = sizing.get("candidates") or {}
    pool, seen = [], set()
    for c in [*(cands.get("ranked") or []), *(cands.get("best_per_accelerator") or []),
              *(cands.get("one_server_per_accelerator") or []), *(cands.get("disaggregated") or [])]:
        if not c.get("accelerator_id") or c.get("count") is None:
            continue
        lay = c.get("layout") or {}
        key = (candidate_id(c), lay.get("tensor_parallel"), lay.get("pipeline_parallel"))
        if key in seen:
            continue
        seen.add(key)
        # options that name their layout match it exactly (two layouts of 6 GPUs are two rows)
        total = totals.get(key) if key[0] in laid_out else totals.get(key[:1])
        pool.append({**c, "layout_text": _layout(c.get("layout")), "decision_rank": total[0] if total else None,
                     "decision_total": total[1] if total else None})
    priced = sorted((c for c in pool if c["decision_rank"] is not None), key=lambda c: c["decision_rank"])
    rest = [c for c in pool if c["decision_rank"] is None]
    view["ranked"] = (priced + rest)[:MAX_ALTERNATIVES]
    view["decision_ordered"] = bool(priced)
