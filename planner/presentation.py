"""Turns stored plan versions into what the pages, the diff, compare and exports show.

Reads only the version's stored JSON (never today's catalog): an old version renders with
the prices it was computed with (R6.4). Missing figures stay None and show as "unknown".
"""

from __future__ import annotations

from decimal import Decimal, InvalidOperation

from django.utils.translation import gettext_lazy as _
from django.utils.translation import npgettext, pgettext_lazy

from . import humanize  # h/form
from .forms import FIELDS


def preset_architecture_fields(preset_id: str) -> dict[str, str]:
    """Form values of a preset's architecture, so choosing a preset fills those fields."""
    from planner.engine.presets import get_preset

    preset = get_preset(preset_id) if preset_id else None
    if preset is None:
        return {}
    out = {}
    for f in FIELDS:
        if not f.path.startswith("model.architecture."):
            continue
        key = f.path.rsplit(".", 1)[1]
        value = preset.row.get(key if key != "params" else "total_params", "")
        if value in ("", None):
            continue
        if key in ("gated_ffn", "tied_embeddings"):
            value = "true" if str(value).lower() == "true" else "false"
        out[f.name] = str(value)
    return out


# --- diff ------------------------------------------------------------------------------


def flatten(value, prefix: str = "") -> dict[str, object]:
    """{"a": {"b": 1}} -> {"a.b": 1}; lists stay whole values."""
    if isinstance(value, dict):
        out: dict[str, object] = {}
        for k, v in value.items():
            out.update(flatten(v, f"{prefix}.{k}" if prefix else str(k)))
        return out
    return {prefix: value}


def _decimal(value) -> Decimal | None:
    if value is None or isinstance(value, bool):
        return None
    if isinstance(value, dict) and "amount" in value:
        value = value["amount"]
    try:
        return Decimal(str(value))
    except (InvalidOperation, ValueError):
        return None


# The four rows of the cost table (REQUIREMENTS R4) with what each is measured as.
COST_ROWS = {
    "gpu_time": (_("GPU time"), _("hours / iterations")),
    "infrastructure": (_("Infrastructure"), _("storage and traffic cost")),
    "engineering": (_("Engineering"), _("team hours for setup and support")),
    "downtime_risk": (_("Downtime risk"), _("incidents and recovery time")),
}
# The row of the cost table that is a risk figure, shown beside the total and never in it.
RISK_ROW = "downtime_risk"
RISK_LABEL = _("Expected cost of incidents: not in the total")
OPTION_KINDS = {
    "cloud_on_demand": _("Cloud, on demand"),
    "cloud_spot": _("Cloud, spot"),
    "cloud_commit_1y": _("Cloud, 1-year commitment"),
    "cloud_commit_3y": _("Cloud, 3-year commitment"),
    "dedicated": _("Dedicated server (rented)"),
    "onprem": _("On-prem (owned)"),
    "hybrid": _("Hybrid"),
    "api": _("External model API"),
    "gpu options": _("GPU options"),
}
# Options drawn on the plan page (the full table is in the exports).
MAX_OPTIONS_SHOWN = 8


# Names of a cost line's own inputs (rates are named by the rate card's description).
INPUT_LABELS = {
    "quantity": _("Quantity"), "months": _("Months"), "hours": _("Hours"), "restart_hours": _("Restart time, hours"),
    "kwh_per_month": _("Energy per month, kWh"), "checkpoint_interval_hours": _("Checkpoint interval"),
    "gpus": _("GPUs"), "servers": _("Servers"), "instances": _("Instances"), "price": _("Price"),
    "server": _("Server price"), "redundancy": _("Redundancy"), "utilisation": _("Utilisation"),
    "efficiency": _("Efficiency"), "tokens_per_month": _("Tokens per month"), "hours_per_month": _("Hours per month"),
    "gb": _("GB"), "gb_per_month": _("GB per month"), "incidents_per_month": _("Incidents per month"),
    "tokens_out_per_month": _("Output tokens per month"), "tokens_in_per_month": _("Input tokens per month"),
    "index_bytes": _("Index size"), "query_embedding_cpu_cores": _("CPU cores for query embedding"),
    "gpu_hours": _("GPU-hours"), "instance_hours": _("Instance-hours"), "runs": _("Runs"),
    "incidents": _("Incidents"), "downtime_hours": _("Downtime, hours"), "share": _("Share"),
    "hosts": _("Hosts"), "billed_hours_per_month": _("Billed hours per month"),
    "outage_hours_per_month": _("Outage hours per month"),
}
VALUE_LABELS = {
    "none": _("none"), "selective": _("selective"), "full": _("full"), "decoder": _("decoder"),
    "encoder": _("encoder"), "vision": _("vision model"), "encoder_decoder": _("encoder-decoder"),
    "n_plus_1": _("N+1 spare server"), "multi_zone": _("a second zone"), "preset": _("preset"),
    "architecture": _("architecture"), "hf_config": _("Hugging Face config.json"),
}


