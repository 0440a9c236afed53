"""A stored option's cumulative cost month by month, from its cash flow (pure: plain dicts in)."""

from __future__ import annotations

from decimal import Decimal, InvalidOperation
from itertools import accumulate


def _dec(value) -> Decimal:
    try:
        return Decimal(str(value)) if value not in (None, "") else Decimal(0)
    except (InvalidOperation, ValueError):
        return Decimal(0)


def cumulative(option: dict, basis: str = "net") -> list[Decimal]:
    """Months 0..N of what the option has cost so far, `basis` "net" or "gross", with the terminal
    amount (book value credited, commitment still owed) at month N, so the last value is the total.
    Results store the monthly flow and the terminal amount (issue 20: a plan small enough to load at
    once); results stored before that carry the cumulative lists themselves."""
    flow = option.get("cash_flow") or {}
    stored = flow.get(f"cumulative_{basis}")
    if stored:
        return [_dec(v) for v in stored]
    out = list(accumulate(_dec(v) for v in flow.get(basis) or []))
    if out:
        out[-1] += _dec(flow.get(f"terminal_{basis}"))
    return out
