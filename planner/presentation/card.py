"""The ten-second card: short labels, numbers and colours per option, the break-even matrix (h/card)."""

from __future__ import annotations

from decimal import Decimal, InvalidOperation

from .common import _decimal

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
        rows.append({"number": o.get("number") or i + 1, "label": o.get("short_label") or o.get("label"), "title": o.get("label"),
                     "kind_label": o.get("kind_label"),
                     "cells": cells})
    return {"columns": [{"number": o.get("number") or i + 1, "title": o.get("label")} for i, o in enumerate(options)], "rows": rows}


def card_view(costs: dict | None, raw: dict | None = None) -> None:
    """Adds what the ten-second card and the compact tables read to a costs_view in place: a short
    label, a number and a colour per option, the alternatives' difference to the decision, and the
    break-even matrix. Pure presentation: the decision itself is planner.plan_decision's."""
    if not costs:
        return
    options = costs.get("options") or []
    for i, o in enumerate(options):
        o["number"] = o.get("export_number") or i + 1  # the exports' number (costs.order)
        o["short_label"] = short_option_label(o)
        o["style"] = option_style(i)
    numbers = {o.get("id"): o for o in options}
    raw_options = {o.get("id"): o for o in (raw or {}).get("options") or []}
    for i, series in enumerate((costs.get("chart") or {}).get("series") or []):
        series.update(option_style(i))
        if i < len(options):
            series["number"] = options[i]["number"]
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
