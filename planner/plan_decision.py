"""The plan's one answer: what to buy or rent, how many, where and how it is paid, what it costs and
how it does against the targets. Built once from the cost engine's decision (costs.engine.decision)
and the sizing's description of the decided configuration; the page, the PDF, the XLSX, the API
and the compare pages all read this block, so they cannot name different hardware.

Pure: plain dicts in, a plain dict out (no Django, no database).
"""

from __future__ import annotations

from dataclasses import replace
from decimal import Decimal, InvalidOperation

from catalog.domain.messages import Msg, with_structured

from .engine.result import MECHANISM_KEYS, Configuration, pools_of
from .engine.result import candidate_id as candidate_id_of

SERVICE_KINDS = ("inference", "rag")
TRAINING_KINDS = ("pretraining", "finetuning", "classic_training")
CLOUD_KINDS = ("cloud_on_demand", "cloud_spot", "cloud_commit_1y", "cloud_commit_3y")
OWNED_KINDS = ("onprem", "hybrid")  # hardware in the team's own site (its power and racks)
# How each option kind is paid, in the words a budget uses.
PAYMENT = {
    "onprem": Msg("bought (capital expense) and run on site"),
    "hybrid": Msg("owned baseline, cloud for the bursts"),
    "dedicated": Msg("rented dedicated servers, monthly"),
    "cloud_on_demand": Msg("cloud, on demand (per hour)"),
    "cloud_spot": Msg("cloud, spot (interruptible, per hour)"),
    "cloud_commit_1y": Msg("cloud, 1-year commitment"),
    "cloud_commit_3y": Msg("cloud, 3-year commitment"),
    "api": Msg("model API, per token"),
}


def configuration_of(sizing: dict, candidate_id: str | None, detail: dict | None = None) -> Configuration | None:
    """The sizing candidate behind a cost option's candidate id ("<accelerator id> x<count>"), in the
    option's server shape (`detail`: GPUs per bought server or per cloud instance)."""
    if not candidate_id:
        return None
    detail = detail or {}
    per_server = detail.get("gpus_per_server") or detail.get("gpus_per_instance")
    cands = sizing.get("candidates") or {}
    rows = [sizing.get("recommendation") or {}, *(cands.get("best_per_accelerator") or []),
            *(cands.get("one_server_per_accelerator") or []), *(cands.get("ranked") or []),
            *(cands.get("disaggregated") or [])]
    for row in rows:
        if row.get("accelerator_id") and row.get("count") and candidate_id_of(row) == candidate_id:
            c = Configuration.of_candidate(row)
            return replace(c, gpus_per_server=int(per_server), as_instances="gpus_per_instance" in detail) if per_server else c
    return None


def describes(sizing: dict, configuration: Configuration) -> bool:
    """Does the sizing's recommendation describe this configuration, in its server shape?"""
    rec = sizing.get("recommendation") or {}
    lay = rec.get("layout") or {}
    same_shape = configuration.gpus_per_server is None or _value(rec.get("gpus_per_server")) == configuration.gpus_per_server
    return bool(rec.get("accelerator_id")) and same_shape and configuration.matches(
        rec["accelerator_id"], rec.get("count") or 0, lay.get("tensor_parallel") or 1, lay.get("pipeline_parallel") or 1,
        {k: lay[k] for k in MECHANISM_KEYS if k in lay} or None, pools_of(lay))


def _value(q):
    return q.get("value") if isinstance(q, dict) else q


def _targets(sizing: dict, spec: dict, kind: str, met: bool | None) -> dict:
    if kind in SERVICE_KINDS:
        s, want = sizing.get("serving") or {}, spec.get("serving") or {}
        return {
            "meets": met,
            "ttft_p95_ms": _value(s.get("ttft_p95_ms")), "ttft_p95_ms_target": want.get("ttft_p95_ms"),
            "tpot_p95_ms": _value(s.get("tpot_p95_ms")), "tpot_p95_ms_target": want.get("tpot_p95_ms"),
            "peak_requests_per_second": want.get("requests_per_second"),
        }
    if kind in TRAINING_KINDS:
        c = sizing.get("compute") or {}
        return {
            "meets": met,
            "wall_clock_hours": _value(c.get("wall_clock_hours")),
            "gpu_hours": _value(c.get("gpu_hours")),
            "deadline_hours": (spec.get("training") or {}).get("deadline_hours"),
        }
    return {"meets": met}


