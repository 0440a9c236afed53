"""Priced totals of an option: per-line cent totals, budget and risk sums, cash flow, NPV, linear model in utilisation."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from decimal import ROUND_HALF_UP, Decimal
from functools import cached_property
from itertools import accumulate

from .lines import RISK_ROW
from .model import Line, OptionCost
from .money import CENT, ONE, ZERO, cents


@dataclass(frozen=True, kw_only=True)
class LineTotals:
    line: Line
    months_net: tuple[Decimal, ...]  # cents, months 1..N
    upfront_net: Decimal
    terminal_net: Decimal
    months_vat: tuple[Decimal, ...]
    upfront_vat: Decimal
    terminal_vat: Decimal
    uniform: bool = False  # every month has the same net and VAT amount (the common case)

    @cached_property
    def net(self) -> Decimal:
        months = self.months_net[0] * len(self.months_net) if self.uniform else sum(self.months_net, ZERO)
        return self.upfront_net + months + self.terminal_net

    @cached_property
    def vat(self) -> Decimal:
        months = self.months_vat[0] * len(self.months_vat) if self.uniform else sum(self.months_vat, ZERO)
        return self.upfront_vat + months + self.terminal_vat


@dataclass(frozen=True, kw_only=True)
class PricedOption:
    option: OptionCost
    lines: tuple[LineTotals, ...]
    utilisation: Decimal
    efficiency: Decimal
    # the user gave the cost of an hour of downtime: the risk lines are money (else hours only)
    risk_priced: bool = True

    # ``lines`` holds every line, the risk row's too (listed beside the total); the budget (net,
    # VAT, cash flow, terminal) is what will be paid: every line but the expected cost of incidents.

    @cached_property
    def budget_lines(self) -> tuple[LineTotals, ...]:
        return tuple(lt for lt in self.lines if lt.line.row != RISK_ROW)

    @cached_property
    def risk_lines(self) -> tuple[LineTotals, ...]:
        return tuple(lt for lt in self.lines if lt.line.row == RISK_ROW)

    @cached_property
    def net(self) -> Decimal:
        return sum((lt.net for lt in self.budget_lines), ZERO)

    @cached_property
    def vat(self) -> Decimal:
        return sum((lt.vat for lt in self.budget_lines), ZERO)

    @cached_property
    def risk_net(self) -> Decimal:
        """The expected cost of incidents over the horizon, net (not in the budget)."""
        return sum((lt.net for lt in self.risk_lines), ZERO)

    @cached_property
    def risk_vat(self) -> Decimal:
        return sum((lt.vat for lt in self.risk_lines), ZERO)

    @cached_property
    def outage_hours_total(self) -> Decimal:
        """Expected hours of outage over the horizon (known without a cost of an hour)."""
        n = len(self.lines[0].months_net) if self.lines else 0
        return sum((lt.line.outage_hours * lt.line.months_factor(n) for lt in self.risk_lines), ZERO)

    @cached_property
    def outage_hours_per_year(self) -> Decimal:
        """Expected hours of outage a year, averaged over the horizon."""
        n = len(self.lines[0].months_net) if self.lines else 0
        return self.outage_hours_total * 12 / n if n else ZERO

    @staticmethod
    def _flow(lines, net: bool) -> tuple[Decimal, ...]:
        if net:
            upfront = sum((lt.upfront_net for lt in lines), ZERO)
            months = [sum(col, ZERO) for col in zip(*(lt.months_net for lt in lines), strict=True)]
        else:
            upfront = sum((lt.upfront_vat for lt in lines), ZERO)
            months = [sum(col, ZERO) for col in zip(*(lt.months_vat for lt in lines), strict=True)]
        return (upfront, *months)

    @cached_property
    def _flow_net(self) -> tuple[Decimal, ...]:
        return self._flow(self.budget_lines, True)

    @cached_property
    def _flow_vat(self) -> tuple[Decimal, ...]:
        return self._flow(self.budget_lines, False)

    def cash_flow(self, *, vat: bool) -> list[Decimal]:
        """Months 0..N, without the terminal amount (shown separately)."""
        if not vat:
            return list(self._flow_net)
        return [a + b for a, b in zip(self._flow_net, self._flow_vat, strict=True)]

    def terminal(self, *, vat: bool) -> Decimal:
        return sum((lt.terminal_net + (lt.terminal_vat if vat else ZERO) for lt in self.budget_lines), ZERO)

    def cumulative(self, *, vat: bool) -> list[Decimal]:
        """Cumulative cash months 0..N with the terminal amount (book value credited, commitment
        still owed) at month N, so the last value is the option's total."""
        out = list(accumulate(self.cash_flow(vat=vat)))
        out[-1] += self.terminal(vat=vat)
        return out

    def basis_total(self, basis) -> Decimal:
        """The total a decision compares: net or gross, discounted when a rate is given; the
        expected cost of downtime is added only on the risk-adjusted basis."""
        risk = basis.with_risk
        if not basis.discount_rate:
            total = self.net + (self.vat if basis.vat else ZERO)
            return total + (self.risk_net + (self.risk_vat if basis.vat else ZERO) if risk else ZERO)
        out = self.npv(basis.discount_rate, vat=basis.vat)
        if risk:
            out += self._npv(self.risk_lines, basis.discount_rate, vat=basis.vat)
        return out

    def npv(self, rate: Decimal, *, vat: bool) -> Decimal:
        return self._npv(self.budget_lines, rate, vat=vat)

    def _npv(self, lines, rate: Decimal, *, vat: bool) -> Decimal:
        flow = list(self._flow(lines, True)) if lines else [ZERO] * (len(self._flow_net))
        if vat and lines:
            flow = [a + b for a, b in zip(flow, self._flow(lines, False), strict=True)]
        n = len(flow) - 1
        factors = [ONE / (ONE + rate) ** (Decimal(m) / 12) for m in range(n + 1)]
        total = sum((v * f for v, f in zip(flow, factors, strict=True)), ZERO)
        terminal = sum((lt.terminal_net + (lt.terminal_vat if vat else ZERO) for lt in lines), ZERO)
        return total + terminal * factors[-1]


