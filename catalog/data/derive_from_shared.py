"""Re-derive accelerators.csv and cloud_offers.csv from ../shared/data (run by hand, then review the diff).

    .venv/bin/python catalog/data/derive_from_shared.py /work/shared/data

Adds the columns the catalog needs and the shared files lack; every added value is explained
in docs/CATALOG.md (form-factor class, minimum driver, accelerator mapping, flags). Accelerators
the shared table lacks are appended from accelerators_added.csv (sourced rows, catalog columns).
"""

import csv
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent.parent))
from catalog.feeds.gpu_names import accelerator_for as skypilot_accelerator_for  # noqa: E402

RETRIEVED_ON = "2026-11-30"  # the day the shared files were read into this catalog

# Minimum Linux x86_64 driver of the CUDA toolkit in min_cuda, from NVIDIA's CUDA Toolkit release
# notes table "CUDA Toolkit and Corresponding Driver Versions" (copies checked: see CATALOG.md).
# CUDA 11.8 / 12.8 / 12.9 could not be read in a source here, so they stay empty (unknown).
MIN_DRIVER = {"CUDA 9.0": "384.81", "CUDA 10.0": "410.48", "CUDA 11.0": "450.51.05", "CUDA 11.1": "455.23"}

# Scale-up links the shared table lacks (issue 22): (interconnect text or None = keep, GB/s bidirectional,
# source, note), applied to the shared rows on every derivation.
HUME = "https://humeconsulting.co/amd-mi355x-strong-node-level-inference-but-not-yet-rack-scale"
WIAIX = "https://wiaix.com/amd-instincttm-mi325x-accelerators"
SCALE_UP_ADDED = {
 "amd-mi355x-288gb": ("Infinity Fabric (7 links)", "1075.2", HUME,
   "Scale-up (issue 22): 7 Infinity Fabric links per GPU (8-GPU UBB, fully connected) x 153.6 GB/s bidirectional each = 1,075.2 GB/s, the catalog's convention for MI300X (7 x 128 = 896); AMD's MI355X spec lists 153.6 GB/s peak per link, read here in Hume Consulting's MI355X analysis ('~153 GB/s of bidirectional bandwidth' per XGMI link, retrieved 2026-12-03), not in AMD's own PDF (not readable here)."),
 "amd-mi350x-288gb": ("Infinity Fabric (7 links)", "1075.2", HUME,
   "Scale-up (issue 22): the MI355X's fabric (same CDNA 4 silicon and UBB): 7 links x 153.6 GB/s bidirectional = 1,075.2 GB/s (Hume Consulting's MI350X/MI355X analysis, retrieved 2026-12-03)."),
 "amd-mi325x-256gb": (None, "896", WIAIX,
   "Scale-up (issue 22): 'Seven Infinity Fabric links ensuring full connectivity between eight GPUs', a drop-in replacement for the MI300X platform (wiaix.com MI325X page, retrieved 2026-12-03): the MI300X's 7 x 128 GB/s = 896 GB/s (per-link rate as the MI300X row; the MI325X datasheet itself not read here)."),
}


def form_factor_kind(text: str) -> str:
    for prefix, kind in (("SXM", "SXM"), ("PCIe", "PCIE"), ("OAM", "OAM"), ("Superchip", "SUPERCHIP"), ("TPU", "TPU")):
        if text.startswith(prefix):
            return kind
    raise ValueError(f"unknown form factor {text!r}")


