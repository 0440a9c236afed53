"""One decision per plan: the recommended option and why, the cheapest on-prem, the cheapest
cloud, the API where it applies, and the break-even between the best on-prem and the best cloud
option across configurations (cumulative cash including the terminal amounts).

The recommended option is the cheapest one meeting the workload's targets under the team's
constraints (the option kinds it allows); spot capacity is not recommended for a service (a
reclaimed instance is an outage). "Cheapest" is the comparison basis: net, or gross when VAT is
shown and not recovered, discounted to present value when a discount rate is given.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from decimal import Decimal

from catalog.domain.messages import Msg, figure, join_texts

from .analysis import break_even_utilisation
from .money import CENT, ZERO

CLOUD = ("cloud_on_demand", "cloud_spot", "cloud_commit_1y", "cloud_commit_3y")
OWNED = ("onprem",)
HOURLY = ("cloud_on_demand", "cloud_spot")
# A spot decision for a training run longer than a day states its interruption cost in the headline.
SPOT_HEADLINE_HOURS = 24


@dataclass(frozen=True, kw_only=True)
class Basis:
    vat: bool  # compare gross (VAT is a cost: shown and not recovered) or net
    discount_rate: Decimal
    horizon_months: int
    recoverable: bool = False
    # the decision rule (inputs.DECISION_BASES): "cheapest" budget, "risk_adjusted" (budget plus the
    # expected cost of downtime), "fewest_gpus" (then the cheapest budget)
    rule: str = "cheapest"
    # the user gave the cost of an hour of downtime: the risk figure is money, else hours only
    downtime_priced: bool = True
    # a one-off job (training, fine-tuning: a number of runs, not runs a month): the amount is that
    # of the runs, not of the months (bought hardware still counts over the horizon)
    job_runs: int | None = None

    @property
    def with_risk(self) -> bool:
        return self.rule == "risk_adjusted"

    def to_dict(self) -> dict:
        return {
            "rule": self.rule,
            "amount": "gross" if self.vat else "net",
            "discount_rate_per_year": str(self.discount_rate),
            "discounted": bool(self.discount_rate),
            "includes_expected_downtime": self.with_risk,
            "downtime_priced": self.downtime_priced,
            "text": self.text(),
        }

    def text(self) -> Msg:
        """The rule and the amount it compares."""
        amount = self.amount_text()
        if self.rule == "risk_adjusted":
            return Msg("risk-adjusted: the budget plus the expected cost of downtime, {amount}", amount=amount)
        if self.rule == "fewest_gpus":
            return Msg("fewest GPUs, then the lowest budget, {amount}", amount=amount)
        return Msg("lowest budget (the expected cost of downtime is not in it), {amount}", amount=amount)

    def amount_text(self) -> Msg:
        what = (
            Msg("gross (with VAT, not recovered)")
            if self.vat
            else Msg("net of VAT")
        )
        if self.discount_rate:
            return Msg(
                "{what}, present value at {rate}% a year, over {months} months",
                what=what,
                rate=figure(self.discount_rate * 100),
                months=self.horizon_months,
            )
        if self.job_runs:
            return Msg("{what}, for {runs} {runs:plural:run|runs} (hardware bought counted over {months} months)",
                       what=what, runs=self.job_runs, months=self.horizon_months)
        return Msg("{what}, over {months} months", what=what, months=self.horizon_months)


def _money(d: Decimal) -> str:
    return str(d.quantize(CENT))


def _eligible(p, workloads) -> tuple[bool, str]:
    o = p.option
    w = workloads.get(o.candidate_id)
    if w is not None and w.meets_targets is False:
        return False, "does not meet the targets"
    if o.kind == "cloud_spot" and w is not None and not w.is_training:
        return False, "spot capacity for a service: every reclaimed instance is an outage"
    if o.kind in OWNED + ("hybrid",) and w is not None and w.site_limit:
        return False, w.site_limit  # the site's power budget or racks cannot hold the servers bought
    return True, ""


def pick(*, priced, workloads: dict, basis: Basis, model_preset: str | None = None,
         model_name: str | None = None) -> dict:
    """The options of the decision (ids), chosen on the comparison basis. The model API to compare
    with self-hosting is the cheapest serving the same open-weights model when one is priced (like
    for like); else the cheapest of all, flagged as another model (quality is not compared)."""
    total = {p.option.option_id: p.basis_total(basis) for p in priced}

    def rank(p):
        # fewest GPUs first (the configuration's GPUs; an API option has none), then the total
        if basis.rule == "fewest_gpus":
            w = workloads.get(p.option.candidate_id)
            return (w.gpu_count if w is not None else 0, total[p.option.option_id])
        return (total[p.option.option_id],)

    def cheapest(ps):
        ps = list(ps)
        return min(ps, key=rank).option.option_id if ps else None

    gpu = [p for p in priced if p.option.kind != "api"]
    ok = [p for p in gpu if _eligible(p, workloads)[0]]
    api = [p for p in priced if p.option.kind == "api"]
    same_model = [p for p in api if model_preset and p.option.detail.get("open_weights_model") == model_preset]
    sizing = next((c for c, w in workloads.items() if w.sizing_recommended), None)
    per_candidate: dict[str, str] = {}
    for p in sorted(ok, key=rank):
        per_candidate.setdefault(p.option.candidate_id, p.option.option_id)
    return {
        "recommended": cheapest(ok) or cheapest(api),
        "cheapest_onprem": cheapest(p for p in ok if p.option.kind in OWNED),
        "cheapest_cloud": cheapest(p for p in ok if p.option.kind in CLOUD),
        "cheapest_dedicated": cheapest(p for p in ok if p.option.kind == "dedicated"),
        "cheapest_hybrid": cheapest(p for p in ok if p.option.kind == "hybrid"),
        "api": cheapest(same_model) or cheapest(api),
        "api_same_model": bool(same_model),
        "model_preset": model_preset,
        "model_name": model_name or model_preset,
        "sizing_candidate": sizing,
        "sizing_cheapest": cheapest(p for p in gpu if p.option.candidate_id == sizing),
        "per_candidate": per_candidate,
        "_total": total,
        "_rank": rank,
    }


def picked_ids(picks: dict) -> set[str]:
    keys = ("recommended", "cheapest_onprem", "cheapest_cloud", "cheapest_dedicated", "cheapest_hybrid", "api",
            "sizing_cheapest")
    return {picks[k] for k in keys if picks.get(k)}


def pairs(picks: dict) -> list[tuple[str, str]]:
    out = []
    on, cl, rec, api = picks["cheapest_onprem"], picks["cheapest_cloud"], picks["recommended"], picks["api"]
    for a, b in ((on, cl), (rec, api), (on, api), (cl, api), (rec, on), (rec, cl)):
        if a and b and a != b and (a, b) not in out:
            out.append((a, b))
    return out


def _ref(p, total: Decimal, mc: dict, on: str = "net") -> dict:
    o = p.option
    stats = mc.get(o.option_id) or {}
    risk = p.risk_net
    return {
        "id": o.option_id,
        "kind": o.kind,
        "candidate": o.candidate_id,
        "label": o.label,
        "total": _money(total),
        "total_net": _money(p.net),
        "total_gross": _money(p.net + p.vat),
        # on the basis of "total" (gross when VAT is a cost, else net), named so; both bases are
        # in monte_carlo.options
        f"p50_{on}": stats.get(f"p50_{on}"),
        f"p90_{on}": stats.get(f"p90_{on}"),
        # a risk figure beside the budget, not in it (null when downtime is not priced)
        "expected_downtime_net": _money(risk) if p.risk_priced else None,
        "expected_downtime_hours_per_year": str(p.outage_hours_per_year.quantize(Decimal("0.1"))),
        "base_percentile": stats.get("base_percentile"),
        "warnings": list(o.warnings),
        "unknowns": list(o.unknowns),
    }


def _break_even(a: str | None, b: str | None, analysis: dict, linear: dict, jobs: dict, by_id) -> dict | None:
    if not a or not b:
        return None
    be = next((x for x in analysis["break_even_months"] if x["a"] == a and x["b"] == b), None)
    if be is None:
        return None
    out = {"a": a, "b": b, "state": be["state"], "month": be["month"], "cheaper_after": be["cheaper_after"],
           "on": be.get("on")}
    la, lb = linear.get(a), linear.get(b)
    ja, jb = jobs.get(a) or {}, jobs.get(b) or {}
    if la and lb and ja.get("job") and jb.get("job") and ja.get("runs") and jb.get("runs"):
        # jobs: totals are linear in the number of runs (u grows by u / runs per run)
        ua, ub = float(ja["u"]) / float(ja["runs"]), float(jb["u"]) / float(jb["runs"])
        den = lb["b"] * ub - la["b"] * ua
        num = la["a"] - lb["a"]
        if den > 0 and num > 0:
            # a whole number of runs: the first count of runs at which it is cheaper
            out["runs"] = {"state": "crossing", "runs": f"{num / den:.2f}",
                           "text": Msg("{a} is cheaper from {runs} {runs:plural:run|runs} over the horizon (net)",
                                       a=by_id[a].option.label, runs=math.floor(num / den) + 1)}
        elif num <= 0 and den >= 0:
            out["runs"] = {"state": "a_cheaper_at_any_number_of_runs", "runs": None}
        else:
            out["runs"] = {"state": "b_cheaper_at_any_number_of_runs", "runs": None}
    elif la and lb and by_id[b].option.kind in HOURLY and by_id[a].option.kind in OWNED + ("hybrid",):
        out["utilisation"] = break_even_utilisation(own=la, rent=lb)
    return out


def _verdict_text(be: dict | None, by_id) -> Msg | None:
    if be is None:
        return None
    a, b = by_id[be["a"]].option.label, by_id[be["b"]].option.label
    if be["state"] == "crossing":
        cheaper = a if be["cheaper_after"] == "a" else b
        return Msg("{cheaper} is cheaper from month {month} on (cumulative, terminal amounts included)",
                   cheaper=cheaper, month=be["month"])
    winner = a if be["state"] == "a_never_more_expensive" else b
    return Msg("{winner} is never more expensive over the horizon (terminal amounts included)", winner=winner)


def _api_comparison(p, picks: dict) -> Msg:
    """What the API figure compares with: the same open-weights model, or only a price per token."""
    served = p.option.detail.get("model") or ""
    model = picks["model_name"] if picks["model_preset"] else None
    if picks["api_same_model"]:
        return Msg("like for like: {api} serves the same open-weights model ({model}) as the self-hosted options",
                   api=served, model=model)
    if model:
        return Msg("{api} is another model than the self-hosted {model}: the token prices are compared, not the "
                   "quality; no priced API serves {model} itself", api=served, model=model)
    return Msg("{api} is not the model sized here: the token prices are compared, not the quality", api=served)


def summary(*, picks, priced, workloads, basis: Basis, analysis, linear, jobs, skipped, options, efficiency) -> dict:
    by_id = {p.option.option_id: p for p in priced}
    total = picks["_total"]
    mc = (analysis.get("monte_carlo") or {}).get("options") or {}

    def ref(i):
        return _ref(by_id[i], total[i], mc, "gross" if basis.vat else "net") if i else None

    rec = picks["recommended"]
    gpu_count = sum(1 for p in priced if p.option.kind != "api")
    eligible = sum(1 for p in priced if p.option.kind != "api" and _eligible(p, workloads)[0])
    out: dict = {"basis": basis.to_dict()}
    if rec:
        r = by_id[rec]
        service = any(not w.is_training for w in workloads.values())
        why = _why(r, basis=basis, eligible=eligible, service=service)
        out["recommended"] = {**ref(rec), "why": why}
        w = workloads.get(r.option.candidate_id)
        if r.option.kind == "cloud_spot" and w is not None and w.is_training and w.gpu_count:
            wall_h = (w.training_gpu_hours_per_run or ZERO) / w.gpu_count
            if wall_h > SPOT_HEADLINE_HOURS:
                # a synchronous job stops on every GPU when one instance is reclaimed: say so where the
                # decision is read, not only in the GPU-time line that prices the redone work
                out["recommended"]["spot_warning"] = Msg(
                    "spot for a synchronous job of about {hours} h on {gpus} GPUs: every interruption of any "
                    "instance stops the whole job and redoes on average {redo} h of work on every GPU (half a "
                    "checkpoint interval plus the restart); the redone hours are priced in the GPU time. An "
                    "on-demand or committed option avoids it.",
                    hours=round(float(wall_h)), gpus=w.gpu_count,
                    redo=figure(w.checkpoint_interval_hours / 2 + w.restart_hours))
    else:
        out["recommended"] = None
        out["why_none"] = Msg("nothing could be priced; see the options not priced")
    for key in ("cheapest_onprem", "cheapest_cloud", "cheapest_dedicated", "cheapest_hybrid", "api"):
        out[key] = ref(picks[key])
    if out["api"] and gpu_count:
        out["api"]["comparison"] = _api_comparison(by_id[picks["api"]], picks)
    if not picks["cheapest_onprem"]:
        reasons = sorted({s["reason"] for s in skipped if s["kind"] == "onprem"})
        out["onprem_missing"] = {
            "text": Msg(
                "no on-prem option is priced: {reasons}. Enter a supplier's quote for the server "
                "(costs.server_prices: accelerator, gpus_per_server, amount, currency, source) to compare buying",
                reasons=join_texts(reasons[:3], "; ") or Msg("the option kind is not selected"),
            ),
            "reasons": reasons,
        }
    site = sorted({w.site_limit for w in workloads.values() if w.site_limit})
    if site:
        excluded = sum(1 for p in priced if p.option.kind in OWNED + ("hybrid",)
                       and workloads.get(p.option.candidate_id) is not None
                       and workloads[p.option.candidate_id].site_limit)
        out["site_limited"] = {
            "excluded": excluded,
            "reasons": site,
            # the first reason stands for the others (each option's is on its row in `reasons`)
            "text": Msg("{n} bought {n:plural:option|options} not chosen: the site cannot hold {n:plural:it|them} "
                        "(e.g. {reason})", n=excluded, reason=site[0]),
        }
    be = _break_even(picks["cheapest_onprem"], picks["cheapest_cloud"], analysis, linear, jobs, by_id)
    out["break_even"] = None if be is None else {**be, "text": _verdict_text(be, by_id)}
    # one row per configuration: its cheapest eligible option, ranked by the comparison basis
    rank = picks["_rank"]
    ranked = sorted(picks["per_candidate"].values(), key=lambda i: rank(by_id[i]))
    out["ranked"] = [
        {**ref(i), "meets_targets": workloads[by_id[i].option.candidate_id].meets_targets,
         "sizing_recommended": workloads[by_id[i].option.candidate_id].sizing_recommended}
        for i in ranked
    ]
    out["ranked_by"] = Msg("cheapest option of each configuration, {basis}", basis=basis.text())
    # every option in the decision's order (the recommendation, then those it could have chosen, then
    # the rest), so exports list them as the decision ranks them and never pick a different first one;
    # positions in the result's `options` list (ids would add ~7 KB to every plan)
    position = {p.option.option_id: n for n, p in enumerate(priced)}
    out["order"] = [position[i] for i in sorted(
        by_id, key=lambda i: (i != rec, not _eligible(by_id[i], workloads)[0], by_id[i].option.kind == "api", total[i]))]
    sizing = picks["sizing_candidate"]
    if sizing:
        w = workloads[sizing]
        priced_here = picks["sizing_cheapest"]
        entry = {
            "candidate": sizing,
            "accelerator": w.accelerator_name or w.accelerator_id,
            "gpus": w.gpu_count,
            "priced": bool(priced_here),
            "cheapest": ref(priced_here),
            "why_not_priced": sorted({s["reason"] for s in skipped if s["candidate"] == sizing}),
        }
        if rec and by_id[rec].option.candidate_id != sizing and by_id[rec].option.kind != "api":
            # a training sizing picks the lowest GPU-time cost within the deadline, not the fewest GPUs
            params = {"sizing": f"{w.gpu_count} × {w.accelerator_name or w.accelerator_id}", "basis": basis.text()}
            entry["differs"] = Msg(
                "The sizing's pick ({sizing}: the lowest GPU-time cost within the deadline) is not the decision: on "
                "the decision's rule ({basis}) another option comes first. Every section of this plan describes the "
                "decision.", **params) if w.is_training else Msg(
                "The configuration with the fewest GPUs meeting the targets ({sizing}) is not the decision: on the "
                "decision's rule ({basis}) another option comes first. Every section of this plan describes the "
                "decision.", **params)
        if not priced_here:
            entry["text"] = Msg(
                "The sizing's recommendation ({sizing}) could not be priced: {reasons}",
                sizing=f"{w.gpu_count} × {w.accelerator_name or w.accelerator_id}",
                reasons=join_texts(entry["why_not_priced"][:3], "; ") or Msg("no price"),
            )
        out["sizing_recommendation"] = entry
    if rec and rec in mc:
        s = mc[rec]
        on = "gross" if basis.vat else "net"
        out["statistic"] = Msg(
            "Totals are the deterministic value at the base inputs; in the Monte Carlo ({on}) it sits at "
            "the {pct}th percentile: P10 {p10:,.2f} {currency}, P50 {p50:,.2f} {currency}, P90 {p90:,.2f} {currency}",
            on=Msg("with VAT") if basis.vat else Msg("without VAT"),
            pct=s["base_percentile"],
            # numbers, not text, so each language's separators apply ('15 108 660,41' in Russian)
            p10=float(s[f"p10_{on}"]), p50=float(s[f"p50_{on}"]), p90=float(s[f"p90_{on}"]),
            currency=options.currency,
        )
    else:
        out["statistic"] = Msg("Totals are the deterministic value at the base inputs")
    out["efficiency"] = _efficiency_sensitivity(rec, linear, by_id, efficiency)
    out["gpu_options_priced"] = gpu_count
    return out


def _why(r, *, basis: Basis, eligible: int, service: bool) -> Msg:
    """Why the recommended option: the rule of the decision basis, said in words."""
    if r.option.kind == "api":
        return Msg("no GPU option is priced: the cheapest model API ({basis})", basis=basis.text())
    if basis.rule == "risk_adjusted":
        why = Msg(
            "lowest budget plus expected cost of downtime of {n} priced options that meet the targets under the "
            "allowed option kinds ({basis})", n=eligible, basis=basis.text())
    elif basis.rule == "fewest_gpus":
        why = Msg(
            "fewest GPUs of {n} priced options that meet the targets under the allowed option kinds, the lowest "
            "total among them ({basis})", n=eligible, basis=basis.text())
    elif service:
        return Msg(
            "cheapest of {n} priced options that meet the targets under the allowed option kinds "
            "({basis}); spot is not recommended for a service",
            n=eligible,
            basis=basis.text(),
        )
    else:
        # a training run may use spot (a reclaimed instance is a restart from the checkpoint,
        # priced in its own line): no word about services on a training plan
        return Msg(
            "cheapest of {n} priced options that meet the targets under the allowed option kinds ({basis})",
            n=eligible,
            basis=basis.text(),
        )
    return Msg("{why}; spot is not recommended for a service", why=why) if service else why


def _efficiency_sensitivity(rec, linear, by_id, e0: Decimal) -> dict | None:
    if not rec or rec not in linear:
        return None
    lin = linear[rec]
    p = by_id[rec]
    if p.option.kind == "api":  # tokens are priced per token: no GPU time for an efficiency to change
        return None
    u0 = float(p.utilisation)
    if not lin.get("efficiency_driven"):
        return {
            "applies": False,
            "text": Msg(
                "A service's hours are set by its serving schedule: efficiency changes the useful share of "
                "paid GPU time, not the total (more replicas for the same load come from the sizing)"
            ),
        }
    rows = []
    for e in sorted({max(0.05, float(e0) - 0.2), max(0.05, float(e0) - 0.1), float(e0),
                     min(1.0, float(e0) + 0.1), 1.0}):
        u = min(1.0, u0 * float(e0) / e)
        rows.append({"efficiency": f"{e:.2f}", "utilisation": f"{u:.4f}",
                     "total_net": str(Decimal(repr(round(lin["a"] + lin["b"] * u, 2))).quantize(CENT))})
    return {
        "applies": True,
        "rows": rows,
        "text": Msg("The same work at a lower efficiency runs more GPU-hours: the recommended option's net total "
                    "at each efficiency"),
    }


__all__ = ["Basis", "pick", "picked_ids", "pairs", "summary", "ZERO"]
