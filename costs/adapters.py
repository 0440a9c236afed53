"""Glue between stored JSON and the pure cost engine (no database, no clock).

``price_sizing_result`` turns a sizing result (planner.engine SizingResult.to_dict()), the
catalog price snapshot (docs/CATALOG.md), the rate-card snapshot (costs.selectors) and the
user's ``costs`` section into CostInputs, runs costs.engine and returns its JSON.
"""

from __future__ import annotations

import datetime as dt
import math
from dataclasses import replace
from decimal import Decimal

from catalog.domain.messages import Msg, figure
from costs import price_sources
from costs.engine.errors import CostValidationError, FieldError
from costs.engine.inputs import (
    HOURS_PER_MONTH,
    ApiPrice,
    CloudOffer,
    CostInputs,
    CpuInstance,
    DedicatedOffer,
    PriceBook,
    Rate,
    ServerPrice,
    Workload,
)
from costs.engine.money import FxRate, FxTable, Price, VatRate, VatTable
from costs.engine.options import parse_cost_options
from costs.engine.plan import cost_plan
from costs.engine.rates import RATE_SCHEMA, apply_overrides
from costs.rate_csv import rates_from_rows, read_rate_csv
from planner.engine.shapes import form_kind, server_shape, sold_only_in_cloud

TRAINING_KINDS = ("pretraining", "finetuning", "classic_training")
SERVING_KINDS = ("inference", "rag")
GB = Decimal("1e9")


def _d(value) -> Decimal | None:
    return None if value is None else Decimal(str(value))


def _date(value: str | None) -> dt.date | None:
    return dt.date.fromisoformat(value) if value else None


def _val(node) -> float | None:
    """A sizing quantity is {"value", "unit", "explain"}; unknown is None."""
    if isinstance(node, dict):
        node = node.get("value")
    return None if node is None or isinstance(node, bool) else float(node)


def _source(item: dict) -> str:
    s = item.get("source") or {}
    parts = [s.get("title") or "", s.get("url") or ""]
    return " | ".join(p for p in parts if p) or "catalog"


def _price(money: dict | None, item: dict, unit: str) -> Price | None:
    if not money:
        return None
    return Price(
        amount=Decimal(money["amount"]),
        currency=money["currency"],
        unit=unit,
        vat_included=bool(item.get("includes_vat")),
        source=_source(item),
        as_of=_date(item.get("valid_from")),
    )


# ---- snapshots -> price book and rates -------------------------------------------------------


def rates_from_snapshot(rate_snapshot: dict) -> dict[str, Rate]:
    out = {}
    for key, r in (rate_snapshot.get("rates") or {}).items():
        source = (
            r["source"]
            if not r.get("is_assumption") or r["source"].startswith("assumption")
            else f"assumption: {r['source']}"
        )
        out[key] = Rate(
            value=Decimal(r["value"]),
            unit=r.get("unit", ""),
            currency=r.get("currency") or None,
            source=source,
            valid_from=_date(r.get("valid_from")),
        )
    return out


def fx_from_snapshot(price_snapshot: dict) -> FxTable:
    return FxTable(
        rates=tuple(
            FxRate(
                base=r["base"],
                quote=r["quote"],
                rate=Decimal(r["rate"]),
                valid_from=_date(r["date"]),
                source=f"{_source(r)} ({r['date']})",
            )
            for r in price_snapshot.get("fx_rates", [])
        )
    )


def vat_from_snapshots(price_snapshot: dict, rate_snapshot: dict) -> VatTable:
    rows = rate_snapshot.get("vat_history") or price_snapshot.get("vat_rates", [])
    return VatTable(
        rates=tuple(
            VatRate(
                country=r["country"],
                rate=Decimal(r["rate_percent"]) / 100,
                valid_from=_date(r["valid_from"]),
                valid_to=_date(r.get("valid_to")),
                source=_source(r),
            )
            for r in rows
        )
    )


def _granularity_hours(offer: dict) -> Decimal:
    seconds = offer.get("billing_granularity_seconds")
    return Decimal(seconds or 1) / 3600  # unknown: per-second billing assumed (noted in the result)


def _flag_scope(reason: str) -> set[str]:
    """Which prices of a flagged offer the flag is about: only "spot" (the spot price is missing or
    equals on-demand), only "on_demand" (missing), or "all" (an anomalous row)."""
    parts = [p.strip().lower() for p in (reason or "").split(";") if p.strip()]
    scope = set()
    for part in parts or ["unknown"]:
        if part.startswith("spot price"):
            scope.add("spot")
        elif part.startswith("on-demand price missing"):
            scope.add("on_demand")
        else:
            scope.add("all")
    return scope


