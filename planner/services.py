"""Writes for the planner: workloads, plans, immutable plan versions, share links.

The path of one plan (docs/ARCHITECTURE.md): plan_version_create() saves a pending version
with frozen inputs and today's price and rate snapshots, then queues compute_plan_version on
commit; plan_version_compute() locks the row and runs the sizing and cost engines on what
was stored. A done or failed version never changes again: recomputing makes a new version.
"""

from __future__ import annotations

import logging
import secrets
from dataclasses import asdict, dataclass, fields
from datetime import date, datetime

from celery.exceptions import SoftTimeLimitExceeded
from django.db import transaction
from django.db.models import Max
from django.utils import timezone
from django.utils.text import slugify
from django.utils.translation import gettext as _
from django.utils.translation import gettext_noop

from . import curve_costs, plan_decision
from .choices import Role, VersionStatus
from .models import Membership, Plan, PlanVersion, ShareLink, Team, Workload
from .result_parts import split
from .selectors import hash_share_token

logger = logging.getLogger(__name__)


# Why a version was made. Stored in English; pages translate them ({% translate version.note %}).
NOTE_ASSUMPTIONS = gettext_noop("assumptions changed")
NOTE_RECOMPUTED = gettext_noop("recomputed with today's prices")
NOTE_RETRY = gettext_noop("retry of a failed version")


class PlannerError(Exception):
    """A request the planner refuses, with a message for the user."""


# --- teams -----------------------------------------------------------------------------


def team_create(*, name: str, owner, procurement: dict | None = None) -> Team:
    """A team owned by ``owner``; ``procurement`` is validated (planner.procurement) before anything
    is written."""
    from .procurement import parse_procurement

    policy = parse_procurement(procurement or {})
    with transaction.atomic():
        base = slugify(name) or "team"
        slug, n = base, 1
        while Team.objects.filter(slug=slug).exists():
            n += 1
            slug = f"{base}-{n}"
        team = Team.objects.create(name=name, slug=slug, procurement=policy)
        Membership.objects.create(team=team, user=owner, role=Role.OWNER)
    return team


def team_procurement_update(*, team: Team, procurement: dict) -> Team:
    """Replace the team's procurement settings (validated first; CostValidationError names the
    field). Versions already queued keep the settings they froze."""
    from .procurement import parse_procurement

    team.procurement = parse_procurement(procurement)
    team.save(update_fields=["procurement"])
    return team


def membership_set(*, team: Team, user, role: Role) -> Membership:
    membership, _created = Membership.objects.update_or_create(team=team, user=user, defaults={"role": role})
    return membership


# --- workloads and plans ---------------------------------------------------------------


def workload_create(*, team: Team, name: str, spec: dict, user) -> Workload:
    """Save a workload whose spec already passed parse_workload_spec (the form or API did it)."""
    return Workload.objects.create(team=team, name=name, kind=spec["kind"], spec=spec, created_by=user)


def plan_create(*, team: Team, workload: Workload, options: dict, user, name: str = "", compute: bool = True) -> Plan:
    """Create a plan for a workload; with compute=True also its first version (queued)."""
    if workload.team_id != team.id:
        raise PlannerError(_("The workload belongs to another team."))
    with transaction.atomic():
        plan = Plan.objects.create(
            team=team, workload=workload, name=name or workload.name, cost_options=options, created_by=user
        )
        if compute:
            plan_version_create(plan=plan, user=user)
    return plan


def plan_inputs(*, plan: Plan) -> dict:
    """The inputs a new version of this plan freezes: the workload spec and the cost options."""
    return {"spec": plan.workload.spec, "costs": plan.cost_options}


def plan_snapshots(*, as_of: date, team: Team | None = None) -> tuple[dict, dict]:
    """Catalog prices and cost rates valid at as_of, plus the accelerators the sizing engine
    ranks with (their specs and USD prices), so a later computation needs nothing from today.
    With a team, its supplier quotes too (team-scoped: no other team's plan sees them)."""
    from django.conf import settings

    from catalog import revision
    from catalog.snapshots import supplier_quotes_snapshot

    thresholds = tuple(sorted(settings.PRICE_MAX_AGE_DAYS.items()))
    prices, rates = revision.cached(("plan_snapshots", as_of.isoformat(), thresholds),
                                    lambda: _catalog_snapshots(as_of))
    prices["supplier_quotes"] = supplier_quotes_snapshot(team_id=team.id, as_of=as_of) if team else []
    return prices, rates


