"""The compare page: 2-6 plans side by side in one currency, on one VAT basis and one horizon.

Money. Every plan's amounts are converted into the chosen currency at the exchange rate dated
on or before that plan's price date (``costs.as_of``), the date its own prices were taken: the
rate is read from the version's price snapshot (the catalog's ExchangeRate rows as they stood on
that date, R6.4) with the costs engine's dated FX table (``costs.engine.money.FxTable``: direct,
inverse or crossed); a pair the snapshot lacks is read from the catalog's ExchangeRate table for
that date (``catalog.selectors.fx_on``). Each column says which rate, of which date, from which
source. Without a rate the column's amounts stay unknown and the page says why (never a guess).

Horizons. Plans with the same ``horizon_months`` compare on their totals. Plans with different
horizons compare per month (each total over its own horizon divided by its months), and the page
says so; a one-off job (a training run priced once, not per month) cannot be put per month, so its
column keeps the total of its runs and the page says plainly why it is not aligned.

VAT. Plans with the same VAT setting compare as they are shown; when they differ every plan is
compared net of VAT (the one basis all have), and the page says so.
"""

from __future__ import annotations

import datetime as dt
from decimal import Decimal

from django import forms
from django.utils.translation import get_language
from django.utils.translation import gettext_lazy as _

from .presentation import OPTION_KINDS, _decimal, version_view

MIN_PLANS, MAX_PLANS = 2, 6  # 2-6 plans side by side (columns scroll sideways when they do not fit)

# The currencies a compare can be shown in (the two of the brief: Russian and international budgets).
COMPARE_CURRENCIES = ("RUB", "USD")


class CompareForm(forms.Form):
    """The compare page's GET form: which currency to show every plan in (empty: the default)."""

    currency = forms.ChoiceField(
        label=_("Show every plan in"), required=False,
        choices=[("", _("the first plan's currency")), *((c, c) for c in COMPARE_CURRENCIES)],
    )


def default_currency(columns: list[dict]) -> str:
    """The first plan's currency (the plan the user put first is the reference); for a plan in
    another currency (EUR), the convention of the page's language (RUB in Russian, else USD)."""
    first = columns[0]["own_currency"] if columns else ""
    if first in COMPARE_CURRENCIES:
        return first
    return "RUB" if (get_language() or "").startswith("ru") else "USD"


# --- FX ----------------------------------------------------------------------------------


def _snapshot_record(snapshot: dict, a: str, b: str) -> dict | None:
    """The snapshot's rate row of the pair a/b in either direction (the latest on or before the plan date)."""
    rows = [r for r in snapshot.get("fx_rates") or [] if {r.get("base"), r.get("quote")} == {a, b}]
    return max(rows, key=lambda r: r.get("date") or "") if rows else None


def _day(value) -> dt.date | None:
    try:
        return dt.date.fromisoformat(value) if isinstance(value, str) else value
    except ValueError:
        return None


def _leg(record: dict, *, catalog: bool) -> dict:
    source = record.get("source") or {}
    return {"base": record["base"], "quote": record["quote"], "rate": _decimal(record.get("rate")),
            "date": _day(record.get("date")), "source": source.get("title") or "", "url": source.get("url") or "",
            "from_catalog": catalog}


def conversion(version, *, base: str, quote: str) -> dict:
    """How a version's money in ``base`` becomes ``quote``: {factor, legs, on, error}.

    factor: units of quote per 1 base at the plan's price date; legs: the quoted rate rows used
    (1 USD = 78.2696 RUB, dated, with source); error: why there is no factor."""
    from catalog.snapshots import fx_on
    from costs.adapters import fx_from_snapshot

    costs = (version.full_result or {}).get("costs") or {}
    on = dt.date.fromisoformat(costs.get("as_of") or version.as_of.isoformat())
    out = {"base": base, "quote": quote, "on": on, "factor": None, "legs": [], "error": ""}
    if base == quote:
        out["factor"] = Decimal(1)
        return out
    snapshot = version.price_snapshot or {}
    try:
        out["factor"] = fx_from_snapshot(snapshot).rate(base=base, quote=quote, on=on)
    except ValueError:
        found = fx_on(base=base, quote=quote, day=on)  # the catalog's own table on that date
        if found is None or found.get("rate") is None:
            out["error"] = _("no exchange rate %(base)s/%(quote)s dated on or before %(date)s in the catalog") % {
                "base": base, "quote": quote, "date": on.isoformat()}
            return out
        out["factor"] = Decimal(found["rate"])
        out["legs"] = [_leg(found, catalog=True)]
        return out
    direct = _snapshot_record(snapshot, base, quote)
    if direct is not None:
        out["legs"] = [_leg(direct, catalog=False)]
    else:  # crossed, as the engine crosses: through USD, RUB or EUR
        for via in ("USD", "RUB", "EUR"):
            a, b = _snapshot_record(snapshot, base, via), _snapshot_record(snapshot, via, quote)
            if via not in (base, quote) and a and b:
                out["legs"] = [_leg(a, catalog=False), _leg(b, catalog=False)]
                break
    return out


def _converted(amount, factor: Decimal | None, divisor: int | None) -> Decimal | None:
    from costs.engine.money import cents

    value = _decimal(amount)
    if value is None or factor is None:
        return None
    if divisor:
        value = value / divisor
    return cents(value * factor)


# --- columns -----------------------------------------------------------------------------


