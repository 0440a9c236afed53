"""The cost engine's result: every priced option, the decision's analysis, and the JSON a plan stores
(which options carry their lines and cash flow: costs.engine.presented)."""

from __future__ import annotations

from dataclasses import dataclass, field

from catalog.domain.messages import with_structured

from .presented import presented
from .serialise import option_to_dict
from .totals import PricedOption


@dataclass(frozen=True, kw_only=True)
class CostResult:
    options: tuple[PricedOption, ...]
    shortlist: dict[str, list[str]]
    analysis: dict
    inputs_used: dict
    skipped: tuple[dict, ...]
    notes: tuple[str, ...]
    meta: dict = field(default_factory=dict)
    jobs: dict = field(default_factory=dict)  # option id -> runs over the horizon (jobs only)
    basis: object = None
    # options priced with the user's own quotes (costs.server_prices / api_prices): kept in full
    user_priced: frozenset = frozenset()

    def option(self, option_id: str) -> PricedOption:
        return next(p for p in self.options if p.option.option_id == option_id)

    def to_dict(self, *, structured: bool = True) -> dict:
        """JSON-ready. ``structured``: every Msg text gains its `<key>_i18n` sibling here; a caller
        that adds texts of its own and structures the whole once passes False."""
        dec = self.analysis.get("decision") or {}
        ids = [p.option.option_id for p in self.options]
        kept, full = presented(ids, [p.option.kind for p in self.options], dec, self.shortlist,
                               also_full=self.user_priced,
                               providers=[(p.option.detail or {}).get("provider") for p in self.options])
        new_position = {old: new for new, old in enumerate(kept)}
        analysis = dict(self.analysis)
        if isinstance(dec.get("order"), list):
            analysis["decision"] = {**dec, "order": [new_position[i] for i in dec["order"] if i in new_position]}
        # pairwise figures between the options kept in full (those the page, the PDF and the XLSX compare)
        if isinstance(analysis.get("break_even_months"), list):
            analysis["break_even_months"] = [b for b in analysis["break_even_months"] if b["a"] in full and b["b"] in full]
        if isinstance(analysis.get("sensitivity"), dict):
            analysis["sensitivity"] = {k: v for k, v in analysis["sensitivity"].items() if k in full}
        if isinstance(analysis.get("monte_carlo"), dict) and isinstance(analysis["monte_carlo"].get("p_cheaper"), list):
            analysis["monte_carlo"] = {**analysis["monte_carlo"], "p_cheaper": [
                b for b in analysis["monte_carlo"]["p_cheaper"] if b["a"] in full and b["b"] in full]}
        cache: dict = {}
        out = {
            **self.meta,
            "options_listed": len(kept),
            "options_left_out": len(ids) - len(kept),
            "options": [
                option_to_dict(
                    p,
                    detailed=p.option.option_id in full,
                    line_cache=cache,
                    runs=self.jobs.get(p.option.option_id),
                    basis=self.basis,
                    currency=self.meta.get("currency"),
                )
                for p in (self.options[i] for i in kept)
            ],
            "shortlist": self.shortlist,
            **analysis,
            "inputs_used": self.inputs_used,
            # why an option is missing
            "skipped": list(self.skipped),
            "skipped_total": len(self.skipped),
            "notes": list(self.notes),
        }
        return with_structured(out) if structured else out
