"""Re-derive accelerators.csv and cloud_offers.csv from ../shared/data (run by hand, then review the diff).

    .venv/bin/python catalog/data/derive_from_shared.py /work/shared/data

Adds the columns the catalog needs and the shared files lack; every added value is explained
in docs/CATALOG.md (form-factor class, minimum driver, accelerator mapping, flags).
"""

import csv
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
RETRIEVED_ON = "2026-11-30"  # the day the shared files were read into this catalog

# Minimum Linux x86_64 driver of the CUDA toolkit in min_cuda, from NVIDIA's CUDA Toolkit release
# notes table "CUDA Toolkit and Corresponding Driver Versions" (copies checked: see CATALOG.md).
# CUDA 11.8 / 12.8 / 12.9 could not be read in a source here, so they stay empty (unknown).
MIN_DRIVER = {"CUDA 9.0": "384.81", "CUDA 10.0": "410.48", "CUDA 11.0": "450.51.05", "CUDA 11.1": "455.23"}


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
    with (HERE / "accelerators.csv").open("w", encoding="utf-8", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=columns)
        writer.writeheader()
        writer.writerows(rows)


# SkyPilot GPU name (+ provider/instance where the name is ambiguous) -> catalog accelerator id.
# Left empty where the GPU is not in the catalog (M60, P4, P100, T4G, RTX 4000 Ada, V100 16 GB) or
# the variant (SXM vs PCIe, 80 vs 94 GB) is not stated by the instance name.
BY_MODEL = {
    "A10": "nvidia-a10-24gb", "A10G": "nvidia-a10g-24gb", "A40": "nvidia-a40-48gb", "A6000": "nvidia-rtx-a6000-48gb",
    "B200": "nvidia-b200-sxm-180gb", "GH200": "nvidia-gh200-96gb", "H200": "nvidia-h200-sxm-141gb",
    "L4": "nvidia-l4-24gb", "L40S": "nvidia-l40s-48gb", "T4": "nvidia-t4-16gb",
    "H100-MEGA": "nvidia-h100-sxm5-80gb", "H100-SXM": "nvidia-h100-sxm5-80gb", "V100-32GB": "nvidia-v100-sxm2-32gb",
}


def accelerator_for(row: dict) -> str:
    model, cloud, itype = row["gpu_model"], row["cloud"], row["instance_type"]
    if model in BY_MODEL:
        return BY_MODEL[model]
    if model == "A100":  # 40 GB
        if cloud in ("AWS", "GCP", "Azure") or itype.endswith("_sxm4"):
            return "nvidia-a100-sxm4-40gb"  # p4d, a2-highgpu/megagpu, ND96asr_v4 are SXM4 systems
        return ""  # Lambda gpu_Nx_a100 does not say SXM or PCIe
    if model == "A100-80GB":
        if cloud == "Azure" and itype.startswith("Standard_NC"):
            return "nvidia-a100-pcie-80gb"  # NC A100 v4 = PCIe cards
        if cloud in ("AWS", "GCP", "Azure") or "sxm4" in itype:
            return "nvidia-a100-sxm4-80gb"
        return ""  # RunPod A100-80GB: SXM or PCIe not stated
    if model == "H100":
        if itype.endswith("_pcie"):
            return "nvidia-h100-pcie-80gb"
        if cloud == "Azure" and itype.startswith("Standard_NC"):
            return ""  # NC H100 v5: the catalog row does not say which H100 variant
        return "nvidia-h100-sxm5-80gb"
    return ""


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