# ---- totals ----------------------------------------------------------------------------------


@dataclass(frozen=True, kw_only=True)
class _Calendar:
    n: int
    drift: tuple[Decimal, ...]  # months 1..N
    vat: tuple[Decimal, ...]  # months 0..N, as fractions

    @cached_property
    def has_drift(self) -> bool:
        return any(f != ONE for f in self.drift)

    @cached_property
    def vat_uniform(self) -> bool:
        return len(set(self.vat[1:])) == 1


def _line_totals(line: Line, cal: _Calendar) -> LineTotals:
    # the month loops quantise inline (money.cents: to the cent, half up): ~70 amounts per line
    drifting = (line.market and cal.has_drift) or line.schedule is not None
    monthly = line.monthly
    if line.schedule is not None:
        drift = cal.drift if line.market else (ONE,) * cal.n
        months = tuple((monthly * s * f).quantize(CENT, ROUND_HALF_UP) for s, f in zip(line.schedule, drift, strict=True))
    elif drifting:
        months = tuple((monthly * f).quantize(CENT, ROUND_HALF_UP) for f in cal.drift)
    else:
        months = (cents(monthly),) * cal.n
    up, term = cents(line.upfront), cents(line.terminal)
    if line.vat:
        if drifting:
            m_vat = tuple((m * v).quantize(CENT, ROUND_HALF_UP) for m, v in zip(months, cal.vat[1:], strict=True))
        elif cal.vat_uniform:
            m_vat = (cents(months[0] * cal.vat[1]),) * cal.n
        else:
            by_rate = {v: cents(months[0] * v) for v in set(cal.vat[1:])}
            m_vat = tuple(by_rate[v] for v in cal.vat[1:])
        up_vat, term_vat = cents(up * cal.vat[0]), cents(term * cal.vat[-1])
    else:
        m_vat, up_vat, term_vat = (ZERO,) * cal.n, ZERO, ZERO
    return LineTotals(
        line=line,
        months_net=months,
        upfront_net=up,
        terminal_net=term,
        months_vat=m_vat,
        upfront_vat=up_vat,
        terminal_vat=term_vat,
        uniform=bool(months) and not drifting and (cal.vat_uniform or not line.vat),
    )


def _price(
    option: OptionCost, cal: _Calendar, u: Decimal, e: Decimal, memo: dict | None = None, risk_priced: bool = True
) -> PricedOption:
    """``memo`` shares the totals of line objects that several options reuse (engineering,
    storage, outage lines are built once per plan); the option keeps the lines alive."""
    if memo is None:
        memo = {}
    totals = []
    for ln in option.lines:
        lt = memo.get(id(ln))
        if lt is None or lt.line is not ln:
            lt = memo[id(ln)] = _line_totals(ln, cal)
        totals.append(lt)
    return PricedOption(option=option, lines=tuple(totals), utilisation=u, efficiency=e, risk_priced=risk_priced)


