"""pandas tables built from the cost JSON (the edge: exports, terminal output, notebooks).

Amounts come in as decimal strings and stay Decimal in object columns, so nothing here
rounds through float.
"""

from __future__ import annotations

from decimal import Decimal

import pandas as pd


def _d(value) -> Decimal | None:
    return None if value is None else Decimal(value)


def summary_frame(result: dict) -> pd.DataFrame:
    mc = (result.get("monte_carlo") or {}).get("options", {})
    rows = []
    for o in result["options"]:
        q = mc.get(o["id"], {})
        rows.append(
            {
                "option": o["id"],
                "candidate": o["candidate"],
                "kind": o["kind"],
                "label": o["label"],
                "total_net": _d(o["totals"]["net"]),
                "vat": _d(o["totals"]["vat"]),
                "total_gross": _d(o["totals"]["gross"]),
                "per_useful_gpu_hour_net": _d(o["unit_costs"]["per_useful_gpu_hour_net"]),
                "per_1m_tokens_net": _d(o["unit_costs"]["per_1m_tokens_net"]),
                "per_training_run_net": _d(o["unit_costs"]["per_training_run_net"]),
                "p10_net": _d(q.get("p10_net", q.get("p10"))),
                "p50_net": _d(q.get("p50_net", q.get("p50"))),
                "p90_net": _d(q.get("p90_net", q.get("p90"))),
                "p10_gross": _d(q.get("p10_gross")),
                "p50_gross": _d(q.get("p50_gross")),
                "p90_gross": _d(q.get("p90_gross")),
                "unknowns": "; ".join(o["unknowns"]),
            }
        )
    return pd.DataFrame(rows)


def option_frame(option: dict) -> pd.DataFrame:
    rows = []
    for row in option["rows"]:
        for ln in row["lines"]:
            rows.append(
                {
                    "row": row["row"],
                    "line": ln["key"],
                    "label": ln["label"],
                    "upfront_net": _d(ln["upfront_net"]),
                    "monthly_net": _d(ln["monthly_net"]),
                    "terminal_net": _d(ln["terminal_net"]),
                    "total_net": _d(ln["total_net"]),
                    "vat": _d(ln["vat"]),
                    "total_gross": _d(ln["total_gross"]),
                    "inputs": "; ".join(
                        f"{r['name']}={r['value']} {r['currency']} {r['unit']} [{r.get('source', 'see Inputs')}]".replace(
                            "  ", " "
                        )
                        for r in (ln.get("inputs") or {}).get("rates", [])
                    )
                    or "; ".join(breakdown_text(b) for b in ln.get("breakdown") or []),
                }
            )
    return pd.DataFrame(rows)


def breakdown_text(b: dict) -> str:
    """One breakdown entry as text: quantity x unit price x months = amount [price, basis, date, source]."""
    months = f" x {b['months']} months" if b.get("per") == "month" else (" once" if b.get("per") == "once" else " at the end")
    share = f" x share {b['share']}" if b.get("share") else ""
    where = ", ".join(x for x in (b.get("price"), b.get("basis"), b.get("date"), b.get("source") or b.get("rate")) if x)
    return f"{b['item']}: {b['quantity']} {b['quantity_unit']} x {b['unit_price']}{months}{share} = {b['amount']} [{where}]"


def breakdown_frame(option: dict) -> pd.DataFrame:
    """Every line's breakdown: quantity x unit price x months = amount, with source and date."""
    rows = []
    for row in option["rows"]:
        for ln in row["lines"] or []:
            for b in ln.get("breakdown") or []:
                rows.append(
                    {
                        "row": row["row"],
                        "line": ln["key"],
                        "item": b["item"],
                        "quantity": _d(b["quantity"]),
                        "quantity_unit": b["quantity_unit"],
                        "unit_price": _d(b["unit_price"]),
                        "per": b["per"],
                        "months": _d(b.get("months")),
                        "share": _d(b.get("share")) if b.get("share") else Decimal(1),
                        "amount": _d(b["amount"]) * (_d(b["share"]) if b.get("share") else 1),
                        "price": b.get("price", ""),
                        "basis": b.get("basis", ""),
                        "date": b.get("date") or "",
                        "source": b.get("source") or (f"rate card: {b['rate']}" if b.get("rate") else ""),
                        "stale": bool(b.get("stale")),
                    }
                )
    return pd.DataFrame(rows)


