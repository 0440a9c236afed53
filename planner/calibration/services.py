"""Writes and reads for measured runs and calibrations (docs/CALIBRATION.md).

Runs are stored per team, all-or-nothing per file; a calibration is fitted on the team's runs
of one key when the team activates it, and frozen (values + label) until it is refitted.
`active_calibrations(team)` is what a new plan version freezes and the engines use.
"""

from __future__ import annotations

import hashlib
import json
import math
import statistics
from collections import defaultdict
from dataclasses import asdict, dataclass, field
from datetime import date

from django.core.cache import cache
from django.core.exceptions import ValidationError
from django.db import IntegrityError, transaction
from django.utils import timezone
from django.utils.translation import gettext as _

from catalog.domain.messages import to_data
from planner.engine.calibration import NO_CALIBRATIONS, Calibrations

from . import fit
from .formats import (
    DuplicateRunsError,
    Resolver,
    RunError,
    RunFileError,
    clean_serving,
    clean_training,
    kind_of,
    parse_file,
)
from .models import Calibration, MeasuredRun, RunKind, RunSource

RUN_FIELDS = [f.name for f in MeasuredRun._meta.fields
              if f.name not in ("id", "team", "kind", "source", "source_name", "created_by", "created_at",
                                "fingerprint", "fit_memo", "notes")]
# What makes two records the same run (not where it came from or what the file called things).
SAME_RUN_FIELDS = [f for f in RUN_FIELDS if f not in ("raw", "source_line", "model_given", "accelerator_given")]


def fingerprint(kind: str, rec: dict) -> str:
    canon = json.dumps([kind, {k: rec.get(k) for k in SAME_RUN_FIELDS}], sort_keys=True, default=str)
    return hashlib.sha256(canon.encode()).hexdigest()


def catalog_resolver() -> Resolver:
    from catalog.selectors import accelerator_aliases, accelerator_specs

    return Resolver(accelerator_specs(as_of=timezone.localdate()), accelerator_aliases())


def _store(*, team, user, kind: str, source: str, records: list[dict], source_name: str = "") -> list[MeasuredRun]:
    seen, in_file, recorded = {}, [], []
    for rec in records:
        fp = fingerprint(kind, rec)
        if fp in seen:
            in_file.append(RunError(rec.get("source_line"), "file", _("the same run as line %(line)s") % {
                "line": seen[fp]}))
        seen[fp] = rec.get("source_line")
    known = dict(MeasuredRun.objects.filter(team=team, fingerprint__in=list(seen)).values_list("fingerprint", "created_at"))
    for fp, line in seen.items():
        if fp in known:
            recorded.append(RunError(line, "file", _("this run is already recorded (%(when)s)") % {
                "when": timezone.localtime(known[fp]).strftime("%Y-%m-%d %H:%M")}))
    if in_file:  # the file repeats itself: bad input, whatever is stored
        raise RunFileError(in_file + recorded)
    if recorded:
        raise DuplicateRunsError(recorded)
    try:
        return _save(team=team, user=user, kind=kind, source=source, records=records, source_name=source_name)
    except IntegrityError:  # the same run recorded at the same moment by another request
        raise DuplicateRunsError([RunError(None, "file", _("this run is already recorded"))]) from None


def _save(*, team, user, kind, source, records, source_name) -> list[MeasuredRun]:
    runs = []
    with transaction.atomic():
        for rec in records:
            run = MeasuredRun(team=team, kind=kind, source=source, source_name=source_name[:255], created_by=user,
                              fingerprint=fingerprint(kind, rec), notes=[to_data(n) for n in rec.get("notes", ())],
                              **{k: v for k, v in rec.items() if k in RUN_FIELDS})
            try:
                run.full_clean(exclude=["team", "created_by", "raw", "fingerprint"], validate_constraints=False)
            except ValidationError as exc:  # a bound the validator missed: still a message, not a 500
                raise RunFileError([RunError(rec.get("source_line"), f, "; ".join(m))
                                    for f, m in exc.message_dict.items()]) from None
            run.save()  # one by one: the audit log records each run
            runs.append(run)
    return runs


