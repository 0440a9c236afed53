"""Cloud VM prices composed from published component prices, as the provider bills them.

Yandex Cloud bills a GPU VM as the sum of its components: GPUs x price per GPU-hour + vCPUs x
price per vCPU-hour + GB of RAM x price per GB-hour (VAT included), plus a fee per VM-hour when the
VM is in a GPU cluster (InfiniBand). The shape (GPUs, vCPUs, RAM) comes from CloudVmShape. The sum
is never stored: it is built here for a date, and every component stays visible with its own price,
date, VAT basis and source. Whole-configuration rows (e.g. DataSphere) are passed through with one
component. Disks, OS images and traffic are billed separately and are not in these prices.

A composed offer whose price is stale while its provider has published a newer dated list (Yandex's
2022 table after the list of 2026-01-23) is history: marked `history` with the newer list's date,
shown in the catalog, never priced in a plan (costs.price_sources says so in the plan's skipped list).
A shape whose GPU the provider does not name carries the written inference (`accelerator_inference`).
"""

from __future__ import annotations

from datetime import date
from decimal import Decimal

from django.db.models import Q

from catalog.choices import PriceComponent
from catalog.models import CloudVmShape, PublishedPrice

VM_COMPONENTS = (PriceComponent.GPU, PriceComponent.VCPU, PriceComponent.RAM_GIB)


def _s(d: Decimal | None) -> str | None:
    return None if d is None else format(d.normalize(), "f")


def _money_s(d: Decimal) -> str:
    """A price as lists print it: at least two decimals (371.70, 0.90), more where published (0.0013176)."""
    d = d.normalize()
    return format(d.quantize(Decimal("0.01")) if d.as_tuple().exponent > -2 else d, "f")


def _valid(as_of: date) -> Q:
    return (Q(valid_from__isnull=True) | Q(valid_from__lte=as_of)) & (Q(valid_to__isnull=True) | Q(valid_to__gt=as_of))


def _source(p: PublishedPrice) -> dict:
    return {"title": p.source_title, "url": p.source_url, "date": p.valid_from.isoformat() if p.valid_from else None,
            "retrieved_on": p.retrieved_on.isoformat(), "notes": p.notes}


def _component(p: PublishedPrice, quantity: Decimal, label: str) -> dict:
    return {
        "price_id": p.pk,
        "component": p.component,
        "label": label,
        "quantity": _s(quantity),
        "unit_price": _money_s(p.price),
        "amount": _money_s(quantity * p.price),
        "currency": p.currency,
        "price_unit": p.price_unit,
        "includes_vat": p.includes_vat,
        "valid_from": p.valid_from.isoformat() if p.valid_from else None,
        "stale": p.stale,
        "stale_reason": p.stale_reason,
        "source": _source(p),
    }


def _offer(*, provider: str, region: str, product: str, instance_type: str, accelerator: str | None,
           gpu_count, vcpus, ram_gib, billing: str, components: list[dict], in_cluster: bool,
           accelerator_inference: str = "", newest_list: date | None = None) -> dict:
    total = sum((Decimal(c["amount"]) for c in components), Decimal(0))
    vats = {c["includes_vat"] for c in components}
    dates = [c["valid_from"] for c in components]
    stale = [c["stale_reason"] for c in components if c["stale"]]
    oldest = None if None in dates else min(dates)
    # History: a stale price of a provider that has published a newer list since. Kept for reference
    # (catalog pages), never priced in a plan.
    history = bool(stale) and newest_list is not None and (oldest is None or oldest < newest_list.isoformat())
    return {
        "provider": provider,
        "region": region,
        "product": product,
        "instance_type": instance_type,
        "accelerator": accelerator,
        "gpu_count": gpu_count,
        "vcpus": vcpus,
        "ram_gib": ram_gib,
        "billing": billing,
        "in_gpu_cluster": in_cluster,
        "components": components,
        "price_per_hour": {"amount": _money_s(total), "currency": components[0]["currency"]},
        # True / False when every component says so; None when any component's VAT basis is not stated
        "includes_vat": vats.pop() if len(vats) == 1 else None,
        # the oldest component date (a composed price is as old as its oldest part); None if any is undated
        "valid_from": None if None in dates else min(dates),
        "undated": None in dates,
        "stale": bool(stale),
        "stale_reason": "; ".join(dict.fromkeys(stale)),
        # the written rule by which the GPU was inferred when the provider does not name it ("" = named)
        "accelerator_inference": accelerator_inference,
        "history": history,
        "superseded_by_list_of": newest_list.isoformat() if history else None,
    }


