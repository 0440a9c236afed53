"""Translatable names of the cost table's rows, lines and option kinds.

The pure engine labels its lines in English; pages and exports show these instead, by key
(``gpu_time.idle``, ``infrastructure.storage.nvme``, ``gpu_time.useful.owned`` ...).
"""

from django.utils.translation import gettext, ngettext, pgettext_lazy
from django.utils.translation import gettext_lazy as _

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
    "gpu_time.rerun_after_failures": _("GPU time re-run after GPU-server failures"),
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
    "downtime_risk.hardware_failures": _("Capacity lost to GPU-server failures"),
    "infrastructure.traffic_inter_zone": _("Traffic between zones"),
    "infrastructure.support_contract": _("Support / licence contract"),
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
    if base == "infrastructure.support_contract" and suffix.isdigit():  # the user's contracts, numbered
        return f"{LINE_LABELS[base]} {int(suffix) + 1}"
    if base in LINE_LABELS and suffix in SUFFIX_LABELS:
        return f"{LINE_LABELS[base]}, {SUFFIX_LABELS[suffix]}"
    return key


MODE_LABELS = {
    "cloud_on_demand": _("on-demand"),
    "cloud_spot": _("spot"),
    "cloud_commit_1y": _("1-year commitment"),
    "cloud_commit_3y": _("3-year commitment"),
}


def _per_host(n: int) -> str:
    return ngettext("%(n)s GPU", "%(n)s GPUs", n) % {"n": n}


def option_label(option: dict) -> str:
    """The option's label in the active language, from its ``detail`` (in English it equals the
    engine's ``label``). A result without the detail (stored before round 2) keeps its label."""
    d, kind = option.get("detail") or {}, option.get("kind")
    engine_label = option.get("label") or ""
    if "gpus" not in d or "tensor_parallel" not in d:
        return engine_label
    pp = d.get("pipeline_parallel") or 1
    layout = f"TP{d['tensor_parallel']}" + (f" × PP{pp}" if pp > 1 else "")
    pools = d.get("pools")
    if isinstance(pools, dict) and isinstance(pools.get("prefill"), dict) and isinstance(pools.get("decode"), dict):
        layout = gettext("prefill %(pw)s × TP%(pt)s + decode %(dw)s × TP%(dt)s") % {
            "pw": pools["prefill"].get("workers"), "pt": pools["prefill"].get("tensor_parallel"),
            "dw": pools["decode"].get("workers"), "dt": pools["decode"].get("tensor_parallel")}
    fleet = {"gpus": d["gpus"], "accelerator": d.get("accelerator", ""), "layout": layout}
    spare = gettext(" (incl. 1 spare)") if "(incl. 1 spare)" in engine_label else ""
    if kind in MODE_LABELS:
        text = gettext(
            "%(gpus)s x %(accelerator)s (%(layout)s) on %(hosts)s x %(provider)s %(instance)s "
            "(%(per_host)s), %(region)s, %(mode)s"
        ) % {
            **fleet,
            "hosts": f"{d['instances']}{spare}",
            "provider": d["provider"],
            "instance": d["instance_type"],
            "per_host": _per_host(d["gpus_per_instance"]),
            "region": d["region"],
            "mode": MODE_LABELS[kind],
        }
    elif kind == "dedicated":
        text = gettext(
            "%(gpus)s x %(accelerator)s (%(layout)s) on %(hosts)s x %(provider)s %(name)s "
            "(%(per_host)s), dedicated, monthly"
        ) % {
            **fleet,
            "hosts": f"{d['servers']}{spare}",
            "provider": d["provider"],
            "name": d.get("name", ""),
            "per_host": _per_host(d["gpus_per_server"]),
        }
    elif kind == "onprem":
        text = gettext(
            "%(gpus)s x %(accelerator)s (%(layout)s) on %(hosts)s x %(per_host)s-GPU server, on-prem (bought)"
        ) % {**fleet, "hosts": f"{d['servers']}{spare}", "per_host": d["gpus_per_server"]}
    elif kind == "hybrid" and {"owned_gpus", "owned_servers", "burst_gpus", "burst_instances"} <= set(d):
        text = gettext(
            "%(gpus)s x %(accelerator)s (%(layout)s): %(owned_gpus)s on %(owned_servers)s x %(per_server)s-GPU "
            "server owned + %(burst_gpus)s on %(burst_instances)s x %(provider)s %(instance)s (%(per_host)s), "
            "%(region)s, on-demand burst"
        ) % {
            **fleet,
            "owned_gpus": _per_host(d["owned_gpus"]),
            "owned_servers": d["owned_servers"],
            "per_server": d["gpus_per_server"],
            "burst_gpus": _per_host(d["burst_gpus"]),
            "burst_instances": d["burst_instances"],
            "provider": d["provider"],
            "instance": d["instance_type"],
            "per_host": _per_host(d["gpus_per_instance"]),
            "region": d["region"],
        }
    else:
        return engine_label
    # a label the engine made unique keeps its distinguishing tail
    if engine_label.endswith("]") and " [" in engine_label:
        text += engine_label[engine_label.rindex(" [") :]
    return text


def mc_range(stats: dict | None, *, gross: bool) -> dict | None:
    """An option's Monte Carlo P10/P50/P90 (and mean) on the basis of the total shown beside them:
    gross (with VAT) or net, with ``basis`` ("gross"/"net") and its label. A result stored before
    the gross percentiles existed has net ones only (keys ``p10``..): they come back labelled net."""
    if not stats:
        return None
    on = "gross" if gross else "net"
    if f"p50_{on}" not in stats:
        if "p50_net" in stats:
            on = "net"
        elif "p50" in stats:  # stored before issue 20: net, unlabelled
            return {"p10": stats.get("p10"), "p50": stats.get("p50"), "p90": stats.get("p90"),
                    "mean": stats.get("mean"), "basis": "net", "basis_label": gettext("without VAT")}
        else:
            return None
    return {"p10": stats.get(f"p10_{on}"), "p50": stats.get(f"p50_{on}"), "p90": stats.get(f"p90_{on}"),
            "mean": stats.get(f"mean_{on}"), "basis": on,
            "basis_label": gettext("with VAT") if on == "gross" else gettext("without VAT")}
