"""Offers from the price snapshot: cloud instances, dedicated servers, buyable on-prem servers, CPU instances."""

from __future__ import annotations

import datetime as dt
from decimal import Decimal

from catalog.domain.messages import Msg
from costs.engine.inputs import (
    CloudOffer,
    CpuInstance,
    DedicatedOffer,
    Rate,
    ServerPrice,
)
from costs.engine.money import FxTable, Price
from planner.engine.shapes import server_shape, sold_only_in_cloud

from .common import (
    _accelerators,
    _date,
    _form_kind,
    _price,
    _val,
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
    # a text the plan shows (decision, PDF page 1): translated where it is shown
    name = Msg("HGX {slots}-GPU server", slots=slots) if form == "SXM" else (
        Msg("{slots}-way OAM server", slots=slots) if form == "OAM"
        else Msg("{slots}-slot PCIe server with {installed} GPU(s)", slots=slots, installed=installed)
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
