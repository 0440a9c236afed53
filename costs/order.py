"""The order and numbers of a plan's options in every export and on the plan page: the decided option
and the cheapest of each other way of paying first, then the rest in the decision's order (1, 2, 3 ...
with no gap). Pure: plain dicts in, lists out."""

from __future__ import annotations

from decimal import Decimal, InvalidOperation


def _dec(value) -> Decimal | None:
    if value is None or value == "":
        return None
    try:
        return Decimal(str(value))
    except (InvalidOperation, ValueError):
        return None


def _total(option: dict, include_vat: bool) -> Decimal | None:
    return _dec((option.get("totals") or {}).get("gross" if include_vat else "net"))


def decision_order(result: dict, meets: dict[str, bool] | None = None) -> list[dict]:
    """The options in the order of the decision: those meeting the targets (or not known not
    to) first, then the cheapest; an option without a total last. A result that carries its
    own decision order (``decision.order``: positions in ``options``, or option ids) is taken as it is."""
    options = list(result.get("options") or [])
    order = ((result.get("decision") or {}).get("order") if isinstance(result.get("decision"), dict) else None)
    if isinstance(order, list) and order and all(isinstance(i, int) and 0 <= i < len(options) for i in order):
        # positions in `options` (costs.engine.decision.summary)
        listed = set(order)
        return [options[i] for i in order] + [o for n, o in enumerate(options) if n not in listed]
    if isinstance(order, list) and order:
        rank = {oid: i for i, oid in enumerate(order)}
        return sorted(options, key=lambda o: rank.get(o.get("id"), len(rank)))
    meets = meets or {}
    include_vat = bool(result.get("include_vat"))

    def key(o):
        total = _total(o, include_vat)
        met = meets.get(o.get("candidate"))
        return (met is False, total is None, total if total is not None else Decimal(0))

    return sorted(options, key=key)


OWNED_KINDS = ("onprem", "hybrid")
# The alternatives the PDF compares (pages 1 and 2) and the XLSX gives a sheet each: the decided option
# and the cheapest of each other way of paying, at most this many (all options are on the summary).
COMPARED_MAX = 7


def compared_options(ordered: list[dict], decided_id: str | None = None, limit: int = COMPARED_MAX) -> list[dict]:
    """The decided option (the decision's, else the first in its order) and then, in the decision's
    order, the first option of each other kind (way of paying): what a budget meeting compares."""
    first = next((o for o in ordered if decided_id and o.get("id") == decided_id), ordered[0] if ordered else None)
    if first is None:
        return []
    out, kinds = [first], {first.get("kind")}
    for o in ordered:
        if len(out) >= limit:
            break
        if o.get("kind") not in kinds:
            out.append(o)
            kinds.add(o.get("kind"))
    if len(kinds) == 1:
        # one way of paying only (an agent on model APIs): the cheapest of each other provider, so a
        # budget meeting still sees what else it could buy (e.g. a Russian provider beside OpenAI)
        providers = {_provider(first)}
        for o in ordered:
            if len(out) >= SAME_KIND_COMPARED_MAX:
                break
            if _provider(o) not in providers:
                out.append(o)
                providers.add(_provider(o))
    return out


# with one way of paying, how many providers page 1 compares
SAME_KIND_COMPARED_MAX = 5


def _provider(option: dict) -> str | None:
    return (option.get("detail") or {}).get("provider")


def export_order(result: dict, meets: dict[str, bool] | None = None) -> list[dict]:
    """The options as the exports number them (1, 2, 3 ... with no gap, the same numbers in the PDF,
    the XLSX and the CSV): the decided option and the cheapest of each other way of paying (the
    alternatives the PDF compares), then every other option in the decision's order."""
    ordered = decision_order(result, meets)
    decided = ((result.get("decision") or {}).get("recommended") or {}).get("id") \
        if isinstance(result.get("decision"), dict) else None
    first = compared_options(ordered, decided)
    ids = {id(o) for o in first}
    return first + [o for o in ordered if id(o) not in ids]


def compared_count(result: dict, meets: dict[str, bool] | None = None) -> int:
    decided = ((result.get("decision") or {}).get("recommended") or {}).get("id") \
        if isinstance(result.get("decision"), dict) else None
    return len(compared_options(decision_order(result, meets), decided))