def _budget(option: dict, ref: dict, costs: dict, kind: str) -> dict:
    vat = bool(costs.get("include_vat"))
    totals = option.get("totals") or {}
    months = costs.get("horizon_months")
    job = option.get("job") or {}
    out = {
        "currency": costs.get("currency"),
        "amount": "gross" if vat else "net",
        "total": totals.get("gross" if vat else "net") or ref.get("total_gross" if vat else "total_net"),
        "total_net": ref.get("total_net"),
        "total_gross": ref.get("total_gross"),
        "horizon_months": months,
        "basis": (costs.get("decision") or {}).get("basis"),
        # the expected cost of incidents: beside the budget, not in it (costs.engine: issue 20, 2.)
        "risk": option.get("risk"),
    }
    if kind in TRAINING_KINDS and job.get("runs"):
        # a job is budgeted per run, never spread over the months of the horizon
        runs = Decimal(job["runs"])
        out["runs"] = job["runs"]
        total = Decimal(out["total"]) if out["total"] is not None else None
        out["per_run"] = str((total / runs).quantize(Decimal("0.01"))) if total is not None and runs > 0 else None
    else:
        pm = option.get("per_month_average") or {}
        out["per_month"] = pm.get("gross" if vat else "net") if isinstance(pm, dict) else pm
    return out


def build(*, sizing: dict, costs: dict, spec: dict) -> dict:
    """The `decision` block of a plan result (JSON-ready, engine texts with their `_i18n` twins)."""
    kind = sizing.get("kind") or spec.get("kind")
    dec = costs.get("decision") or {}
    ref = dec.get("recommended")
    if not ref:
        return with_structured({
            "status": "nothing_priced", "kind": kind,
            "why": dec.get("why_none") or Msg("nothing could be priced; see the options not priced"),
        })
    option = next((o for o in costs.get("options") or [] if o.get("id") == ref["id"]), {})
    detail = option.get("detail") or {}
    rec = sizing.get("recommendation") or {}
    serving = sizing.get("serving") or {}
    met = serving.get("meets_targets") if kind in SERVICE_KINDS else None
    if kind in TRAINING_KINDS:
        cands = sizing.get("candidates") or {}
        ranked = [*(cands.get("best_per_accelerator") or []), *(cands.get("one_server_per_accelerator") or []),
                  *(cands.get("ranked") or [])]
        row = next((r for r in ranked if r.get("accelerator_id") == rec.get("accelerator_id")
                    and r.get("count") == rec.get("count")), None)
        met = row.get("meets_target") if row else None
    is_api = ref.get("kind") == "api"
    hardware = None
    if not is_api and rec:
        hardware = {
            "accelerator_id": rec.get("accelerator_id"),
            "accelerator": rec.get("accelerator"),
            "gpu_count": rec.get("count"),
            "layout": rec.get("layout"),
            # the option's own shape: instances of a cloud offer, or the servers bought
            "servers": detail.get("servers") or detail.get("instances") or _value(rec.get("servers")),
            "gpus_per_server": detail.get("gpus_per_server") or detail.get("gpus_per_instance")
            or _value(rec.get("gpus_per_server")),
            "server": detail.get("server") or detail.get("instance_type"),
            **({"server_i18n": detail["server_i18n"]} if detail.get("server") and detail.get("server_i18n") else {}),
            # the site's power and racks are the team's only for hardware it owns (on-prem, hybrid's own
            # servers); a rented instance draws on the provider's (null: the headline names no kW)
            "total_power_kw": _value(rec.get("total_power_kw")) if ref.get("kind") in OWNED_KINDS else None,
            "racks": _value(rec.get("racks")) if ref.get("kind") in OWNED_KINDS else None,
        }
    site = _site(spec, rec, serving)
    out = {
        "status": "decided" if met is not False else "closest_misses_targets",
        "kind": kind,
        "option_id": ref["id"],
        "candidate": ref.get("candidate"),
        "label": ref.get("label"),
        "option_kind": ref.get("kind"),
        "payment": PAYMENT.get(ref.get("kind"), ref.get("kind")),
        "provider": detail.get("provider") or (detail.get("model") if is_api else None),
        "region": detail.get("region"),
        "hardware": hardware,
        "targets": _targets(sizing, spec, kind, met),
        "budget": _budget(option, ref, costs, kind),
        "why": ref.get("why"),
        **({"why_i18n": ref["why_i18n"]} if ref.get("why_i18n") else {}),
        "site": site,
        # what published runs say of the run time this decision states (a MoE training estimate)
        **({"accuracy": accuracy} if (accuracy := _accuracy(sizing, kind)) is not None else {}),
        **_warnings(ref, option),
        "alternatives": [
            {"option_id": r["id"], "label": r.get("label"), "option_kind": r.get("kind"),
             "candidate": r.get("candidate"), "total": r.get("total"), "meets_targets": r.get("meets_targets"),
             "difference": _difference(r.get("total"), ref.get("total"))}
            for r in dec.get("ranked") or [] if r.get("id") != ref["id"]
        ],
    }
    if is_api and sizing.get("gpu_required") is False:
        out.pop("why_i18n", None)
        out.update(_model_api(spec, detail, costs))
    if met is False:
        out.pop("why_i18n", None)
        out["why"] = Msg("no priced option meets every target: the closest is shown, and it does NOT meet them")
    return with_structured(out)


