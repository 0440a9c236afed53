"""Cost per million output tokens along the serving curves (issue 22, part 3).

The sizing gives, per shortlisted configuration, one replica's operating points from light load to
the highest rate it sustains (output tokens/s per GPU, TPOT, TTFT); the cost result gives, per priced
option, what a GPU-hour of the configuration costs all-in while it runs. A point's cost per million
output tokens is that GPU-hour divided by the GPU-hour's output tokens at the point: what a million
tokens cost if every running hour served at that load. Each curve is priced on the decided option
when it runs the curve's accelerator, else on the first option of that accelerator in the decision's
order, and says which. Pure: reads and returns result dicts.
"""

from __future__ import annotations

from decimal import Decimal, InvalidOperation

MILLION = Decimal(1_000_000)
SECONDS_PER_HOUR = Decimal(3600)
# four places, as the cost engine's unit costs: a million tokens can cost less than a cent's fraction of a rouble
UNIT_COST = Decimal("0.0001")


def _accelerator_of(candidate: str | None) -> str | None:
    # candidates are "<accelerator id> x<count>"
    if not candidate or " x" not in candidate:
        return None
    return candidate.rsplit(" x", 1)[0]


def _decimal(value) -> Decimal | None:
    try:
        d = Decimal(str(value))
    except (InvalidOperation, ValueError, TypeError):
        return None
    return d if d.is_finite() else None


def _options_in_decision_order(costs: dict) -> list[dict]:
    options = [o for o in costs.get("options") or [] if isinstance(o, dict)]
    decision = costs.get("decision") or {}
    order = [i for i in decision.get("order") or [] if isinstance(i, int) and 0 <= i < len(options)]
    listed = set(order)
    ordered = [options[i] for i in order] + [o for i, o in enumerate(options) if i not in listed]
    decided = (decision.get("recommended") or {}).get("id")
    return sorted(ordered, key=lambda o: o.get("id") != decided)  # stable: the decided option first


def priced_curves(sizing: dict, costs: dict) -> dict:
    """``sizing`` with each curve point's ``output_tokens_per_s_per_user`` and, where an option of the
    curve's accelerator is priced, ``cost_per_1m_output_tokens`` and the curve's ``priced_by``."""
    cands = sizing.get("candidates") or {}
    curves = cands.get("curves")
    if not isinstance(curves, list) or not curves:
        return sizing
    basis = "gross" if costs.get("include_vat") else "net"
    options = _options_in_decision_order(costs)
    priced = []
    for curve in curves:
        acc = curve.get("accelerator_id")
        option = next((o for o in options if _accelerator_of(o.get("candidate")) == acc
                       and _decimal((o.get("unit_costs") or {}).get(f"per_running_gpu_hour_{basis}"))), None)
        gpu_hour = _decimal((option.get("unit_costs") or {}).get(f"per_running_gpu_hour_{basis}")) if option else None
        points = []
        for p in curve.get("points") or []:
            point = dict(p)
            tpot = _decimal(p.get("tpot_p50_ms"))
            if tpot and tpot > 0:
                point["output_tokens_per_s_per_user"] = float((Decimal(1000) / tpot).quantize(Decimal("0.1")))
            per_gpu_s = _decimal(p.get("output_tokens_per_s_per_gpu"))
            if gpu_hour is not None and per_gpu_s and per_gpu_s > 0:
                point["cost_per_1m_output_tokens"] = str(
                    (gpu_hour / (per_gpu_s * SECONDS_PER_HOUR) * MILLION).quantize(UNIT_COST))
            points.append(point)
        out = {**curve, "points": points}
        if gpu_hour is not None:
            out["priced_by"] = {"option_id": option.get("id"), "label": option.get("label"), "kind": option.get("kind"),
                                "per_running_gpu_hour": str(gpu_hour), "basis": basis,
                                "currency": costs.get("currency")}
        priced.append(out)
    return {**sizing, "candidates": {**cands, "curves": priced}}
