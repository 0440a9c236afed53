"""A plan version's result in two parts (issue 20: a result JSON of at most 250 KB that still lists every
priced option).

A plan prices every matching offer: the 70B example of issue 20 lists 104 options and 71 skipped ones,
420 KB of JSON, most of it options nobody reads before the decision. The result a version serves
(`PlanVersion.result`, the API's `result`) keeps the options the plan names: the decided one, the
alternatives compared in full, the cheapest of each way of paying, the ranked configurations' best and
the first few in the decision's order. Every priced option and every skipped one stay in
`PlanVersion.option_catalog`, served at `.../versions/N/options/`, with the parts of the composed prices
(`costs.freshness.prices[].components`). `merged` puts the two back together,
equal to the engines' result, for the page, the PDF, the XLSX and the compare pages, so nothing a team
compares is hidden. Pure: no Django.
"""

from __future__ import annotations

from costs.engine.presented import NAMED_KEYS

# Options kept in the decision's order on top of the named ones: the cheapest few, whatever they are.
KEPT_IN_ORDER = 3


def split(result: dict | None) -> tuple[dict | None, dict | None]:
    """(the result a version serves, the option catalog); the catalog is None when nothing is left out."""
    costs = (result or {}).get("costs")
    options = costs.get("options") if isinstance(costs, dict) else None
    if not isinstance(options, list):
        return result, None
    kept = _kept_positions(result, costs, options)
    skipped = costs.get("skipped") or []
    prices = (costs.get("freshness") or {}).get("prices") if isinstance(costs.get("freshness"), dict) else None
    prices = prices if isinstance(prices, list) else []
    # a composed price's parts (GPU, vCPU, RAM, each with its own source record): its row and source text
    # say the sum; the parts are in the catalog
    components = {str(i): p["components"] for i, p in enumerate(prices) if isinstance(p, dict) and "components" in p}
    if len(kept) == len(options) and not skipped and not components:
        return result, None
    decision = costs.get("decision") if isinstance(costs.get("decision"), dict) else None
    order = decision.get("order") if decision else None
    kept_set = set(kept)
    catalog = {
        "positions": kept,
        "options": [o for i, o in enumerate(options) if i not in kept_set],
        "skipped": skipped,
        "order": order,
        "options_listed": costs.get("options_listed"),
        "options_left_out": costs.get("options_left_out"),
        "price_components": components,
    }
    lean_costs = {
        **costs,
        "options": [options[i] for i in kept],
        "options_listed": len(kept),
        "options_left_out": (costs.get("options_left_out") or 0) + len(options) - len(kept),
        "skipped": [],
    }
    if components:
        lean_costs["freshness"] = {**costs["freshness"], "prices": [
            {k: v for k, v in p.items() if k != "components"} if str(i) in components else p
            for i, p in enumerate(prices)]}
    if isinstance(order, list):
        new_position = {old: new for new, old in enumerate(kept)}
        lean_costs["decision"] = {**decision, "order": [new_position[i] for i in order if i in new_position]}
    return {**result, "costs": lean_costs}, catalog


def merged(result: dict | None, catalog: dict | None) -> dict | None:
    """The engines' whole result from a version's two parts (the served result alone when no catalog)."""
    if not catalog or not isinstance(result, dict) or not isinstance(result.get("costs"), dict):
        return result
    costs = result["costs"]
    lean = costs.get("options") or []
    rest = iter(catalog.get("options") or [])
    at = dict(zip(catalog.get("positions") or [], lean, strict=False))
    options = [at[i] if i in at else next(rest) for i in range(len(lean) + len(catalog.get("options") or []))]
    out = {**costs, "options": options, "skipped": catalog.get("skipped") or [],
           "options_listed": catalog.get("options_listed", len(options)),
           "options_left_out": catalog.get("options_left_out", 0)}
    if isinstance(costs.get("decision"), dict) and catalog.get("order") is not None:
        out["decision"] = {**costs["decision"], "order": catalog["order"]}
    components = catalog.get("price_components") or {}
    if components and isinstance(costs.get("freshness"), dict):
        out["freshness"] = {**costs["freshness"], "prices": [
            {**p, "components": components[str(i)]} if str(i) in components else p
            for i, p in enumerate(costs["freshness"].get("prices") or [])]}
    return {**result, "costs": out}


def _kept_positions(result: dict, costs: dict, options: list) -> list[int]:
    """Positions of the options the served result keeps, in their original order."""
    decision = costs.get("decision") if isinstance(costs.get("decision"), dict) else {}
    named = {(decision.get(k) or {}).get("id") for k in NAMED_KEYS if isinstance(decision.get(k), dict)}
    named |= {r.get("id") for r in decision.get("ranked") or [] if isinstance(r, dict)}
    plan = result.get("decision") if isinstance(result.get("decision"), dict) else {}
    named.add(plan.get("option_id"))
    named |= {a.get("option_id") for a in plan.get("alternatives") or [] if isinstance(a, dict)}
    n = len(options)
    order = [i for i in decision.get("order") or [] if isinstance(i, int) and 0 <= i < n]
    first = set(order[:KEPT_IN_ORDER])
    return [i for i, o in enumerate(options)
            if i in first or o.get("id") in named or o.get("cash_flow") is not None]