def cloud_offers_from_snapshot(price_snapshot: dict) -> tuple[CloudOffer, ...]:
    out = []
    for o in price_snapshot.get("cloud_offers", []):
        # GPU-only rows need a host VM we cannot price; a row flagged as anomalous at the source is
        # dropped; a flag about its spot price only drops the spot price
        if not o.get("accelerator") or o.get("price_basis") == "accelerator_only":
            continue
        scope = _flag_scope(o.get("flag_reason") or "") if o.get("flagged") else set()
        if "all" in scope:
            continue
        if "spot" in scope:
            o = {**o, "spot_per_hour": None}
        if "on_demand" in scope:
            o = {**o, "on_demand_per_hour": None}
        out.append(
            CloudOffer(
                provider=o["provider"],
                region=o["region"],
                instance_type=o["instance_type"],
                accelerator_id=o["accelerator"],
                gpus_per_instance=int(o["gpu_count"]),
                on_demand=_price(o.get("on_demand_per_hour"), o, "per instance-hour"),
                spot=_price(o.get("spot_per_hour"), o, "per instance-hour (spot)"),
                commit_1y=_price(o.get("commit_1y_per_hour"), o, "per instance-hour (1-year commitment)"),
                commit_3y=_price(o.get("commit_3y_per_hour"), o, "per instance-hour (3-year commitment)"),
                billing_granularity_hours=_granularity_hours(o),
            )
        )
    return tuple(out)


def dedicated_from_snapshot(price_snapshot: dict) -> tuple[DedicatedOffer, ...]:
    out = []
    for o in price_snapshot.get("dedicated_server_offers", []):
        monthly = _price(o.get("price_per_month"), o, "per server-month")
        if not o.get("accelerator") or monthly is None:
            continue
        out.append(
            DedicatedOffer(
                provider=o["provider"],
                name=f"{o['plan_name']} {o.get('location', '')}".strip(),
                accelerator_id=o["accelerator"],
                gpus_per_server=int(o["gpu_count"]),
                monthly=monthly,
                setup_fee=_price(o.get("setup_fee"), o, "per server, once"),
            )
        )
    return tuple(out)


_form_kind = form_kind  # planner.engine.shapes: SXM / PCIE / OAM / SUPERCHIP / TPU


# Servers that can be bought (REQUIREMENTS: no server nobody sells), from the catalog's sourced
# table catalog/data/server_shapes.csv (planner.engine.shapes): SXM GPUs come on HGX boards of 4 or
# 8 GPUs, OAM accelerators on 8-way boards, both fully populated; PCIe cards go into chassis of
# 1, 3, 4, 8 or 10 slots, populated with the GPUs needed. Superchips and TPUs are sold as systems
# (or only as cloud instances): priced from a catalog platform or the user's quote, never built.


def buyable_shape(*, form_kind: str, need: int, tp: int) -> tuple[int, int] | None:
    """(GPUs installed, GPU slots) of the smallest buyable server for ``need`` GPUs per server
    (whole tensor-parallel groups); None when the form factor is not sold as loose GPUs."""
    shape = server_shape(form_factor=form_kind, count=need, max_per_server=need, tensor_parallel=tp)
    return (shape.gpus_per_server, shape.slots) if shape.buyable else None


def _server_power_w(acc, installed: int) -> Decimal | None:
    if acc is None or not getattr(acc, "tdp_w", None):
        return None
    from planner.engine.infra import servers_and_power

    kw = _val(servers_and_power(acc=acc, count=installed, gpus_per_server=installed).get("server_power_kw"))
    return None if kw is None else Decimal(str(kw)) * 1000


def servers_from_snapshot(
    price_snapshot: dict,
    *,
    rates: dict[str, Rate],
    fx: FxTable,
    as_of: dt.date,
    gpus_per_server: dict[str, set[int]],
    tensor_parallel: dict[str, set[int]] | None = None,
) -> tuple[ServerPrice, ...]:
    """Purchase prices of GPU servers that exist: a priced catalog system that includes its GPUs
    (e.g. DGX H100), and each other buyable shape the layouts need (HGX 4/8, OAM 8, PCIe chassis of
    1-10 cards: catalog/data/server_shapes.csv) built from the GPU price plus
    the rate card's host cost per GPU slot (an assumption, named in the source). Power and rack
    space are those of the server bought (all its GPUs), not of the GPUs the layout uses."""
    accs = _accelerators(price_snapshot)
    prices = {}
    for hp in price_snapshot.get("hardware_prices", []):
        prices.setdefault((hp["item_kind"], hp["item"]), hp)
    out: dict[str, ServerPrice] = {}
    built: list[ServerPrice] = []
    for platform in price_snapshot.get("server_platforms", []):
        acc = platform.get("included_accelerator")
        hp = prices.get(("server_platform", platform["slug"]))
        if acc and hp:
            price = _price(hp["price"], hp, "per server")
            gps = int(platform["gpu_slots"])
            power = Decimal(str(platform["max_power_w"])) if platform.get("max_power_w") else _server_power_w(
                accs.get(acc), gps
            )
            out.setdefault(
                acc,
                ServerPrice(
                    accelerator_id=acc,
                    gpus_per_server=gps,
                    price=price,
                    name=f"{platform.get('vendor', '')} {platform.get('model', '')}".strip() or platform["slug"],
                    power_w=power,
                    rack_units=int(platform.get("rack_units") or 0),
                    slots=gps,
                ),
            )
    host = rates.get("server_host_capex_per_gpu_slot")
    tps = tensor_parallel or {}
    for (kind, acc), hp in prices.items():
        if kind != "accelerator" or host is None or sold_only_in_cloud(acc):
            continue  # an accelerator rented only as one cloud's instances is not built into a server
        spec = accs.get(acc)
        form = _form_kind(spec.form_factor) if spec is not None else ""
        gpu = _price(hp["price"], hp, "per GPU")
        host_in_gpu_currency = fx.convert(amount=host.value, base=host.currency, quote=gpu.currency, on=as_of)
        shapes = set()
        for gps in sorted(gpus_per_server.get(acc) or ()):
            for tp in sorted(tps.get(acc) or {1}):
                shape = buyable_shape(form_kind=form, need=gps, tp=tp)
                if shape:
                    shapes.add(shape)
        for installed, slots in sorted(shapes):
            if acc in out and out[acc].gpus_per_server == installed:
                continue  # the catalog's system of that shape (e.g. DGX H100 for 8) is priced as listed
            built.append(
                _gpu_server(acc, installed, slots, form, gpu, host, host_in_gpu_currency, _server_power_w(spec, installed))
            )
    return tuple(out.values()) + tuple(built)


