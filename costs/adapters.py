"""Glue between stored JSON and the pure cost engine (no database, no clock).

``price_sizing_result`` turns a sizing result (planner.engine SizingResult.to_dict()), the
catalog price snapshot (docs/CATALOG.md), the rate-card snapshot (costs.selectors) and the
user's ``costs`` section into CostInputs, runs costs.engine and returns its JSON.
"""

from __future__ import annotations

import datetime as dt
import math
from decimal import Decimal

from costs.engine.inputs import (
    ApiPrice,
    CloudOffer,
    CostInputs,
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
from planner.engine.messages import Msg

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


def cloud_offers_from_snapshot(price_snapshot: dict) -> tuple[CloudOffer, ...]:
    out = []
    for o in price_snapshot.get("cloud_offers", []):
        # GPU-only rows need a host VM we cannot price; flagged rows are anomalous at the source
        if not o.get("accelerator") or o.get("flagged") or o.get("price_basis") == "accelerator_only":
            continue
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


def _form_kind(form_factor: str) -> str:
    f = (form_factor or "").upper()
    for kind in ("SXM", "PCIE", "OAM", "SUPERCHIP", "TPU"):
        if f.startswith(kind) or kind in f:
            return kind
    return f


def servers_from_snapshot(
    price_snapshot: dict,
    *,
    rates: dict[str, Rate],
    fx: FxTable,
    as_of: dt.date,
    gpus_per_server: dict[str, set[int]],
) -> tuple[ServerPrice, ...]:
    """A purchase price per GPU server: a priced system that includes its GPUs (e.g. DGX), else
    GPU price x slots + the rate card's host cost per slot (an assumption, named in the source)."""
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
            out.setdefault(
                acc, ServerPrice(accelerator_id=acc, gpus_per_server=int(platform["gpu_slots"]), price=price)
            )
    host = rates.get("server_host_capex_per_gpu_slot")
    for (kind, acc), hp in prices.items():
        if kind != "accelerator" or acc in out or host is None:
            continue
        gpu = _price(hp["price"], hp, "per GPU")
        host_in_gpu_currency = fx.convert(amount=host.value, base=host.currency, quote=gpu.currency, on=as_of)
        # one server size per size the candidates were laid out on
        for gps in sorted(gpus_per_server.get(acc) or ()):
            built.append(_gpu_server(acc, gps, gpu, host, host_in_gpu_currency))
    return tuple(out.values()) + tuple(built)


def _gpu_server(acc: str, gps: int, gpu: Price, host: Rate, host_in_gpu_currency: Decimal) -> ServerPrice:
    """A server built from the GPU's price and the rate card's host cost per GPU slot."""
    amount = gps * (gpu.amount + host_in_gpu_currency)
    return ServerPrice(
        accelerator_id=acc,
        gpus_per_server=gps,
        price=Price(
            amount=amount,
            currency=gpu.currency,
            unit="per server",
            vat_included=gpu.vat_included,
            as_of=gpu.as_of,
            source=f"{gps} x GPU {gpu.amount} {gpu.currency} ({gpu.source}) + {gps} x server_host_capex_per_gpu_slot "
            f"{host.value} {host.currency} ({host.source})",
        ),
    )


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


def storage_rates_from_snapshot(price_snapshot: dict) -> dict[str, Rate]:
    """Catalog storage prices replace the rate card's assumptions for the same tier (first row per media
    in catalog order)."""
    out: dict[str, Rate] = {}
    for t in price_snapshot.get("storage_tiers", []):
        media = t.get("media")
        svc, buy = t.get("service_price_per_gb_month"), t.get("purchase_price_per_tb")
        src = f"{_source(t)} ({t.get('name', '')})"
        if svc and f"cloud_storage_per_gb_month.{media}" not in out:
            out[f"cloud_storage_per_gb_month.{media}"] = Rate(
                value=Decimal(svc["amount"]),
                unit="per GB-month",
                currency=svc["currency"],
                source=src,
                valid_from=_date(t.get("valid_from")),
            )
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
    from planner.engine.search import gpus_per_server

    return int(gpus_per_server(acc))


def _storage_gb(rec: dict, servers: int) -> dict[str, Decimal]:
    st = rec.get("storage") or {}

    def gb(*keys) -> Decimal:
        return sum((Decimal(str(_val(st.get(k)) or 0)) for k in keys), Decimal(0)) / GB

    out = {
        "nvme": (Decimal(str(_val(st.get("nvme_per_server_bytes")) or 0)) * servers) / GB
        + gb("vector_index_bytes"),
        "ssd": gb("checkpoints_bytes"),
        "object": gb("datasets_bytes", "model_registry_bytes", "logs_bytes"),
    }
    if "nvme_bytes" in rec:  # CPU-only recommendation
        out["nvme"] += Decimal(str(_val(rec["nvme_bytes"]) or 0)) / GB
    return {k: v.quantize(Decimal("0.001")) for k, v in out.items() if v > 0}


def _serving_volume(spec) -> tuple[Decimal | None, Decimal | None, Decimal | None]:
    """Tokens in/out per month and the fleet's share of hours from the workload's serving section."""
    s = getattr(spec, "serving", None) if spec is not None else None
    if s is None:
        return None, None, None
    hours = Decimal("730") * Decimal(str(s.hours_per_day)) / 24
    requests = Decimal(str(s.requests_per_second)) * 3600 * hours
    return requests * s.input_tokens, requests * s.output_tokens, Decimal(str(s.hours_per_day)) / 24


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


def workloads_from_sizing(
    sizing: dict, *, price_snapshot: dict, spec=None, training_runs_per_month: Decimal = Decimal(1)
) -> tuple[list[Workload], list[str]]:
    notes: list[str] = []
    kind = sizing.get("kind", "")
    rec = sizing.get("recommendation") or {}
    tokens_in, tokens_out, serving_share = _serving_volume(spec)
    # serving loses no training progress on an interruption, only the restart time
    ckpt_hours = (
        Decimal(str(getattr(getattr(spec, "training", None), "checkpoint_every_hours", 2.0) or 2.0))
        if kind in TRAINING_KINDS
        else Decimal(0)
    )
    is_training = kind in TRAINING_KINDS
    if not sizing.get("gpu_required", True):
        notes.append(
            Msg("no GPU needed: only the external model API option applies; the CPU server is not priced")
        )
        return [
            Workload(
                candidate_id="no-gpu",
                accelerator_id=None,
                gpu_count=0,
                tokens_in_per_month=tokens_in,
                tokens_out_per_month=tokens_out,
                storage_gb=_storage_gb(rec, 1),
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
        # whole tensor-parallel groups per server (the server must hold one; see holds_tp_group)
        gps = min(count, per_server)
        if gps > tp and gps % tp:
            gps -= gps % tp  # a server smaller than a TP group stays so: on-prem is then skipped
        servers = math.ceil(count / gps)
        power_w = None
        if acc is not None:
            from planner.engine.infra import servers_and_power

            kw = _val(servers_and_power(acc=acc, count=count, gpus_per_server=gps).get("server_power_kw"))
            power_w = None if kw is None else Decimal(str(kw)) * 1000
        gpu_hours = _d(c.get("gpu_hours"))
        utilisation = None
        if kind in SERVING_KINDS and serving_share is not None:
            utilisation = serving_share  # the serving fleet runs the hours a day it serves
        elif is_training and gpu_hours:
            # the fleet is busy for the runs it does; more runs than fit in a month cap at 1
            needed = training_runs_per_month * gpu_hours / (count * Decimal(730))
            utilisation = min(Decimal(1), needed).quantize(Decimal("0.0001"))
            if needed > 1 and (acc_id, "cap") not in seen:
                seen.add((acc_id, "cap"))
                notes.append(
                    f"{acc_id} x{count}: {training_runs_per_month} run(s) a month need more than the "
                    "month's hours; utilisation capped at 1"
                )
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
            )
        )
    if not out:
        notes.append("the sizing found no fitting GPU configuration: nothing to price")
    return out, notes


# ---- the entry point -------------------------------------------------------------------------


def build_cost_inputs(
    *, sizing: dict, price_snapshot: dict, rate_snapshot: dict, options: dict | None, spec=None
) -> tuple[CostInputs, list[str]]:
    as_of = _date(price_snapshot.get("as_of")) or _date(rate_snapshot.get("as_of"))
    opts = parse_cost_options(options or {}, default_as_of=as_of)
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
    runs = (
        effective["training_runs_per_month"].value if "training_runs_per_month" in effective else Decimal(1)
    )
    workloads, notes = workloads_from_sizing(
        sizing, price_snapshot=price_snapshot, spec=spec, training_runs_per_month=runs
    )
    notes = notes_pre + notes
    gps: dict[str, set[int]] = {}
    for w in workloads:
        if w.accelerator_id:
            gps.setdefault(w.accelerator_id, set()).add(w.gpus_per_server)
    tariff, tariff_note = power_tariff_from_snapshot(price_snapshot, country=opts.country)
    if tariff_note:
        notes.append(tariff_note)
    prices = PriceBook(
        cloud_offers=cloud_offers_from_snapshot(price_snapshot),
        dedicated_offers=dedicated_from_snapshot(price_snapshot),
        servers=servers_from_snapshot(
            price_snapshot, rates=effective, fx=fx, as_of=opts.as_of, gpus_per_server=gps
        ),
        api_prices=api_prices_from_snapshot(rate_snapshot),
        power_tariff_per_kwh=tariff,
        fx=fx,
        vat=vat_from_snapshots(price_snapshot, rate_snapshot),
    )
    if any(not o.get("billing_granularity_seconds") for o in price_snapshot.get("cloud_offers", [])):
        notes.append(Msg("cloud billing granularity unknown for some offers: per-second billing assumed for them"))
    if not workloads:
        workloads = [Workload(candidate_id="none", accelerator_id=None, gpu_count=0)]
    return CostInputs(workloads=tuple(workloads), prices=prices, rates=rates, options=opts), notes


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
    inputs, notes = build_cost_inputs(
        sizing=sizing,
        price_snapshot=price_snapshot,
        rate_snapshot=rate_snapshot,
        options=options,
        spec=parsed,
    )
    result = cost_plan(inputs=inputs).to_dict()
    result["notes"] = notes + result["notes"]
    return result