def input_label(name: str, *, priced: bool = False) -> str:
    from costs.engine.rates import RATE_SCHEMA, base_key

    from .i18n import render

    spec = RATE_SCHEMA.get(base_key(name or ""))
    if spec is not None:
        return render(spec.help)
    if name in INPUT_LABELS:
        return str(INPUT_LABELS[name])
    if priced:  # a catalog price, named after its offer: the source says which
        return str(_("Price"))
    return _humanised(name or "")


def _humanised(key: str) -> str:
    from django.utils.translation import gettext

    text = key.replace("_", " ").strip()
    return gettext(text.capitalize()) if text else text


def breakdown_item(b: dict) -> dict:
    """One breakdown item as the page shows it: units, basis and numbers in the page's language."""
    from django.utils.translation import gettext

    price = b.get("price")
    if isinstance(price, str):  # "0.545 USD per instance-hour"; "8 RUB per kWh" too
        number, _sep, rest = price.partition(" ")
        currency, _sep2, unit = rest.partition(" ")
        if _is_number(number) and len(currency) == 3:
            price = f"{_number_text(number)} {currency} {_unit_text(unit)}".strip()
    unit = b.get("quantity_unit")
    unit = unit_label(unit, b.get("quantity")) if unit in UNIT_PLURALS or unit in UNIT_LABELS else _unit_text(unit)
    return {**b, "quantity": _number_text(b.get("quantity")), "quantity_unit": unit,
            "months": _number_text(b.get("months")) if b.get("months") else b.get("months"),
            "share": _number_text(b.get("share")) if b.get("share") else b.get("share"),
            "price": price or "", "basis": gettext(b["basis"]) if b.get("basis") else b.get("basis"),
            "rate": input_label(b["rate"]) if b.get("rate") else b.get("rate"),
            "source": source_label(b.get("source"))}


SOURCE_LABELS = {"workload": _("the workload"), "user override": _("set by the user")}


def source_label(source):
    return str(SOURCE_LABELS[source]) if isinstance(source, str) and source in SOURCE_LABELS else source


def value_label(value):
    if isinstance(value, str) and value in VALUE_LABELS:
        return str(VALUE_LABELS[value])
    return value


def _unit_text(unit) -> str:
    from django.utils.translation import gettext

    if not isinstance(unit, str) or not unit:
        return unit or ""
    base, vat, _rest = unit.partition(" incl. VAT")
    return gettext(base) + (gettext(" incl. VAT") if vat else "")


def _is_number(text: str) -> bool:
    try:
        Decimal(text)
    except (InvalidOperation, ValueError):
        return False
    return True


# Units of the cost engine's quantities and rates (costs/engine/*.py), named here so that the
# message extraction finds them; the page translates them through gettext (_unit_text).
COST_UNITS = (
    _("GPU-hours per running month"), _("M tokens per month"), _("hours per server"),
    _("hours per server-month"), _("instance-hours"), _("instance-hours per month (average)"),
    _("instance-hours per month"), _("not given"), _("not given: costs.downtime_cost_per_hour (downtime is not priced)"),
    _("kWh per month (average)"), _("outage hours per month"), _("outage-equivalent hours per running month"),
    _("per instance per running month"), _("share of capex per month"), _("derived"),
    _("Traffic (internet egress)"),
)


def _number_text(value):
    """A rate's stored decimal string ("1.073") as a figure in the page's language."""
    from .templatetags.planner_tags import figure

    if isinstance(value, str):
        try:
            number = Decimal(value)
        except (InvalidOperation, ValueError):
            return value
        return figure(int(number) if number == number.to_integral_value() else float(number))
    return figure(value) if isinstance(value, int | float) and not isinstance(value, bool) else value


