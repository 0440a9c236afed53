"""Read and validate the shipped rate-card CSV (costs/data/rate_cards.csv). No Django here, so
engine tests and the load_rate_cards command share one parser."""

from __future__ import annotations

import csv
import datetime as dt
from decimal import Decimal, InvalidOperation
from pathlib import Path

from costs.engine.errors import CostValidationError, FieldError
from costs.engine.inputs import Rate
from costs.engine.rates import RATE_SCHEMA, base_key, validate_rate
from planner.engine.presets import get_preset

DEFAULT_PATH = Path(__file__).resolve().parent / "data" / "rate_cards.csv"
COLUMNS = ["key", "value", "unit", "currency", "valid_from", "valid_to", "source", "is_assumption", "notes"]


def read_rate_csv(path: Path = DEFAULT_PATH) -> list[dict]:
    """Rows as typed dicts; every problem is reported as ``<file>:<line>.<column>: message``."""
    errors: list[FieldError] = []
    rows: list[dict] = []
    with open(path, newline="", encoding="utf-8") as fh:
        reader = csv.DictReader(fh)
        if reader.fieldnames != COLUMNS:
            raise CostValidationError([FieldError(path=path.name, message=f"columns must be {COLUMNS}")])
        for n, raw in enumerate(reader, start=2):
            p = f"{path.name}:{n}"
            try:
                value = Decimal(raw["value"])
            except InvalidOperation:
                errors.append(FieldError(path=f"{p}.value", message="must be a number"))
                continue
            try:
                valid_from = dt.date.fromisoformat(raw["valid_from"])
                valid_to = dt.date.fromisoformat(raw["valid_to"]) if raw["valid_to"] else None
            except ValueError:
                errors.append(FieldError(path=f"{p}.valid_from", message="dates must be YYYY-MM-DD"))
                continue
            currency = raw["currency"] or None
            errs = validate_rate(raw["key"], value, currency, path=f"{p}.{raw['key']}")
            if (
                currency
                and RATE_SCHEMA.get(base_key(raw["key"]))
                and RATE_SCHEMA[base_key(raw["key"])].kind != "money"
            ):
                errs.append(FieldError(path=f"{p}.currency", message="only money rates have a currency"))
            if valid_to is not None and valid_to <= valid_from:
                errs.append(FieldError(path=f"{p}.valid_to", message="must be after valid_from"))
            if not raw["source"].strip():
                errs.append(FieldError(path=f"{p}.source", message="every rate needs a source"))
            if raw["is_assumption"] not in ("true", "false"):
                errs.append(FieldError(path=f"{p}.is_assumption", message="must be true or false"))
            errors += errs
            if not errs:
                rows.append(
                    {
                        "key": raw["key"],
                        "value": value,
                        "unit": raw["unit"],
                        "currency": currency or "",
                        "valid_from": valid_from,
                        "valid_to": valid_to,
                        "source": raw["source"].strip(),
                        "is_assumption": raw["is_assumption"] == "true",
                        "notes": raw["notes"],
                    }
                )
    if errors:
        raise CostValidationError(errors)
    return rows


def rates_from_rows(rows: list[dict], *, as_of: dt.date) -> dict[str, Rate]:
    """The rate valid at ``as_of`` for each key (latest valid_from wins)."""
    out: dict[str, tuple[dt.date, Rate]] = {}
    for r in rows:
        if r["valid_from"] <= as_of and (r["valid_to"] is None or as_of < r["valid_to"]):
            if r["key"] not in out or r["valid_from"] > out[r["key"]][0]:
                source = (
                    r["source"]
                    if not r.get("is_assumption") or r["source"].startswith("assumption")
                    else f"assumption: {r['source']}"
                )
                out[r["key"]] = (
                    r["valid_from"],
                    Rate(
                        value=r["value"],
                        unit=r["unit"],
                        currency=r["currency"] or None,
                        source=source,
                        valid_from=r["valid_from"],
                    ),
                )
    return {k: v for k, (_, v) in out.items()}


# ---- external model API prices (costs/data/api_token_prices.csv) -------------------------------

API_PRICES_PATH = Path(__file__).resolve().parent / "data" / "api_token_prices.csv"
API_COLUMNS = [
    "provider",
    "model",
    "input_per_1m_tokens",
    "output_per_1m_tokens",
    "currency",
    "includes_vat",
    "valid_from",
    "valid_to",
    "open_weights_model",
    "source",
]
# ApiTokenPrice.input/output_per_1m_tokens: DecimalField(max_digits=18, decimal_places=6)
_API_MAX_DECIMALS = 6
_API_MAX_DIGITS = 18


