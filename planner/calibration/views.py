"""Web pages of calibration: the scoreboard, uploading and typing runs, (de)activating.

Thin like planner/views.py: a team is looked up among the user's teams (another team's is a
404), changes need the editor or owner role, the work is in planner.calibration.services.
"""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.http import Http404
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.utils.translation import gettext as _
from django.views.decorators.http import require_POST

from .. import i18n, selectors
from . import services as cs
from .formats import RunFileError
from .forms import RunForm, RunUploadForm
from .models import Calibration, MeasuredRun, RunKind


def _team(request, team_id=None):
    teams = selectors.teams_for_user(user=request.user).order_by("name", "id")
    if team_id in (None, ""):
        team = teams.first()
        if team is None:
            raise Http404("no team")
        return team
    try:
        return get_object_or_404(teams, pk=int(team_id))
    except (TypeError, ValueError):
        raise Http404("bad team id") from None


def _require_edit(request, team) -> None:
    if not selectors.can_edit(user=request.user, team_id=team.id):
        raise PermissionDenied(_("Your role in this team can read calibrations but not change them."))


def _board_url(team) -> str:
    return reverse("calibration") + f"?team={team.id}"


def _editable(request):
    return selectors.teams_editable_by(user=request.user).order_by("name", "id")


@login_required
def scoreboard(request):
    team = _team(request, request.GET.get("team"))
    groups = cs.team_groups(team=team)
    can_edit = selectors.can_edit(user=request.user, team_id=team.id)
    context = {
        "team": team, "teams": selectors.teams_for_user(user=request.user).order_by("name", "id"),
        "groups": groups, "can_edit": can_edit,
        "upload_form": RunUploadForm(teams=_editable(request), initial={"team": team}) if can_edit else None,
    }
    return render(request, "planner/calibration/scoreboard.html", context)


@login_required
def run_upload(request):
    teams = _editable(request)
    if not teams.exists():
        raise PermissionDenied(_("You need the editor or owner role in a team to record runs."))
    form = RunUploadForm(request.POST or None, request.FILES or None, teams=teams)
    if request.method == "POST" and form.is_valid():
        team = form.cleaned_data["team"]
        upload = form.cleaned_data["file"]
        try:
            runs = cs.runs_import(team=team, user=request.user, content=upload.read(), fmt=form.cleaned_data["format"],
                                  context=form.context(), filename=upload.name)
        except RunFileError as exc:
            for e in exc.errors:
                form.add_error(None, str(e))
        else:
            messages.success(request, _("%(n)d run(s) recorded from %(file)s.") % {"n": len(runs), "file": upload.name})
            for run in runs:
                for note in run.notes:
                    messages.warning(request, _("Line %(line)s: %(note)s") % {
                        "line": run.source_line or "-", "note": i18n.render(note)})
            return redirect(_board_url(team))
    status = 400 if request.method == "POST" else 200
    return render(request, "planner/calibration/upload.html", {"form": form}, status=status)


@login_required
def run_create(request, kind: str):
    if kind not in RunKind.values:
        raise Http404("unknown kind")
    teams = _editable(request)
    if not teams.exists():
        raise PermissionDenied(_("You need the editor or owner role in a team to record runs."))
    form = RunForm(request.POST or None, teams=teams, kind=kind)
    if request.method == "POST" and form.is_valid():
        team = form.cleaned_data["team"]
        try:
            cs.run_record(team=team, user=request.user, kind=kind, data=form.data_fields())
        except RunFileError as exc:
            form.add_run_errors(exc.errors)
        else:
            messages.success(request, _("The run is recorded."))
            return redirect(_board_url(team))
    status = 400 if request.method == "POST" else 200
    return render(request, "planner/calibration/run_form.html", {"form": form, "kind": kind}, status=status)


@login_required
@require_POST
def run_delete(request, run_id: int):
    run = get_object_or_404(MeasuredRun.objects.filter(team__in=selectors.teams_for_user(user=request.user)),
                            pk=run_id)
    _require_edit(request, run.team)
    team = run.team
    cs.run_delete(run=run)
    messages.success(request, _("The run is deleted; refit the calibration to leave it out."))
    return redirect(_board_url(team))


@login_required
@require_POST
def calibration_activate(request):
    team = _team(request, request.POST.get("team"))
    _require_edit(request, team)
    try:
        cal = cs.calibration_activate(team=team, key=request.POST.get("key", ""), user=request.user)
    except cs.CalibrationError as exc:
        messages.error(request, str(exc))
    else:
        messages.success(request, _("Active in this team's new estimates: %(label)s") % {"label": cal.label})
    return redirect(_board_url(team))


@login_required
@require_POST
def calibration_deactivate(request, calibration_id: int):
    cal = get_object_or_404(Calibration.objects.filter(team__in=selectors.teams_for_user(user=request.user)),
                            pk=calibration_id)
    _require_edit(request, cal.team)
    cs.calibration_deactivate(calibration=cal)
    messages.success(request, _("Turned off: new estimates use the presets again."))
    return redirect(_board_url(cal.team))
