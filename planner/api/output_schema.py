"""JSON Schemas of what the engines return: a version's `result` (`decision`, `sizing`, `costs`),
an estimate's sections, for the OpenAPI document (issue 23 part 5).

The shapes are those docs/API.md describes and planner/plan_decision.py, the sizing engine's
`to_dict()` and costs.engine build. They type the fields clients read (the decision, its budget,
hardware and targets; the sizing's recommendation and latencies; every priced option's totals);
every object stays open (`additionalProperties` allowed), so a section the engines add later is
not a contract break, and deeper engine detail (cash flows, Monte Carlo, sensitivity, the
candidate tables) is documented as objects. `tests/functional/test_generated_client.py` checks
real responses of every kind against these components.

Conventions: money and other exact figures are decimal strings (`"12345.67"`), never floats; an
engine text comes with its `*_i18n` twin (`I18nText`: template and parameters) in the language of
`Accept-Language`; a figure of the sizing is a `Quantity` (`value`, `unit`, `explain`).
"""

from __future__ import annotations

REF = "#/components/schemas/"


def _ref(name: str, *, nullable: bool = False, description: str | None = None) -> dict:
    if not nullable and not description:
        return {"$ref": REF + name}
    out: dict = {"allOf": [{"$ref": REF + name}]}
    if nullable:
        out["nullable"] = True
    if description:
        out["description"] = description
    return out


def _t(kind: str, *, nullable: bool = True, description: str | None = None, **extra) -> dict:
    out: dict = {"type": kind, **extra}
    if nullable:
        out["nullable"] = True
    if description:
        out["description"] = description
    return out


def _str(**kw) -> dict:
    return _t("string", **kw)


def _dec(description: str | None = None, *, nullable: bool = True) -> dict:
    return _t("string", nullable=nullable, description=description or "A decimal number as a string.")


def _int(**kw) -> dict:
    return _t("integer", **kw)


def _num(**kw) -> dict:
    return _t("number", **kw)


def _bool(**kw) -> dict:
    return _t("boolean", **kw)


def _obj(properties: dict | None = None, *, required=(), nullable: bool = False, description: str | None = None) -> dict:
    out: dict = {"type": "object", "additionalProperties": {}}
    if properties:
        out["properties"] = properties
    if required:
        out["required"] = list(required)
    if nullable:
        out["nullable"] = True
    if description:
        out["description"] = description
    return out


def _list(items: dict, **kw) -> dict:
    return _t("array", items=items, nullable=kw.pop("nullable", False), **kw)


def _texts(name: str) -> dict:
    """An engine text and its structured twin."""
    return {name: _str(), f"{name}_i18n": _ref("I18nText", nullable=True)}


def _quantities(*names: str) -> dict:
    return {name: _ref("Quantity", nullable=True) for name in names}


# --- shared pieces ---------------------------------------------------------------------------

I18N_TEXT = _obj({
    "template": _str(nullable=False, description="The English template with {named} parameters."),
    "params": _obj(description="The template's parameters (numbers, strings, nested I18nText)."),
}, required=["template"], description="An engine text as a translatable template and its parameters.")

QUANTITY = _obj({
    "value": {"description": "The figure (a number; a boolean or a string for a few yes/no or named values)."},
    "unit": _str(),
    **_texts("explain"),
}, required=["value"], description="A figure of the sizing with its unit and how it was obtained.")

POOL = _obj({
    "workers": _int(), "tensor_parallel": _int(), "expert_parallel": _int(), "data_parallel_attention": _bool(),
}, description="One pool of a disaggregated layout: `workers` engines of `tensor_parallel` GPUs each.")

