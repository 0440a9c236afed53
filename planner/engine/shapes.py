"""GPU servers in the shapes vendors sell, and accelerators sold only inside one cloud (pure: csv only).

The tables are catalog data with their sources: ``catalog/data/server_shapes.csv`` (HGX/SXM boards
of 4 or 8 GPUs, OAM boards of 8, PCIe chassis of 1-10 cards) and
``catalog/data/cloud_only_accelerators.csv`` (A10G only as AWS G5, Cloud TPUs only on Google
Cloud). Both the sizing's infrastructure block (planner.engine.infra) and the cost adapter's
on-prem servers (costs.adapters) take their shape from ``server_shape`` so that they agree.

Rule (one server model per fleet): the sizing's server count (``ceil(count / max_per_server)``)
stays; each server holds whole tensor-parallel groups; an SXM/OAM server gets the smallest sold
board that holds them (the rest of the board is spare GPUs, bought); a PCIe server gets exactly
the cards it needs in the smallest sold chassis with that many slots. A mixed fleet (an 8-GPU and
a 4-GPU board for 12 GPUs) is not offered: the cost engine prices one server model per option.
"""

from __future__ import annotations

import csv
import math
from dataclasses import dataclass
from functools import cache
from pathlib import Path

DATA = Path(__file__).resolve().parents[2] / "catalog" / "data"
SHAPES_CSV = DATA / "server_shapes.csv"
CLOUD_ONLY_CSV = DATA / "cloud_only_accelerators.csv"

BOARD_NAMES = {"SXM": "HGX", "OAM": "OAM"}


def form_kind(form_factor: str) -> str:
    """SXM / PCIE / OAM / SUPERCHIP / TPU from the catalog's free-text form factor."""
    f = (form_factor or "").upper()
    for kind in ("SXM", "PCIE", "OAM", "SUPERCHIP", "TPU"):
        if f.startswith(kind) or kind in f:
            return kind
    return f


@cache
def sold_shapes() -> dict[str, tuple[str, tuple[int, ...]]]:
    """form kind -> ("board" | "chassis", GPU positions per server sold, ascending)."""
    out: dict[str, tuple[str, list[int]]] = {}
    with SHAPES_CSV.open(encoding="utf-8", newline="") as f:
        for row in csv.DictReader(f):
            kind = row["form_factor_kind"].strip().upper()
            sold_as, sizes = out.setdefault(kind, (row["sold_as"].strip(), []))
            sizes.append(int(row["gpus_per_server"]))
    return {k: (sold_as, tuple(sorted(set(sizes)))) for k, (sold_as, sizes) in out.items()}


@cache
def cloud_only() -> dict[str, str]:
    """accelerator id -> the one provider that sells it (as instances only, never as hardware)."""
    with CLOUD_ONLY_CSV.open(encoding="utf-8", newline="") as f:
        return {row["accelerator"].strip(): row["provider"].strip() for row in csv.DictReader(f)}


def sold_only_in_cloud(accelerator_id: str | None) -> str:
    """The provider an accelerator is only rented from ("" when it can be bought)."""
    return cloud_only().get(accelerator_id or "", "")


@dataclass(frozen=True, kw_only=True)
class ServerShape:
    form_kind: str
    sold_as: str  # "board" (SXM/OAM, bought fully populated), "chassis" (PCIe cards), "" (not sold loose)
    needed: int  # GPUs the layout uses
    servers: int
    gpus_per_server: int  # GPUs installed (and bought) in each server
    slots: int  # GPU positions of the board or chassis

    @property
    def buyable(self) -> bool:
        return bool(self.sold_as)

    @property
    def gpus_installed(self) -> int:
        return self.servers * self.gpus_per_server

    @property
    def spare(self) -> int:
        """GPUs bought but not used by the layout (board rounding, uneven split over servers)."""
        return max(0, self.gpus_installed - self.needed)

    @property
    def board_name(self) -> str:
        return BOARD_NAMES.get(self.form_kind, self.form_kind)


def server_shape(*, form_factor: str, count: int, max_per_server: int, tensor_parallel: int = 1) -> ServerShape:
    """The servers holding ``count`` GPUs at most ``max_per_server`` per server (the sizing's
    figure), in a shape that is sold. Forms not sold as loose GPUs (superchip systems, TPUs) keep
    the plain split and say so with ``sold_as == ""``; a tensor-parallel group larger than every
    sold board or chassis also gives ``sold_as == ""`` (nothing sold holds it)."""
    kind = form_kind(form_factor)
    count = max(1, int(count))
    max_per_server = max(1, int(max_per_server))
    tp = max(1, int(tensor_parallel))
    servers = math.ceil(count / max_per_server)
    plain = ServerShape(form_kind=kind, sold_as="", needed=count, servers=servers,
                        gpus_per_server=min(count, max_per_server), slots=min(count, max_per_server))
    sold_as, sizes = sold_shapes().get(kind, ("", ()))
    fits_tp = [s for s in sizes if s % tp == 0] if sold_as == "board" else [s for s in sizes if s >= tp]
    if not sold_as or not fits_tp:
        return plain
    groups = math.ceil(count / tp)
    per = math.ceil(groups / servers) * tp  # whole TP groups per server
    largest = fits_tp[-1]
    if sold_as == "chassis" and per > largest:
        per = largest // tp * tp
    elif sold_as == "board" and per > largest:
        per = largest
    servers = math.ceil(groups / (per // tp))
    size = next(s for s in fits_tp if s >= per)
    installed = size if sold_as == "board" else per
    return ServerShape(form_kind=kind, sold_as=sold_as, needed=count, servers=servers,
                       gpus_per_server=installed, slots=size)