def _line_net(ln: Line, cal: _Calendar, drift_sum: Decimal) -> Decimal:
    """A line's net total without rounding (for the linear model)."""
    if ln.schedule is not None:
        drift = cal.drift if ln.market else (ONE,) * cal.n
        months = sum((s * f for s, f in zip(ln.schedule, drift, strict=True)), ZERO)
    else:
        months = drift_sum if ln.market else Decimal(cal.n)
    return ln.upfront + ln.monthly * months + ln.terminal


def _line_vat_share(ln: Line, cal: _Calendar, net: Decimal) -> float:
    """A line's VAT as a share of its net total (0 for a line without VAT): the Monte Carlo's
    gross totals scale each line's simulated net by 1 + this share. VAT is proportional to each
    month's net, so the share is exact unless the VAT rate changes within the horizon, where it
    weighs the rates by the base case's months."""
    if not ln.vat or not net:
        return 0.0
    vat_months = cal.vat[1:]
    if ln.schedule is not None:
        drift = cal.drift if ln.market else (ONE,) * cal.n
        months = sum((s * f * v for s, f, v in zip(ln.schedule, drift, vat_months, strict=True)), ZERO)
    elif ln.market and cal.has_drift:
        months = sum((f * v for f, v in zip(cal.drift, vat_months, strict=True)), ZERO)
    else:
        months = sum(vat_months, ZERO)
    vat = ln.upfront * cal.vat[0] + ln.monthly * months + ln.terminal * cal.vat[-1]
    return float(vat / net)


def _fast_total(option: OptionCost, cal: _Calendar) -> Decimal:
    """Net budget total without VAT (risk lines left out, as in PricedOption.net), for the u = 0
    and u = 1 evaluations of the linear model."""
    drift_sum = sum(cal.drift, ZERO)
    return sum((_line_net(ln, cal, drift_sum) for ln in option.lines if ln.row != RISK_ROW), ZERO)


def _linear(recipe: Callable[[Decimal], OptionCost | None], cal: _Calendar, u0: Decimal | None = None,
            at_u0: OptionCost | None = None) -> dict:
    """Per line: net total as a + b x u, exact at the option's own utilisation u0 and at u = 1
    (the secant through both; through u = 0 and 1 when u0 is 0 or 1). Totals are not linear
    in u everywhere: a one-off job's running months and the lines billed per running month step
    up from 0 to a whole month at the first hour, so a line through u = 0 put a short job's
    headline total (u0 = its share of the horizon's hours) far from the Monte Carlo base."""
    anchor = u0 if u0 is not None and ZERO < u0 < ONE else ZERO
    # ``at_u0``: the option the recipe already built at u0 (a recipe is deterministic: not built again)
    reuse = at_u0 is not None and u0 is not None
    at0 = at_u0 if reuse and anchor == u0 else recipe(anchor)
    at1 = at_u0 if reuse and u0 == ONE else recipe(ONE)
    assert at0 is not None and at1 is not None
    drift_sum = sum(cal.drift, ZERO)
    span = ONE - anchor

    def total(ln: Line) -> Decimal:
        return _line_net(ln, cal, drift_sum)

    def line(t_anchor: Decimal, t_one: Decimal) -> tuple[Decimal, Decimal]:
        b = (t_one - t_anchor) / span
        return t_anchor - b * anchor, b

    ones = {ln.key: ln for ln in at1.lines}
    out = []
    for ln in at0.lines:
        if ln.row == RISK_ROW:
            continue  # the budget's model: the expected cost of incidents is not in it
        t_anchor = total(ln)
        a, b = line(t_anchor, total(ones[ln.key]) if ln.key in ones else t_anchor)
        out.append(
            {
                "key": ln.key,
                "a": float(a),
                "b": float(b),
                "vat_share": _line_vat_share(ln, cal, t_anchor),
                "market": ln.market,
                "tag": ln.tag,
                "origin_currency": ln.origin_currency,
                # incident-driven budget lines (GPU time re-run after failures) follow the incident rate
                "downtime": ln.tag == "downtime",
            }
        )
    a, b = line(_fast_total(at0, cal), _fast_total(at1, cal))
    return {"lines": out, "a": float(a), "b": float(b)}