LAYOUT = _obj({
    "tensor_parallel": _int(), "pipeline_parallel": _int(), "replicas": _int(), "data_parallel": _int(),
    "zero_stage": _int(), "activation_checkpointing": _str(),
    "expert_parallel": _int(), "data_parallel_attention": _bool(), "speculative": _str(),
    "disaggregated": _obj({"prefill": POOL, "decode": POOL}, nullable=True, description=(
        "A disaggregated serving layout (prefill and decode on separate pools; docs/SIZING.md \"Disaggregated "
        "candidates\"): the GPU count is both pools', tensor_parallel the widest pool's group, replicas the "
        "engines of both pools; expert_parallel, data_parallel_attention and speculative are the decode "
        "pool's.")),
}, description="Parallel layout: serving (tensor x pipeline parallel, replicas; for a mixture-of-experts model "
               "also the expert parallel degree, data-parallel attention and speculative decoding, none or mtp, "
               "it was evaluated with; a disaggregated layout also its pools) or training (also data parallel, "
               "ZeRO stage, activation checkpointing).")

BASIS = _obj({
    "rule": _str(), "amount": _str(description="gross or net."), "discount_rate_per_year": _dec(),
    "discounted": _bool(), "includes_expected_downtime": _bool(), "downtime_priced": _bool(), **_texts("text"),
}, description="How options are compared (the decision basis).")

RISK = _obj({
    "priced": _bool(), "in_total": _bool(), "expected_downtime_hours_per_year": _dec(),
    "expected_downtime_hours_per_run": _dec(description="Jobs only: expected hours of downtime per run "
                                                        "(a job is exposed while it runs)."),
    "expected_downtime_net": _dec(), "expected_downtime_gross": _dec(), **_texts("text"),
}, description="Expected cost of incidents, beside the budget (in it only with decision_basis risk_adjusted).")

# --- the decision (planner/plan_decision.py) ------------------------------------------------------

DECISION = _obj({
    "status": _ref("DecisionStatusEnum", description="decided; closest_misses_targets when no priced option "
                                                     "meets every target; nothing_priced."),
    "kind": _str(nullable=False, description="The WorkloadSpec kind."),
    "option_id": _str(description="An id in result.costs.options."),
    "candidate": _str(), "label": _str(),
    "option_kind": _str(description="onprem, cloud_on_demand, cloud_spot, cloud_commit_1y, cloud_commit_3y, "
                                    "dedicated, hybrid, api."),
    "payment": _str(description="How it is paid: bought, cloud on demand / spot / 1- or 3-year commitment, "
                                "rented, model API."),
    "provider": _str(), "region": _str(),
    "hardware": _ref("DecisionHardware", nullable=True, description="null for a model API."),
    "targets": _ref("DecisionTargets"),
    "budget": _ref("DecisionBudget"),
    **_texts("why"),
    **_texts("accuracy"),
    "site": _obj({
        "power_budget_kw": _num(), "racks": _int(), "max_servers": _int(), "max_gpus": _int(),
        "max_output_tokens_per_s": _num(), **_texts("text"),
    }, nullable=True, description="What the site's power budget and racks allow; null without them."),
    "warnings": _list(_str(nullable=False), description="The decided option's risks: the spot warning, then the "
                      "option's own warnings (as its cost table lists them)."),
    "warnings_i18n": _list(_ref("I18nText")),
    "alternatives": _list(_ref("DecisionAlternative"),
                          description="The cheapest option of every other configuration."),
    "model_api": _obj({
        "provider": _str(), "model": _str(), "named": _bool(description="The workload named it (serving.model_api)."),
        "compared": _list(_str(nullable=False), description="Every model API compared, provider/model."),
    }, description="An agent on a model API (no GPU): the API chosen."),
    "cpu_server": _obj({
        "provider": _str(), "region": _str(), "instance_type": _str(), "vcpus": _int(), "physical_cores": _int(),
        "ram_gib": _dec(), "cores_needed": _int(), "ram_gib_needed": _dec(), "price_per_hour": _dec(),
        "currency": _str(description="The currency of price_per_hour (the price list's)."),
        "price_per_hour_net": _dec(description="The same hour in the plan's currency, net of VAT."),
        "plan_currency": _str(), "source": _str(),
    }, nullable=True, description="The CPU server an agent on a model API runs on."),
    "launch": _obj({
        "runtime": _str(), "engine": _str(), "engine_version": _str(), "image": _str(),
        "command": _str(description="The engine's launch command (shell-quoted); null for a runtime with no server."),
        "argv": _list(_str(nullable=False)), "gpus_per_replica": _int(), "replicas": _int(),
        "settings": _obj(description="TP, PP, context, scheduler defaults and formats the serving model assumed."),
        **_texts("why"), **_texts("note"), "settings_source": _str(),
        "kubernetes": _obj({"deployment": _obj(), "service": _obj(), "config_map": _obj()}, nullable=True,
                           description="Deployment and Service objects (and the ConfigMap of config_file); null "
                                       "when a replica spans servers or the layout is disaggregated (pools)."),
        **_texts("kubernetes_note"),
        "notes": _list(_str(nullable=False), description="Where the command differs from what the plan assumed, "
                                                         "or needs another checkpoint."),
        "notes_i18n": _list(_ref("I18nText")),
        "config_file": _obj({"path": _str(), "content": _str()}, nullable=True,
                            description="TensorRT-LLM's extra options file (YAML) the command names."),
        "pools": _list(_obj({
            "role": _str(description="prefill or decode."), "workers": _int(), "gpus_per_worker": _int(),
            "command": _str(), "argv": _list(_str(nullable=False)), "settings": _obj(),
            "config_file": _obj({"path": _str(), "content": _str()}, nullable=True),
            "kubernetes": _obj({"deployment": _obj(), "service": _obj(), "config_map": _obj()}, nullable=True),
            **_texts("kubernetes_note"),
        }), description="Disaggregated serving: one command and manifest per pool."),
        "router": _obj({"command": _str(), "argv": _list(_str(nullable=False), nullable=True), **_texts("note"),
                        "config_file": _obj({"path": _str(), "content": _str()}, nullable=True)},
                       description="Disaggregated serving: what routes requests between the pools."),
    }, description="A self-hosted service: how to start the decided layout (docs/SIZING.md, \"Ready to run\")."),
}, required=["status", "kind", "why"], description="The plan's one answer (docs/API.md, \"The decision\").")