def line_inputs(inputs: dict) -> list[dict]:
    """A cost line's inputs as rows {name, value, unit, source}: rates with their sources first."""
    out = []
    for rate in inputs.get("rates") or []:
        if isinstance(rate, dict):
            unit = " ".join(x for x in (rate.get("currency"), _unit_text(rate.get("unit"))) if x)
            out.append({"name": input_label(rate.get("name"), priced=bool(rate.get("currency"))),
                        "value": _number_text(value_label(rate.get("value"))), "unit": unit,
                        "source": source_label(rate.get("source"))})
    for key, value in inputs.items():
        if key in ("rates", "unit") or key.endswith("_i18n"):
            continue
        unit = _unit_text(inputs.get("unit", "")) if key == "quantity" else ""
        out.append({"name": input_label(key), "value": _number_text(value_label(value))
                    if not isinstance(value, dict | list) else str(value), "unit": unit, "source": ""})
    return out


def costs_view(costs: dict, accelerators: dict | None = None) -> dict | None:
    if not costs:
        return None
    from costs.labels import line_label, mc_range
    include_vat = bool(costs.get("include_vat"))
    currency = costs.get("currency", "")
    shortlisted = {i for ids in (costs.get("shortlist") or {}).values() for i in ids}
    all_options = [_localised(o) for o in costs.get("options") or []]
    options = [o for o in all_options if not shortlisted or o.get("id") in shortlisted]
    options.sort(key=lambda o: (_option_total(o, include_vat) is None, _option_total(o, include_vat) or 0))
    dec = costs.get("decision") or {}
    decided = {(dec.get(k) or {}).get("id") for k in ("recommended", "cheapest_onprem", "cheapest_cloud", "api")}
    decided |= {r.get("id") for r in dec.get("ranked") or []}
    decided.discard(None)
    # the cheapest options, and always the decision summary's (so every option it names is in the table)
    options = [o for i, o in enumerate(options) if i < MAX_OPTIONS_SHOWN or o.get("id") in decided]
    shown = {o.get("id") for o in options}
    mc = (costs.get("monte_carlo") or {}).get("options") or {}
    labels = {o.get("id"): o.get("label") for o in all_options}
    view_options = []
    for o in options:
        rows, risk_row = [], None
        for row in o.get("rows") or []:
            label, measured = COST_ROWS.get(row.get("row"), (row.get("row"), ""))
            lines = [{**line, "label": line_label(line.get("key") or "") if line.get("key") else line.get("label"),
                      "inputs_list": line_inputs(line.get("inputs") or {}),
                      "breakdown": [breakdown_item(b) for b in line.get("breakdown") or []]}
                     for line in row.get("lines") or []]
            view_row = {**row, "label": label, "measured_as": measured, "lines": lines,
                        "total": row.get("total_gross" if include_vat else "total_net")}
            if row.get("row") == RISK_ROW and _risk_apart(o):
                risk_row = view_row  # listed under the total, beside it, not in it
            else:
                rows.append(view_row)
        view_options.append({
            **o, "rows": rows, "risk_row": risk_row, "risk_view": risk_view(o, include_vat),
            "total": _option_total(o, include_vat),
            "kind_label": OPTION_KINDS.get(o.get("kind"), o.get("kind")),
            # on the basis of the total beside it (gross with VAT, else net), labelled
            "uncertainty": mc_range(mc.get(o.get("id")), gross=include_vat),
            # cost per million output tokens at the stated volume, on the basis of the total beside it
            "per_1m_output_tokens": (o.get("unit_costs") or {}).get(
                "per_1m_output_tokens_gross" if include_vat else "per_1m_output_tokens_net"),
        })
    break_even = [
        {**b, "a_label": labels.get(b.get("a")), "b_label": labels.get(b.get("b"))}
        for b in costs.get("break_even_months") or [] if b.get("a") in shown and b.get("b") in shown
    ]
    chart = {
        "currency": currency,
        "horizon_months": costs.get("horizon_months"),
        "series": [
            {"label": o.get("label"), "data": [float(v) for v in (o.get("cash_flow") or {}).get("cumulative_net", [])]}
            for o in options
        ],
        "markers": [{"month": b["month"], "label": f"{b['a_label']} / {b['b_label']}"}
                    for b in break_even if b.get("month") is not None],
    }
    uncertainty_chart = {
        "currency": currency,
        "basis_label": next((o["uncertainty"]["basis_label"] for o in view_options if o["uncertainty"]), ""),
        "labels": [o.get("label") for o in view_options if o["uncertainty"]],
        "p10": [float(o["uncertainty"]["p10"]) for o in view_options if o["uncertainty"]],
        "p50": [float(o["uncertainty"]["p50"]) for o in view_options if o["uncertainty"]],
        "p90": [float(o["uncertainty"]["p90"]) for o in view_options if o["uncertainty"]],
    }
    # three bars per option and room for the legend: the P10/P50/P90 labels are never cut
    uncertainty_chart["height_px"] = 120 + 60 * len(uncertainty_chart["labels"])
    return {
        "decision": decision_view(costs, include_vat),
        "currency": currency, "include_vat": include_vat, "horizon_months": costs.get("horizon_months"),
        "as_of": costs.get("as_of"), "country": costs.get("country"), "options": view_options,
        "options_total": len(costs.get("options") or []), "break_even": break_even,
        "per_1m_output_tokens_shown": any(o["per_1m_output_tokens"] for o in view_options),
        "break_even_utilisation": [{**b, "own_label": labels.get(b.get("own")), "rent_label": labels.get(b.get("rent"))}
                                   for b in costs.get("break_even_utilisation") or []
                                   if b.get("own") in shown and b.get("rent") in shown],
        "skipped": [{**s, "candidate": candidate_label(s.get("candidate"), accelerators or {}),
                     "kind": OPTION_KINDS.get(s.get("kind"), s.get("kind"))} for s in costs.get("skipped") or []
                    if not humanize.is_residency_skip(s)],  # h/form: residency ones are one line
        "residency": humanize.residency_summary(costs.get("skipped"), costs.get("data_residency")),
        "notes": costs.get("notes") or [],
        "inputs_used": costs.get("inputs_used") or {},
        "freshness": costs.get("freshness") or {}, "data_residency": costs.get("data_residency"),
        "chart": chart, "uncertainty_chart": uncertainty_chart,
    }