def composed_cloud_offers(*, as_of: date) -> list[dict]:
    """Every VM shape priceable from components valid at as_of, per billing; plus whole-configuration
    rows. A component with a current (non-stale) row uses it; otherwise its stale row, marked stale."""
    rows = list(PublishedPrice.objects.filter(_valid(as_of), dataset="cloud_gpu_offers_ru").select_related("accelerator"))
    newest: dict[str, date] = {}  # per provider, the date of its newest current (non-stale) price list
    for p in rows:
        if p.valid_from and not p.stale and p.valid_from > newest.get(p.provider, date.min):
            newest[p.provider] = p.valid_from
    best: dict[tuple, PublishedPrice] = {}
    for p in sorted(rows, key=lambda r: (not r.stale, r.valid_from or date.min)):
        best[(p.provider, p.platform, p.component, p.billing)] = p  # later = current and newer wins
    out: list[dict] = []
    for shape in CloudVmShape.objects.select_related("accelerator").order_by("provider", "platform", "gpu_count", "vcpus"):
        billings = sorted({b for (prov, plat, comp, b) in best if prov == shape.provider and plat == shape.platform
                           and comp == PriceComponent.GPU})
        for billing in billings:
            parts = [best.get((shape.provider, shape.platform, comp, billing)) for comp in VM_COMPONENTS]
            if any(p is None for p in parts):
                continue  # a component price is missing for this billing: not priced
            gpu, vcpu, ram = parts
            components = [
                _component(gpu, Decimal(shape.gpu_count), "GPU"),
                _component(vcpu, Decimal(shape.vcpus), "vCPU"),
                _component(ram, shape.ram_gib, "RAM, GB"),
            ]
            name = f"{shape.platform} {shape.gpu_count} GPU, {shape.vcpus} vCPU, {_s(shape.ram_gib)} GB"
            common = dict(provider=shape.provider, region=gpu.region, product=gpu.product,
                          accelerator=shape.accelerator.slug if shape.accelerator else None,
                          gpu_count=shape.gpu_count, vcpus=shape.vcpus, ram_gib=_s(shape.ram_gib), billing=billing,
                          accelerator_inference=shape.accelerator_inference if shape.accelerator else "",
                          newest_list=newest.get(shape.provider))
            out.append(_offer(instance_type=name, components=components, in_cluster=False, **common))
            fee = best.get((shape.provider, shape.platform, PriceComponent.GPU_CLUSTER_PER_VM, billing))
            if shape.cluster_capable and fee is not None:
                out.append(_offer(instance_type=f"{name}, in a GPU cluster",
                                  components=[*components, _component(fee, Decimal(1), "GPU cluster fee per VM")],
                                  in_cluster=True, **common))
    for p in rows:
        if p.component != PriceComponent.INSTANCE or not p.gpu_count or p.gpu_count != p.gpu_count.to_integral_value():
            continue  # fractional (MIG) configurations cannot host a sized GPU count
        if p.stale and any(q is not p and not q.stale and q.product == p.product and q.gpu_model == p.gpu_model
                           and q.gpu_count == p.gpu_count and q.component == p.component for q in rows):
            continue  # an older version of a configuration that has a current price
        out.append(_offer(provider=p.provider, region=p.region, product=p.product, instance_type=p.item,
                          accelerator=p.accelerator.slug if p.accelerator else None, gpu_count=int(p.gpu_count),
                          vcpus=p.vcpus, ram_gib=_s(p.ram_gib), billing=p.billing,
                          components=[_component(p, Decimal(1), p.item)], in_cluster=False,
                          newest_list=newest.get(p.provider)))
    return out
