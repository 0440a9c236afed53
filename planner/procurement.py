"""A team's procurement settings: where it may buy (jurisdictions), from whom (providers) and how
(option kinds: on-prem, cloud on demand/commitment/spot, dedicated, hybrid, model API).

Stored on the team (Team.procurement), frozen into each plan version when it is queued, and applied
to the version's cost options: the team's rules win over a plan's own wider choice, and the plan
says what they changed. Pure functions; validation reuses the cost options' parser so a setting
means exactly what the same cost option means.
"""

from __future__ import annotations

from costs.engine.errors import CostValidationError, FieldError
from costs.engine.options import parse_cost_options

KEYS = ("data_residency", "providers", "options")


def parse_procurement(data) -> dict:
    """A validated policy dict (only the keys that restrict something), or CostValidationError with
    paths under ``procurement.``. An empty list means "no restriction" and is dropped."""
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise CostValidationError([FieldError(path="procurement", message="must be an object")])
    unknown = sorted(set(data) - set(KEYS))
    if unknown:
        raise CostValidationError([FieldError(path=f"procurement.{k}", message="unknown setting") for k in unknown])
    try:
        parse_cost_options({k: v for k, v in data.items() if v != []})
    except CostValidationError as exc:
        raise CostValidationError([
            FieldError(path="procurement." + e.path.split(".", 1)[-1], message=e.message) for e in exc.errors
        ]) from None
    return {k: list(dict.fromkeys(data[k])) for k in KEYS if data.get(k)}


def defaults_for_language(language: str) -> dict:
    """A team working in Russian buys from Russian providers and on its own premises by default
    (152-FZ personal data, and US clouds a Russian company cannot practically pay); others: no rule."""
    return {"data_residency": ["RU"]} if (language or "").lower().startswith("ru") else {}


def apply(costs: dict, policy: dict) -> tuple[dict, list[dict]]:
    """The cost options a version computes with under ``policy``, and what the policy changed.

    Each rule narrows the plan's own choice to the team's (the intersection); a plan whose choice
    lies wholly outside the team's rules gets the team's rules, and the change says so."""
    effective = dict(costs or {})
    changes: list[dict] = []
    for key in KEYS:
        allowed = policy.get(key) or []
        if not allowed:
            continue
        own = effective.get(key)
        if not own:  # the plan left it open: the team's rule is the choice
            effective[key] = list(allowed)
            continue
        folded = {a.casefold() for a in allowed}
        kept = [x for x in own if x.casefold() in folded]
        if kept != list(own):
            changes.append({"setting": key, "plan": list(own), "team": list(allowed),
                            "applied": kept or list(allowed)})
        effective[key] = kept or list(allowed)
    return effective, changes