def _risk_apart(option: dict) -> bool:
    """Results from before issue 20 counted the risk row in the total; only a result that says the
    risk is apart (``risk``) shows it under the total."""
    return isinstance(option.get("risk"), dict)


def risk_view(option: dict, include_vat: bool) -> dict | None:
    """The expected cost of incidents as the page shows it beside the total: an amount when the
    user priced an hour of downtime, else the expected hours and what pricing them needs."""
    risk = option.get("risk")
    if not isinstance(risk, dict):
        return None
    # options kept in totals only carry the net figure (an outage bears no VAT: gross = net)
    amount = _decimal((include_vat and risk.get("expected_downtime_gross")) or risk.get("expected_downtime_net"))
    return {"label": RISK_LABEL, "amount": amount, "priced": bool(risk.get("priced")) and amount is not None,
            "hours_per_year": risk.get("expected_downtime_hours_per_year"), "text": risk.get("text") or "",
            "in_total": bool(risk.get("in_total"))}


def decision_view(costs: dict, include_vat: bool) -> dict | None:
    """The decision summary (costs.engine.decision) with labels in the active language and the
    totals the cost table shows (gross with VAT, else net), so headline, ranked list and table agree."""
    decision = costs.get("decision")
    if not decision:
        return None
    by_id = {o.get("id"): o for o in costs.get("options") or []}

    def ref(r):
        if not r or r.get("id") not in by_id:
            return None
        o = by_id[r["id"]]
        return {**r, "label": _localised(o)["label"], "kind_label": OPTION_KINDS.get(o.get("kind"), o.get("kind")),
                "shown_total": _option_total(o, include_vat), "risk": risk_view(o, include_vat)}

    out = {k: ref(decision.get(k)) for k in ("recommended", "cheapest_onprem", "cheapest_cloud",
                                               "cheapest_dedicated", "cheapest_hybrid", "api")}
    if out["recommended"] is not None:
        out["recommended"]["why"] = decision["recommended"].get("why", "")
    if out["api"] is not None:
        out["api"]["comparison"] = decision["api"].get("comparison", "")
    out["ranked"] = [x for x in (ref(r) for r in decision.get("ranked") or []) if x]
    for r, raw in zip(out["ranked"], [r for r in decision.get("ranked") or [] if r.get("id") in by_id], strict=False):
        r["meets_targets"], r["sizing_recommended"] = raw.get("meets_targets"), raw.get("sizing_recommended")
    out.update({k: decision.get(k) for k in ("basis", "break_even", "sizing_recommendation", "statistic",
                                             "efficiency", "onprem_missing", "ranked_by", "why_none", "site_limited")})
    return out


