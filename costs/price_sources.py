"""Where a plan's prices come from, beyond the plain catalog offers (issue 14), fed through the
cost engine's INPUTS so the cost model itself is unchanged:

- Composed cloud prices (catalog.compose): a VM priced as the sum of its published components
  (per GPU, per vCPU, per GB of RAM, VAT included) becomes an engine CloudOffer whose price source
  spells the sum; preemptible prices are the spot mode, a capacity reservation is billed for every
  hour of the month (billing granularity = the month). Unknown VAT basis is treated as VAT-inclusive
  (Yandex's RUB tables state "вкл. НДС") and every option using it says so.
- Supplier quotes (team-scoped, catalog.SupplierQuote): a valid quote replaces the list price of
  its accelerator; a quote in another currency is converted at the rate of the quote's own date;
  an expired quote is flagged and the list price is used.
- Data residency: offers of providers/regions outside the chosen jurisdictions are left out with
  that reason, before any option is built, so they are in neither the plan nor the decision.
- Freshness: every price an option uses is listed with its date and age, and a plan warns when one
  is older than its threshold (settings.PRICE_MAX_AGE_DAYS, frozen in the price snapshot).
- Providers known but not priced (e.g. Selectel, Cloud.ru, VK Cloud) are named as not priced.
- History: a composed offer priced only by a stale list that its provider has superseded (Yandex's
  2022 table, after its list of 2026-01-23) is never priced; the plan names it in `skipped`.
- Inferred GPUs: an offer on a shape whose GPU the provider does not name carries the written rule
  (catalog vm_shapes.csv `accelerator_inference`); every option using it shows it
  (`accelerator_inference` and a warning), and so do prices_used and freshness.prices.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field, replace
from decimal import Decimal

from catalog.domain.messages import Msg, figure, join_texts
from costs.engine.inputs import CloudOffer, CostOptions, PriceBook, ServerPrice
from costs.engine.money import Price

HOURS_PER_MONTH = Decimal("730")
DEFAULT_THRESHOLDS = {"fx": 7, "cloud": 90, "hardware": 180, "quote": 180}
QUOTE_TAG = "supplier quote"


@dataclass
class Sources:
    book: PriceBook
    options: CostOptions
    notes: list[str] = field(default_factory=list)
    skipped: list[dict] = field(default_factory=list)
    cloud_meta: dict = field(default_factory=dict)  # (provider, region, instance_type) -> price record
    server_meta: dict = field(default_factory=dict)  # accelerator id -> price record
    expired_quotes: dict = field(default_factory=dict)  # accelerator id -> [Msg]
    residency: dict | None = None


def _d(s) -> dt.date | None:
    return dt.date.fromisoformat(s) if s else None


def _money_text(amount: Decimal, currency: str) -> str:
    return f"{format(amount.normalize(), 'f')} {currency}"


# ---- composed cloud offers ---------------------------------------------------------------------


# what a composed price's parts are called (catalog.compose): translatable names
COMPONENT_NAMES = {"GPU": "GPU", "vCPU": "vCPU", "RAM, GB": "RAM, GB", "GPU cluster fee per VM": "GPU cluster fee per VM"}
VAT_TEXT = {True: "incl. VAT", False: "excl. VAT", None: "VAT basis not stated"}


def _components_text(o: dict) -> Msg:
    """The sum a composed price is, part by part, as a translatable text (a Russian plan reads it in Russian)."""
    parts = join_texts([Msg("{part} {quantity} x {unit_price:.2f}",
                            part=Msg(COMPONENT_NAMES[c["label"]]) if c["label"] in COMPONENT_NAMES else c["label"],
                            quantity=figure(Decimal(c["quantity"])), unit_price=Decimal(c["unit_price"]))
                        for c in o["components"]], " + ")
    when = Msg("price list of {date}", date=o["valid_from"]) if o["valid_from"] else Msg("undated price list")
    return Msg("{provider} {product}: {parts} = {amount:.2f} {currency} per VM-hour, {vat} ({when}){stale}",
               provider=o["provider"], product=o["product"], parts=parts,
               amount=Decimal(o["price_per_hour"]["amount"]), currency=o["price_per_hour"]["currency"],
               vat=Msg(VAT_TEXT[o["includes_vat"]]), when=when, stale=Msg(" [STALE]") if o["stale"] else "")


def composed_cloud_offers(price_snapshot: dict, *, training: bool) -> tuple[list[CloudOffer], dict]:
    """Engine offers from the snapshot's composed offers. Serving VMs do not pay the GPU-cluster
    fee; training on cluster-capable 8-GPU shapes does (multi-VM jobs need the InfiniBand cluster)."""
    rows = [o for o in price_snapshot.get("composed_cloud_offers", []) if o.get("accelerator") and not o.get("history")]
    clustered = {(o["provider"], o["instance_type"].removesuffix(", in a GPU cluster"), o["billing"])
                 for o in rows if o["in_gpu_cluster"]}
    groups: dict[tuple, dict[str, dict]] = {}
    for o in rows:
        if o["in_gpu_cluster"] != (training and (o["provider"], o["instance_type"].removesuffix(", in a GPU cluster"),
                                                 o["billing"]) in clustered):
            continue
        reserved = o["billing"] == "capacity_reservation"
        name = (Msg("{instance} (capacity reservation, billed every hour)", instance=o["instance_type"])
                if reserved else o["instance_type"])
        groups.setdefault((o["provider"], o["region"], name, o["accelerator"], o["gpu_count"]), {})[o["billing"]] = o
    offers, meta = [], {}
    for (provider, region, name, acc, gpus), by_billing in groups.items():
        def price(billing: str, unit: str, by_billing=by_billing):
            o = by_billing.get(billing)
            if o is None:
                return None
            return Price(amount=Decimal(o["price_per_hour"]["amount"]), currency=o["price_per_hour"]["currency"],
                         unit=unit, vat_included=o["includes_vat"] is not False, source=_components_text(o),
                         as_of=_d(o["valid_from"]), stale=bool(o["stale"]))
        reserved = "capacity_reservation" in by_billing
        offers.append(CloudOffer(
            provider=provider, region=region, instance_type=name, accelerator_id=acc, gpus_per_instance=int(gpus),
            on_demand=price("capacity_reservation" if reserved else "on_demand", "per VM-hour"),
            spot=None if reserved else price("preemptible", "per VM-hour (preemptible)"),
            # a reservation is paid for every hour whether the VM runs or not; composed prices bill per second
            billing_granularity_hours=HOURS_PER_MONTH if reserved else Decimal(1) / 3600,
        ))
        first = next(iter(by_billing.values()))
        meta[(provider, region, name)] = {
            "kind": "list price",
            "what": "cloud",
            "row": Msg("{provider} {instance}", provider=provider, instance=name),
            "date": first["valid_from"],
            "stale": any(o["stale"] for o in by_billing.values()),
            "stale_reason": first["stale_reason"],
            "includes_vat": first["includes_vat"],
            "components": {b: {"components": o["components"], "price_per_hour": o["price_per_hour"],
                               "includes_vat": o["includes_vat"]} for b, o in by_billing.items()},
            "source": _components_text(first),
        }
        if first.get("accelerator_inference"):
            meta[(provider, region, name)]["inference"] = first["accelerator_inference"]
    return offers, meta


def history_skipped(price_snapshot: dict, *, allowed: tuple[str, ...] = ()) -> list[dict]:
    """Composed offers kept only as history (a stale list superseded by the provider's newer list): named
    in the plan's skipped list, one entry per provider and platform, never priced (within the chosen
    jurisdictions only, when a residency is set)."""
    _countries, regions = jurisdiction_maps(price_snapshot)
    out: dict[tuple, dict] = {}
    for o in price_snapshot.get("composed_cloud_offers", []):
        if not o.get("history") or not o.get("accelerator"):
            continue
        if allowed and regions.get((o["provider"], o["region"])) not in allowed:
            continue
        platform = o["instance_type"].split(" ", 1)[0]
        key = (o["provider"], platform)
        if key not in out:
            out[key] = {"candidate": "all", "kind": "cloud", "provider": o["provider"], "region": o["region"],
                        "platform": platform, "reason": Msg(
                            "{provider} {platform}: only a stale price list of {date} prices it, and {provider} "
                            "has published a newer list ({newer}) without it; kept as history, not priced; ask "
                            "{provider} for a quote and enter it as a supplier quote",
                            provider=o["provider"], platform=platform, date=o["valid_from"] or "an undated list",
                            newer=o["superseded_by_list_of"])}
    return list(out.values())


def catalog_cloud_meta(price_snapshot: dict) -> dict:
    out = {}
    for o in price_snapshot.get("cloud_offers", []):
        src = o.get("source") or {}
        out[(o["provider"], o["region"], o["instance_type"])] = {
            "kind": "list price", "what": "cloud", "row": f"{o['provider']} {o['instance_type']} ({o['region']})",
            # SkyPilot rows carry no date of their own: the day they were read is the best date known
            "date": src.get("date") or o.get("valid_from"), "stale": False, "stale_reason": "",
            "includes_vat": o.get("includes_vat"), "source": src.get("title") or "",
        }
    return out


# ---- supplier quotes ---------------------------------------------------------------------------


def quote_servers(
    price_snapshot: dict, *, options: CostOptions, host_rate, fx
) -> tuple[list, dict, dict, list]:
    """Valid quotes -> ServerPrice in the plan currency (converted at the quote date's rate); a per-GPU
    quote becomes a server with the rate card's host cost per slot; expired quotes -> flags."""
    servers, meta, expired, notes = [], {}, {}, []
    for q in price_snapshot.get("supplier_quotes", []):
        acc = q["accelerator"]
        name = Msg("supplier quote #{id} from {supplier} of {date}", id=q["id"], supplier=q["supplier"],
                   date=q["quote_date"])
        if not q["valid"]:
            expired.setdefault(acc, []).append(
                Msg("{quote} expired on {valid_until}: the list price is used", quote=name,
                    valid_until=q["valid_until"]))
            continue
        amount, cur = Decimal(q["unit_price"]["amount"]), q["unit_price"]["currency"]
        conversion = ""
        if cur != options.currency:
            at_quote_date = (q.get("fx_at_quote_date") or {}).get(options.currency)  # not `fx`: the table
            if not at_quote_date:
                notes.append(Msg("{quote}: no {base}->{quote_currency} rate on or before {date}; not used",
                                 quote=name, base=cur, quote_currency=options.currency, date=q["quote_date"]))
                continue
            rate = Decimal(at_quote_date["rate"])
            conversion = f"; {_money_text(amount, cur)} x {at_quote_date['rate']} {options.currency}/{cur} " \
                         f"(rate of {at_quote_date['date']}, the quote's date)"
            amount, cur = amount * rate, options.currency
        vat = "incl. VAT" if q["includes_vat"] else "excl. VAT"
        source = f"{QUOTE_TAG} #{q['id']}: {q['supplier']}, {q['description'] or q['item_kind']}, dated " \
                 f"{q['quote_date']}, valid until {q['valid_until']}, {vat}" \
                 f"{', document ' + q['document_name'] if q['document_name'] else ''}{conversion}"
        unit_price = Price(amount=amount, currency=cur, unit=f"per {'server' if q['item_kind'] == 'server' else 'GPU'} "
                           f"({QUOTE_TAG})", vat_included=q["includes_vat"], source=source,
                           as_of=_d(q["quote_date"]), basis="quote")
        if q["item_kind"] == "server":
            servers.append(ServerPrice(accelerator_id=acc, gpus_per_server=int(q["gpus_per_server"]), price=unit_price,
                                       name=q["description"] or f"{QUOTE_TAG} #{q['id']}"))
        else:
            if host_rate is None:
                continue
            gps = int(q.get("gpus_per_server") or 8)
            try:  # the rate card's host cost is an assumption of the plan date: converted at that date
                host = fx.convert(amount=host_rate.value, base=host_rate.currency, quote=cur, on=options.as_of)
            except ValueError:
                notes.append(Msg("{quote}: no FX rate for the host cost per GPU slot; not used", quote=name))
                continue
            servers.append(ServerPrice(
                accelerator_id=acc, gpus_per_server=gps, slots=gps,
                name=f"{gps}-GPU server built from a per-GPU {QUOTE_TAG}",
                price=Price(
                    amount=gps * (unit_price.amount + host), currency=cur, unit=f"per server ({QUOTE_TAG})",
                    vat_included=unit_price.vat_included, as_of=unit_price.as_of, basis="quote",
                    source=f"{gps} x GPU {_money_text(unit_price.amount, cur)} ({source}) + {gps} x "
                    f"server_host_capex_per_gpu_slot {host_rate.value} {host_rate.currency} ({host_rate.source})",
                ),
            ))
        meta[acc] = {"kind": QUOTE_TAG, "what": "quote", "row": str(name), "date": q["quote_date"],
                     "valid_until": q["valid_until"], "stale": False, "stale_reason": "",
                     "includes_vat": q["includes_vat"], "source": source, "quote_id": q["id"]}
    return servers, meta, expired, notes


def catalog_server_meta(price_snapshot: dict) -> dict:
    out = {}
    platforms = {p["slug"]: p.get("included_accelerator") for p in price_snapshot.get("server_platforms", [])}
    # The row names the item as the catalog pages do ("Gaudi 3", "DGX H100"), not by its id.
    names = {a["id"]: a.get("model") for a in price_snapshot.get("accelerators", []) if a.get("id")}
    names |= {p["slug"]: p.get("model") for p in price_snapshot.get("server_platforms", []) if p.get("slug")}
    for hp in price_snapshot.get("hardware_prices", []):
        acc = hp["item"] if hp["item_kind"] == "accelerator" else platforms.get(hp["item"])
        if acc and acc not in out:
            src = hp.get("source") or {}
            out[acc] = {"kind": "list price", "what": "hardware",
                        "row": f"{names.get(hp['item']) or hp['item']} ({hp['price_kind']})",
                        "date": src.get("date") or hp.get("valid_from"), "stale": False, "stale_reason": "",
                        "includes_vat": hp.get("includes_vat"), "source": src.get("title") or ""}
    return out


# ---- residency ---------------------------------------------------------------------------------


def jurisdiction_maps(price_snapshot: dict) -> tuple[dict, dict]:
    countries = {p["name"]: p["country"] for p in price_snapshot.get("providers", [])}
    regions = {(r["provider"], r["region"]): r["jurisdiction"] for r in price_snapshot.get("provider_regions", [])}
    return countries, regions


def apply_residency(book: PriceBook, *, allowed: tuple[str, ...], price_snapshot: dict) -> tuple[PriceBook, dict]:
    """Leave out every offer whose region (or, without a region, whose provider) is outside ``allowed``."""
    countries, regions = jurisdiction_maps(price_snapshot)
    left: dict[tuple, dict] = {}

    def where(provider: str, region: str | None) -> str | None:
        return regions.get((provider, region)) if region is not None else countries.get(provider)

    def keep(kind: str, provider: str, region: str | None) -> bool:
        j = where(provider, region)
        if j in allowed:
            return True
        key = (kind, provider, region)
        if key not in left:
            what = f"{provider} {region}" if region else provider
            reason = (
                Msg("{what} is in {jurisdiction}, outside the chosen jurisdictions ({allowed})",
                    what=what, jurisdiction=j, allowed=", ".join(allowed))
                if j else
                Msg("{what}: jurisdiction unknown, so it cannot be shown to be inside {allowed}",
                    what=what, allowed=", ".join(allowed))
            )
            left[key] = {"candidate": "all", "kind": kind, "provider": provider, "region": region,
                         "jurisdiction": j, "reason": reason, "offers": 0}
        left[key]["offers"] += 1
        return False

    cloud = tuple(o for o in book.cloud_offers if keep("cloud", o.provider, o.region))
    dedicated = tuple(o for o in book.dedicated_offers if keep("dedicated", o.provider, None))
    api = tuple(a for a in book.api_prices if keep("api", a.provider, None))
    cpu = tuple(c for c in book.cpu_instances if keep("cpu server", c.provider, c.region))
    summary = {"jurisdictions": list(allowed), "left_out": list(left.values()),
               "kept_on_premises": Msg("on-premises options stay: the servers are on the team's own premises")}
    return replace(book, cloud_offers=cloud, dedicated_offers=dedicated, api_prices=api,
                   cpu_instances=cpu), summary


def apply_providers(book: PriceBook, *, allowed: tuple[str, ...]) -> tuple[PriceBook, list[dict]]:
    """Leave out every offer of a provider outside ``allowed`` (a team's procurement settings);
    names compare without case. On-premises servers stay: the team buys them itself."""
    wanted = {a.casefold() for a in allowed}
    left: dict[tuple, dict] = {}

    def keep(kind: str, provider: str) -> bool:
        if provider.casefold() in wanted:
            return True
        key = (kind, provider)
        if key not in left:
            left[key] = {"candidate": "all", "kind": kind, "provider": provider, "offers": 0,
                         "reason": Msg("{provider} is not among the providers the team buys from ({allowed})",
                                       provider=provider, allowed=", ".join(allowed))}
        left[key]["offers"] += 1
        return False

    cloud = tuple(o for o in book.cloud_offers if keep("cloud", o.provider))
    dedicated = tuple(o for o in book.dedicated_offers if keep("dedicated", o.provider))
    api = tuple(a for a in book.api_prices if keep("api", a.provider))
    cpu = tuple(c for c in book.cpu_instances if keep("cpu server", c.provider))
    return replace(book, cloud_offers=cloud, dedicated_offers=dedicated, api_prices=api,
                   cpu_instances=cpu), list(left.values())


def not_priced_providers(price_snapshot: dict, *, allowed: tuple[str, ...],
                         providers: tuple[str, ...] = ()) -> list[dict]:
    out = []
    for p in price_snapshot.get("providers", []):
        if p.get("priced", True) or (allowed and p["country"] not in allowed):
            continue
        if providers and p["name"].casefold() not in {x.casefold() for x in providers}:
            continue
        out.append({"candidate": "all", "kind": "cloud", "provider": p["name"], "reason": Msg(
            "{provider}: not priced, no current price in the catalog; ask {provider} for a quote and enter it "
            "as a supplier quote", provider=p["name"])})
    return out


# ---- freshness (after costing) -----------------------------------------------------------------


def _age(record: dict, as_of: dt.date, thresholds: dict) -> dict:
    day = _d(record.get("date"))
    limit = thresholds.get(record["what"], thresholds.get("cloud"))
    age = (as_of - day).days if day else None
    return {**record, "age_days": age, "threshold_days": limit, "too_old": age is not None and age > limit}


def _listed(r: dict) -> dict:
    """A price in freshness.prices: row, date, age, source and only the flags that are set (a large plan
    lists dozens of prices)."""
    out = {"row": r["row"], "date": r["date"], "age_days": r["age_days"]}
    out.update({k: True for k in ("too_old", "stale") if r[k]})
    if r["kind"] != "list price":
        out["kind"] = r["kind"]
    if r.get("includes_vat", False) is None:
        out["includes_vat"] = None
    out["source"] = r.get("source", "")
    if r.get("components"):
        out["components"] = r["components"]
    if r.get("inference"):
        out["inference"] = r["inference"]
    return out


def _brief(r: dict) -> dict:
    """What an option shows of a price: the row, its date and age; flags and kind only when they say something."""
    out = {"row": r["row"], "date": r["date"], "age_days": r["age_days"]}
    out.update({k: True for k in ("too_old", "stale") if r[k]})
    if r["kind"] != "list price":
        out["kind"] = r["kind"]
    if r.get("inference"):
        out["inference"] = r["inference"]
    return out


def _inference_warning(r: dict) -> Msg:
    return Msg("{row}: the provider does not name the GPU; {inference}", row=r["row"], inference=r["inference"])


def _record_warnings(r: dict) -> list[Msg]:
    out = []
    if r["stale"]:
        out.append(Msg("{row}: STALE price ({reason}); shown for reference, not a current price",
                       row=r["row"], reason=r["stale_reason"]))
    if r["age_days"] is None:
        out.append(Msg("{row}: the source is undated, so the price's age is unknown", row=r["row"]))
    elif r["too_old"]:
        out.append(Msg("{row}: price of {date} is {age} days old at the plan date (threshold {limit} days)",
                       row=r["row"], date=r["date"], age=r["age_days"], limit=r["threshold_days"]))
    if r.get("includes_vat", False) is None:
        out.append(Msg("{row}: the source does not state its VAT basis; treated as VAT-inclusive at the rate in "
                       "force on the price's date", row=r["row"]))
    return out


def annotate(result: dict, *, sources: Sources, price_snapshot: dict, as_of: dt.date) -> None:
    """Dates, ages, stale and quote labels on every option; FX rate dates; plan-level warnings."""
    thresholds = {**DEFAULT_THRESHOLDS, **(price_snapshot.get("freshness_thresholds_days") or {})}
    used: dict[str, dict] = {}
    short = {i for ids in (result.get("shortlist") or {}).values() for i in ids}
    for opt in result.get("options", []):
        d = opt.get("detail") or {}
        records = []
        if opt["kind"].startswith("cloud_") or opt["kind"] == "hybrid":
            r = sources.cloud_meta.get((d.get("provider"), d.get("region"), d.get("instance_type")))
            if r:
                records.append(r)
        if opt["kind"] in ("onprem", "hybrid"):
            acc = opt["candidate"].rsplit(" x", 1)[0]
            r = sources.server_meta.get(acc)
            if r:
                records.append(r)
            for msg in sources.expired_quotes.get(acc, []):
                opt["warnings"].append(msg)
            if r and r["kind"] == QUOTE_TAG:
                opt["price_basis"] = QUOTE_TAG
                for row in opt.get("rows", []):
                    for line in row.get("lines") or []:
                        if line["key"].startswith("gpu_time") or line["key"] == "infrastructure.spares":
                            line["label"] = f"{line['label']} ({QUOTE_TAG} #{r['quote_id']})"
        aged = [_age(r, as_of, thresholds) for r in records]
        for r in aged:
            used[r["row"]] = r
            if r.get("inference"):  # every option priced on an inferred GPU says so, shortlisted or not
                opt["accelerator_inference"] = r["inference"]
                opt["warnings"].append(_inference_warning(r))
        # shortlisted options list their prices (date, age, flags) and their warnings; every priced row
        # is in freshness.prices (by "row", with its source) and every warning in freshness.warnings
        if opt["id"] in short:
            opt["prices_used"] = [_brief(r) for r in aged]
            for r in aged:
                opt["warnings"].extend(_record_warnings(r))
    fx_records = []
    rates_by_pair = {(r["base"], r["quote"]): r for r in price_snapshot.get("fx_rates", [])}
    for f in (result.get("inputs_used") or {}).get("fx", []):
        src = rates_by_pair.get((f["base"], f["quote"])) or rates_by_pair.get((f["quote"], f["base"]))
        if src is None:
            continue
        rec = _age({"kind": "exchange rate", "what": "fx", "row": f"{src['base']}/{src['quote']} {src['rate']}",
                    "date": src["date"], "stale": False, "stale_reason": "", "source": (src.get("source") or {}).get("title", "")},
                   as_of, thresholds)
        f["rate_date"], f["age_days"] = src["date"], rec["age_days"]
        fx_records.append(rec)
    warnings: list[Msg] = []
    for r in list(used.values()) + fx_records:
        warnings.extend(_record_warnings(r))
    if any(r["too_old"] and "RUB" in r["row"] for r in fx_records):
        warnings.append(Msg("refresh the rouble rates from the Bank of Russia: python manage.py import_cbr_rates "
                            "(online), or python manage.py import_cbr_rates --file XML_daily.xml (a saved copy of "
                            "https://www.cbr.ru/scripts/XML_daily.asp, offline)"))
    for msgs in sources.expired_quotes.values():
        warnings.extend(msgs)
    prices = [_listed(r) for r in list(used.values()) + fx_records]
    result["freshness"] = {"thresholds_days": thresholds, "as_of": as_of.isoformat(), "prices": prices,
                           "warnings": warnings}
    if sources.residency is not None:
        result["data_residency"] = sources.residency
    result["skipped"] = list(result.get("skipped", [])) + sources.skipped
