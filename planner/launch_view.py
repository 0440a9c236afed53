"""The decided serving layout's launch command and Kubernetes manifest as the plan page shows them
(planner.engine.launch builds them; the manifest is rendered as YAML here, for kubectl apply -f)."""

from __future__ import annotations

import yaml


def launch_view(decision: dict | None) -> dict | None:
    launch = (decision or {}).get("launch")
    if not launch:
        return None
    kube = launch.get("kubernetes")
    manifest = yaml.safe_dump_all([kube["deployment"], kube["service"]], sort_keys=False,
                                  allow_unicode=True) if kube else None
    return {**launch, "manifest_yaml": manifest}
