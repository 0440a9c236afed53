"""Bank of Russia official daily rates (https://www.cbr.ru/scripts/XML_daily.asp[?date_req=dd/mm/yyyy]).

Format (windows-1251 XML)::

    <ValCurs Date="01.07.2026" name="Foreign Currency Market">
      <Valute ID="R01235"><NumCode>840</NumCode><CharCode>USD</CharCode><Nominal>1</Nominal>
        <Name>Доллар США</Name><Value>78,2696</Value><VunitRate>78,2696</VunitRate></Valute>
      ...

`Value` is the rouble price of `Nominal` units, with a decimal comma; `VunitRate` (newer files)
is the price of one unit. The rate stored is Value / Nominal (1 <CharCode> = rate RUB), checked
against VunitRate when present. Only currencies the catalog knows (catalog.choices.Currency) are kept.
"""

from __future__ import annotations

import datetime as dt
import xml.etree.ElementTree as ET
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from pathlib import Path

from django.db import DatabaseError, transaction
from django.utils import timezone

from catalog.choices import Currency, FeedKind, ImportStatus
from catalog.feeds.fetch import FeedError, fetch
from catalog.models import ExchangeRate, FeedImportRun

SOURCE_TITLE = "Bank of Russia official exchange rates (XML_daily)"
CBR_DAILY_PAGE = "https://www.cbr.ru/scripts/XML_daily.asp"
RATE_PLACES = Decimal("0.00000001")  # ExchangeRate.rate has 8 decimal places


@dataclass(frozen=True)
class CbrRate:
    char_code: str
    valute_id: str
    num_code: str
    nominal: int
    value: Decimal  # roubles per `nominal` units
    rate: Decimal  # roubles per 1 unit


def _number(text: str | None, *, what: str) -> Decimal:
    raw = (text or "").strip().replace("\u00a0", "").replace(" ", "")
    try:
        value = Decimal(raw.replace(",", "."))
    except InvalidOperation:
        raise FeedError(f"{what}: {text!r} is not a number") from None
    if not value.is_finite() or value <= 0:
        raise FeedError(f"{what}: {text!r} must be a positive number")
    return value


def parse_cbr_daily(body: bytes) -> tuple[dt.date, list[CbrRate]]:
    """Parse an XML_daily body; raises FeedError naming the element at fault."""
    try:
        root = ET.fromstring(body)  # the XML declaration names the encoding (windows-1251)
    except ET.ParseError as exc:
        raise FeedError(f"malformed XML ({exc})") from None
    if root.tag != "ValCurs":
        raise FeedError(f"not a Bank of Russia XML_daily file: the root element is <{root.tag}>, expected <ValCurs>")
    date_text = (root.get("Date") or "").strip()
    try:
        day = dt.datetime.strptime(date_text, "%d.%m.%Y").date()
    except ValueError:
        raise FeedError(f"ValCurs Date={date_text!r} is not a date dd.mm.yyyy") from None
    valutes = root.findall("Valute")
    if not valutes:
        raise FeedError(f"no <Valute> elements in the rates of {day.isoformat()}")
    out: list[CbrRate] = []
    seen: set[str] = set()
    for i, v in enumerate(valutes, start=1):
        code = (v.findtext("CharCode") or "").strip()
        where = f"Valute #{i} ({code or v.get('ID') or 'no CharCode'})"
        if len(code) != 3 or not code.isalpha():
            raise FeedError(f"{where}: CharCode {code!r} is not a 3-letter currency code")
        if code in seen:
            raise FeedError(f"{where}: {code} appears twice")
        seen.add(code)
        nominal_d = _number(v.findtext("Nominal"), what=f"{where} Nominal")
        if nominal_d != nominal_d.to_integral_value():
            raise FeedError(f"{where}: Nominal {nominal_d} is not a whole number")
        value = _number(v.findtext("Value"), what=f"{where} Value")
        rate = value / nominal_d
        unit = v.findtext("VunitRate")
        if unit is not None:
            unit_rate = _number(unit, what=f"{where} VunitRate")
            if abs(unit_rate - rate) > Decimal("0.0001") * rate:
                raise FeedError(f"{where}: VunitRate {unit_rate} disagrees with Value/Nominal = {rate}")
        out.append(
            CbrRate(
                char_code=code,
                valute_id=(v.get("ID") or "").strip(),
                num_code=(v.findtext("NumCode") or "").strip(),
                nominal=int(nominal_d),
                value=value,
                rate=rate,
            )
        )
    return day, out


def import_cbr_daily(*, url: str, timeout_s: float = 20.0, retrieved_on: dt.date | None = None) -> FeedImportRun:
    """Fetch, parse and upsert the rates of one ValCurs date; a failure writes nothing but the run."""
    run = FeedImportRun.objects.create(kind=FeedKind.CBR_DAILY, source=url)
    try:
        body = fetch(url, timeout_s=timeout_s)
        day, rates = parse_cbr_daily(body)
        known = [r for r in rates if r.char_code in Currency.values and r.char_code != Currency.RUB]
        if not known:
            raise FeedError(
                f"none of the catalog currencies ({', '.join(c for c in Currency.values if c != 'RUB')}) "
                f"in the rates of {day.isoformat()}"
            )
        counts = {"created": 0, "updated": 0, "unchanged": 0, "date": day.isoformat()}
        read_on = retrieved_on or timezone.localdate()
        with transaction.atomic():
            for r in known:
                value = r.rate.quantize(RATE_PLACES)
                fields = {
                    "rate": value,
                    "source_title": SOURCE_TITLE,
                    "source_url": url if url.startswith(("http://", "https://"))
                    else f"{CBR_DAILY_PAGE}?date_req={day.strftime('%d/%m/%Y')} (saved file {Path(url).name})",
                    "source_date": day,
                    "retrieved_on": read_on,
                    "notes": f"Valute ID {r.valute_id}, NumCode {r.num_code}: Value {r.value} RUB "
                    f"per Nominal {r.nominal} {r.char_code}",
                }
                row = ExchangeRate.objects.filter(rate_date=day, base=r.char_code, quote=Currency.RUB).first()
                if row is None:
                    ExchangeRate.objects.create(rate_date=day, base=r.char_code, quote=Currency.RUB, **fields)
                    counts["created"] += 1
                elif row.rate != value:
                    for k, val in fields.items():
                        setattr(row, k, val)
                    row.save()
                    counts["updated"] += 1
                else:
                    counts["unchanged"] += 1
    except FeedError as exc:
        return _finish(run, status=ImportStatus.FAILED, error=str(exc))
    except DatabaseError as exc:  # rolled back: the old rates stay
        return _finish(run, status=ImportStatus.FAILED, error=f"database error, nothing written ({exc})")
    return _finish(run, status=ImportStatus.DONE, counts=counts)


def _finish(run: FeedImportRun, *, status: str, error: str = "", counts: dict | None = None) -> FeedImportRun:
    run.status = status
    run.error = error
    run.counts = counts or {}
    run.finished_at = timezone.now()
    run.save(update_fields=["status", "error", "counts", "finished_at"])
    return run