def _catalog_snapshots(as_of: date) -> list[dict]:
    """What every plan of that date shares (cached per catalog revision by plan_snapshots)."""
    from catalog.selectors import accelerator_specs
    from catalog.snapshots import price_snapshot
    from costs.selectors import rate_card_snapshot

    prices = price_snapshot(as_of=as_of)
    prices.setdefault("accelerators", [asdict(spec) for spec in accelerator_specs(as_of=as_of)])
    return [prices, rate_card_snapshot(as_of=as_of)]


def accelerators_from_snapshot(price_snapshot: dict) -> list:
    from planner.engine.hardware import AcceleratorSpec

    known = {f.name for f in fields(AcceleratorSpec)}
    return [AcceleratorSpec(**{k: v for k, v in row.items() if k in known})
            for row in price_snapshot.get("accelerators", [])]


def plan_version_create(*, plan: Plan, user, inputs: dict | None = None, note: str = "",
                        as_of: date | None = None) -> PlanVersion:
    """Save a pending version with frozen inputs and today's snapshots; queue it on commit."""
    as_of = as_of or timezone.localdate()
    from .calibration.services import active_calibrations

    inputs = inputs if inputs is not None else plan_inputs(plan=plan)
    inputs = _with_team_procurement(inputs, plan.team)
    prices, rates = plan_snapshots(as_of=as_of, team=plan.team)
    # The team's active calibrations are frozen with the version, like the prices.
    calibrations = active_calibrations(team_id=plan.team_id).to_data()
    with transaction.atomic():
        # Lock the plan so two concurrent creations cannot take the same number.
        Plan.objects.select_for_update().filter(pk=plan.pk).first()
        number = (plan.versions.aggregate(m=Max("number"))["m"] or 0) + 1
        version = PlanVersion.objects.create(
            plan=plan, number=number, status=VersionStatus.PENDING, inputs=inputs,
            price_snapshot=prices, rate_snapshot=rates, calibrations=calibrations, as_of=as_of, note=note,
            created_by=user,
        )
        transaction.on_commit(lambda: plan_version_enqueue(version=version))
    return version


def _with_team_procurement(inputs: dict, team: Team) -> dict:
    """The team's procurement settings, frozen with the version and applied to its cost options
    (planner.procurement.apply): a later change of the settings does not alter this version."""
    from .procurement import apply

    policy = team.procurement or {}
    if not policy:
        return inputs
    costs, changes = apply(inputs.get("costs") or {}, policy)
    frozen = inputs.get("procurement") or {}
    if not changes and frozen.get("team") == policy:  # inputs of a version already narrowed: keep its record
        changes = frozen.get("changes") or []
    return {**inputs, "costs": costs, "procurement": {"team": policy, "changes": changes}}


QUEUED_MARK_PREFIX = "gpu_planner:queued:"
COMPUTE_TASK = "planner.compute_plan_version"  # planner.tasks.compute_plan_version


def broker_client():
    """A Redis client for the app's own keys (markers), or None with in-process tasks."""
    from django.conf import settings

    if not settings.REDIS_URL:
        return None
    import redis

    return redis.Redis.from_url(settings.REDIS_URL, socket_connect_timeout=1, socket_timeout=2)


def plan_version_enqueue(*, version: PlanVersion) -> bool:
    """Hand a pending version to Celery. A broker outage leaves it pending, never lost.

    The queued marker (`gpu_planner:queued:<id>`, PLAN_PENDING_REQUEUE_SECONDS) is written
    first, in the same Redis as the message: when Redis loses its data, both go together, and
    the sweeper queues every pending version without a marker again within seconds. When the
    marker cannot be written, Redis is down and publishing would fail too: give up at once.
    """
    from celery import current_app
    from django.conf import settings

    # By its registered name: planner.tasks sits above this module (it calls the services), and
    # PlannerConfig.ready imports it so the task is registered in every process.
    compute_plan_version = current_app.tasks[COMPUTE_TASK]
    client = broker_client()
    key = f"{QUEUED_MARK_PREFIX}{version.id}"
    if client is not None:
        try:
            client.set(key, "1", ex=max(settings.PLAN_PENDING_REQUEUE_SECONDS, 1))
        except Exception:
            logger.warning("could not queue plan version %s (broker unavailable); it stays pending", version.id)
            return False
    try:
        compute_plan_version.delay(version.id)
    except Exception:  # kombu raises several types when the broker is down
        logger.warning("could not queue plan version %s; it stays pending", version.id, exc_info=True)
        if client is not None:
            try:
                client.delete(key)
            except Exception:
                pass
        return False
    return True


