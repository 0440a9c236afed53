"""Translatable names of the cost table's rows, lines and option kinds.

The pure engine labels its lines in English; pages and exports show these instead, by key
(``gpu_time.idle``, ``infrastructure.storage.nvme``, ``gpu_time.useful.owned`` ...).
"""

from django.utils.translation import gettext_lazy as _
from django.utils.translation import pgettext_lazy

ROW_LABELS = {
    "gpu_time": _("GPU time"),
    "infrastructure": _("Infrastructure"),
    "engineering": _("Engineering"),
    "downtime_risk": _("Downtime risk"),
}

KIND_LABELS = {
    "cloud_on_demand": _("Cloud, on demand"),
    "cloud_spot": _("Cloud, spot"),
    "cloud_commit_1y": _("Cloud, 1-year commitment"),
    "cloud_commit_3y": _("Cloud, 3-year commitment"),
    "dedicated": _("Dedicated servers, monthly"),
    "onprem": _("On-prem"),
    "hybrid": _("Hybrid: owned baseline + cloud burst"),
    "api": _("External model API"),
}

LINE_LABELS = {
    "gpu_time.useful": _("GPU time, useful"),
    "gpu_time.idle": _("GPU time, idle (paid, no useful work)"),
    "gpu_time.api_tokens": _("Model API tokens (instead of GPU time)"),
    "gpu_time.commitment_after_horizon": _("Commitment still owed after the horizon"),
    "infrastructure.storage.nvme": _("Storage, NVMe"),
    "infrastructure.storage.ssd": _("Storage, SSD"),
    "infrastructure.storage.hdd": _("Storage, HDD"),
    "infrastructure.storage.object": _("Storage, object (S3)"),
    "infrastructure.traffic": _("Traffic (egress)"),
    "infrastructure.network": _("Network equipment (amortised)"),
    "infrastructure.spares": _("Spare parts (amortised)"),
    "infrastructure.power": _("Power and cooling"),
    "infrastructure.colocation": _("Colocation / rack"),
    "infrastructure.rack_space": _("Rack space"),
    "infrastructure.support": _("Support contracts"),
    "infrastructure.setup_fee": _("Server setup fee"),
    "engineering.setup": _("Setup (once)"),
    "engineering.operations": _("Operations"),
    "downtime_risk.outage": _("Expected outage cost"),
    "downtime_risk.lost_progress": _("Training progress lost since the last checkpoint"),
    "downtime_risk.spot_interruptions": _("Outages from spot interruptions"),
}

SUFFIX_LABELS = {
    "owned": pgettext_lazy("hybrid option part", "owned"),
    "cloud": pgettext_lazy("hybrid option part", "cloud burst"),
}


def line_label(key: str) -> str:
    """Translated label of a line key; hybrid keys carry an ``.owned``/``.cloud`` suffix."""
    if key in LINE_LABELS:
        return str(LINE_LABELS[key])
    base, _sep, suffix = key.rpartition(".")
    if base in LINE_LABELS and suffix in SUFFIX_LABELS:
        return f"{LINE_LABELS[base]}, {SUFFIX_LABELS[suffix]}"
    return key