DECISION_HARDWARE = _obj({
    "accelerator_id": _str(), "accelerator": _str(), "gpu_count": _int(), "layout": _ref("Layout", nullable=True),
    "servers": _int(), "gpus_per_server": _int(), "server": _str(), "total_power_kw": _num(), "racks": _int(),
}, description="The decided hardware, in the option's own shape (cloud instances or bought servers).")

DECISION_TARGETS = _obj({
    "meets": _bool(description="Every target met; null when not judged."),
    "ttft_p95_ms": _num(), "ttft_p95_ms_target": _num(), "tpot_p95_ms": _num(), "tpot_p95_ms_target": _num(),
    "peak_requests_per_second": _num(),
    "wall_clock_hours": _num(), "gpu_hours": _num(), "deadline_hours": _num(),
}, description="Serving: latencies against the user's targets and the peak rate; training: wall-clock and GPU "
               "hours against the deadline.")

DECISION_BUDGET = _obj({
    "currency": _str(), "amount": _str(description="gross or net: which total `total` is."),
    "total": _dec(), "total_net": _dec(), "total_gross": _dec(), "horizon_months": _int(),
    "basis": _ref("ComparisonBasis", nullable=True), "risk": _ref("OptionRisk", nullable=True),
    "per_month": _dec("A service: the average per month."),
    "runs": _dec("A job: the runs budgeted."), "per_run": _dec("A job: the budget per run."),
}, description="The decided option's budget over the horizon.")

DECISION_ALTERNATIVE = _obj({
    "option_id": _str(), "label": _str(), "option_kind": _str(), "candidate": _str(), "total": _dec(),
    "meets_targets": _bool(), "difference": _dec("Its total minus the decision's."),
})

# --- sizing (planner.engine: SizingResult.to_dict()) ---------------------------------------------