def _gpu_server(
    acc: str,
    installed: int,
    slots: int,
    form: str,
    gpu: Price,
    host: Rate,
    host_in_gpu_currency: Decimal,
    power_w: Decimal | None,
) -> ServerPrice:
    """A server built from the GPU's price and the rate card's host cost per GPU slot."""
    amount = installed * gpu.amount + slots * host_in_gpu_currency
    name = f"HGX {slots}-GPU server" if form == "SXM" else (
        f"{slots}-way OAM server" if form == "OAM" else f"{slots}-slot PCIe server with {installed} GPU(s)"
    )
    return ServerPrice(
        accelerator_id=acc,
        gpus_per_server=installed,
        price=Price(
            amount=amount,
            currency=gpu.currency,
            unit="per server",
            vat_included=gpu.vat_included,
            as_of=gpu.as_of,
            source=f"{installed} x GPU {gpu.amount} {gpu.currency} ({gpu.source}) + {slots} x "
            f"server_host_capex_per_gpu_slot {host.value} {host.currency} ({host.source})",
            basis="derived",
        ),
        name=name,
        power_w=power_w,
        slots=slots,
    )


def _cpu_needs(rec: dict) -> tuple[int | None, Decimal | None]:
    """Physical cores and RAM (GiB, 2 decimals up) of the CPU-only sizing's server; None: not stated."""
    cores = (rec.get("cpu_cores") or {}).get("value")
    ram = (rec.get("host_ram_bytes") or {}).get("value")
    if cores is None or ram is None:
        return None, None
    ram_gib = (Decimal(str(ram)) / Decimal(2**30)).quantize(Decimal("0.01"), rounding="ROUND_CEILING")
    return int(math.ceil(float(cores))), ram_gib


def cpu_instances_from_snapshot(price_snapshot: dict) -> tuple[CpuInstance, ...]:
    out = []
    for c in price_snapshot.get("cpu_instances", []):  # older snapshots: none
        out.append(
            CpuInstance(
                provider=c["provider"],
                region=c["region"],
                instance_type=c["instance_type"],
                vcpus=int(c["vcpus"]),
                physical_cores=int(c["physical_cores"]),
                ram_gib=Decimal(str(c["ram_gib"])),
                on_demand=Price(
                    amount=Decimal(str(c["price_on_demand_per_hour"])),
                    currency=c["currency"],
                    unit="per instance-hour",
                    vat_included=bool(c.get("includes_vat")),
                    source=c.get("source", ""),
                    as_of=_date(c.get("valid_from")),
                ),
            )
        )
    return tuple(out)


def model_api_key(provider: str, model: str) -> str:
    """How a spec names a model API (serving.model_api): "provider/model"."""
    return f"{provider}/{model}"


def chosen_api_prices(api_prices: tuple[ApiPrice, ...], spec) -> tuple[ApiPrice, ...]:
    """The model APIs the spec names (serving.model_api), matched case-insensitively on
    "provider/model"; all of them when it names none. A name not priced in the catalog is a
    field error on spec.serving.model_api that lists what is priced."""
    named = tuple(getattr(getattr(spec, "serving", None), "model_api", ()) or ())
    if not named:
        return api_prices
    by_key = {model_api_key(a.provider, a.model).lower(): a for a in api_prices}
    unknown = [n for n in named if n.lower() not in by_key]
    if unknown:
        priced = ", ".join(sorted(model_api_key(a.provider, a.model) for a in api_prices)) or "none"
        raise CostValidationError(
            [FieldError(path="spec.serving.model_api",
                        message=f"model API {', '.join(unknown)} not priced in the catalog; priced: {priced}")]
        )
    return tuple(dict.fromkeys(by_key[n.lower()] for n in named))


def api_prices_from_snapshot(rate_snapshot: dict) -> tuple[ApiPrice, ...]:
    out = []
    for a in rate_snapshot.get("api_prices", []):
        common = dict(
            currency=a["currency"],
            vat_included=bool(a.get("includes_vat")),
            source=a["source"],
            as_of=_date(a.get("valid_from")),
        )
        out.append(
            ApiPrice(
                provider=a["provider"],
                model=a["model"],
                input_per_1m_tokens=Price(
                    amount=Decimal(a["input_per_1m_tokens"]), unit="per 1M input tokens", **common
                ),
                output_per_1m_tokens=Price(
                    amount=Decimal(a["output_per_1m_tokens"]), unit="per 1M output tokens", **common
                ),
                open_weights_model=a.get("open_weights_model") or None,  # older snapshots: unknown
            )
        )
    return tuple(out)


