"""What a plan's result keeps of its priced options (issue 20: a result a page loads at once).

Every matching offer is priced and ranked, but a plan presents a few of them: the decided option and
the cheapest of each other way of paying (the alternatives the page, the PDF and the XLSX compare),
the options the decision names, the shortlist, and the first ones in the decision's order. Those
first few (and any option priced with the team's own quote) keep their lines and month-by-month cash flow; the other kept options keep their row
totals, totals and unit costs; the rest are counted (`options_left_out`), not listed: each costs
more, on the decision's basis, than every option listed before it.
"""

from __future__ import annotations

from collections.abc import Sequence

# Options kept in the decision's order (the ones the decision names and the shortlist come on top):
# 30 covers every configuration's cheapest way to pay on the plans we see (12 configurations x a few
# kinds), while 100+ offers would make a result of 600 KB that no reader scrolls through.
KEPT_IN_ORDER = 5
# In full (lines, breakdown, cash flow): the decided option and the first of each other kind, as
# costs.order.compared_options lists them for the page, the PDF and the XLSX.
DETAILED_MAX = 7
# With one way of paying: the decided option and the cheapest of each other provider, as
# costs.order.compared_options lists them (its SAME_KIND_COMPARED_MAX).
SAME_KIND_DETAILED_MAX = 5
NAMED_KEYS = ("recommended", "cheapest_onprem", "cheapest_cloud", "cheapest_dedicated", "cheapest_hybrid", "api")


def presented(option_ids: Sequence[str], kinds: Sequence[str], decision: dict,
              shortlist: dict[str, list[str]], also_full: frozenset = frozenset(),
              providers: Sequence[str | None] | None = None) -> tuple[list[int], set[str]]:
    """Positions (in ``option_ids``) of the options a result keeps, in their original order, and the
    ids of those kept in full (with one way of paying, the cheapest of each other provider too:
    ``providers``, one per option). ``decision`` is costs.engine.decision.summary's output (its ``order``
    holds positions in ``option_ids``); ``also_full``: options kept (in full) whatever their rank,
    those priced with the user's own quotes, so what a team entered is shown line by line."""
    n = len(option_ids)
    order = [i for i in decision.get("order") or [] if isinstance(i, int) and 0 <= i < n]
    order += [i for i in range(n) if i not in set(order)]
    named = {(decision.get(k) or {}).get("id") for k in NAMED_KEYS if isinstance(decision.get(k), dict)}
    named |= {r.get("id") for r in decision.get("ranked") or [] if isinstance(r, dict)}
    named |= {i for ids in shortlist.values() for i in ids}
    # Every priced option stays listed (procurement compares providers and model APIs a plan did not
    # choose; leaving the dearer ones out hid options teams asked for): KEPT_IN_ORDER is what a
    # leaner listing would keep, not applied.
    keep = set(range(n)) | set(order[:KEPT_IN_ORDER]) | {i for i, oid in enumerate(option_ids)
                                                          if oid in named or oid in also_full}
    detailed: list[int] = order[:1]
    _first_of_each(order, kinds, detailed, DETAILED_MAX)
    if providers is not None and order and len({kinds[i] for i in detailed}) == 1:
        # one way of paying only (an agent on model APIs): the cheapest of each other provider
        _first_of_each(order, providers, detailed, SAME_KIND_DETAILED_MAX)
    full = {option_ids[i] for i in detailed}
    full |= {(decision.get(k) or {}).get("id") for k in NAMED_KEYS if isinstance(decision.get(k), dict)}
    full |= set(also_full)
    full.discard(None)
    return sorted(keep), full


def _first_of_each(order: list[int], key: Sequence, detailed: list[int], limit: int) -> None:
    """Append to ``detailed`` (which starts with the decided option) the first option, in the decision's
    order, of each value of ``key`` it does not hold yet, up to ``limit`` options in all."""
    seen = {key[i] for i in detailed}
    for i in order[1:]:
        if len(detailed) >= limit:
            break
        if key[i] not in seen:
            detailed.append(i)
            seen.add(key[i])