SIZING = _obj({
    "engine_version": _str(), "kind": _str(nullable=False),
    "gpu_required": _bool(description="false: a workload on a model API only."),
    "model": _obj({"name": _str(), "preset_id": _str(), "model_type": _str(), **_texts("source"),
                   **_quantities("params", "active_params", "weight_bytes", "kv_cache_bytes_per_token",
                                 "flops_per_sample")}, nullable=True),
    "memory": _obj({**_quantities("per_gpu_bytes", "total_bytes"), "layout": _obj(nullable=True),
                    "components": _obj(nullable=True, description="Quantity per memory component.")},
                   nullable=True),
    "compute": _obj({**_quantities("wall_clock_hours", "gpu_hours", "flops_per_output_token",
                                   "prefill_flops_per_request"),
                     "training_layout": _obj({
                         "layout": _obj({
                             "count": _int(), "tensor_parallel": _int(), "pipeline_parallel": _int(),
                             "context_parallel": _int(), "expert_parallel": _int(), "data_parallel": _int(),
                             "micro_batch_size": _int(), "virtual_pipeline_stages": _int(),
                             "activation_checkpointing": _str(), "zero_stage": _int()}),
                         "accelerator_id": _str(), "accelerator": _str(),
                         "fits": _bool(description="Memory per GPU within the chip's, tensor parallel within a server."),
                         **_texts("fits_explain"), **_texts("explain"),
                         **_quantities("step_time_s", "tokens_per_second_per_gpu", "samples_per_second_per_gpu",
                                       "mfu", "efficiency",
                                       "microbatches_per_pipeline", "peak_tflops_per_gpu", "memory_per_gpu_bytes",
                                       "gpu_memory_bytes", "goodput", "gpu_hours", "wall_clock_hours"),
                     }, nullable=True, description="Training with training.data_parallel: exactly the pinned layout "
                                                   "(docs/WORKLOADSPEC.md, \"Exact training layout\")."),
                     }, nullable=True),
    "serving": _obj({
        "runtime": _str(), "bottleneck": _str(), "meets_targets": _bool(),
        **_quantities("ttft_p50_ms", "ttft_p95_ms", "ttft_p99_ms", "tpot_p50_ms", "tpot_p95_ms", "tpot_p99_ms",
                      "output_tokens_per_s_per_gpu", "replicas"),
        "disaggregated": _obj({
            "accelerator_id": _str(), "prefill": POOL, "decode": POOL, "fits": _bool(),
            **_quantities("ttft_p50_ms", "tpot_p50_ms", "kv_transfer_ms", "output_tokens_per_s_per_gpu",
                          "output_tokens_per_s_per_decode_gpu", "input_tokens_per_s_per_prefill_gpu",
                          "requests_per_s"),
        }, nullable=True, description="A disaggregated layout's pools and figures (both pools' GPUs, per decode GPU, "
                                      "the KV transfer between them)."),
    }, nullable=True, description="Serving kinds: latencies and throughput at the stated load."),
    "rag": _obj(nullable=True),
    "candidates": _obj({
        "disaggregated": _list(_obj({
            "accelerator_id": _str(), "accelerator": _str(), "count": _int(), "layout": _ref("Layout"),
            "meets_target": _bool(), "ttft_p95_ms": _num(), "tpot_p95_ms": _num(),
            "output_tokens_per_s_per_gpu": _num(), "cost_usd_per_hour": _num(),
        }), description="Serving: the disaggregated layouts (prefill + decode pools) the search sized, one per "
                        "accelerator tried, priced beside the aggregated ones (docs/SIZING.md \"Disaggregated "
                        "candidates\")."),
        "curves": _list(_obj({
            "accelerator_id": _str(), "accelerator": _str(), "layout": _ref("Layout", nullable=True),
            "points": _list(_obj({
                "rps_per_replica": _num(), "output_tokens_per_s_per_gpu": _num(),
                "output_tokens_per_s_per_user": _num(description="1000 / tpot_p50_ms."),
                "ttft_p95_ms": _num(), "tpot_p50_ms": _num(), "tpot_p95_ms": _num(),
                "cost_per_1m_output_tokens": _dec("The option's all-in cost of a running GPU-hour (priced_by) / "
                                                  "the output tokens one GPU serves in an hour at this point."),
            })),
            "priced_by": _obj({"option_id": _str(), "label": _str(), "kind": _str(),
                               "per_running_gpu_hour": _dec(), "basis": _str(description="gross or net."),
                               "currency": _str()}, nullable=True,
                              description="The priced option the curve's costs come from: the decided one when "
                                          "it runs this accelerator, else the first of it in the decision's order."),
        })),
    }, nullable=True, description="Every configuration evaluated, ranked; serving plans add each shortlisted "
                                  "configuration's throughput curve (the Pareto front) with the cost per million "
                                  "output tokens along it."),
    "recommendation": _ref("SizingRecommendation", nullable=True),
    "fewest_gpus": _obj({"accelerator_id": _str(), "accelerator": _str(), "count": _int(),
                         "layout": _ref("Layout", nullable=True)}, nullable=True,
                        description="The sizing's own fewest-GPU pick, when it differs from the decision."),
    "warnings": _list(_str(nullable=False)), "warnings_i18n": _list(_ref("I18nText")),
    "assumptions": _list(_str(nullable=False)),
}, required=["kind"], description="Memory, compute, latency and the hardware recommendation.")

