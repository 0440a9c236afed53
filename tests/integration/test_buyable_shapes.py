"""Only buyable shapes on the shipped catalog (issue 20 part 6): a sweep of workloads over every
GPU accelerator never offers an on-prem server in a shape nobody sells, never buys an accelerator
that one cloud only rents out, and prices cloud options only where that provider sells the GPU."""

import datetime as dt
import io
from dataclasses import asdict

import pytest
from django.core.management import call_command
from django.db import transaction

from catalog.selectors import accelerator_specs
from catalog.snapshots import price_snapshot
from costs import price_sources
from costs.adapters import cloud_offers_from_snapshot, price_sizing_result
from costs.selectors import rate_card_snapshot
from planner.engine import size_workload
from planner.engine.shapes import cloud_only, form_kind, sold_shapes
from planner.engine.spec import parse_workload_spec
from planner.i18n import render

pytestmark = pytest.mark.django_db
AS_OF = dt.date(2026, 11, 30)
OWNED = ("onprem", "hybrid")

SPECS = {
    "inf-8b": {"kind": "inference", "model": {"preset": "llama-3.1-8b"},
               "serving": {"context_length": 8192, "concurrency": 16, "requests_per_second": 2}},
    "inf-70b": {"kind": "inference", "model": {"preset": "llama-3.1-70b"},
                "serving": {"context_length": 8192, "concurrency": 32, "requests_per_second": 5,
                            "ttft_p95_ms": 2000}},
    "lora-70b": {"kind": "finetuning", "model": {"preset": "llama-3.1-70b"},
                 "training": {"tokens": 2e7, "method": "lora"}},
    "pretrain-8b": {"kind": "pretraining", "model": {"preset": "llama-3.1-8b"}, "training": {"tokens": 1e11}},
}
# pinned counts that are not whole boards: the shapes must still be sold ones
PINNED = [("nvidia-h100-sxm5-80gb", 3), ("nvidia-h200-sxm-141gb", 12), ("nvidia-l40s-48gb", 5),
          ("amd-mi300x-192gb", 3), ("nvidia-a10g-24gb", 4)]

EXPECTED_ONPREM = {
    "nvidia-h100-sxm5-80gb x3": (1, 4),  # one 4-GPU HGX board (1 spare), not the catalog's 8-GPU DGX
    "nvidia-h200-sxm-141gb x12": (2, 8),  # two 8-GPU boards (4 spare)
    "nvidia-l40s-48gb x5": (1, 5),  # five cards in an 8-slot PCIe chassis
}


@pytest.fixture(scope="module")
def snapshots(django_db_setup, django_db_blocker):
    with django_db_blocker.unblock(), transaction.atomic():
        call_command("load_catalog", stdout=io.StringIO())
        call_command("load_rate_cards", stdout=io.StringIO())
        prices = price_snapshot(as_of=AS_OF)
        accs = accelerator_specs(as_of=AS_OF)
        prices["accelerators"] = [asdict(a) for a in accs]
        rates = rate_card_snapshot(as_of=AS_OF)
        transaction.set_rollback(True)
    return prices, rates, accs


def _plans(accs):
    for name, spec in SPECS.items():
        yield name, spec, None
    for acc_id, count in PINNED:
        spec = {"kind": "inference", "model": {"preset": "llama-3.1-8b"},
                "serving": {"context_length": 4096, "concurrency": 8, "requests_per_second": 1},
                "hardware": {"accelerator": acc_id, "count": count, "tensor_parallel": 1, "pipeline_parallel": 1}}
        yield f"{acc_id} x{count}", spec, acc_id


def _sold(acc_form: str, gpus_per_server: int) -> bool:
    sold_as, sizes = sold_shapes().get(form_kind(acc_form), ("", ()))
    if sold_as == "board":
        return gpus_per_server in sizes
    if sold_as == "chassis":
        return 1 <= gpus_per_server <= sizes[-1]
    return False


def test_every_owned_option_has_a_sold_shape_and_cloud_offers_exist(snapshots):
    prices, rates, accs = snapshots
    form = {a.id: a.form_factor for a in accs}
    listed = {(o.provider, o.instance_type, o.accelerator_id) for o in cloud_offers_from_snapshot(prices)}
    composed, _ = price_sources.composed_cloud_offers(prices, training=True)
    composed2, _ = price_sources.composed_cloud_offers(prices, training=False)
    listed |= {(o.provider, o.instance_type, o.accelerator_id) for o in [*composed, *composed2]}
    names = {f"{p.get('vendor', '')} {p.get('model', '')}".strip() for p in prices["server_platforms"]
             if p.get("included_accelerator")}
    owned_seen = cloud_seen = 0
    for name, spec, pinned in _plans(accs):
        sizing = size_workload(spec=parse_workload_spec(spec), accelerators=accs).to_dict()
        rec = sizing["recommendation"]
        if rec.get("accelerator_id") and "gpus_per_server" in rec:
            # the sizing's infrastructure block shows a sold shape too
            per = rec["gpus_per_server"]["value"]
            if form_kind(form[rec["accelerator_id"]]) in sold_shapes():
                assert _sold(form[rec["accelerator_id"]], per), (name, per)
        res = price_sizing_result(sizing=sizing, price_snapshot=prices, rate_snapshot=rates,
                                  options={"monte_carlo_samples": 1000}, spec=spec)
        for o in res["options"]:
            d = o.get("detail") or {}
            if o["kind"] == "api":
                continue
            acc = _acc_of(o, form)
            if o["kind"] in OWNED:
                owned_seen += 1
                assert acc not in cloud_only(), (name, o["label"])
                derived = o["kind"] == "hybrid" or d.get("price_basis") == "derived"
                if derived or d.get("server") not in names:  # a listed system or a quote is sold as is
                    assert _sold(form[acc], d["gpus_per_server"]), (name, o["label"])
            if o["kind"].startswith("cloud_"):
                cloud_seen += 1
                assert (d["provider"], d["instance_type"], acc) in listed, (name, o["label"])
        if name in EXPECTED_ONPREM:  # hand-checked: (servers, GPUs per server) of the on-prem option
            got = {(o["detail"]["servers"], o["detail"]["gpus_per_server"]) for o in res["options"]
                   if o["kind"] == "onprem"}
            assert got == {EXPECTED_ONPREM[name]}, (name, got)
        if pinned in cloud_only():
            reasons = [render(s["reason"]) for s in res["skipped"] if s["kind"] in OWNED]
            assert f"sold only as {cloud_only()[pinned]} instances" in reasons, (name, res["skipped"])
            assert not [o for o in res["options"] if o["kind"] in OWNED]
    assert owned_seen and cloud_seen


def _acc_of(option: dict, form: dict) -> str:
    """The option's accelerator id: its candidate id is '<accelerator id> x<count>'."""
    acc = option["candidate"].rsplit(" x", 1)[0]
    assert acc in form, option
    return acc