def runs_import(*, team, user, content: bytes, fmt: str = "auto", context: dict | None = None,
                filename: str = "", resolver: Resolver | None = None) -> list[MeasuredRun]:
    """Parse, validate and store a benchmark file; RunFileError (and nothing stored) if any row is bad."""
    resolver = resolver or catalog_resolver()
    fmt, records = parse_file(content, fmt=fmt, context={k: v for k, v in (context or {}).items() if v not in (None, "")},
                              resolver=resolver)
    runs = _store(team=team, user=user, kind=kind_of(fmt), source=fmt, records=records, source_name=filename)
    _fit_when_recorded(runs, resolver)
    return runs


def _fit_when_recorded(runs: list[MeasuredRun], resolver: Resolver) -> None:
    """Each serving run's own fit, made now (one run: ~0.4 s) so the scoreboard only reads them."""
    for run in runs:
        if run.kind == RunKind.SERVING and run.accelerator in resolver.by_id:
            _stored_fit(run, resolver.by_id[run.accelerator])


def run_record(*, team, user, kind: str, data: dict, source: str = RunSource.FORM,
               resolver: Resolver | None = None) -> MeasuredRun:
    """One run typed in a form or sent to the API (canonical field names, as the CSV columns)."""
    resolver = resolver or catalog_resolver()
    errors: list[RunError] = []
    clean = clean_serving if kind == RunKind.SERVING else clean_training
    rec = clean(dict(data), line=None, resolver=resolver, errors=errors)
    if rec is None:
        raise RunFileError(errors)
    rec["raw"] = {k: v for k, v in data.items() if isinstance(v, str | int | float | type(None))}
    runs = _store(team=team, user=user, kind=kind, source=source, records=[rec])
    _fit_when_recorded(runs, resolver)
    return runs[0]


def run_delete(*, run: MeasuredRun) -> None:
    run.delete()


# ------------------------------------------------------------------------------- fitting


def _run_fields(run: MeasuredRun) -> dict:
    return {f: getattr(run, f) for f in RUN_FIELDS}


def _day(run: MeasuredRun) -> date:
    return run.measured_on or timezone.localtime(run.created_at).date()


@dataclass
class RunScore:
    run: MeasuredRun
    implied: dict
    preset: dict
    calibrated: dict
    notes: tuple = ()


@dataclass
class Group:
    kind: str
    accelerator: str
    runtime: str
    precision: str
    accelerator_name: str
    runs: list = field(default_factory=list)
    scores: list = field(default_factory=list)
    values: dict = field(default_factory=dict)
    fit: dict = field(default_factory=dict)
    label: str = ""
    calibration: Calibration | None = None
    error: str = ""

    @property
    def key(self) -> str:
        return "|".join((self.kind, self.accelerator, self.runtime, self.precision))

    @property
    def up_to_date(self) -> bool:
        c = self.calibration
        return c is not None and sorted(c.fit.get("runs", [])) == sorted(r.id for r in self.runs)


def _median_abs(values) -> float | None:
    vals = [abs(v) for v in values if v is not None]
    return statistics.median(vals) if vals else None


FIT_CACHE_SECONDS = 24 * 3600


def _memo_key(name: str, run: MeasuredRun, acc, *extra) -> str:
    from planner.engine import ENGINE_VERSION

    raw = json.dumps([name, ENGINE_VERSION, fit.engine_generation(), _run_fields(run), asdict(acc), *extra],
                     sort_keys=True, default=str)
    return "calibration-fit:" + hashlib.sha256(raw.encode()).hexdigest()


def _memo(name: str, run: MeasuredRun, acc, compute, *extra):
    """Predictions cost the engine an evaluation or a few: keep them per (engine, run, accelerator)."""
    key = _memo_key(name, run, acc, *extra)
    hit = cache.get(key)
    if hit is None:
        hit = compute()
        cache.set(key, hit, FIT_CACHE_SECONDS)
    return hit


def _stored_fit(run: MeasuredRun, acc) -> fit.ServingFit:
    """A serving run's own fit (about 0.4 s: some 80 engine evaluations), kept on the run itself so a
    scoreboard of a hundred runs reads them instead of spending a minute; made again (and kept) only
    when the engine or the accelerator's catalog data changed since."""
    key = _memo_key("serving-fit", run, acc)
    memo = run.fit_memo or {}
    if memo.get("key") == key:
        preset = {k: math.inf if v is None else v for k, v in memo["preset"].items()}  # None: JSON's infinity
        return fit.ServingFit(prefill_scale=memo["prefill_scale"], decode_scale=memo["decode_scale"],
                              preset=fit.ServingPrediction(**preset), notes=tuple(memo["notes"]))
    got = fit.fit_serving_run(_run_fields(run), acc)
    preset = {k: v if math.isfinite(v) else None for k, v in asdict(got.preset).items()}
    run.fit_memo = {"key": key, "prefill_scale": got.prefill_scale, "decode_scale": got.decode_scale,
                    "preset": preset, "notes": list(got.notes)}
    MeasuredRun.objects.filter(pk=run.pk).update(fit_memo=run.fit_memo)  # derived data: no audit entry
    return got