def power_tariff_from_snapshot(price_snapshot: dict, *, country: str) -> tuple[Price | None, str | None]:
    """A business tariff of the country from the catalog; a residential one is not what a data
    centre pays, so then the rate card's tariff is used and the result says why."""
    tariffs = [t for t in price_snapshot.get("electricity_tariffs", []) if t.get("country") == country]
    business = [t for t in tariffs if "residential" not in (t.get("consumer_class") or "").lower()]
    if not business:
        if tariffs:
            return None, (
                Msg("the catalog's {country} electricity tariffs are residential only; the rate card's "
                    "electricity tariff is used for data-centre power", country=country)
            )
        return None, None
    t = business[0]
    price = _price(t["price_per_kwh"], t, "per kWh")
    where = f"{t.get('region', '')} {t.get('consumer_class', '')}".strip()
    return Price(
        amount=price.amount,
        currency=price.currency,
        unit=price.unit,
        vat_included=price.vat_included,
        as_of=price.as_of,
        source=f"{price.source} [{where}]",
    ), None


STORAGE_PROVIDERS = {"aws": "AWS", "gcp": "GCP", "azure": "Azure", "lambda": "Lambda", "runpod": "RunPod"}
NOT_STANDARD = ("express", "one zone", "provisioned", "cold", "archive", "local ssd", "ephemeral", "io2")


def _standard_rank(t: dict) -> int:
    """0 for a provider's standard tier (e.g. S3 Standard, pd-ssd, EBS gp3), 1 for special tiers
    (S3 Express One Zone, io2, cold HDD, host-attached local SSD): defaults use the standard one."""
    name = (t.get("name") or "").lower()
    return 1 if any(x in name for x in NOT_STANDARD) else 0


def storage_rates_from_snapshot(price_snapshot: dict) -> dict[str, Rate]:
    """Catalog storage prices replace the rate card's assumptions for the same tier: per media the
    standard tier (not an express or provisioned-IOPS one), scoped per provider (``@AWS``) where
    the tier's id names one, the cheapest standard tier as the default for other options."""
    out: dict[str, Rate] = {}
    tiers = sorted(price_snapshot.get("storage_tiers", []), key=_standard_rank)
    for t in tiers:
        media = t.get("media")
        svc, buy = t.get("service_price_per_gb_month"), t.get("purchase_price_per_tb")
        src = f"{_source(t)} ({t.get('name', '')})"
        provider = STORAGE_PROVIDERS.get(str(t.get("id") or "").split("-", 1)[0])
        if svc and _standard_rank(t) == 0:
            rate = Rate(
                value=Decimal(svc["amount"]),
                unit="per GB-month",
                currency=svc["currency"],
                source=src,
                valid_from=_date(t.get("valid_from")),
            )
            if provider and f"cloud_storage_per_gb_month.{media}@{provider}" not in out:
                out[f"cloud_storage_per_gb_month.{media}@{provider}"] = rate
            if provider and f"cloud_storage_per_gb_month.{media}" not in out:
                out[f"cloud_storage_per_gb_month.{media}"] = rate
        if buy and f"onprem_storage_capex_per_gb.{media}" not in out:
            out[f"onprem_storage_capex_per_gb.{media}"] = Rate(
                value=Decimal(buy["amount"]) / 1000,
                unit="per GB",
                currency=buy["currency"],
                source=src,
                valid_from=_date(t.get("valid_from")),
            )
    return out


# ---- sizing result -> workloads --------------------------------------------------------------


def _accelerators(price_snapshot: dict) -> dict:
    from planner.engine.hardware import AcceleratorSpec

    known = set(AcceleratorSpec.__dataclass_fields__)
    return {
        a["id"]: AcceleratorSpec(**{k: v for k, v in a.items() if k in known})
        for a in price_snapshot.get("accelerators", [])
    }


def _gpus_per_server(acc) -> int:
    from planner.engine.hardware import gpus_per_server

    return int(gpus_per_server(acc))


def _storage_gb(rec: dict, servers: int) -> dict[str, Decimal]:
    st = rec.get("storage") or {}

    def gb(*keys) -> Decimal:
        return sum((Decimal(str(_val(st.get(k)) or 0)) for k in keys), Decimal(0)) / GB

    out = {
        # weights and caches on the GPU servers' NVMe (an API option hosts no weights)
        "nvme": (Decimal(str(_val(st.get("nvme_per_server_bytes")) or 0)) * servers) / GB,
        "ssd": gb("checkpoints_bytes", "vector_index_bytes"),
        "object": gb("datasets_bytes", "model_registry_bytes", "logs_bytes"),
    }
    if "nvme_bytes" in rec:  # CPU-only recommendation
        out["nvme"] += Decimal(str(_val(rec["nvme_bytes"]) or 0)) / GB
    return {k: v.quantize(Decimal("0.001")) for k, v in out.items() if v > 0}