SIZING_RECOMMENDATION = _obj({
    "accelerator_id": _str(), "accelerator": _str(), "count": _int(), "layout": _ref("Layout", nullable=True),
    **_texts("why"),
    **_quantities("servers", "gpus_per_server", "server_power_kw", "total_power_kw", "racks", "nvlink_needed"),
    "metrics": _list(_str(nullable=False)), "preflight_checklist": _list(_str(nullable=False)),
}, description="The configuration the plan describes (the decided one when a decision was made).")

# --- costs (costs.engine) ------------------------------------------------------------------------

COST_OPTION = _obj({
    "id": _str(nullable=False), "kind": _str(nullable=False), "candidate": _str(), "label": _str(),
    "utilisation": _dec(), "efficiency": _dec(),
    "totals": _obj({"net": _dec(), "gross": _dec(), "vat": _dec(), "decision": _dec(), "npv": _dec(),
                    "vat_recovered": _dec()}, description="Over the horizon."),
    "per_month_average": _obj({"net": _dec(), "gross": _dec()}, nullable=True),
    "detail": _obj({
        "provider": _str(), "region": _str(), "accelerator": _str(), "gpus": _int(), "instance_type": _str(),
        "instances": _int(), "gpus_per_instance": _int(), "server": _str(), "servers": _int(),
        "gpus_per_server": _int(), "model": _str(), "tensor_parallel": _int(), "pipeline_parallel": _int(),
    }, nullable=True, description="What is bought or rented (fields by option kind)."),
    "job": _obj({"runs": _dec(), "per_run_net": _dec()}, nullable=True, description="Training jobs: per run."),
    "risk": _ref("OptionRisk", nullable=True),
    "rows": _list(_obj({"row": _str(), "total_net": _dec(), "total_gross": _dec(), "in_total": _bool(),
                        "lines": _list(_obj(), nullable=True)}), description="The cost rows."),
    "unit_costs": _obj(nullable=True), "cash_flow": _obj(nullable=True),
    "warnings": _list(_str(nullable=False)), "warnings_i18n": _list(_ref("I18nText")),
    "unknowns": _list({}),
}, required=["id", "kind"], description="One priced option.")

COSTS = _obj({
    "engine_version": _str(), "currency": _str(nullable=False), "as_of": _str(format="date"),
    "horizon_months": _int(), "country": _str(), "include_vat": _bool(), "vat_recoverable": _bool(),
    "discount_rate": _dec(), "hours_per_month": _dec(), "efficiency": _dec(), "redundancy": _str(),
    "offers_priced": _int(),
    "comparison_basis": _ref("ComparisonBasis", nullable=True),
    "options": _list(_ref("CostOption"), description=(
        "The options the plan names: the decided one, the alternatives compared in full (with their lines and "
        "cash flow), the cheapest of each way of paying, each ranked configuration's best and the first few in "
        "the decision's order. A stored version lists every priced option at its options_url; an estimate "
        "lists them all here.")),
    "options_listed": _int(description="How many options `options` lists."),
    "options_left_out": _int(description="Options priced but not listed here (a version's options_url lists them)."),
    "skipped_total": _int(description="Options not priced (a version's options_url lists them with the reason)."),
    "decision": _obj({
        "recommended": _obj({"id": _str(), "kind": _str(), "candidate": _str(), "label": _str(), "total": _dec(),
                             **_texts("why")}, nullable=True),
        "ranked": _list(_obj()), "ranked_by": _str(), "basis": _ref("ComparisonBasis", nullable=True),
    }, nullable=True, description="The cost engine's ranking (the plan's decision is result.decision)."),
    "skipped": _list(_obj({"candidate": _str(), "kind": _str(), **_texts("reason")}),
                     description="Options not priced, with the reason (empty in a stored version: its options_url "
                                 "lists them)."),
    "notes": _list(_str(nullable=False)), "notes_i18n": _list(_ref("I18nText")),
    "freshness": _obj({"as_of": _str(format="date"), "warnings": _list(_str(nullable=False)),
                       "warnings_i18n": _list(_ref("I18nText"))}, nullable=True,
                      description="How old the prices are; warnings for stale ones."),
    "vat_rates_by_month": _list(_dec(nullable=False)),
}, required=["currency"], description="Every option priced over the horizon (docs/COSTS.md).")

