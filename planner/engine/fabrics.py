"""Scale-up domains and scale-out links of the reference systems (pure: csv only).

Data: ``catalog/data/system_fabrics.csv``, one row per accelerator id with its sources: the scale-up
domain (GPUs on one NVLink / Infinity Fabric switch fabric: 8 on an HGX or OAM board, 72 in a GB200 /
GB300 NVL72 rack) and the scale-out bandwidth per GPU of the reference system's compute fabric
(InfiniBand / RoCE NIC rate per GPU, Gb/s each way). An accelerator without a row is unknown: its domain
is the server (GPUs per server, as before) and no scale-out bandwidth is charged.

A collective whose group stays inside the domain runs on the scale-up link (serving_constants.link:
interconnect_gb_s / 2 one-way); one whose group spans more GPUs than the domain is bounded by the
slower link its cross-domain share crosses (docs/SIZING.md "Scale-up domains and scale-out links").
"""

from __future__ import annotations

import csv
from functools import cache
from pathlib import Path

from .hardware import AcceleratorSpec, gpus_per_server

FABRICS_CSV = Path(__file__).resolve().parents[2] / "catalog" / "data" / "system_fabrics.csv"
GBIT_PER_GBYTE = 8.0


@cache
def _rows() -> dict[str, tuple[int | None, float | None]]:
    out: dict[str, tuple[int | None, float | None]] = {}
    with FABRICS_CSV.open(encoding="utf-8", newline="") as f:
        for row in csv.DictReader(f):
            dom = (row.get("scale_up_domain_gpus") or "").strip()
            gbit = (row.get("scale_out_gbit_s_per_gpu") or "").strip()
            out[row["accelerator"].strip()] = (int(dom) if dom else None, float(gbit) if gbit else None)
    return out


def scale_up_domain(acc: AcceleratorSpec, server_gpus: int | None = None) -> int:
    """GPUs that share the scale-up fabric. A rack-scale domain (larger than the server, NVL72) is the
    catalog's; a board-scale one is the server actually used (a pinned 4-GPU HGX board is a domain of 4)."""
    server = int(server_gpus or gpus_per_server(acc))
    dom = _rows().get(acc.id, (None, None))[0]
    return dom if dom and dom > gpus_per_server(acc) else server


def scale_out_gb_s(acc: AcceleratorSpec) -> float | None:
    """One-way GB/s per GPU of the compute fabric (NIC Gb/s each way / 8); None where unknown."""
    gbit = _rows().get(acc.id, (None, None))[1]
    return None if gbit is None else gbit / GBIT_PER_GBYTE


def all_to_all_link_gb_s(*, ep: int, tp: int, domain: int, scale_up_gb_s: float, scale_out_gb_s: float | None) -> float:
    """Effective one-way GB/s of an EP all-to-all, for bytes already counted with the (EP - 1) / EP share.

    The EP group's ranks are TP apart (Megatron-Core takes them from the data-parallel ranks of one stage), so
    it spans EP x TP GPUs and holds e = min(EP, domain / TP) ranks in each scale-up domain. A GPU sends
    (e - 1) / EP of its tokens over the scale-up link and (EP - e) / EP over its NIC, both at once:

        t = bytes x max((e - 1) / B_up, (EP - e) / B_out) / EP,  effective B = (EP - 1) / max(...)

    Inside one domain (e = EP) this is B_up; scale-out unknown: B_up (the former model)."""
    e = max(min(int(ep), int(domain) // max(int(tp), 1)), 1)
    if e >= ep or not scale_out_gb_s:
        return float(scale_up_gb_s)
    worst = max((e - 1) / scale_up_gb_s, (ep - e) / scale_out_gb_s)
    return float((ep - 1) / worst)
