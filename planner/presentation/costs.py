"""The cost section of a plan page: the options table, lines, inputs, risk and the decision summary."""

from __future__ import annotations

from decimal import Decimal, InvalidOperation

from django.utils.translation import gettext_lazy as _

from costs.cash_flow import cumulative

from .. import humanize  # h/form
from .common import UNIT_LABELS, UNIT_PLURALS, _decimal, unit_label, value_label

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
def input_label(name: str, *, priced: bool = False) -> str:
    from costs.engine.rates import RATE_SCHEMA, base_key

    from ..i18n import render

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
    from ..templatetags.planner_tags import figure

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
    # in the exports' order and with their numbers (costs.order): the decision first, then the cheapest
    # of each other way of paying, then the rest, so "option 3" is the same option on the page, in the
    # PDF, the XLSX and the CSV
    from costs.order import export_order

    position = {o.get("id"): i for i, o in enumerate(export_order(costs))}
    options.sort(key=lambda o: position.get(o.get("id"), len(position)))
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
            "export_number": position[o["id"]] + 1 if o.get("id") in position else None,
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
            {"label": o.get("label"), "data": [float(v) for v in cumulative(o, "net")]}
            for o in options if o.get("cash_flow")
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
            "hours_per_year": risk.get("expected_downtime_hours_per_year"),
            # a job's exposure is its runs (absent from results stored before it)
            "hours_per_run": risk.get("expected_downtime_hours_per_run"), "text": risk.get("text") or "",
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



def _localised(option: dict) -> dict:
    """The option with its label in the active language (costs.labels)."""
    from costs.labels import option_label

    return {**option, "label": option_label(option)}


def candidate_label(candidate, accelerators: dict) -> str:
    """ "nvidia-a100-sxm4-80gb x48" -> "48 × A100 SXM4 80GB": an engine candidate id as people read it."""
    if not isinstance(candidate, str):
        return candidate
    base, _sep, pools = candidate.partition(" disagg ")  # "<id> x24 disagg P4xTP4 D1xTP8" (result.candidate_id)
    acc_id, _sep, count = base.rpartition(" x")
    if candidate == "no-gpu":
        return str(_("no GPU"))
    if pools and acc_id and count.isdigit():
        name = (accelerators.get(acc_id) or {}).get("model") or acc_id
        pre, _sp, dec = pools.partition(" ")
        return str(_("{count} × {name}, disaggregated: prefill {prefill} + decode {decode}")).format(
            count=count, name=name, prefill=pre[1:].replace("xTP", " × TP"), decode=dec[1:].replace("xTP", " × TP"))
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