def plan_version_received(*, version_id: int, eta: datetime | None = None) -> None:
    """A worker holds this version's message now (Celery's task_received, in its main process).

    Its queued marker is cut to PLAN_RECEIVED_MARK_SECONDS (plus the wait until `eta` for a
    retry): the marker said "a message waits in the queue", which stops being true here. A
    worker killed before it claims the row leaves the message unacked until the broker's
    visibility timeout (6 min); with the marker gone the sweeper queues the version again
    within seconds. A live worker claims in milliseconds, so the short marker costs nothing.
    """
    from django.conf import settings

    client = broker_client()
    if client is None:
        return
    wait_s = max((eta - timezone.now()).total_seconds(), 0.0) if eta is not None else 0.0
    client.set(f"{QUEUED_MARK_PREFIX}{version_id}", "received",
               ex=max(int(settings.PLAN_RECEIVED_MARK_SECONDS + wait_s + 0.999), 1))


def plan_assumptions_update(*, plan: Plan, options: dict, user) -> PlanVersion:
    """Changed cost assumptions are saved on the plan and computed as a new version."""
    with transaction.atomic():
        plan.cost_options = options
        plan.save(update_fields=["cost_options", "updated_at"])
        return plan_version_create(plan=plan, user=user, note=NOTE_ASSUMPTIONS)


def plan_recompute(*, plan: Plan, user, note: str = NOTE_RECOMPUTED) -> PlanVersion:
    return plan_version_create(plan=plan, user=user, note=note)


def plan_version_retry(*, version: PlanVersion, user) -> PlanVersion:
    """A failed version stays as it is; the retry is a new version with the same inputs."""
    if version.status != VersionStatus.FAILED:
        raise PlannerError(_("Only a failed version can be retried."))
    return plan_version_create(plan=version.plan, user=user, inputs=version.inputs,
                               note=NOTE_RETRY)


# --- computation -----------------------------------------------------------------------


@dataclass(frozen=True)
class ComputeOutcome:
    status: str
    result: dict | None
    error: str
    engine_version: str


def compute_from_inputs(*, inputs: dict, price_snapshot: dict, rate_snapshot: dict,
                        calibrations: dict | None = None) -> ComputeOutcome:
    """Run both engines on stored values only (no database, no clock): sizing, then costs.
    `calibrations` is a version's frozen Calibrations.to_data() (none: the presets)."""
    from catalog.domain.messages import with_structured
    from costs.adapters import price_sizing_result
    from costs.engine.errors import CostValidationError
    from planner.engine import ENGINE_VERSION, size_workload
    from planner.engine.calibration import Calibrations
    from planner.engine.errors import SpecValidationError
    from planner.engine.launch import serving_launch
    from planner.engine.spec import parse_workload_spec

    search_memo: list = []  # the second sizing (_describe_decided) reuses the first one's search
    try:
        accelerators = accelerators_from_snapshot(price_snapshot)
        calibrated = Calibrations.from_data(calibrations)
        spec = parse_workload_spec(inputs.get("spec") or {})
        # Sizing judges what needs the catalog, e.g. an ambiguous hardware.accelerator pin.
        sizing = size_workload(spec=spec, accelerators=accelerators, calibrations=calibrated,
                               search_memo=search_memo)
    except SpecValidationError as exc:
        lines = "; ".join(f"{e.field}: {e.message}" for e in exc.errors)
        return ComputeOutcome(VersionStatus.FAILED, None, f"invalid workload: {lines}", ENGINE_VERSION)
    sizing_dict = sizing.to_dict()
    try:
        costs = price_sizing_result(
            sizing=sizing_dict, price_snapshot=price_snapshot, rate_snapshot=rate_snapshot,
            options=inputs.get("costs") or {}, spec=inputs.get("spec"),
        )
    except CostValidationError as exc:
        lines = "; ".join(str(e) for e in exc.errors)
        return ComputeOutcome(VersionStatus.FAILED, None, f"invalid cost options: {lines}", ENGINE_VERSION)
    sizing_dict = _describe_decided(sizing_dict, costs, spec=spec, accelerators=accelerators,
                                    calibrations=calibrated, search_memo=search_memo)
    decision = plan_decision.build(sizing=sizing_dict, costs=costs, spec=inputs.get("spec") or {})
    if decision.get("hardware") and spec.serving is not None and spec.kind in plan_decision.SERVICE_KINDS:
        decision["launch"] = with_structured(serving_launch(
            spec=spec, accelerator_id=decision["hardware"]["accelerator_id"],
            layout=decision["hardware"].get("layout") or {}, gpus_per_server=decision["hardware"].get("gpus_per_server"),
            accelerator=next((a for a in accelerators if a.id == decision["hardware"]["accelerator_id"]), None)))
    sizing_dict = curve_costs.priced_curves(_listed(sizing_dict, costs), costs)
    return ComputeOutcome(VersionStatus.DONE, {"decision": decision, "sizing": sizing_dict, "costs": costs}, "",
                          ENGINE_VERSION)