def _warnings(ref: dict, option: dict) -> dict:
    """What the headline says of the decided option's risks: the spot warning, then the option's own
    warnings (a pipeline across instances, an assumed commitment price...), once each, so that PDF page 1
    and the API's `decision.warnings` carry what the option's cost table does."""
    pairs = [(ref["spot_warning"], ref.get("spot_warning_i18n"))] if ref.get("spot_warning") else []
    stored = option.get("warnings_i18n") or []
    pairs += [(w, stored[k] if k < len(stored) else None) for k, w in enumerate(option.get("warnings") or [])]
    seen: set[str] = set()
    pairs = [(w, s) for w, s in pairs if not (str(w) in seen or seen.add(str(w)))]
    out: dict = {"warnings": [w for w, _ in pairs]}
    if pairs and all(s is not None for _, s in pairs):  # a stored result: keep the texts' structured form
        out["warnings_i18n"] = [s for _, s in pairs]
    return out


def _accuracy(sizing: dict, kind: str | None) -> Msg | None:
    """The sizing's note on a training estimate's measured error (planner.engine.training_fit_errors), so the
    decision's run time carries it on the page, PDF page 1 and in the API."""
    from .engine.training_fit_errors import NOTE_TEMPLATES

    if kind not in TRAINING_KINDS:
        return None
    return next((w for w in sizing.get("warnings") or [] if getattr(w, "template", None) in NOTE_TEMPLATES), None)


def _model_api(spec: dict, detail: dict, costs: dict) -> dict:
    """An agent on a model API (no GPU): which API the plan chose and why, never silently, and the
    CPU server the agent runs on (issue 20, 8.)."""
    named = (spec.get("serving") or {}).get("model_api") or []
    named = [named] if isinstance(named, str) else list(named)
    compared = sorted(f"{o['detail'].get('provider')}/{o['detail'].get('model')}"
                      for o in costs.get("options") or [] if o.get("kind") == "api" and o.get("detail"))
    api = f"{detail.get('provider')}/{detail.get('model')}"
    n = len(compared)
    if named and n == 1:
        why = Msg("{api}: the model API the workload names (serving.model_api)", api=api)
    elif named:
        why = Msg("{api}: the cheapest of the {n} model APIs the workload names (serving.model_api), on the "
                  "budget basis below", api=api, n=n)
    else:
        why = Msg("{api}: the cheapest of all {n} model APIs priced in the catalog, on the budget basis below; "
                  "the workload names none (serving.model_api names one or several to compare)", api=api, n=n)
    return {
        "model_api": {"provider": detail.get("provider"), "model": detail.get("model"), "named": bool(named),
                      "compared": compared},
        "cpu_server": detail.get("cpu_server"),
        "why": why,
    }


def _site(spec: dict, rec: dict, serving: dict) -> dict | None:
    """What the site's power budget and racks allow at most, in the decided configuration's server
    shape: servers, GPUs and, for a service, the output tokens/s those GPUs give at the stated load."""
    from .engine.infra import RACK_BUDGET_KW

    hw = spec.get("hardware") or {}
    budget_kw, racks = hw.get("power_budget_kw"), hw.get("racks")
    if budget_kw is None and racks is None:
        return None
    server_kw, per_server = _value(rec.get("server_power_kw")), _value(rec.get("gpus_per_server"))
    out = {"power_budget_kw": budget_kw, "racks": racks, "max_servers": None, "max_gpus": None,
           "max_output_tokens_per_s": None}
    if not server_kw or not per_server:
        out["text"] = Msg("the site's limits cannot be applied: the decided configuration's server power is unknown")
        return out
    limits = []
    if budget_kw is not None:
        limits.append(int(float(budget_kw) // float(server_kw)))
    if racks is not None:
        limits.append(int(racks) * int(RACK_BUDGET_KW // float(server_kw)))
    servers = min(limits)
    out["max_servers"], out["max_gpus"] = servers, servers * int(per_server)
    per_gpu = _value(serving.get("output_tokens_per_s_per_gpu"))
    if per_gpu:
        out["max_output_tokens_per_s"] = round(out["max_gpus"] * float(per_gpu), 1)
    out["text"] = Msg("the site allows at most {servers} {servers:plural:server|servers} of {gpus} {accelerator} "
                      "({max_gpus} {max_gpus:plural:GPU|GPUs}, {kw:.1f} kW each)", servers=servers, gpus=int(per_server),
                      accelerator=rec.get("accelerator") or "", max_gpus=out["max_gpus"], kw=float(server_kw))
    return out


def _difference(total: str | None, decided: str | None) -> str | None:
    try:
        return str(Decimal(total) - Decimal(decided))
    except (TypeError, InvalidOperation):
        return None