def _serving_volume(spec) -> tuple[Decimal | None, Decimal | None, Decimal | None]:
    """Tokens in/out per month and the fleet's share of hours from the workload's serving section.

    The tokens follow the volume (serving.requests_per_day, else the peak x the average-to-peak
    ratio), not the peak that sizes the fleet: a peak held around the clock would overstate
    token-priced options and egress (docs/COSTS.md "Peak and volume")."""
    s = getattr(spec, "serving", None) if spec is not None else None
    if s is None:
        return None, None, None
    # a month of the cost engine: HOURS_PER_MONTH / 24 = 30.4166... days (multiplied first: exact where it can be)
    requests = _requests_per_day(s) * HOURS_PER_MONTH / 24
    return requests * s.input_tokens, requests * s.output_tokens, Decimal(str(s.hours_per_day)) / 24


def _requests_per_day(s) -> Decimal:
    """serving.requests_per_day, else peak x 3600 x hours_per_day x AVERAGE_TO_PEAK_RATIO (in Decimal)."""
    from planner.engine.spec import AVERAGE_TO_PEAK_RATIO

    if s.requests_per_day is not None:
        return Decimal(str(s.requests_per_day))
    peak = Decimal(str(s.requests_per_second)) * 3600 * Decimal(str(s.hours_per_day))
    return peak * Decimal(str(AVERAGE_TO_PEAK_RATIO))


def _load_share(s) -> Decimal | None:
    """Average load over the serving hours / the peak: the volume against the peak held all day."""
    peak = Decimal(str(s.requests_per_second)) * 3600 * Decimal(str(s.hours_per_day))
    if peak <= 0:
        return None
    return min(Decimal(1), _requests_per_day(s) / peak)


def _volume_note(spec) -> Msg | None:
    """The plan states the volume it prices and, without serving.requests_per_day, the assumption."""
    from planner.engine.spec import AVERAGE_TO_PEAK_RATIO

    s = getattr(spec, "serving", None) if spec is not None else None
    if s is None:
        return None
    if s.requests_per_day is not None:
        return Msg(
            "volume: {volume:,.15g} requests a day (serving.requests_per_day) prices model-API tokens, egress and the "
            "useful share; the peak of {rps} requests/s sizes capacity",
            volume=figure(Decimal(str(s.requests_per_day))), rps=figure(Decimal(str(s.requests_per_second))),
        )
    return Msg(
        "volume assumed: {volume:,.15g} requests a day = peak {rps} requests/s x 3600 x {hours} h x {ratio} "
        "(average-to-peak ratio of a business-hours service); give serving.requests_per_day to price "
        "model-API tokens, egress and the useful share on the real volume",
        volume=figure(_requests_per_day(s).quantize(Decimal(1))),
        rps=figure(Decimal(str(s.requests_per_second))), hours=figure(Decimal(str(s.hours_per_day))),
        ratio=figure(Decimal(str(AVERAGE_TO_PEAK_RATIO))),
    )


def _rack_units(price_snapshot: dict, *, acc_id: str, acc, gps: int) -> int:
    """Height of a catalog server platform for this accelerator (0: unknown)."""
    kind = _form_kind(acc.form_factor) if acc is not None else ""
    for p in price_snapshot.get("server_platforms", []):
        fits = p.get("included_accelerator") == acc_id or (
            not p.get("included_accelerator")
            and p.get("gpu_form_factor_kind") == kind
            and p.get("gpu_slots") == gps
        )
        if fits and p.get("rack_units"):
            return int(p["rack_units"])
    return 0


MAX_CONFIGURATIONS = 16  # the recommendation + one per fitting accelerator, bounded


def configurations_to_price(sizing: dict) -> list[dict]:
    """The recommendation's configuration first, then ``candidates.best_per_accelerator`` (one
    per fitting accelerator, chosen by the recommendation rule). Not ``ranked``: for training it
    favours the biggest, fastest clusters, which is not what a budget compares."""
    rec = sizing.get("recommendation") or {}
    cands = sizing.get("candidates") or {}
    best = cands.get("best_per_accelerator")
    best = [b for b in best if isinstance(b, dict)] if isinstance(best, list) else []
    out = []
    if rec.get("accelerator_id") and rec.get("count"):
        # the matching row carries gpu_hours (training) and the accelerator's name
        same = [
            r
            for r in best + list(cands.get("ranked") or [])
            if r.get("accelerator_id") == rec["accelerator_id"] and r.get("count") == rec["count"]
        ]
        row = dict(same[0]) if same else {"accelerator_id": rec["accelerator_id"], "count": rec["count"]}
        row.setdefault("accelerator", rec.get("accelerator"))
        row["layout"] = row.get("layout") or rec.get("layout") or (sizing.get("memory") or {}).get("layout")
        if row.get("gpu_hours") is None:
            row["gpu_hours"] = _val((sizing.get("compute") or {}).get("gpu_hours"))
        row["fits"] = True
        out.append(row)
    out += best
    if not out:  # an older sizing result without best_per_accelerator
        out = [r for r in cands.get("ranked") or [] if r.get("fits", True)][:MAX_CONFIGURATIONS]
    return out[:MAX_CONFIGURATIONS]


