"""Money, dated FX rates and dated VAT rates. Decimal only; floats never touch an amount.

A price is an amount in one currency, net or VAT-inclusive, with where it came from.
FX and VAT are looked up for a date passed in by the caller (no clock here).
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field
from decimal import ROUND_HALF_UP, Decimal

from .errors import fail

CURRENCIES = ("RUB", "USD", "EUR")
CENT = Decimal("0.01")
ZERO = Decimal("0")
ONE = Decimal("1")


def cents(amount: Decimal) -> Decimal:
    """Quantise to the minor unit (kopeck/cent), half up as accountants do."""
    return amount.quantize(CENT, rounding=ROUND_HALF_UP)


def check_currency(code: str, *, path: str) -> str:
    if code not in CURRENCIES:
        raise fail(path, f"unknown currency {code!r}; expected one of {', '.join(CURRENCIES)}")
    return code


@dataclass(frozen=True, kw_only=True)
class Price:
    """One published or assumed rate: amount per unit, in a currency, with provenance."""

    amount: Decimal
    currency: str
    unit: str = ""  # e.g. "per GPU-hour", "per GB-month"
    vat_included: bool = False
    source: str = ""  # URL, catalog id, or "assumption: ..."
    as_of: dt.date | None = None  # the date the price was valid / observed
    # What kind of figure it is, carried into every cost line's breakdown: "list price" (a published
    # catalog price), "quote" (a supplier's or the user's own offer), "assumption" (a rate-card
    # default), "derived" (computed from other prices). ``stale``: the source says it may be out of date.
    basis: str = "list price"
    stale: bool = False


@dataclass(frozen=True, kw_only=True)
class FxRate:
    """1 ``base`` = ``rate`` ``quote`` from valid_from (inclusive) to valid_to (exclusive)."""

    base: str
    quote: str
    rate: Decimal
    valid_from: dt.date
    valid_to: dt.date | None = None
    source: str = ""


@dataclass(frozen=True, kw_only=True)
class VatRate:
    country: str  # ISO 3166-1 alpha-2
    rate: Decimal  # 0.22 for 22 %
    valid_from: dt.date
    valid_to: dt.date | None = None
    source: str = ""


def _valid(valid_from: dt.date, valid_to: dt.date | None, on: dt.date) -> bool:
    return valid_from <= on and (valid_to is None or on < valid_to)


@dataclass(frozen=True, kw_only=True)
class FxTable:
    rates: tuple[FxRate, ...] = ()
    # rates already looked up, by (base, quote, date): a plan converts the same few pairs
    # thousands of times, and the table never changes (frozen)
    _memo: dict = field(default_factory=dict, init=False, repr=False, compare=False, hash=False)

    def _direct(self, base: str, quote: str, on: dt.date) -> Decimal | None:
        hits = [
            r
            for r in self.rates
            if r.base == base and r.quote == quote and _valid(r.valid_from, r.valid_to, on)
        ]
        if hits:
            return max(hits, key=lambda r: r.valid_from).rate
        inverse = [
            r
            for r in self.rates
            if r.base == quote and r.quote == base and _valid(r.valid_from, r.valid_to, on)
        ]
        if inverse:
            return ONE / max(inverse, key=lambda r: r.valid_from).rate
        return None

    def rate(self, *, base: str, quote: str, on: dt.date, path: str = "fx") -> Decimal:
        """Units of ``quote`` per 1 ``base`` on a date; crosses through USD or RUB if needed."""
        check_currency(base, path=path)
        check_currency(quote, path=path)
        if base == quote:
            return ONE
        key = (base, quote, on)
        hit = self._memo.get(key)
        if hit is None:
            hit = self._memo[key] = self._lookup(base, quote, on, path)
        return hit

    def _lookup(self, base: str, quote: str, on: dt.date, path: str) -> Decimal:
        direct = self._direct(base, quote, on)
        if direct is not None:
            return direct
        for via in ("USD", "RUB", "EUR"):
            if via in (base, quote):
                continue
            a, b = self._direct(base, via, on), self._direct(via, quote, on)
            if a is not None and b is not None:
                return a * b
        raise fail(path, f"no FX rate {base}->{quote} valid on {on.isoformat()}")

    def convert(self, *, amount: Decimal, base: str, quote: str, on: dt.date, path: str = "fx") -> Decimal:
        """Full precision; round only when reporting (there-and-back stays exact to the cent)."""
        return amount * self.rate(base=base, quote=quote, on=on, path=path)

    def used(self, *, currencies: set[str], quote: str, on: dt.date) -> list[dict]:
        out = []
        for cur in sorted(currencies - {quote}):
            try:
                rate = str(self.rate(base=cur, quote=quote, on=on))
            except ValueError:
                rate = None  # a currency of a price this plan did not use; unknown stays unknown
            out.append(
                {
                    "base": cur,
                    "quote": quote,
                    "rate": rate,
                    "on": on.isoformat(),
                    "source": self._source(cur, quote, on),
                }
            )
        return out

    def _source(self, base: str, quote: str, on: dt.date) -> str:
        for r in self.rates:
            if {r.base, r.quote} == {base, quote} and _valid(r.valid_from, r.valid_to, on):
                return r.source
        return "cross rate"


@dataclass(frozen=True, kw_only=True)
class VatTable:
    rates: tuple[VatRate, ...] = ()

    def rate(self, *, country: str, on: dt.date, path: str = "vat") -> Decimal:
        hits = [r for r in self.rates if r.country == country and _valid(r.valid_from, r.valid_to, on)]
        if not hits:
            raise fail(path, f"no VAT rate for country {country!r} on {on.isoformat()}")
        return max(hits, key=lambda r: r.valid_from).rate

    def source(self, *, country: str, on: dt.date) -> str:
        hits = [r for r in self.rates if r.country == country and _valid(r.valid_from, r.valid_to, on)]
        return max(hits, key=lambda r: r.valid_from).source if hits else ""


def add_months(day: dt.date, months: int) -> dt.date:
    """Calendar month arithmetic; the day is clamped to the end of shorter months."""
    y, m = divmod(day.month - 1 + months, 12)
    year, month = day.year + y, m + 1
    for d in (day.day, 30, 29, 28):
        try:
            return dt.date(year, month, d)
        except ValueError:
            continue
    raise AssertionError("unreachable")


@dataclass(frozen=True, kw_only=True)
class Money:
    """A reporting-side amount: the pair the brief asks for, serialised as strings."""

    amount: Decimal
    currency: str

    def to_dict(self) -> dict:
        return {"amount": str(cents(self.amount)), "currency": self.currency}