def _latest_done(plans) -> dict:
    from .models import PlanVersion

    latest: dict[int, PlanVersion] = {}
    for v in PlanVersion.objects.filter(plan__in=plans, status="done").order_by("plan_id", "-number"):
        latest.setdefault(v.plan_id, v)
    return latest


def _one_off_job(version, options: list[dict]) -> bool:
    """A training job priced as a fixed number of runs (not runs per month): its cost does not
    grow with the months, so it has no per-month figure."""
    cost_inputs = (version.inputs or {}).get("costs") or {}
    return cost_inputs.get("runs_per_month") in (None, "") and any(o.get("job") for o in options)


def _crossings(break_even: list[dict], decided_id: str | None) -> list[dict]:
    """The pairs with the plan's decided option whose cumulative costs cross within the horizon, as
    "A is cheaper than B from month N". A pair that keeps its order every month says nothing a total
    does not, and pairs of two alternatives are on the plan's page (the compare listed every pair of
    the compared options: a wall of "none" at 1366 px)."""
    out = []
    for b in break_even:
        if b.get("month") is None or (decided_id and decided_id not in (b.get("a"), b.get("b"))):
            continue
        a_first = b.get("cheaper_after") == "a"
        out.append({"cheaper": b.get("a_label") if a_first else b.get("b_label"),
                    "than": b.get("b_label") if a_first else b.get("a_label"), "month": b["month"]})
    return out


def _decided_id(costs: dict) -> str | None:
    return ((costs.get("decision") or {}).get("recommended") or {}).get("id")


def compare_columns(plans) -> list[dict]:
    """One column per plan from its latest done version (one query for all of them), in the plan's
    own currency; ``convert`` puts them into one currency, VAT basis and horizon."""
    latest = _latest_done(plans)
    columns = []
    for plan in plans:
        version = latest.get(plan.id)
        view = version_view(version) if version else None
        costs = (view or {}).get("costs") or {}
        columns.append({
            "plan": plan, "version": version, "view": view, "options": costs.get("options") or [],
            "own_currency": costs.get("currency", ""), "include_vat": bool(costs.get("include_vat")),
            "horizon_months": costs.get("horizon_months"), "as_of": costs.get("as_of"),
            "one_off": bool(version) and _one_off_job(version, costs.get("options") or []),
            "break_even": _crossings(costs.get("break_even") or [], _decided_id(costs)),
            "recommended_id": _decided_id(costs),
        })
    return columns


def alignment(columns: list[dict]) -> dict:
    """The common basis of the compare: VAT (gross when every plan includes it, else net) and
    horizon (totals when every horizon is the same, else per month)."""
    computed = [c for c in columns if c["version"]]
    horizons = sorted({c["horizon_months"] for c in computed if c["horizon_months"]})
    vat_settings = {c["include_vat"] for c in computed}
    per_month = len(horizons) > 1
    return {
        "vat": "gross" if vat_settings == {True} else "net",
        "vat_mixed": len(vat_settings) > 1,
        "per_month": per_month,
        "horizons": horizons,
        "horizon_months": horizons[0] if len(horizons) == 1 else None,
        "not_aligned": [c["plan"].name for c in computed if per_month and c["one_off"]],
        "one_off": [c["plan"].name for c in computed if c["one_off"]],
    }


def convert(columns: list[dict], *, currency: str) -> dict:
    """Every column's amounts in ``currency`` on the common basis; returns the basis (alignment)."""
    basis = alignment(columns)
    key = basis["vat"]
    for c in columns:
        c["currency"] = currency
        c["fx"] = conversion(c["version"], base=c["own_currency"], quote=currency) if c["version"] else None
        factor = (c["fx"] or {}).get("factor")
        # per month: each total over its own horizon / its months; a one-off job keeps its total
        divisor = c["horizon_months"] if basis["per_month"] and not c["one_off"] else None
        c["per_month"] = bool(divisor)
        by_kind: dict[str, dict] = {}
        by_id: dict[str, dict] = {}
        for o in c["options"]:
            amount = _converted((o.get("totals") or {}).get(key), factor, divisor)
            rows = [{"label": r.get("label"), "amount": _converted(r.get(f"total_{key}"), factor, divisor)}
                    for r in o.get("rows") or []]
            item = {"id": o.get("id"), "label": o.get("label"), "kind": o.get("kind"), "amount": amount, "rows": rows}
            by_id[o.get("id")] = item
            current = by_kind.get(o.get("kind"))
            if current is None or (amount is not None and (current["amount"] is None or amount < current["amount"])):
                by_kind[o.get("kind")] = item  # the cheapest per kind
        c["by_kind"] = by_kind
        priced = [o for o in by_kind.values() if o["amount"] is not None]
        c["cheapest"] = min(priced, key=lambda o: o["amount"]) if priced else None
        # The plan's own decision (cheapest that meets the targets among allowed kinds: no spot for
        # a service), so the compare page names the same option as the plan page; results older
        # than the decision summary fall back to the cheapest.
        c["recommended"] = by_id.get(c.get("recommended_id")) or c["cheapest"]
        c["recommended_is_decision"] = c.get("recommended_id") in by_id
    return basis


def compare_kinds(columns: list[dict]) -> list[tuple[str, str, list]]:
    """Rows of the compare table: (kind, label, [option or None per column])."""
    kinds = list(dict.fromkeys(k for c in columns for k in c.get("by_kind") or {}))
    return [(k, OPTION_KINDS.get(k, k), [(c.get("by_kind") or {}).get(k) for c in columns]) for k in kinds]
