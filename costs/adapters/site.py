"""Site limits: whether a site's power budget and racks hold the servers a workload needs."""

from __future__ import annotations

import math
from decimal import Decimal

from catalog.domain.messages import Msg


def _site_limit(hardware, *, servers: int, power_w: Decimal | None) -> str:
    """Why the site (spec.hardware.power_budget_kw, racks) cannot hold these servers if bought; ""
    when it can or sets no limit. Racks as the sizing counts them (RACK_BUDGET_KW air-cooled)."""
    from planner.engine.infra import RACK_BUDGET_KW

    budget_kw = getattr(hardware, "power_budget_kw", None)
    racks = getattr(hardware, "racks", None)
    if power_w is None or (budget_kw is None and racks is None):
        return ""
    need_kw = float(power_w) * servers / 1000
    if budget_kw is not None and need_kw > budget_kw:
        return Msg("needs {need:.1f} kW of IT power at full load; the site's budget is {budget:g} kW",
                   need=need_kw, budget=budget_kw)
    per_rack = int(RACK_BUDGET_KW * 1000 // float(power_w))
    need_racks = math.ceil(servers / per_rack) if per_rack else None
    if racks is not None and (need_racks is None or need_racks > racks):
        return Msg("needs {need} racks of {rack_kw:g} kW; the site has {racks}", need=need_racks or servers,
                   rack_kw=RACK_BUDGET_KW, racks=racks) if need_racks else Msg(
            "one server draws more than a {rack_kw:g} kW air-cooled rack gives", rack_kw=RACK_BUDGET_KW)
    return ""