def _serving_score(prediction, run: MeasuredRun) -> dict:
    """Predicted TTFT/TPOT and their errors; None where the engine finds no finite answer (the
    layout does not fit its memory budget: the fit's note says so) rather than an infinity."""
    out = {}
    for metric, measured in (("ttft", run.ttft_mean_ms), ("tpot", run.tpot_mean_ms)):
        value = getattr(prediction, f"{metric}_ms")
        value = value if math.isfinite(value) else None
        out[f"{metric}_ms"] = value
        out[f"{metric}_error"] = None if value is None else fit.rel_error(value, measured)
    return out


def _fit_serving(group: Group, accs: dict) -> None:
    acc = accs[group.accelerator]
    fits = [(run, _stored_fit(run, acc)) for run in group.runs]
    pre = fit.spread([f.prefill_scale for _r, f in fits])
    dec = fit.spread([f.decode_scale for _r, f in fits])
    weights = statistics.mode(run.precision for run in group.runs)
    group.values = fit.serving_values(acc, group.runtime, weights, prefill_scale=pre["median"],
                                      decode_scale=dec["median"])
    versions = sorted({r.runtime_version for r in group.runs if r.runtime_version})
    day = max(_day(r) for r in group.runs).isoformat()
    group.label = fit.serving_label(values=group.values, runs=len(group.runs), accelerator=group.accelerator_name,
                                    runtime=group.runtime, versions=versions, measured_on=day)
    for run, f in fits:
        fields = _run_fields(run)
        cal = _memo("serving-predict", run, acc, lambda f=fields: fit.predict_serving(
            f, acc, prefill_scale=pre["median"], decode_scale=dec["median"]), pre["median"], dec["median"])
        group.scores.append(RunScore(
            run=run,
            implied=fit.serving_values(acc, run.runtime, run.precision, prefill_scale=f.prefill_scale,
                                       decode_scale=f.decode_scale),
            preset=_serving_score(f.preset, run), calibrated=_serving_score(cal, run),
            notes=f.notes))
    implied = [s.implied for s in group.scores]
    group.fit = {
        "label_msg": group.label.to_data(),  # template + parameters, for rendering in the user's language
        "prefill_scale": pre, "decode_scale": dec, "runs": [r.id for r in group.runs],
        "range": {k: {"low": min(i[k] for i in implied), "high": max(i[k] for i in implied)} for k in group.values},
        "error_before": {m: _median_abs(s.preset[f"{m}_error"] for s in group.scores) for m in ("ttft", "tpot")},
        "error_after": {m: _median_abs(s.calibrated[f"{m}_error"] for s in group.scores) for m in ("ttft", "tpot")},
    }


def _fit_training(group: Group, accs: dict) -> None:
    acc = accs[group.accelerator]
    implied = [(run, _memo("training-implied", run, acc, lambda r=run: fit.implied_training_efficiency(_run_fields(r), acc)))
               for run in group.runs]
    mfu = fit.spread([i["mfu"] for _r, i in implied])
    goodputs = [i["goodput"] for _r, i in implied if i["goodput"] is not None]
    gp = fit.spread(goodputs) if goodputs else None
    group.values = {"mfu": round(mfu["median"], 6), "mfu_low": round(mfu["low"], 6), "mfu_high": round(mfu["high"], 6)}
    if gp is not None:
        group.values["goodput"] = round(gp["median"], 6)
    day = max(_day(r) for r in group.runs).isoformat()
    group.label = fit.training_label(values=group.values, runs=len(group.runs), accelerator=group.accelerator_name,
                                     measured_on=day)
    for run, imp in implied:
        fields = _run_fields(run)
        measured = fit.training_tokens_per_s(fields)
        preset_mfu = imp["preset_mfu"]
        p_tps = fit.predict_training_tokens_per_s(fields, imp, mfu=preset_mfu)
        c_tps = fit.predict_training_tokens_per_s(fields, imp, mfu=mfu["median"])
        group.scores.append(RunScore(
            run=run, implied={"mfu": imp["mfu"], "goodput": imp["goodput"]},
            preset={"mfu": preset_mfu, "tokens_per_s": p_tps, "tokens_per_s_error": fit.rel_error(p_tps, measured)},
            calibrated={"mfu": mfu["median"], "tokens_per_s": c_tps,
                        "tokens_per_s_error": fit.rel_error(c_tps, measured)}))
    group.fit = {
        "label_msg": group.label.to_data(),
        "mfu": mfu, "goodput": gp, "runs": [r.id for r in group.runs],
        "error_before": {"tokens_per_s": _median_abs(s.preset["tokens_per_s_error"] for s in group.scores)},
        "error_after": {"tokens_per_s": _median_abs(s.calibrated["tokens_per_s_error"] for s in group.scores)},
    }