def version_view(version) -> dict:
    """What the plan page shows of a version, read from its stored result only, with every
    engine text in the active language (planner.i18n)."""
    from .i18n import localise
    from .launch_view import launch_view
    from .procurement_view import version_procurement_view

    result = localise(version.result or {})
    sizing = result.get("sizing") or {}
    accelerators = {a.get("id"): a for a in (version.price_snapshot or {}).get("accelerators") or []}
    sizing_v = sizing_view(sizing)
    if sizing_v:
        _price_alternatives(sizing_v, result.get("costs") or {})
    costs_v = costs_view(result.get("costs") or {}, accelerators)
    card_view(costs_v, result.get("costs") or {})  # the ten-second card's short labels, numbers, colours, matrix (h/card)
    return {"decision": card_decision(plan_decision_view(result.get("decision"))),
            "sizing": sizing, "costs": costs_v,
            "sizing_view": sizing_v, "memory_chart": memory_chart(sizing, accelerators),
            "serving_curve": serving_curve_chart(sizing),
            "procurement": version_procurement_view(version.inputs),
            "launch": launch_view(result.get("decision"))}


def plan_decision_view(decision: dict | None) -> dict | None:
    """The plan's one decision (planner.plan_decision) as the page and the PDF show it."""
    if not decision:
        return None
    out = dict(decision)
    if out.get("hardware"):
        out["hardware"] = {**out["hardware"], "layout_text": _layout(out["hardware"].get("layout"))}
    return out


def _price_alternatives(view: dict, costs: dict) -> None:
    """The sizing ranks by catalog USD per hour; the page shows that price in the plan's currency
    at the plan's dated FX rate (never USD inside a RUB plan), or no price column without a rate."""
    currency = costs.get("currency") or "USD"
    factor = Decimal(1) if currency == "USD" else None
    for fx in (costs.get("inputs_used") or {}).get("fx") or []:
        rate = _decimal(fx.get("rate"))
        if rate and fx.get("base") == currency and fx.get("quote") == "USD":
            factor = 1 / rate
        elif rate and fx.get("base") == "USD" and fx.get("quote") == currency:
            factor = rate
    view["price_currency"] = currency if factor is not None else ""
    for c in view.get("ranked") or []:
        usd = _decimal(c.get("cost_usd_per_hour"))
        c["cost_per_hour"] = usd * factor if usd is not None and factor is not None else None


def _localised(option: dict) -> dict:
    """The option with its label in the active language (costs.labels)."""
    from costs.labels import option_label

    return {**option, "label": option_label(option)}


def candidate_label(candidate, accelerators: dict) -> str:
    """ "nvidia-a100-sxm4-80gb x48" -> "48 × A100 SXM4 80GB": an engine candidate id as people read it."""
    if not isinstance(candidate, str):
        return candidate
    acc_id, _sep, count = candidate.rpartition(" x")
    if candidate == "no-gpu":
        return str(_("no GPU"))
    if not acc_id or not count.isdigit():
        return str(OPTION_KINDS.get(candidate, candidate)) if candidate != "api" else str(OPTION_KINDS["api"])
    name = (accelerators.get(acc_id) or {}).get("model") or acc_id
    return f"{count} × {name}"


def _option_total(option: dict, include_vat: bool):
    totals = option.get("totals") or {}
    return _decimal(totals.get("gross" if include_vat else "net"))


def option_totals(result: dict | None) -> dict[str, dict]:
    """{option_id: {"label", "total" (Decimal|None), "currency"}} from a stored cost result."""
    costs = (result or {}).get("costs") or {}
    currency = costs.get("currency", "")
    include_vat = bool(costs.get("include_vat"))
    return {
        str(option.get("id")): {"label": _localised(option)["label"], "total": _option_total(option, include_vat),
                                "currency": currency}
        for option in costs.get("options") or []
    }


def input_path_label(path: str) -> str:
    """ "costs.horizon_months" -> "Horizon": a frozen input's path as the form names it."""
    from .forms import FIELD_BY_PATH, CostOptionsForm

    if path == "prices_as_of":
        return str(_("Prices as of"))
    head, _sep, rest = path.partition(".")
    if head == "spec" and rest in FIELD_BY_PATH:
        field = FIELD_BY_PATH[rest].make()
        return str(field.label)
    if head == "spec" and rest == "kind":
        return str(_("Kind"))
    if head == "costs" and rest in CostOptionsForm.base_fields:
        return str(CostOptionsForm.base_fields[rest].label)
    return rest or path


