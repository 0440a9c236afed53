"""What the plan page and the team settings page show of procurement settings, in the active language."""

from __future__ import annotations

from django.utils.translation import gettext_lazy as _

from costs.labels import KIND_LABELS as OPTION_KINDS

SETTING_LABELS = {
    "data_residency": _("jurisdictions"),
    "providers": _("providers"),
    "options": _("ways to buy"),
}


def _values(key: str, values: list[str]) -> str:
    if key == "options":
        return ", ".join(str(OPTION_KINDS.get(v, v)) for v in values)
    return ", ".join(values)


def rules_view(policy: dict | None) -> list[dict]:
    """One line per rule the team set: its label and its values as words."""
    return [{"label": str(SETTING_LABELS[k]), "values": _values(k, v)}
            for k, v in (policy or {}).items() if k in SETTING_LABELS and v]


def version_procurement_view(inputs: dict | None) -> dict | None:
    """The team's rules a version was computed under, and what they changed in the plan's own choice."""
    frozen = (inputs or {}).get("procurement") or {}
    if not frozen.get("team"):
        return None
    changes = [{"label": str(SETTING_LABELS.get(c["setting"], c["setting"])),
                "plan": _values(c["setting"], c.get("plan") or []),
                "applied": _values(c["setting"], c.get("applied") or [])} for c in frozen.get("changes") or []]
    return {"rules": rules_view(frozen["team"]), "changes": changes}
