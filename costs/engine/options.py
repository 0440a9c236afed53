"""Parse and validate the ``costs`` section of a plan request into CostOptions.

The same rules run for the CLI file, the web form and the API, and every error names its
field path (``costs.utilisation: must be between 0 and 1``).
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable
from decimal import Decimal, InvalidOperation

from catalog.domain.messages import Msg

from .errors import CostValidationError, FieldError
from .inputs import (
    DECISION_BASES,
    OPTION_KINDS,
    REDUNDANCY,
    ApiPrice,
    CostOptions,
    HybridSplit,
    ServerPrice,
    SupportLine,
)
from .money import CURRENCIES, Price
from .rates import validate_rate

# No amount, volume or rate in the cost options reaches a trillion (the catalog's money columns hold 12
# whole digits); beyond that it is a typo, and totals over the horizon would outgrow the 28 significant
# digits of the engine's Decimal arithmetic (the API's schema states the same bound).
MAX_MAGNITUDE = Decimal(10) ** 12

KNOWN_KEYS = {
    "horizon_months",
    "currency",
    "include_vat",
    "country",
    "as_of",
    "utilisation",
    "efficiency",
    "options",
    "redundancy",
    "hybrid_owned_share",
    "monte_carlo_samples",
    "seed",
    "overrides",
    "server_prices",
    "api_prices",
    "data_residency",
    "providers",
    "egress_gb_per_month",
    "inter_zone_gb_per_month",
    "runs",
    "runs_per_month",
    "discount_rate",
    "vat_recoverable",
    "downtime_cost_per_hour",
    "decision_basis",
    "support_lines",
}
SUPPORT_PER = ("month", "year", "once")
SUPPORT_SCALE = ("fixed", "per_gpu", "per_server")
SUPPORT_KINDS = ("onprem", "hybrid")
MAX_HORIZON_MONTHS = 120
# ISO 3166-1 alpha-2 officially assigned codes (249)
ISO_COUNTRIES = frozenset(
    """AD AE AF AG AI AL AM AO AQ AR AS AT AU AW AX AZ BA BB BD BE BF BG BH BI BJ BL BM BN BO BQ BR BS
    BT BV BW BY BZ CA CC CD CF CG CH CI CK CL CM CN CO CR CU CV CW CX CY CZ DE DJ DK DM DO DZ EC EE EG
    EH ER ES ET FI FJ FK FM FO FR GA GB GD GE GF GG GH GI GL GM GN GP GQ GR GS GT GU GW GY HK HM HN HR
    HT HU ID IE IL IM IN IO IQ IR IS IT JE JM JO JP KE KG KH KI KM KN KP KR KW KY KZ LA LB LC LI LK LR
    LS LT LU LV LY MA MC MD ME MF MG MH MK ML MM MN MO MP MQ MR MS MT MU MV MW MX MY MZ NA NC NE NF NG
    NI NL NO NP NR NU NZ OM PA PE PF PG PH PK PL PM PN PR PS PT PW PY QA RE RO RS RU RW SA SB SC SD SE
    SG SH SI SJ SK SL SM SN SO SR SS ST SV SX SY SZ TC TD TF TG TH TJ TK TL TM TN TO TR TT TV TW TZ UA
    UG UM US UY UZ VA VC VE VG VI VN VU WF WS YE YT ZA ZM ZW""".split()
)
MIN_SAMPLES, MAX_SAMPLES = 1_000, 50_000  # 50k x ~50 options keeps the arrays near 20 MB


_RISK_NEEDS_COST = Msg(
    "the risk-adjusted decision basis needs the cost of an hour of downtime: enter it, or choose another basis"
)


def downtime_cost_given(options: CostOptions) -> bool:
    """The user priced an hour of downtime (the option, or a rate override); no rate-card default
    stands in for it."""
    return options.downtime_cost_per_hour is not None or "downtime_cost_per_hour" in options.overrides


class _Collector:
    def __init__(self, prefix: str):
        self.prefix = prefix
        self.errors: list[FieldError] = []

    def err(self, path: str, message: str) -> None:
        self.errors.append(FieldError(path=f"{self.prefix}.{path}", message=message))

    def decimal(
        self, value, path: str, *, lo: Decimal | None = None, hi: Decimal | None = None, lo_open: bool = False
    ) -> Decimal | None:
        if isinstance(value, bool) or not isinstance(value, (int, float, str, Decimal)):
            self.err(path, Msg("must be a number"))
            return None
        try:
            d = Decimal(str(value).strip())
        except InvalidOperation:
            self.err(path, Msg("must be a number"))
            return None
        if not d.is_finite():
            self.err(path, Msg("must be a finite number"))
            return None
        if abs(d) > MAX_MAGNITUDE:
            self.err(path, Msg("must be at most {max:g} in size", max=float(MAX_MAGNITUDE)))
            return None
        if lo is not None and hi is not None and (d < lo or d > hi or (lo_open and d == lo)):
            self.err(path, Msg("must be between {lo} and {hi}", lo=lo, hi=hi) + (Msg(" (more than {lo})", lo=lo) if lo_open else ""))
            return None
        if lo is not None and hi is None and (d < lo or (lo_open and d == lo)):
            self.err(path, "must be greater than 0" if lo_open and lo == 0 else Msg("must be at least {lo}", lo=lo))
            return None
        return d

    def integer(self, value, path: str, *, lo: int, hi: int) -> int | None:
        if isinstance(value, bool) or not isinstance(value, int):
            self.err(path, Msg("must be a whole number"))
            return None
        if not lo <= value <= hi:
            self.err(path, Msg("must be between {lo} and {hi}", lo=lo, hi=hi))
            return None
        return value

    def currency(self, value, path: str) -> str | None:
        if value not in CURRENCIES:
            self.err(path, Msg("unknown currency {value}; expected one of {currencies}", value=repr(value), currencies=', '.join(CURRENCIES)))
            return None
        return value

    def text(self, value, path: str) -> str | None:
        if not isinstance(value, str) or not value.strip():
            self.err(path, Msg("must be a non-empty string"))
            return None
        return value.strip()


def _price(
    c: _Collector, item: dict, key: str, path: str, currency: str | None, unit: str, vat: bool, source: str
) -> Price | None:
    amount = c.decimal(item.get(key), f"{path}.{key}", lo=Decimal(0))
    if amount is None or currency is None:
        return None
    return Price(amount=amount, currency=currency, unit=unit, vat_included=vat, source=source)


def _server_prices(c: _Collector, raw) -> tuple[ServerPrice, ...]:
    if not isinstance(raw, list):
        c.err("server_prices", Msg("must be a list"))
        return ()
    out = []
    for i, item in enumerate(raw):
        path = f"server_prices[{i}]"
        if not isinstance(item, dict):
            c.err(path, Msg("must be an object"))
            continue
        acc = c.text(item.get("accelerator"), f"{path}.accelerator")
        gps = c.integer(item.get("gpus_per_server"), f"{path}.gpus_per_server", lo=1, hi=64)
        cur = c.currency(item.get("currency"), f"{path}.currency")
        source = item.get("source") or "user input"
        unknown = sorted(set(item) - {"accelerator", "gpus_per_server", "amount", "currency", "includes_vat",
                                      "source", "name", "power_w", "rack_units", "date"})
        for key in unknown:
            c.err(f"{path}.{key}", Msg("unknown field"))
        price = _price(
            c, item, "amount", path, cur, "per server", bool(item.get("includes_vat", False)), source
        )
        power = c.decimal(item["power_w"], f"{path}.power_w", lo=Decimal(0), lo_open=True) if "power_w" in item else None
        units = c.integer(item["rack_units"], f"{path}.rack_units", lo=1, hi=60) if "rack_units" in item else 0
        day = None
        if item.get("date") is not None:
            try:
                day = dt.date.fromisoformat(str(item["date"]))
            except ValueError:
                c.err(f"{path}.date", Msg("must be a date YYYY-MM-DD"))
        if acc and gps and price:
            out.append(
                ServerPrice(
                    accelerator_id=acc,
                    gpus_per_server=gps,
                    price=Price(
                        amount=price.amount, currency=price.currency, unit=price.unit,
                        vat_included=price.vat_included, source=price.source, as_of=day, basis="quote",
                    ),
                    name=str(item.get("name") or Msg("{gps}-GPU server (quote)", gps=gps)),
                    power_w=power,
                    rack_units=units or 0,
                )
            )
    return tuple(out)


def _api_prices(c: _Collector, raw, is_model_preset: Callable[[str], bool] | None) -> tuple[ApiPrice, ...]:
    if not isinstance(raw, list):
        c.err("api_prices", Msg("must be a list"))
        return ()
    out = []
    for i, item in enumerate(raw):
        path = f"api_prices[{i}]"
        if not isinstance(item, dict):
            c.err(path, Msg("must be an object"))
            continue
        provider = c.text(item.get("provider"), f"{path}.provider")
        model = c.text(item.get("model"), f"{path}.model")
        cur = c.currency(item.get("currency"), f"{path}.currency")
        vat = bool(item.get("includes_vat", False))
        source = item.get("source") or "user input"
        p_in = _price(c, item, "input_per_1m_tokens", path, cur, "per 1M input tokens", vat, source)
        p_out = _price(c, item, "output_per_1m_tokens", path, cur, "per 1M output tokens", vat, source)
        open_model = item.get("open_weights_model")
        if open_model is not None and (not isinstance(open_model, str) or not open_model.strip() or (
                is_model_preset is not None and not is_model_preset(open_model))):
            c.err(f"{path}.open_weights_model", Msg("must be a model preset id (the open-weights model the API serves)"))
            open_model = None
        if provider and model and p_in and p_out:
            out.append(
                ApiPrice(provider=provider, model=model, input_per_1m_tokens=p_in, output_per_1m_tokens=p_out,
                         open_weights_model=open_model)
            )
    return tuple(out)


def _support_lines(c: _Collector, raw) -> tuple[SupportLine, ...]:
    if not isinstance(raw, list):
        c.err("support_lines", Msg("must be a list"))
        return ()
    out = []
    for i, item in enumerate(raw):
        path = f"support_lines[{i}]"
        if not isinstance(item, dict):
            c.err(path, Msg("must be an object"))
            continue
        for key in sorted(set(item) - {"label", "amount", "currency", "per", "scale", "kinds", "includes_vat",
                                       "source"}):
            c.err(f"{path}.{key}", Msg("unknown field"))
        label = c.text(item.get("label"), f"{path}.label")
        cur = c.currency(item.get("currency"), f"{path}.currency")
        per = item.get("per", "year")
        if per not in SUPPORT_PER:
            c.err(f"{path}.per", Msg("must be one of: {support_per}", support_per=', '.join(SUPPORT_PER)))
        scale = item.get("scale", "fixed")
        if scale not in SUPPORT_SCALE:
            c.err(f"{path}.scale", Msg("must be one of: {support_scale}", support_scale=', '.join(SUPPORT_SCALE)))
        kinds = item.get("kinds", list(SUPPORT_KINDS))
        if not isinstance(kinds, list) or not kinds or any(k not in OPTION_KINDS for k in kinds):
            c.err(f"{path}.kinds", Msg("must be a non-empty list of: {option_kinds}", option_kinds=', '.join(OPTION_KINDS)))
            kinds = []
        source = item.get("source") or "user input"
        price = _price(c, item, "amount", path, cur, Msg("per {per}", per=per), bool(item.get("includes_vat", False)), source)
        if label and price and per in SUPPORT_PER and scale in SUPPORT_SCALE and kinds:
            out.append(
                SupportLine(
                    label=label,
                    price=Price(amount=price.amount, currency=price.currency, unit=price.unit,
                                vat_included=price.vat_included, source=source, basis="quote"),
                    per=per,
                    scale=scale,
                    kinds=tuple(kinds),
                )
            )
    return tuple(out)


def parse_cost_options(data, *, default_as_of: dt.date | None = None, prefix: str = "costs",
                       is_model_preset: Callable[[str], bool] | None = None) -> CostOptions:
    """``data`` is the decoded JSON of the costs section (or None for all defaults).

    ``is_model_preset`` says whether an id names a model preset (api_prices[].open_weights_model); the
    presets belong to the sizing engine, so the caller hands the check in (costs.adapters.parse_options
    does). Without it such an id is only checked to be a non-empty string."""
    if data is None:
        data = {}
    if not isinstance(data, dict):
        raise CostValidationError([FieldError(path=prefix, message=Msg("must be an object"))])
    c = _Collector(prefix)
    for key in sorted(set(data) - KNOWN_KEYS):
        c.err(key, Msg("unknown field"))
    kw: dict = {}
    if "horizon_months" in data:
        kw["horizon_months"] = c.integer(
            data["horizon_months"], "horizon_months", lo=1, hi=MAX_HORIZON_MONTHS
        )
    if "currency" in data:
        kw["currency"] = c.currency(data["currency"], "currency")
    if "include_vat" in data:
        if not isinstance(data["include_vat"], bool):
            c.err("include_vat", Msg("must be true or false"))
        kw["include_vat"] = data["include_vat"]
    if "country" in data:
        country = data["country"]
        if not (isinstance(country, str) and len(country) == 2 and country.isalpha() and country.isupper()):
            c.err("country", Msg("must be a two-letter ISO country code, e.g. RU"))
        elif country not in ISO_COUNTRIES:
            c.err("country", Msg("unknown country code {country} (ISO 3166-1 alpha-2, e.g. RU)", country=repr(country)))
        kw["country"] = country
    if "as_of" in data:
        try:
            kw["as_of"] = dt.date.fromisoformat(str(data["as_of"]))
        except ValueError:
            c.err("as_of", Msg("must be a date YYYY-MM-DD"))
    elif default_as_of is not None:
        kw["as_of"] = default_as_of
    if data.get("utilisation") is not None:
        kw["utilisation"] = c.decimal(data["utilisation"], "utilisation", lo=Decimal(0), hi=Decimal(1))
    if data.get("efficiency") is not None:
        kw["efficiency"] = c.decimal(
            data["efficiency"], "efficiency", lo=Decimal(0), hi=Decimal(1), lo_open=True
        )
    if "options" in data:
        opts = data["options"]
        if not isinstance(opts, list) or not opts:
            c.err("options", Msg("must be a non-empty list of: {option_kinds}", option_kinds=', '.join(OPTION_KINDS)))
        else:
            bad = [o for o in opts if o not in OPTION_KINDS]
            if bad:
                c.err("options", Msg("unknown option(s) {bad}; expected some of: {option_kinds}", bad=bad, option_kinds=', '.join(OPTION_KINDS)))
            kw["options"] = tuple(dict.fromkeys(opts))
    if "redundancy" in data:
        if data["redundancy"] not in REDUNDANCY:
            c.err("redundancy", Msg("must be one of: {redundancy}", redundancy=', '.join(REDUNDANCY)))
        kw["redundancy"] = data["redundancy"]
    if "hybrid_owned_share" in data:
        share = c.decimal(
            data["hybrid_owned_share"], "hybrid_owned_share", lo=Decimal(0), hi=Decimal(1), lo_open=True
        )
        if share is not None:
            kw["hybrid"] = HybridSplit(owned_share=share)
    if "monte_carlo_samples" in data:
        kw["monte_carlo_samples"] = c.integer(
            data["monte_carlo_samples"], "monte_carlo_samples", lo=MIN_SAMPLES, hi=MAX_SAMPLES
        )
    if "seed" in data:
        kw["seed"] = c.integer(data["seed"], "seed", lo=0, hi=2**63 - 1)
    if "overrides" in data:
        raw = data["overrides"]
        if not isinstance(raw, dict):
            c.err("overrides", Msg("must be an object of rate name -> number"))
        else:
            overrides = {}
            for key, value in raw.items():
                d = c.decimal(value, f"overrides.{key}")
                if d is not None:
                    # an override keeps the currency of the rate it replaces, so only name and range
                    # are checked here (a placeholder currency satisfies the money check)
                    errs = validate_rate(key, d, "USD", path=f"{prefix}.overrides.{key}")
                    c.errors += errs
                    if not errs:
                        overrides[key] = d
            kw["overrides"] = overrides
    if data.get("egress_gb_per_month") is not None:
        kw["egress_gb_per_month"] = c.decimal(
            data["egress_gb_per_month"], "egress_gb_per_month", lo=Decimal(0)
        )
    if data.get("inter_zone_gb_per_month") is not None:
        kw["inter_zone_gb_per_month"] = c.decimal(
            data["inter_zone_gb_per_month"], "inter_zone_gb_per_month", lo=Decimal(0)
        )
    if data.get("runs") is not None:
        kw["runs"] = c.integer(data["runs"], "runs", lo=1, hi=100_000)
    if data.get("runs_per_month") is not None:
        kw["runs_per_month"] = c.decimal(
            data["runs_per_month"], "runs_per_month", lo=Decimal(0), hi=Decimal(10_000), lo_open=True
        )
    if data.get("runs") is not None and data.get("runs_per_month") is not None:
        c.err("runs_per_month", Msg("give either runs (a one-off job) or runs_per_month (a recurring job), not both"))
    if data.get("discount_rate") is not None:
        d = c.decimal(data["discount_rate"], "discount_rate", lo=Decimal(0))
        if d is not None and d >= 1:
            c.err("discount_rate", Msg("must be less than 1 (a share per year: 0.12 for 12 %)"))
        elif d is not None:
            kw["discount_rate"] = d
    if "vat_recoverable" in data:
        if not isinstance(data["vat_recoverable"], bool):
            c.err("vat_recoverable", Msg("must be true or false"))
        else:
            kw["vat_recoverable"] = data["vat_recoverable"]
    if data.get("downtime_cost_per_hour") is not None:
        kw["downtime_cost_per_hour"] = c.decimal(
            data["downtime_cost_per_hour"], "downtime_cost_per_hour", lo=Decimal(0)
        )
    if "decision_basis" in data:
        if data["decision_basis"] not in DECISION_BASES:
            c.err("decision_basis", Msg("unknown decision basis {value}; expected one of: {bases}",
                                        value=repr(data["decision_basis"]), bases=", ".join(DECISION_BASES)))
        else:
            kw["decision_basis"] = data["decision_basis"]
            if data["decision_basis"] == "risk_adjusted" and data.get("downtime_cost_per_hour") is None and (
                not isinstance(data.get("overrides"), dict) or "downtime_cost_per_hour" not in data["overrides"]
            ):
                c.err("downtime_cost_per_hour", _RISK_NEEDS_COST)
    if "support_lines" in data:
        kw["support_lines"] = _support_lines(c, data["support_lines"])
    if "server_prices" in data:
        kw["user_servers"] = _server_prices(c, data["server_prices"])
    if "api_prices" in data:
        kw["user_api_prices"] = _api_prices(c, data["api_prices"], is_model_preset)
    if "data_residency" in data:
        kw["data_residency"] = _residency(c, data["data_residency"])
    if "providers" in data:
        kw["providers"] = _providers(c, data["providers"])
    if c.errors:
        raise CostValidationError(c.errors)
    return CostOptions(**kw)


def _residency(c: _Collector, raw) -> tuple[str, ...]:
    """Jurisdictions (ISO 3166-1 alpha-2) whose providers and regions a plan may use, e.g. ["RU"]
    for personal data under 152-FZ; an empty list means no restriction."""
    if not isinstance(raw, list) or not all(isinstance(x, str) for x in raw):
        c.err("data_residency", "must be a list of two-letter ISO country codes, e.g. [\"RU\"]")
        return ()
    bad = [x for x in raw if x not in ISO_COUNTRIES]
    if bad:
        c.err("data_residency", f"not ISO 3166-1 alpha-2 country codes: {bad}")
        return ()
    return tuple(dict.fromkeys(raw))


MAX_PROVIDERS, MAX_PROVIDER_NAME = 100, 120


def _providers(c: _Collector, raw) -> tuple[str, ...]:
    """Providers a plan may buy from, by their catalog names; an empty list means any provider.
    Names are not checked against the catalog here (the engine is pure): an unknown name simply
    matches no offer, and the plan lists what was left out and why."""
    if (not isinstance(raw, list) or len(raw) > MAX_PROVIDERS
            or not all(isinstance(x, str) and 0 < len(x.strip()) <= MAX_PROVIDER_NAME for x in raw)):
        c.err("providers", Msg("must be a list of at most {n} provider names, e.g. [\"Yandex Cloud\"]",
                               n=MAX_PROVIDERS))
        return ()
    return tuple(dict.fromkeys(x.strip() for x in raw))


def validate_options(options: CostOptions, *, prefix: str = "costs") -> None:
    """The same bounds for options built in code (adapters, tests) as for parsed ones."""
    c = _Collector(prefix)
    if not 1 <= options.horizon_months <= MAX_HORIZON_MONTHS:
        c.err("horizon_months", Msg("must be between 1 and {max_horizon_months}", max_horizon_months=MAX_HORIZON_MONTHS))
    if options.currency not in CURRENCIES:
        c.err("currency", Msg("unknown currency {currency}; expected one of {currencies}", currency=repr(options.currency), currencies=', '.join(CURRENCIES)))
    if options.utilisation is not None and not 0 <= options.utilisation <= 1:
        c.err("utilisation", Msg("must be between 0 and 1"))
    if options.efficiency is not None and not 0 < options.efficiency <= 1:
        c.err("efficiency", Msg("must be between 0 and 1 (more than 0)"))
    bad = [o for o in options.options if o not in OPTION_KINDS]
    if bad:
        c.err("options", Msg("unknown option(s) {bad}", bad=bad))
    if options.redundancy not in REDUNDANCY:
        c.err("redundancy", Msg("must be one of: {redundancy}", redundancy=', '.join(REDUNDANCY)))
    if not 0 < options.hybrid.owned_share <= 1:
        c.err("hybrid_owned_share", Msg("must be between 0 and 1 (more than 0)"))
    if not MIN_SAMPLES <= options.monte_carlo_samples <= MAX_SAMPLES:
        c.err("monte_carlo_samples", Msg("must be between {min_samples} and {max_samples}", min_samples=MIN_SAMPLES, max_samples=MAX_SAMPLES))
    if not 0 <= options.discount_rate < 1:
        c.err("discount_rate", Msg("must be at least 0 and less than 1"))
    if options.runs is not None and options.runs < 1:
        c.err("runs", Msg("must be at least 1"))
    if options.runs_per_month is not None and options.runs_per_month <= 0:
        c.err("runs_per_month", Msg("must be greater than 0"))
    if options.downtime_cost_per_hour is not None and options.downtime_cost_per_hour < 0:
        c.err("downtime_cost_per_hour", Msg("must not be negative"))
    if options.decision_basis not in DECISION_BASES:
        c.err("decision_basis", Msg("unknown decision basis {value}; expected one of: {bases}",
                                    value=repr(options.decision_basis), bases=", ".join(DECISION_BASES)))
    elif options.decision_basis == "risk_adjusted" and not downtime_cost_given(options):
        c.err("downtime_cost_per_hour", _RISK_NEEDS_COST)
    if c.errors:
        raise CostValidationError(c.errors)


def check_options_for_service(options: CostOptions, *, serving_hours_per_day: float | None,
                              prefix: str = "costs") -> None:
    """A service that runs some hours a day cannot be costed at utilisation 0 (its fleet would
    cost nothing and serve nothing); checked at submission so the user gets a field error, not a
    failed version. `serving_hours_per_day` is None for workloads that are not served."""
    if options.utilisation is not None and options.utilisation == 0 and serving_hours_per_day:
        raise CostValidationError([FieldError(
            path=f"{prefix}.utilisation",
            message=Msg("must be more than 0: the service runs {utilisation:g} hours a day",
                        utilisation=serving_hours_per_day))])