def version_diff(*, old, new) -> dict:
    """Which inputs changed between two versions and how each option's total moved."""
    a = {**flatten(old.inputs), "prices_as_of": old.as_of.isoformat()}
    b = {**flatten(new.inputs), "prices_as_of": new.as_of.isoformat()}
    inputs = [
        {"path": path, "label": input_path_label(path), "old": humanize.input_value_text(path, a.get(path)),
         "new": humanize.input_value_text(path, b.get(path))}
        for path in sorted(set(a) | set(b))
        if a.get(path) != b.get(path)
    ]
    old_totals, new_totals = option_totals(old.result), option_totals(new.result)
    totals = []
    for option_id in list(dict.fromkeys([*old_totals, *new_totals])):
        o, n = old_totals.get(option_id, {}), new_totals.get(option_id, {})
        before, after = o.get("total"), n.get("total")
        same_currency = o.get("currency") == n.get("currency")
        totals.append({
            "option_id": option_id,
            "label": n.get("label") or o.get("label"),
            "old": before, "old_currency": o.get("currency", ""),
            "new": after, "new_currency": n.get("currency", ""),
            "delta": after - before if before is not None and after is not None and same_currency else None,
            "pct": ((after - before) / before * 100).quantize(Decimal("0.1"))
            if before and after is not None and same_currency else None,
        })
    # h/form: options priced in one version only (e.g. left out by data residency in the other) are
    # one line each way with the list on demand, not rows of "unknown"
    only_old = [r for r in totals if r["old"] is not None and r["new"] is None]
    only_new = [r for r in totals if r["old"] is None and r["new"] is not None]
    totals = [r for r in totals if r not in only_old and r not in only_new]
    return {"inputs": inputs, "totals": totals, "only_old": only_old, "only_new": only_new,
            "residency_changed": a.get("costs.data_residency") != b.get("costs.data_residency")}


def _is_quantity(value) -> bool:
    return isinstance(value, dict) and "value" in value and set(value) <= {
        "value", "unit", "explain", "source", "low", "high"}


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
}


# Units the engine writes. SI symbols take the language's letters (Russian writes кВт, мс, ГБ/с,
# as the engine's own Russian texts do: "15 кВт"); GiB, TFLOP/s and FLOP stay as they are. Counted
# units agree with their number ("1 server", "2 servers"; Russian: 1 сервер, 2 сервера, 5 серверов).
UNIT_LABELS = {
    "tokens/s": _("tokens/s"), "requests/s": _("requests/s"), "bytes": _("bytes"),
    "kW": pgettext_lazy("unit symbol", "kW"), "W": pgettext_lazy("unit symbol", "W"),
    "ms": pgettext_lazy("unit symbol", "ms"), "s": pgettext_lazy("unit symbol", "s"),
    "h": pgettext_lazy("unit symbol", "h"), "GB/s": pgettext_lazy("unit symbol", "GB/s"),
    "Gbit/s": pgettext_lazy("unit symbol", "Gbit/s"), "tokens/param": _("tokens per parameter"),
}
UNIT_PLURALS = {
    "servers": lambda n: npgettext("unit", "server", "servers", n),
    "GPUs": lambda n: npgettext("unit", "GPU", "GPUs", n),
    "cores": lambda n: npgettext("unit", "core", "cores", n),
    "racks": lambda n: npgettext("unit", "rack", "racks", n),
    "replicas": lambda n: npgettext("unit", "replica", "replicas", n),
    "sequences": lambda n: npgettext("unit", "sequence", "sequences", n),
    "requests": lambda n: npgettext("unit", "request", "requests", n),
    "params": lambda n: npgettext("unit", "parameter", "parameters", n),
    "hours": lambda n: npgettext("unit", "hour", "hours", n),
    "GPU-hours": lambda n: npgettext("unit", "GPU-hour", "GPU-hours", n),
    "core-hours": lambda n: npgettext("unit", "core-hour", "core-hours", n),
    "tokens": lambda n: npgettext("unit", "token", "tokens", n),
    "months": lambda n: npgettext("unit", "month", "months", n),
    "chunks": lambda n: npgettext("unit", "chunk", "chunks", n),
}


def unit_label(unit: str, value) -> str:
    """The unit in the active language, in the form its value takes."""
    if unit in UNIT_PLURALS:
        return UNIT_PLURALS[unit](_plural_count(value))
    return str(UNIT_LABELS.get(unit, unit))