def _listed(sizing_dict: dict, costs: dict) -> dict:
    """The sizing as the plan stores it: of the best configuration per accelerator (every one was
    priced) those the cost result lists, and how many there were (issue 20: a plan loads at once)."""
    from planner.engine.result import candidate_id

    cands = sizing_dict.get("candidates") or {}
    best = cands.get("best_per_accelerator")
    listed = {o.get("candidate") for o in costs.get("options") or []}
    if not isinstance(best, list) or not listed - {"api"}:
        return sizing_dict
    def _kept(rows):
        return [c for c in rows or [] if candidate_id(c) in listed]
    out = {**cands, "best_per_accelerator": _kept(best), "best_per_accelerator_total": len(best)}
    if "disaggregated" in cands:
        out["disaggregated"] = _kept(cands["disaggregated"])
    if "one_server_per_accelerator" in cands:
        out["one_server_per_accelerator"] = _kept(cands["one_server_per_accelerator"])
    return {**sizing_dict, "candidates": out}


def _describe_decided(sizing_dict: dict, costs: dict, *, spec, accelerators, calibrations,
                      search_memo: list | None = None) -> dict:
    """One plan, one answer: when the cost decision chose another configuration than the sizing's
    own pick (fewest GPUs meeting the targets), size again with the decided configuration chosen, so
    the hardware, layout, memory, latency and run-time sections describe what the plan tells the
    team to buy or rent. The sizing's own pick stays named under `fewest_gpus`."""
    from planner.engine import size_workload

    decided = ((costs.get("decision") or {}).get("recommended") or {})
    if not decided or decided.get("kind") == "api":
        return sizing_dict
    option = next((o for o in costs.get("options") or [] if o.get("id") == decided.get("id")), {})
    chosen = plan_decision.configuration_of(sizing_dict, decided.get("candidate"), option.get("detail") or {})
    if chosen is None:
        return sizing_dict
    if not plan_decision.describes(sizing_dict, chosen):
        own = sizing_dict.get("recommendation") or {}
        redone = size_workload(spec=spec, accelerators=accelerators, calibrations=calibrations, chosen=chosen,
                               search_memo=search_memo).to_dict()
        if not plan_decision.describes(redone, chosen):  # not among the candidates: keep the sizing as it was
            return sizing_dict
        redone["fewest_gpus"] = {k: own.get(k) for k in ("accelerator_id", "accelerator", "count", "layout")}
        sizing_dict = redone
    # the recommendation's reason is the decision's rule, not the sizing's ranking
    rec = sizing_dict["recommendation"]
    rec.pop("why_i18n", None)
    rec["why"] = decided.get("why") or rec.get("why")
    if decided.get("why_i18n"):
        rec["why_i18n"] = decided["why_i18n"]
    return sizing_dict