def _user_egress_gb(tokens_out: Decimal | None, rates: dict[str, Rate] | None) -> Decimal:
    """User traffic from the serving load: generated tokens x bytes sent per token (streamed)."""
    if not tokens_out or not rates or "egress_bytes_per_output_token" not in rates:
        return Decimal(0)
    return (tokens_out * rates["egress_bytes_per_output_token"].value / GB).quantize(Decimal("0.001"))


def workloads_from_sizing(
    sizing: dict, *, price_snapshot: dict, spec=None, rates: dict[str, Rate] | None = None, **_ignored
) -> tuple[list[Workload], list[str]]:
    notes: list[str] = []
    kind = sizing.get("kind", "")
    rec = sizing.get("recommendation") or {}
    tokens_in, tokens_out, serving_share = _serving_volume(spec)
    volume_note = _volume_note(spec)
    if volume_note is not None:
        notes.append(volume_note)
    # serving loses no training progress on an interruption, only the restart time
    ckpt_hours = (
        Decimal(str(getattr(getattr(spec, "training", None), "checkpoint_every_hours", 2.0) or 2.0))
        if kind in TRAINING_KINDS
        else Decimal(0)
    )
    is_training = kind in TRAINING_KINDS
    egress = _user_egress_gb(tokens_out, rates)
    sizing_rec = (rec.get("accelerator_id"), int(rec.get("count") or 0))
    if not sizing.get("gpu_required", True):
        notes.append(
            Msg("no GPU needed: the plan prices the model API's tokens and the CPU server the agent runs on")
        )
        cores, ram_gib = _cpu_needs(rec)
        return [
            Workload(
                candidate_id="no-gpu",
                accelerator_id=None,
                gpu_count=0,
                tokens_in_per_month=tokens_in,
                tokens_out_per_month=tokens_out,
                storage_gb=_storage_gb(rec, 1),
                egress_gb_per_month=egress,
                cpu_cores_needed=cores,
                host_ram_gib_needed=ram_gib,
            )
        ], notes
    accs = _accelerators(price_snapshot)
    latency_target = bool(
        getattr(getattr(spec, "serving", None), "ttft_p95_ms", None)
        or getattr(getattr(spec, "serving", None), "tpot_p95_ms", None)
    )
    seen, out = set(), []
    for c in configurations_to_price(sizing):
        acc_id, count = c.get("accelerator_id"), int(c.get("count") or 0)
        if not acc_id or count < 1 or not c.get("fits", True) or (acc_id, count) in seen:
            continue
        seen.add((acc_id, count))
        acc = accs.get(acc_id)
        layout = c.get("layout") or {}
        tp = max(1, int(layout.get("tensor_parallel") or 1))
        pp = max(1, int(layout.get("pipeline_parallel") or 1))
        per_server = _gpus_per_server(acc) if acc is not None else 8
        # the shape the sizing's infrastructure block shows (planner.engine.shapes): whole
        # tensor-parallel groups per server, SXM/OAM rounded up to a sold board, PCIe cards as needed
        shape = server_shape(form_factor=acc.form_factor if acc is not None else "", count=count,
                             max_per_server=per_server, tensor_parallel=tp)
        if shape.buyable:
            gps, servers = shape.gpus_per_server, shape.servers
        else:
            gps = min(count, per_server)
            if gps > tp and gps % tp:
                gps -= gps % tp  # a server smaller than a TP group stays so: on-prem is then skipped
            servers = math.ceil(count / gps)
        power_w = None
        if acc is not None:
            from planner.engine.infra import servers_and_power

            kw = _val(servers_and_power(acc=acc, count=count, gpus_per_server=per_server, tensor_parallel=tp)
                      .get("server_power_kw"))
            power_w = None if kw is None else Decimal(str(kw)) * 1000
        site_limit = _site_limit(getattr(spec, "hardware", None), servers=servers, power_w=power_w)
        gpu_hours = _d(c.get("gpu_hours"))
        utilisation = None
        share = None
        if kind in SERVING_KINDS and serving_share is not None:
            utilisation = serving_share  # the serving fleet runs the hours a day it serves
            share = _load_share(spec.serving)  # ... sized on the peak, filled by the volume
        out.append(
            Workload(
                candidate_id=f"{acc_id} x{count}",
                accelerator_id=acc_id,
                accelerator_name=str(c.get("accelerator") or getattr(acc, "model", "") or acc_id),
                tensor_parallel=tp,
                pipeline_parallel=pp,
                latency_target=latency_target and kind in SERVING_KINDS,
                gpu_count=count,
                gpus_per_server=gps,
                server_count=servers,
                server_power_w=power_w,
                server_rack_units=_rack_units(price_snapshot, acc_id=acc_id, acc=acc, gps=gps),
                is_training=is_training,
                training_gpu_hours_per_run=gpu_hours if is_training else None,
                tokens_in_per_month=tokens_in,
                tokens_out_per_month=tokens_out,
                storage_gb=_storage_gb(rec, servers),
                checkpoint_interval_hours=ckpt_hours,
                utilisation=utilisation,
                load_share=share,
                egress_gb_per_month=egress,
                meets_targets=c.get("meets_target") if isinstance(c.get("meets_target"), bool) else None,
                sizing_recommended=(acc_id, count) == sizing_rec,
                buyable_gpus_per_server=(shape.gpus_per_server,) if shape.buyable else (),
                sold_only_in_cloud=sold_only_in_cloud(acc_id),
                site_limit=site_limit,
            )
        )
    if not out:
        notes.append("the sizing found no fitting GPU configuration: nothing to price")
    return out, notes