def _plural_count(value) -> int:
    # Whole numbers pick their own form; fractions and unknowns read like 2 (English "1.5 hours",
    # Russian "1,5 часа").
    try:
        number = float(value)
    except (TypeError, ValueError):
        return 2
    return int(abs(number)) if number.is_integer() and abs(number) < 2**63 else 2


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


def serving_curve_chart(sizing: dict) -> dict | None:
    """Throughput-latency curves of the shortlisted serving configurations (engine data, issue 10)."""
    curves = [c for c in ((sizing.get("candidates") or {}).get("curves") or []) if c.get("points")]
    if not curves:
        return None
    return {
        "x_label": str(_("Output tokens/s per GPU")),
        "tpot_label": str(_("Time per output token, median (ms)")),
        "ttft_label": str(_("Time to first token, p95 (ms)")),
        "series": [{"label": "{} · {}".format(c.get("accelerator") or c.get("accelerator_id"), _layout(
                        {**(c.get("layout") or {}), "replicas": 1})),
                    "points": [{"x": p["output_tokens_per_s_per_gpu"], "tpot": p["tpot_p50_ms"], "ttft": p["ttft_p95_ms"]}
                               for p in c["points"]]} for c in curves],
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
    dp = layout.get("replicas", layout.get("data_parallel"))
    if dp is None and all(isinstance(layout.get(k), int) for k in ("count", "tensor_parallel", "pipeline_parallel")):
        dp = layout["count"] // max(1, layout["tensor_parallel"] * layout["pipeline_parallel"])
    parts = [f"TP{layout.get('tensor_parallel', 1)}", f"PP{layout.get('pipeline_parallel', 1)}"]
    if dp is not None:
        parts.append(f"DP{dp}")
    return " × ".join(parts)


def sizing_view(sizing: dict) -> dict | None:
    if not sizing:
        return None
    recommendation = dict(sizing.get("recommendation") or {})
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
        "ranked_total": len(candidates.get("ranked") or []),
        "not_fitting": (candidates.get("not_fitting") or [])[:MAX_ALTERNATIVES],
        "not_fitting_total": len(candidates.get("not_fitting") or []),
    }


def meets_by_candidate(sizing: dict) -> dict[str, bool]:
    """{"nvidia-h100-sxm5-80gb x8": True, ...}: what the sizing says of each candidate it ranked."""
    out = {}
    cands = sizing.get("candidates") or {}
    # the best configuration of each accelerator too: the decision of a training plan reads it (plan_decision)
    for c in [*(cands.get("best_per_accelerator") or []), *(cands.get("ranked") or [])]:
        met = next((c[k] for k in ("meets_target", "meets_targets", "meets_deadline") if k in c), None)
        if c.get("accelerator_id") and c.get("count") is not None and met is not None:
            out[f"{c['accelerator_id']} x{c['count']}"] = bool(met)
    return out


# == ten-second card, short labels, break-even matrix, chart palette (h/card) ==
# Okabe & Ito's colour-blind-safe palette (Okabe, Ito 2008, "Color Universal Design"): eight
# colours told apart with any common colour-vision deficiency. A ninth option and beyond reuse a
# colour with another dash pattern, so no two lines of a chart look the same.
OKABE_ITO = ("#0072B2", "#E69F00", "#009E73", "#CC79A7", "#56B4E9", "#D55E00", "#000000", "#F0E442")
LINE_DASHES = ((), (6, 3), (2, 2), (8, 3, 2, 3))


