"""Which priced options a plan keeps: cheapest per provider, unique labels, the shortlist, the compared candidates."""

from __future__ import annotations

from dataclasses import replace

from .totals import PricedOption

# Comparisons (break-even, Monte Carlo, tornado) run on this many candidate configurations, the
# ones with the cheapest options: enough for a decision, and it keeps a plan within its time budget.
COMPARE_CANDIDATES = 8


def _cheapest_per_provider(priced: list[PricedOption]) -> list[PricedOption]:
    """Per (candidate, kind, provider) only the cheapest offer: the 2nd-cheapest region of the
    same cloud adds size, not a decision (hundreds of offers made plans megabytes)."""
    best: dict[tuple, PricedOption] = {}
    for p in priced:
        o = p.option
        key = (o.candidate_id, o.kind, o.detail.get("provider") if o.kind != "api" else o.option_id)
        if key not in best or p.net < best[key].net:
            best[key] = p
    keep = {id(p) for p in best.values()}
    return [p for p in priced if id(p) in keep]


def _unique_labels(priced: list[PricedOption]) -> None:
    """No two options may read the same: a repeated label gets its option id's tail."""
    seen: dict[str, int] = {}
    for i, p in enumerate(priced):
        label = p.option.label
        if label in seen:
            tail = p.option.option_id.split("|", 2)[-1]
            priced[i] = replace(p, option=replace(p.option, label=f"{label} [{tail}]"))
        seen[priced[i].option.label] = i


def _compared(
    shortlist: dict[str, list[str]], by_id: dict[str, PricedOption], must: set[str] = frozenset()
) -> dict[str, list[str]]:
    """The candidates whose cheapest option is among the COMPARE_CANDIDATES cheapest, plus the API
    and the candidates of the decision summary's options."""
    gpu = [c for c in shortlist if c != "api"]
    gpu.sort(key=lambda c: min(by_id[i].net for i in shortlist[c]))
    keep = set(gpu[:COMPARE_CANDIDATES]) | ({"api"} & set(shortlist))
    keep |= {by_id[i].option.candidate_id for i in must if i in by_id}
    return {c: ids for c, ids in shortlist.items() if c in keep}


SHORTLIST_CHEAPEST = 6  # besides the cheapest per kind and the recommended configuration's


def _shortlist(
    priced: list[PricedOption], recommended: str | None = None, must: set[str] = frozenset()
) -> dict[str, list[str]]:
    """The options a plan keeps in full (lines, cash flow) and compares: the cheapest of each
    kind over all candidates, the recommended configuration's cheapest of each kind, and the
    SHORTLIST_CHEAPEST cheapest overall. Every other option keeps its row totals."""
    by_cost = sorted(priced, key=lambda p: p.net)
    chosen: dict[str, PricedOption] = {}
    kinds_seen: set[str] = set()
    rec_kinds: set[str] = set()
    for p in by_cost:
        o = p.option
        if o.kind not in kinds_seen:
            kinds_seen.add(o.kind)
            chosen[o.option_id] = p
        if o.candidate_id == recommended and o.kind not in rec_kinds:
            rec_kinds.add(o.kind)
            chosen[o.option_id] = p
    for p in by_cost[:SHORTLIST_CHEAPEST]:
        chosen[p.option.option_id] = p
    for p in priced:  # the decision summary's options are always kept in full
        if p.option.option_id in must:
            chosen[p.option.option_id] = p
    out: dict[str, list[str]] = {}
    for p in priced:  # in pricing order: candidates as the sizing listed them
        if p.option.option_id in chosen:
            out.setdefault(p.option.candidate_id, []).append(p.option.option_id)
    return out