def _fault_injection_delay(setting: str = "FAULT_INJECTION_COMPUTE_DELAY_SECONDS") -> None:
    """Fault tests only (forced to 0 in production): hold the row lock long enough for a test
    to kill the worker mid-computation (COMPUTE), or wait between a message's receipt and the
    row's claim (CLAIM), so a kill lands in that window."""
    from django.conf import settings

    delay = getattr(settings, setting, 0)
    if delay > 0:
        import time

        time.sleep(delay)


def _give_up_reason(version: PlanVersion, max_attempts: int) -> str:
    return (f"gave up after {version.attempts} attempts (max {max_attempts}): the computation was "
            "interrupted each time (worker lost, time limit or database outage)")


def plan_version_compute(*, version_id: int) -> PlanVersion | None:
    """Compute a version exactly once; done or failed versions are never touched again.

    The engines run inside a transaction holding the version's row lock. A duplicate delivery
    finds the row locked and skips it (SKIP LOCKED). A worker killed mid-way loses its
    connection, so the database rolls back and releases the lock: the row stays "running"
    but unlocked, which tells the redelivered task (or the sweeper) to take it over.
    Database errors propagate, so the task retries them with backoff.
    """
    from django.conf import settings
    from django.db import InterfaceError, OperationalError

    max_attempts = settings.PLAN_MAX_ATTEMPTS
    _fault_injection_delay("FAULT_INJECTION_CLAIM_DELAY_SECONDS")
    # 1. Claim: count the attempt and show "running" (committed, so the user sees it).
    with transaction.atomic():
        version = PlanVersion.objects.select_for_update(skip_locked=True).filter(pk=version_id).first()
        if version is None:  # unknown id, or a live worker holds the row
            return PlanVersion.objects.filter(pk=version_id).first()
        if version.is_finished:
            return version
        if version.attempts >= max_attempts:
            version.status = VersionStatus.FAILED
            version.error = _give_up_reason(version, max_attempts)
            version.finished_at = timezone.now()
            version.save(update_fields=["status", "error", "finished_at"])
            return version
        version.status = VersionStatus.RUNNING
        version.attempts += 1
        version.started_at = timezone.now()
        version.save(update_fields=["status", "attempts", "started_at"])

    # 2. Compute under the row lock; write the result only if nobody finished it meanwhile.
    with transaction.atomic():
        version = PlanVersion.objects.select_for_update(skip_locked=True).filter(pk=version_id).first()
        if version is None or version.status != VersionStatus.RUNNING:
            return version or PlanVersion.objects.filter(pk=version_id).first()
        _fault_injection_delay()
        try:
            outcome = compute_from_inputs(
                inputs=version.inputs, price_snapshot=version.price_snapshot, rate_snapshot=version.rate_snapshot,
                calibrations=version.calibrations,
            )
        except (OperationalError, InterfaceError):
            raise  # transient: the task retries
        except SoftTimeLimitExceeded:
            outcome = ComputeOutcome(VersionStatus.FAILED, None, "the computation exceeded its time limit", "")
        except Exception as exc:  # the reason is shown to the user; the trace goes to the log
            logger.exception("plan version %s failed", version_id)
            outcome = ComputeOutcome(VersionStatus.FAILED, None, f"{type(exc).__name__}: {exc}"[:2000], "")
        version.status = outcome.status
        version.result, version.option_catalog = split(outcome.result)
        version.error = outcome.error or ("" if outcome.status == VersionStatus.DONE else "unknown error")
        version.engine_version = outcome.engine_version
        version.finished_at = timezone.now()
        version.save(update_fields=["status", "result", "option_catalog", "error", "engine_version",
                                 "finished_at"])
    return version


# --- share links -----------------------------------------------------------------------


def share_link_create(*, plan: Plan, user, expires_at: datetime | None = None) -> tuple[ShareLink, str]:
    """A new read-only link; returns (link, token). Only the token's sha256 is stored."""
    if expires_at is not None and expires_at <= timezone.now():
        raise PlannerError(_("The expiry must be in the future."))
    token = secrets.token_urlsafe(32)  # 256 bits of randomness
    link = ShareLink.objects.create(
        plan=plan, token_hash=hash_share_token(token), token_prefix=token[:6], created_by=user, expires_at=expires_at
    )
    return link, token


def share_link_revoke(*, link: ShareLink) -> ShareLink:
    if link.revoked_at is None:
        link.revoked_at = timezone.now()
        link.save(update_fields=["revoked_at"])
    return link