PLAN_RESULT = _obj({
    "decision": _ref("PlanDecision"), "sizing": _ref("SizingResult"), "costs": _ref("CostResult"),
}, required=["decision", "sizing", "costs"], description="A done version's result.")


def _camel(name: str) -> str:
    return "".join(part.capitalize() for part in name.split("_"))


def _hoisted(components: dict) -> dict:
    """A nullable object written inline becomes a component named after its place
    (`SizingResult.serving`: `SizingResultServing`), as generators name a non-nullable one: without
    it they name the class after the union (`SizingResultServingType0`)."""
    out: dict = {}

    def place(node: dict, name: str) -> dict:
        if node.get("type") == "object" and node.get("nullable"):
            out[name] = visit({k: v for k, v in node.items() if k not in ("nullable", "description")}, name)
            return _ref(name, nullable=True, description=node.get("description"))
        if node.get("type") == "array" and isinstance(node.get("items"), dict):
            return {**node, "items": place(node["items"], f"{name}Item")}
        return visit(node, name)

    def visit(node: dict, name: str) -> dict:
        if not isinstance(node.get("properties"), dict):
            return node
        return {**node, "properties": {field: place(sub, name + _camel(field))
                                       for field, sub in node["properties"].items()}}

    for name, schema in components.items():
        out[name] = visit(schema, name)
    return out


def output_components() -> dict:
    return _hoisted({
        "DecisionStatusEnum": {"type": "string", "enum": ["decided", "closest_misses_targets", "nothing_priced"]},
        "I18nText": I18N_TEXT, "Quantity": QUANTITY, "Layout": LAYOUT, "ComparisonBasis": BASIS,
        "OptionRisk": RISK, "PlanDecision": DECISION, "DecisionHardware": DECISION_HARDWARE,
        "DecisionTargets": DECISION_TARGETS, "DecisionBudget": DECISION_BUDGET,
        "DecisionAlternative": DECISION_ALTERNATIVE, "SizingResult": SIZING,
        "SizingRecommendation": SIZING_RECOMMENDATION, "CostOption": COST_OPTION, "CostResult": COSTS,
        "PlanResult": PLAN_RESULT,
    })


# component -> property -> schema replacing drf-spectacular's free-form object
OUTPUT_FIELDS = {
    "VersionOut": {
        "result": _ref("PlanResult", nullable=True, description="null until done."),
        "exports": _obj({fmt: _str(nullable=False) for fmt in ("csv", "xlsx", "pdf")},
                        description="Download URLs by format; empty until done."),
    },
    "VersionOptionsOut": {
        "options": _list(_ref("CostOption"), description="Every priced option, in the order of result.costs."),
        "skipped": _list(_obj({"candidate": _str(), "kind": _str(), **_texts("reason")}),
                         description="Every option not priced, with the reason."),
    },
    "EstimateOut": {"decision": _ref("PlanDecision"), "sizing": _ref("SizingResult"),
                    "costs": _ref("CostResult", nullable=True)},
    "PlanOut": {"costs": _ref("CostOptions", description="The plan's cost options (docs/COSTS.md).")},
}