def derive_accelerators(shared: Path) -> None:
    with (shared / "accelerators.csv").open(encoding="utf-8", newline="") as handle:
        rows = list(csv.DictReader(handle))
    columns = list(rows[0].keys())
    columns.insert(columns.index("form_factor") + 1, "form_factor_kind")
    columns.insert(columns.index("min_cuda") + 1, "min_driver")
    columns[columns.index("source_where") + 1 : columns.index("source_where") + 1] = ["source_date", "retrieved_on"]
    for row in rows:
        row["form_factor_kind"] = form_factor_kind(row["form_factor"])
        row["min_driver"] = MIN_DRIVER.get(row["min_cuda"], "")
        row["source_date"] = ""
        row["retrieved_on"] = RETRIEVED_ON
        if row["id"] in SCALE_UP_ADDED:
            text, gb_s, src, note = SCALE_UP_ADDED[row["id"]]
            row["interconnect"] = text or row["interconnect"]
            row["interconnect_gb_s"] = gb_s
            row["source_where"] += " | " + src
            row["notes"] += " " + note
    # Accelerators the shared table lacks (GB300 NVL72, issue 22), already in the catalog's columns.
    with (HERE / "accelerators_added.csv").open(encoding="utf-8", newline="") as handle:
        added = list(csv.DictReader(handle))
    assert all(list(row) == columns for row in added), "accelerators_added.csv must use the catalog's columns"
    rows += added
    with (HERE / "accelerators.csv").open("w", encoding="utf-8", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=columns)
        writer.writeheader()
        writer.writerows(rows)


def accelerator_for(row: dict) -> str:
    """The mapping lives with the SkyPilot importer (catalog.feeds.skypilot), shared by both."""
    return skypilot_accelerator_for(gpu_model=row["gpu_model"], cloud=row["cloud"], instance_type=row["instance_type"])


def flag_reason(notes: str) -> str:
    reasons = []
    lowered = notes.lower()
    if "anomaly" in lowered or "verify" in lowered:
        reasons.append("the source README lists this row among known catalog anomalies (verify before use)")
    if "host row price is 0.0" in lowered:
        reasons.append("host VM price is 0.0 in the source catalog")
    if "spotprice equals price" in lowered:
        reasons.append("spot price equals on-demand price in the source catalog")
    if "catalog price empty" in lowered:
        reasons.append("on-demand price missing in the source catalog")
    if "spotprice empty" in lowered:
        reasons.append("spot price missing in the source catalog")
    return "; ".join(reasons)


CLOUD_COLUMNS = [
    "provider", "region", "instance_type", "source_gpu_model", "accelerator", "gpu_count", "gpu_memory_gib",
    "vcpus", "ram_gib", "local_disk_gb", "price_on_demand_per_hour", "price_spot_per_hour",
    "price_commit_1y_per_hour", "price_commit_3y_per_hour", "price_basis", "billing_granularity_seconds",
    "flagged", "flag_reason", "currency", "includes_vat", "valid_from", "valid_to",
    "source_title", "source_url", "source_date", "retrieved_on", "notes",
]


def derive_cloud_offers(shared: Path) -> None:
    with (shared / "cloud_gpu_offers.csv").open(encoding="utf-8", newline="") as handle:
        rows = list(csv.DictReader(handle))
    out = []
    for row in rows:
        reason = flag_reason(row["notes"])
        out.append({
            "provider": row["cloud"], "region": row["region"], "instance_type": row["instance_type"],
            "source_gpu_model": row["gpu_model"], "accelerator": accelerator_for(row),
            "gpu_count": row["gpu_count"], "gpu_memory_gib": row["gpu_mem_gib_per_gpu"],
            "vcpus": row["vcpus"], "ram_gib": row["ram_gib"], "local_disk_gb": "",
            "price_on_demand_per_hour": row["price_ondemand_usd_hr"], "price_spot_per_hour": row["price_spot_usd_hr"],
            "price_commit_1y_per_hour": "", "price_commit_3y_per_hour": "",
            "price_basis": row["price_basis"], "billing_granularity_seconds": "",
            "flagged": "true" if reason else "false", "flag_reason": reason,
            "currency": "USD", "includes_vat": "false", "valid_from": RETRIEVED_ON, "valid_to": "",
            "source_title": f"SkyPilot service catalog ({row['cloud']}) via shared/data/cloud_gpu_offers.csv",
            "source_url": f"{row['source_repo']} {row['source_path']}@{row['source_commit']}",
            "source_date": "", "retrieved_on": RETRIEVED_ON, "notes": row["notes"],
        })
    with (HERE / "cloud_offers.csv").open("w", encoding="utf-8", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=CLOUD_COLUMNS)
        writer.writeheader()
        writer.writerows(out)


if __name__ == "__main__":
    shared_dir = Path(sys.argv[1] if len(sys.argv) > 1 else "/work/shared/data")
    derive_accelerators(shared_dir)
    derive_cloud_offers(shared_dir)