def _site_limit(hardware, *, servers: int, power_w: Decimal | None) -> str:
    """Why the site (spec.hardware.power_budget_kw, racks) cannot hold these servers if bought; ""
    when it can or sets no limit. Racks as the sizing counts them (RACK_BUDGET_KW air-cooled)."""
    from planner.engine.infra import RACK_BUDGET_KW

    budget_kw = getattr(hardware, "power_budget_kw", None)
    racks = getattr(hardware, "racks", None)
    if power_w is None or (budget_kw is None and racks is None):
        return ""
    need_kw = float(power_w) * servers / 1000
    if budget_kw is not None and need_kw > budget_kw:
        return Msg("needs {need:.1f} kW of IT power at full load; the site's budget is {budget:g} kW",
                   need=need_kw, budget=budget_kw)
    per_rack = int(RACK_BUDGET_KW * 1000 // float(power_w))
    need_racks = math.ceil(servers / per_rack) if per_rack else None
    if racks is not None and (need_racks is None or need_racks > racks):
        return Msg("needs {need} racks of {rack_kw:g} kW; the site has {racks}", need=need_racks or servers,
                   rack_kw=RACK_BUDGET_KW, racks=racks) if need_racks else Msg(
            "one server draws more than a {rack_kw:g} kW air-cooled rack gives", rack_kw=RACK_BUDGET_KW)
    return ""


# ---- the entry point -------------------------------------------------------------------------


def _is_model_preset(model_id: str) -> bool:
    from planner.engine.presets import get_preset

    return get_preset(model_id) is not None


def parse_options(data, **kw):
    """costs.engine.options.parse_cost_options with the sizing engine's model presets as the known
    open-weights models: what every caller outside the pure cost engine uses."""
    return parse_cost_options(data, is_model_preset=_is_model_preset, **kw)


def build_cost_inputs(
    *, sizing: dict, price_snapshot: dict, rate_snapshot: dict, options: dict | None, spec=None
) -> tuple[CostInputs, list[str]]:
    inputs, notes, _sources = build_cost_inputs_with_sources(
        sizing=sizing, price_snapshot=price_snapshot, rate_snapshot=rate_snapshot, options=options, spec=spec
    )
    return inputs, notes


def build_cost_inputs_with_sources(
    *, sizing: dict, price_snapshot: dict, rate_snapshot: dict, options: dict | None, spec=None
) -> tuple[CostInputs, list[str], price_sources.Sources]:
    as_of = _date(price_snapshot.get("as_of")) or _date(rate_snapshot.get("as_of"))
    opts = parse_options(options or {}, default_as_of=as_of)
    if as_of is not None and opts.as_of != as_of:
        # one plan date: the prices were taken on as_of; FX and VAT of another day would not match them
        raise CostValidationError(
            [
                FieldError(
                    path="costs.as_of",
                    message=f"{opts.as_of.isoformat()} differs from the plan's price date {as_of.isoformat()}; "
                    "set the plan date (--as-of) instead",
                )
            ]
        )
    rates = rates_from_snapshot(rate_snapshot)
    missing = [k for k in RATE_SCHEMA if k not in rates]
    if missing:
        # an older stored snapshot, or a database without the rate card: the shipped defaults fill in
        shipped = rates_from_rows(read_rate_csv(), as_of=opts.as_of)
        rates.update({k: shipped[k] for k in missing if k in shipped})
        notes_pre = [
            f"{len(missing)} rate(s) not in the stored rate card, shipped defaults used: "
            f"{', '.join(sorted(missing)[:8])}{' ...' if len(missing) > 8 else ''}"
        ]
    else:
        notes_pre = []
    rates.update(storage_rates_from_snapshot(price_snapshot))
    fx = fx_from_snapshot(price_snapshot)
    effective = apply_overrides(rates, opts.overrides, path="costs.overrides")
    if "training_runs_per_month" in opts.overrides and opts.runs is None and opts.runs_per_month is None:
        # the old way to say "a recurring job" (a rate-card override) still works
        opts = replace(opts, runs_per_month=opts.overrides["training_runs_per_month"] or None)
    workloads, notes = workloads_from_sizing(sizing, price_snapshot=price_snapshot, spec=spec, rates=effective)
    notes = notes_pre + notes
    gps: dict[str, set[int]] = {}
    tps: dict[str, set[int]] = {}
    for w in workloads:
        if w.accelerator_id:
            gps.setdefault(w.accelerator_id, set()).add(w.gpus_per_server)
            tps.setdefault(w.accelerator_id, set()).add(w.tensor_parallel)
    tariff, tariff_note = power_tariff_from_snapshot(price_snapshot, country=opts.country)
    if tariff_note:
        notes.append(tariff_note)
    composed, composed_meta = price_sources.composed_cloud_offers(
        price_snapshot, training=sizing.get("kind", "") in TRAINING_KINDS
    )
    prices = PriceBook(
        cloud_offers=cloud_offers_from_snapshot(price_snapshot) + tuple(composed),
        dedicated_offers=dedicated_from_snapshot(price_snapshot),
        servers=servers_from_snapshot(
            price_snapshot, rates=effective, fx=fx, as_of=opts.as_of, gpus_per_server=gps, tensor_parallel=tps
        ),
        api_prices=chosen_api_prices(api_prices_from_snapshot(rate_snapshot), spec),
        cpu_instances=cpu_instances_from_snapshot(price_snapshot),
        power_tariff_per_kwh=tariff,
        fx=fx,
        vat=vat_from_snapshots(price_snapshot, rate_snapshot),
    )
    if any(not o.get("billing_granularity_seconds") for o in price_snapshot.get("cloud_offers", [])):
        notes.append(Msg("cloud billing granularity unknown for some offers: per-second billing assumed for them"))
    if not workloads:
        workloads = [Workload(candidate_id="none", accelerator_id=None, gpu_count=0)]
    sources = _sources(price_snapshot, prices=prices, opts=opts, rates=effective, composed_meta=composed_meta,
                       gpu_needed=any(w.accelerator_id for w in workloads))
    notes += sources.notes
    inputs = CostInputs(workloads=tuple(workloads), prices=sources.book, rates=rates, options=sources.options,
                        model_preset=(sizing.get("model") or {}).get("preset_id"),
                        model_name=(sizing.get("model") or {}).get("name"))
    return inputs, notes, sources


def _sources(price_snapshot: dict, *, prices: PriceBook, opts, rates, composed_meta: dict,
             gpu_needed: bool) -> price_sources.Sources:
    """Quotes in preference to list prices, residency, 'not priced' providers (costs.price_sources);
    a plan that needs no GPU is not told to ask GPU clouds for quotes."""
    quoted, quote_meta, expired, quote_notes = price_sources.quote_servers(
        price_snapshot, options=opts, host_rate=rates.get("server_host_capex_per_gpu_slot"), fx=prices.fx,
    )
    # quotes go before the user's typed server prices, which therefore still win (the last one is used)
    opts = replace(opts, user_servers=tuple(quoted) + opts.user_servers)
    sources = price_sources.Sources(
        book=prices, options=opts, notes=list(quote_notes), expired_quotes=expired,
        cloud_meta={**price_sources.catalog_cloud_meta(price_snapshot), **composed_meta},
        server_meta={**price_sources.catalog_server_meta(price_snapshot), **quote_meta},
    )
    if opts.data_residency:
        sources.book, sources.residency = price_sources.apply_residency(
            prices, allowed=opts.data_residency, price_snapshot=price_snapshot
        )
        sources.skipped += sources.residency["left_out"]
    if opts.providers:
        sources.book, left_out = price_sources.apply_providers(sources.book, allowed=opts.providers)
        sources.skipped += left_out
    if gpu_needed:
        sources.skipped += price_sources.not_priced_providers(price_snapshot, allowed=opts.data_residency,
                                                              providers=opts.providers)
        sources.skipped += price_sources.history_skipped(price_snapshot, allowed=opts.data_residency)
    return sources


def price_sizing_result(
    *, sizing: dict, price_snapshot: dict, rate_snapshot: dict, options: dict | None, spec: dict | None = None
) -> dict:
    """Cost JSON for a stored sizing result. ``spec`` (the WorkloadSpec JSON) gives the token volume
    and serving hours; without it the API option and derived utilisation are left out.

    Raises costs.engine.errors.CostValidationError (a ValueError) with field paths on bad input.
    """
    parsed = None
    if spec:
        from planner.engine.spec import parse_workload_spec

        parsed = parse_workload_spec(spec)
    inputs, notes, sources = build_cost_inputs_with_sources(
        sizing=sizing,
        price_snapshot=price_snapshot,
        rate_snapshot=rate_snapshot,
        options=options,
        spec=parsed,
    )
    result = cost_plan(inputs=inputs).to_dict()
    result["notes"] = notes + result["notes"]
    price_sources.annotate(result, sources=sources, price_snapshot=price_snapshot, as_of=inputs.options.as_of)
    return _structured(result)


def _structured(result: dict) -> dict:
    """The texts annotate() added (Msg) get their translation siblings like the engine's own, where the
    engine stores them (catalog.domain.messages.with_structured; idempotent on the engine's siblings)."""
    try:
        from catalog.domain.messages import with_structured
    except ImportError:  # an engine without structured storage: the English texts stand
        return result
    return with_structured(_without_siblings(result))


def _without_siblings(tree):
    """The tree without `<key>_i18n` siblings (rebuilt from the Msg texts, which the result still holds)."""
    if isinstance(tree, dict):
        return {k: _without_siblings(v) for k, v in tree.items()
                if not (k.endswith("_i18n") and k[: -len("_i18n")] in tree)}
    if isinstance(tree, list):
        return [_without_siblings(v) for v in tree]
    return tree