def team_groups(*, team, resolver: Resolver | None = None) -> list[Group]:
    """The team's runs grouped by calibration key, each fitted, with its stored calibration."""
    runs = list(MeasuredRun.objects.filter(team=team).order_by("created_at", "id"))
    if not runs:
        return []
    resolver = resolver or catalog_resolver()
    cals = {(c.kind, c.accelerator, c.runtime, c.precision): c for c in Calibration.objects.filter(team=team)}
    groups: dict[tuple, Group] = {}
    for run in runs:
        a, r, p = run.calibration_key
        key = (run.kind, a, r, p)
        if key not in groups:
            acc = resolver.by_id.get(a)
            groups[key] = Group(kind=run.kind, accelerator=a, runtime=r, precision=p,
                                accelerator_name=acc.model if acc else a, calibration=cals.get(key))
        groups[key].runs.append(run)
    for g in groups.values():
        if g.accelerator not in resolver.by_id:
            g.error = _("The accelerator %(id)s is no longer in the catalog.") % {"id": g.accelerator}
            continue
        (_fit_serving if g.kind == RunKind.SERVING else _fit_training)(g, resolver.by_id)
    return sorted(groups.values(), key=lambda g: (g.kind, g.accelerator, g.runtime, g.precision))


class CalibrationError(Exception):
    pass


class NoSuchGroup(CalibrationError):
    """The key names no scoreboard group of the team (the API's 404)."""


def calibration_activate(*, team, key: str, user, resolver: Resolver | None = None) -> Calibration:
    """Fit the team's runs of `key` ("kind|accelerator|runtime|precision") and make it active."""
    groups = {g.key: g for g in team_groups(team=team, resolver=resolver)}
    group = groups.get(key)
    if group is None:
        raise NoSuchGroup(_("No measured runs of this team for that accelerator, engine and precision."))
    if group.error:
        raise CalibrationError(group.error)
    with transaction.atomic():
        cal, _created = Calibration.objects.select_for_update().get_or_create(
            team=team, kind=group.kind, accelerator=group.accelerator, runtime=group.runtime,
            precision=group.precision,
            defaults={"values": group.values, "fit": group.fit, "label": group.label, "run_count": len(group.runs),
                      "created_by": user})
        cal.values, cal.fit, cal.label, cal.run_count, cal.active = (group.values, group.fit, group.label,
                                                                     len(group.runs), True)
        cal.save()
    return cal


def calibration_deactivate(*, calibration: Calibration) -> Calibration:
    if calibration.active:
        calibration.active = False
        calibration.save(update_fields=["active", "updated_at"])
    return calibration


def calibration_delete(*, calibration: Calibration) -> None:
    """Remove a calibration (the API's DELETE): new estimates use the presets again; plan versions
    keep the values they froze, and its runs stay on the scoreboard to be fitted again."""
    calibration.delete()


def active_calibrations(*, team_id: int) -> Calibrations:
    rows = Calibration.objects.filter(team_id=team_id, active=True).values(
        "kind", "accelerator", "runtime", "precision", "label", "values")
    rows = list(rows)
    return fit.build_calibrations(rows) if rows else NO_CALIBRATIONS


def group_rows(groups) -> dict:
    """Runs per calibration key, for the scoreboard summary."""
    out = defaultdict(list)
    for g in groups:
        out[g.kind].append(g)
    return out
