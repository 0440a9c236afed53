"""The decided serving layout's launch command and Kubernetes manifest as the plan page shows them
(planner.engine.launch builds them; the manifest is rendered as YAML here, for kubectl apply -f)."""

from __future__ import annotations

import yaml


def _yaml(kube: dict | None) -> str | None:
    if not kube:
        return None
    docs = [kube[k] for k in ("config_map", "deployment", "service") if kube.get(k)]
    return yaml.safe_dump_all(docs, sort_keys=False, allow_unicode=True)


def launch_view(decision: dict | None) -> dict | None:
    launch = (decision or {}).get("launch")
    if not launch:
        return None
    pools = [{**p, "manifest_yaml": _yaml(p.get("kubernetes"))} for p in launch.get("pools") or []]
    return {**launch, "manifest_yaml": _yaml(launch.get("kubernetes")), "pools": pools}
