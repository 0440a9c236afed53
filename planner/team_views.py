"""Teams on the web: create one (asked its procurement settings, with defaults for the page's
language) and change its procurement settings (owners only)."""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.shortcuts import get_object_or_404, redirect, render
from django.utils.translation import get_language
from django.utils.translation import gettext as _

from . import selectors, services
from .choices import Role
from .procurement import defaults_for_language
from .procurement_view import rules_view
from .team_forms import ProcurementForm, TeamCreateForm


@login_required
def team_create(request):
    if request.method == "POST":
        form = TeamCreateForm(request.POST)
        if form.is_valid():
            team = services.team_create(name=form.cleaned_data["name"], owner=request.user,
                                        procurement=form.procurement())
            messages.success(request, _("Team %(name)s created.") % {"name": team.name})
            return redirect("team_procurement", team_id=team.id)
    else:
        form = TeamCreateForm(initial=defaults_for_language(get_language()))
    status = 400 if request.method == "POST" else 200
    return render(request, "planner/team_form.html", {"form": form, "team": None}, status=status)


@login_required
def team_procurement(request, team_id: int):
    team = get_object_or_404(selectors.teams_for_user(user=request.user), pk=team_id)
    is_owner = selectors.role_for(user=request.user, team_id=team.id) == Role.OWNER
    if request.method == "POST":
        if not is_owner:
            raise PermissionDenied(_("Only the team's owners change its procurement settings."))
        form = ProcurementForm(request.POST)
        if form.is_valid():
            services.team_procurement_update(team=team, procurement=form.procurement())
            messages.success(request, _("Procurement settings saved; new plan versions follow them."))
            return redirect("team_procurement", team_id=team.id)
    else:
        form = ProcurementForm(initial=team.procurement)
    status = 400 if request.method == "POST" else 200
    return render(request, "planner/team_form.html",
                  {"form": form, "team": team, "can_edit": is_owner, "rules": rules_view(team.procurement)},
                  status=status)