def _api_amount(text: str, *, path: str, errors: list[FieldError]) -> Decimal | None:
    try:
        value = Decimal(text)
    except InvalidOperation:
        errors.append(FieldError(path=path, message="must be a number"))
        return None
    if not value.is_finite() or value < 0:
        errors.append(FieldError(path=path, message="must be a number, 0 or more"))
        return None
    exponent = value.normalize().as_tuple().exponent
    if isinstance(exponent, int) and -exponent > _API_MAX_DECIMALS:
        errors.append(FieldError(path=path, message=f"at most {_API_MAX_DECIMALS} decimal places"))
        return None
    if len(str(int(value))) > _API_MAX_DIGITS - _API_MAX_DECIMALS:
        errors.append(FieldError(path=path, message="too large"))
        return None
    return value


def read_api_price_csv(path: Path = API_PRICES_PATH) -> list[dict]:
    """API token prices as typed dicts; every problem is reported as ``<file>:<line>.<column>: message``.

    One row per (provider, model, valid_from); prices are per 1M tokens in ``currency``.
    """
    from costs.engine.money import CURRENCIES

    errors: list[FieldError] = []
    rows: list[dict] = []
    seen: dict[tuple, int] = {}
    with open(path, newline="", encoding="utf-8") as fh:
        reader = csv.DictReader(fh)
        if reader.fieldnames != API_COLUMNS:
            raise CostValidationError([FieldError(path=path.name, message=f"columns must be {API_COLUMNS}")])
        for n, raw in enumerate(reader, start=2):
            p = f"{path.name}:{n}"
            errs: list[FieldError] = []
            if None in raw or any(v is None for v in raw.values()):
                errors.append(FieldError(path=p, message=f"must have exactly {len(API_COLUMNS)} columns"))
                continue
            provider, model = raw["provider"].strip(), raw["model"].strip()
            if not provider:
                errs.append(FieldError(path=f"{p}.provider", message="must not be empty"))
            if not model:
                errs.append(FieldError(path=f"{p}.model", message="must not be empty"))
            p_in = _api_amount(raw["input_per_1m_tokens"], path=f"{p}.input_per_1m_tokens", errors=errs)
            p_out = _api_amount(raw["output_per_1m_tokens"], path=f"{p}.output_per_1m_tokens", errors=errs)
            if raw["currency"] not in CURRENCIES:
                errs.append(
                    FieldError(
                        path=f"{p}.currency",
                        message=f"unknown currency {raw['currency']!r}; expected one of {', '.join(CURRENCIES)}",
                    )
                )
            if raw["includes_vat"] not in ("true", "false"):
                errs.append(FieldError(path=f"{p}.includes_vat", message="must be true or false"))
            valid_from = valid_to = None
            try:
                valid_from = dt.date.fromisoformat(raw["valid_from"])
            except ValueError:
                errs.append(FieldError(path=f"{p}.valid_from", message="must be a date YYYY-MM-DD"))
            try:
                valid_to = dt.date.fromisoformat(raw["valid_to"]) if raw["valid_to"] else None
            except ValueError:
                errs.append(FieldError(path=f"{p}.valid_to", message="must be a date YYYY-MM-DD or empty"))
            if valid_from and valid_to and valid_to <= valid_from:
                errs.append(FieldError(path=f"{p}.valid_to", message="must be after valid_from"))
            open_model = raw["open_weights_model"].strip()
            if open_model and get_preset(open_model) is None:
                errs.append(FieldError(path=f"{p}.open_weights_model",
                                       message=f"{open_model!r} is not a model preset id (or leave it empty)"))
            if not raw["source"].strip():
                errs.append(FieldError(path=f"{p}.source", message="every price needs a source"))
            key = (provider, model, valid_from)
            if not errs and key in seen:
                errs.append(
                    FieldError(
                        path=f"{p}.valid_from",
                        message=f"{provider} {model} from {valid_from} is already on line {seen[key]}",
                    )
                )
            errors += errs
            if not errs:
                seen[key] = n
                rows.append(
                    {
                        "provider": provider,
                        "model": model,
                        "input_per_1m_tokens": p_in,
                        "output_per_1m_tokens": p_out,
                        "currency": raw["currency"],
                        "includes_vat": raw["includes_vat"] == "true",
                        "valid_from": valid_from,
                        "valid_to": valid_to,
                        "open_weights_model": open_model,
                        "source": raw["source"].strip(),
                    }
                )
    if errors:
        raise CostValidationError(errors)
    return rows