def cash_flow_frame(result: dict, option_ids: list[str]) -> pd.DataFrame:
    by_id = {o["id"]: o for o in result["options"]}
    data = {"month": list(range(result["horizon_months"] + 1))}
    for i in option_ids:
        data[i] = [Decimal(v) for v in by_id[i]["cash_flow"]["net"]]
    return pd.DataFrame(data)


def inputs_frame(result: dict) -> pd.DataFrame:
    used = result["inputs_used"]
    rows = [
        {
            "kind": "rate",
            "name": r["key"],
            "value": Decimal(r["value"]),
            "currency": r["currency"],
            "unit": r["unit"],
            "source": r["source"],
            "date": r["valid_from"] or "",
        }
        for r in used["rates"]
    ]
    rows += [
        {
            "kind": "fx",
            "name": f"{f['base']}/{f['quote']}",
            "value": Decimal(f["rate"]) if f["rate"] is not None else None,
            "currency": f["quote"],
            "unit": f"{f['quote']} per 1 {f['base']}",
            "source": f["source"],
            "date": f.get("rate_date") or f["on"],  # the rate's own date (issue 14), the plan's for old results
        }
        for f in used["fx"]
    ]
    # every price the plan's options use, with its own date and age (costs.price_sources.annotate)
    rows += [
        {
            "kind": p.get("kind", "list price"),
            "name": p["row"],
            "value": None,
            "currency": "",
            "unit": "" if p.get("age_days") is None else f"{p['age_days']} days old at the plan date",
            "source": p.get("source", ""),
            "date": p.get("date") or "undated",
        }
        for p in (result.get("freshness") or {}).get("prices", [])
        if p.get("what") != "fx"
    ]
    vat = used["vat"]
    rows += [
        {
            "kind": "vat",
            "name": f"VAT {vat['country']}",
            "value": Decimal(r),
            "currency": "",
            "unit": "share",
            "source": vat["source"],
            "date": "",
        }
        for r in vat["rates_by_month"]
    ]
    if used.get("power_tariff"):
        p = used["power_tariff"]
        rows.append(
            {
                "kind": "tariff",
                "name": "power tariff",
                "value": Decimal(p["amount"]),
                "currency": p["currency"],
                "unit": "per kWh",
                "source": p["source"],
                "date": "",
            }
        )
    return pd.DataFrame(rows)


def text_table(result: dict, *, limit: int | None = None) -> str:
    """The shortlisted options' four rows for a terminal."""
    cur = result["currency"]
    out = [f"Costs over {result['horizon_months']} months in {cur} (net / with VAT), as of {result['as_of']}"]
    by_id = {o["id"]: o for o in result["options"]}
    for cand, ids in list(result["shortlist"].items())[:limit]:
        out.append(f"\n== {cand}")
        for i in ids:
            o = by_id[i]
            out.append(f"-- {o['label']}: {o['totals']['net']} / {o['totals']['gross']} {cur}")
            for row in o["rows"]:
                # the risk row is beside the total, not in it; without a cost of an hour down it is unpriced
                net, gross = row["total_net"] or "not priced", row["total_gross"] or ""
                note = "  (not in the total)" if row.get("in_total") is False else ""
                out.append(f"   {row['row']:<16}{net:>20}{gross:>20}{note}")
            uc = o["unit_costs"]
            extra = [
                f"per useful GPU-hour {uc['per_useful_gpu_hour_net']}"
                if uc["per_useful_gpu_hour_net"]
                else "",
                f"per 1M tokens {uc['per_1m_tokens_net']}" if uc["per_1m_tokens_net"] else "",
                f"per training run {uc['per_training_run_net']}" if uc["per_training_run_net"] else "",
            ]
            extra = [e for e in extra if e]
            if extra:
                out.append("   " + ", ".join(extra))
            for u in o["unknowns"]:
                out.append(f"   unknown: {u}")
    for s in result.get("skipped", []):
        out.append(f"(not priced: {s['candidate']} {s['kind']}: {s['reason']})")
    return "\n".join(out) + "\n"