def option_style(index: int) -> dict:
    """The colour and dash of the index-th option's line (the same in the chart and its legend)."""
    n = len(OKABE_ITO)
    return {"color": OKABE_ITO[index % n], "dash": list(LINE_DASHES[(index // n) % len(LINE_DASHES)])}


def short_option_label(option: dict) -> str:
    """'8 × H100 SXM · Yandex Cloud, ru-central1': what and where, short enough for a table cell;
    the full label (layout, hosts, payment) goes in a title or a <details>. The payment mode is
    the option's kind, shown in its own column."""
    d, kind = option.get("detail") or {}, option.get("kind")
    if kind == "api" and (d.get("provider") or d.get("model")):
        return " ".join(str(x) for x in (d.get("provider"), d.get("model")) if x)
    if "gpus" not in d or not d.get("accelerator"):
        return option.get("label") or ""
    text = f"{d['gpus']} × {d['accelerator']}"
    where = ", ".join(str(x) for x in (d.get("provider"), d.get("region")) if x)
    return f"{text} · {where}" if where else text


def break_even_matrix(options: list[dict], pairs: list[dict]) -> dict | None:
    """The break-even months as an option × option matrix: each cell says, from the row's option's
    side, when it is cheaper than the column's (cumulative cost): "from month N", "until month N",
    "always", "never", or nothing when the pair was not compared (different configurations).
    Options are numbered as in the cost table; None with fewer than two compared options."""
    ids = [o.get("id") for o in options]
    by_pair = {}
    for b in pairs:
        a, o = b.get("a"), b.get("b")
        if a not in ids or o not in ids:
            continue
        month, after = b.get("month"), b.get("cheaper_after")
        if after is None:  # a result stored before the engine said which side wins
            after = "a" if b.get("state") == "a_never_more_expensive" else (
                "b" if b.get("state") == "b_never_more_expensive" else None)
        if after is None:
            continue
        winner, loser = (a, o) if after == "a" else (o, a)
        if month is None or month == 0:
            by_pair[(winner, loser)] = {"state": "always", "month": None}
            by_pair[(loser, winner)] = {"state": "never", "month": None}
        else:
            by_pair[(winner, loser)] = {"state": "from", "month": month}
            by_pair[(loser, winner)] = {"state": "until", "month": month}
    if not by_pair:
        return None
    rows = []
    for i, o in enumerate(options):
        cells = [by_pair.get((o.get("id"), other.get("id"))) if j != i else {"state": "self", "month": None}
                 for j, other in enumerate(options)]
        rows.append({"number": i + 1, "label": o.get("short_label") or o.get("label"), "title": o.get("label"),
                     "kind_label": o.get("kind_label"),
                     "cells": cells})
    return {"columns": [{"number": i + 1, "title": o.get("label")} for i, o in enumerate(options)], "rows": rows}


def card_view(costs: dict | None, raw: dict | None = None) -> None:
    """Adds what the ten-second card and the compact tables read to a costs_view in place: a short
    label, a number and a colour per option, the alternatives' difference to the decision, and the
    break-even matrix. Pure presentation: the decision itself is planner.plan_decision's."""
    if not costs:
        return
    options = costs.get("options") or []
    for i, o in enumerate(options):
        o["number"] = i + 1
        o["short_label"] = short_option_label(o)
        o["style"] = option_style(i)
    numbers = {o.get("id"): o for o in options}
    raw_options = {o.get("id"): o for o in (raw or {}).get("options") or []}
    for i, series in enumerate((costs.get("chart") or {}).get("series") or []):
        series.update(option_style(i))
        if i < len(options):
            series["number"] = i + 1
            series["short_label"] = options[i]["short_label"]
            series["kind_label"] = str(options[i].get("kind_label") or "")
    dec = costs.get("decision") or {}
    rec_total = _decimal((dec.get("recommended") or {}).get("shown_total"))
    for r in [dec.get("recommended"), *(dec.get("ranked") or [])]:
        if not r:
            continue
        shown = numbers.get(r.get("id"))
        r["short_label"] = shown["short_label"] if shown else short_option_label({**raw_options.get(r.get("id"), {}), **r})
        r["number"] = shown["number"] if shown else None
        total = _decimal(r.get("shown_total"))
        r["difference"] = total - rec_total if total is not None and rec_total is not None else None
    costs["break_even_matrix"] = break_even_matrix(options, costs.get("break_even") or [])
    # the P10/P50/P90 bars are named by the options' numbers and short labels, as in the table
    unc = costs.get("uncertainty_chart") or {}
    by_label = {o.get("label"): o for o in options}
    unc["labels"] = [f"{by_label[x]['number']} · {by_label[x]['short_label']} · {by_label[x].get('kind_label') or ''}"
                     if x in by_label else x
                     for x in unc.get("labels") or []]


def card_decision(decision: dict | None) -> dict | None:
    """The counts the card pluralises (servers, GPUs per server, runs, months) as integers: a stored
    result may carry them as strings ("1") or floats (2.0), and a plural form needs a number."""
    if not decision:
        return decision

    def whole(value):
        try:
            number = Decimal(str(value))
        except (InvalidOperation, ValueError):
            return value
        return int(number) if number == number.to_integral_value() else float(number)

    for block, keys in (("hardware", ("servers", "gpus_per_server", "gpu_count")),
                        ("budget", ("runs", "horizon_months"))):
        part = decision.get(block)
        if isinstance(part, dict):
            decision[block] = {**part, **{k: whole(part[k]) for k in keys if part.get(k) is not None}}
    return decision
