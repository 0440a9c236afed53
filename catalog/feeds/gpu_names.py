"""SkyPilot GPU names -> catalog accelerator ids (pure; the importer and catalog/data/derive_from_shared.py share it)."""

# SkyPilot GPU name (+ provider/instance where the name is ambiguous) -> catalog accelerator id.
# Left empty where the GPU is not in the catalog (M60, P4, P100, T4G, RTX 4000 Ada, V100 16 GB) or
# the variant (SXM vs PCIe, 80 vs 94 GB) is not stated by the instance name (docs/CATALOG.md).
BY_MODEL = {
    "A10": "nvidia-a10-24gb", "A10G": "nvidia-a10g-24gb", "A40": "nvidia-a40-48gb", "A6000": "nvidia-rtx-a6000-48gb",
    "B200": "nvidia-b200-sxm-180gb", "GH200": "nvidia-gh200-96gb", "H200": "nvidia-h200-sxm-141gb",
    "L4": "nvidia-l4-24gb", "L40S": "nvidia-l40s-48gb", "T4": "nvidia-t4-16gb",
    "H100-MEGA": "nvidia-h100-sxm5-80gb", "H100-SXM": "nvidia-h100-sxm5-80gb", "V100-32GB": "nvidia-v100-sxm2-32gb",
}


def accelerator_for(*, gpu_model: str, cloud: str, instance_type: str) -> str:
    model, itype = gpu_model, instance_type
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
