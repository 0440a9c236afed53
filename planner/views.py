"""Web views of the planner: thin (validate, call one service or selector, render).

Objects are looked up through team-scoped selectors, so another team's id is a 404.
Viewers can read; changing anything needs the editor or owner role (403).
"""

from __future__ import annotations

from datetime import datetime, time

from django.contrib import messages
from django.contrib.auth import views as auth_views
from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.db import transaction
from django.http import Http404, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.utils import timezone
from django.utils.translation import gettext as _
from django.views.decorators.http import require_GET, require_POST

from . import plan_exports, presentation, selectors, services
from .choices import VersionStatus
from .downloads import attachment
from .forms import CostOptionsForm, WorkloadForm
from .models import PlanVersion, ShareLink

# htmx stops polling when the response status is 286.
HTMX_STOP_POLLING = 286


def home(request):
    plans = selectors.plans_for_user(user=request.user) if request.user.is_authenticated else []
    teams = selectors.teams_for_user(user=request.user).order_by("name")
    return render(request, "planner/home.html", {"plans": plans, "teams": teams})


# --- helpers ---------------------------------------------------------------------------


def _plan_or_404(request, plan_id: int):
    plans = selectors.plan_with_history(plans=selectors.plans_for_user(user=request.user))
    return get_object_or_404(plans, pk=plan_id)


def _require_edit(request, team_id: int) -> None:
    if not selectors.can_edit(user=request.user, team_id=team_id):
        raise PermissionDenied(_("Your role in this team can read plans but not change them."))


def _version_or_404(plan, number: int) -> PlanVersion:
    return get_object_or_404(PlanVersion.objects.filter(plan=plan), number=number)


def _version_url(version: PlanVersion) -> str:
    return reverse("plan_version", args=[version.plan_id, version.number])


# --- workload form ---------------------------------------------------------------------


def _workload_form(request, data=None, files=None):
    teams = selectors.teams_editable_by(user=request.user)
    initial = {"team": teams.first()}
    return WorkloadForm(data, files, teams=teams, initial=initial)


@login_required
def workload_create(request):
    if not selectors.teams_editable_by(user=request.user).exists():
        raise PermissionDenied(_("You need the editor or owner role in a team to create workloads."))
    show_errors = True
    if request.method == "POST" and "refresh" in request.POST:
        # Without JavaScript: show the fields of the newly chosen kind, save nothing.
        form, show_errors = _workload_form(request, request.POST), False
    elif request.method == "POST":
        form = _workload_form(request, request.POST, request.FILES)
        if form.is_valid():
            with transaction.atomic():
                team = form.cleaned_data["team"]
                workload = services.workload_create(
                    team=team, name=form.cleaned_data["name"], spec=form.spec, user=request.user
                )
                plan = services.plan_create(team=team, workload=workload, options=form.options(), user=request.user)
            return redirect("plan_detail", plan_id=plan.id)
    else:
        form = _workload_form(request)
    status = 400 if request.method == "POST" and show_errors else 200
    return render(request, "planner/workload_form.html", {"form": form, "show_errors": show_errors}, status=status)


@login_required
@require_POST
def workload_form_partial(request):
    """htmx: the form's steps again after the kind or the preset changed (no errors shown)."""
    data = request.POST.copy()
    if request.GET.get("fill") == "preset":
        data.update(presentation.preset_architecture_fields(data.get("preset", "")))
    form = _workload_form(request, data)
    return render(request, "planner/partials/workload_steps.html", {"form": form, "show_errors": False})


@login_required
@require_POST
def workload_validate(request):
    """htmx: re-validate the whole form, answer with the one field that changed."""
    form = _workload_form(request, request.POST, request.FILES)
    name = request.headers.get("HX-Trigger-Name") or request.GET.get("field", "")
    if name not in form.fields:
        raise Http404("unknown field")
    form.is_valid()
    return render(request, "planner/partials/field.html", {"field": form[name], "show_errors": True})


# --- plan and versions -----------------------------------------------------------------


@login_required
def plan_detail(request, plan_id: int):
    plan = _plan_or_404(request, plan_id)
    if not plan.history:
        raise Http404("plan without versions")
    return _render_version(request, plan, plan.history[0].number)


@login_required
def plan_version(request, plan_id: int, number: int):
    plan = _plan_or_404(request, plan_id)
    return _render_version(request, plan, number)


def _render_version(request, plan, number: int, *, shared_link: ShareLink | None = None):
    version = _version_or_404(plan, number)
    can_edit = shared_link is None and selectors.can_edit(user=request.user, team_id=plan.team_id)
    context = {
        "plan": plan,
        "version": version,
        "view": presentation.version_view(version),
        "can_edit": can_edit,
        "shared": shared_link is not None,
        "assumptions_form": CostOptionsForm(initial=CostOptionsForm.initial_from(plan.cost_options)) if can_edit else None,
        "new_token": request.session.pop(f"share-token-{plan.id}", None) if shared_link is None else None,
        "messages": _page_messages(request, version),
        "share_token": shared_link_token(request, shared_link),
    }
    return render(request, "planner/plan.html", context)


# h/form: a "version N queued" flash is stale once version N is finished (a fast worker finishes
# before the redirect lands): it then says the version is computed (or failed) instead.
def _page_messages(request, version) -> list:
    from django.contrib.messages.storage.base import Message

    out = []
    for m in messages.get_messages(request):
        if f"queued-v{version.number}" in (m.extra_tags or "").split() and version.is_finished:
            if version.status == VersionStatus.DONE:
                m = Message(messages.SUCCESS, _("Version %(n)s is computed.") % {"n": version.number})
            else:
                m = Message(messages.ERROR, _("Version %(n)s failed; the reason is below.") % {"n": version.number})
        out.append(m)
    return out


def shared_link_token(request, shared_link) -> str | None:
    """The token of the shared page being read (from its URL), for its export links."""
    if shared_link is None:
        return None
    return (request.resolver_match.kwargs or {}).get("token") if request.resolver_match else None


@login_required
@require_GET
def plan_version_status(request, plan_id: int, number: int):
    """htmx polling target: the progress box; 286 stops polling once the version is finished."""
    plan = _plan_or_404(request, plan_id)
    version = _version_or_404(plan, number)
    response = render(request, "planner/partials/status.html", {"plan": plan, "version": version,
                                                                "can_edit": selectors.can_edit(user=request.user, team_id=plan.team_id)})
    if version.is_finished:
        response.status_code = HTMX_STOP_POLLING
        response["HX-Refresh"] = "true"  # reload the page to draw the finished plan
    return response


@login_required
@require_POST
def plan_recompute(request, plan_id: int):
    plan = _plan_or_404(request, plan_id)
    _require_edit(request, plan.team_id)
    version = services.plan_recompute(plan=plan, user=request.user)
    messages.success(request, _("Version %(n)s queued with today's prices.") % {"n": version.number},
                     extra_tags=f"queued-v{version.number}")
    return redirect(_version_url(version))


@login_required
@require_POST
def plan_assumptions(request, plan_id: int):
    plan = _plan_or_404(request, plan_id)
    _require_edit(request, plan.team_id)
    form = CostOptionsForm(request.POST)
    if not form.is_valid():
        version = plan.history[0]
        context = {"plan": plan, "version": version, "view": presentation.version_view(
            PlanVersion.objects.get(pk=version.pk)), "can_edit": True, "shared": False, "assumptions_form": form}
        return render(request, "planner/plan.html", context, status=400)
    version = services.plan_assumptions_update(plan=plan, options=form.options(), user=request.user)
    messages.success(request, _("Assumptions saved; version %(n)s queued.") % {"n": version.number},
                     extra_tags=f"queued-v{version.number}")
    return redirect(_version_url(version))


@login_required
@require_POST
def plan_version_retry(request, plan_id: int, number: int):
    plan = _plan_or_404(request, plan_id)
    _require_edit(request, plan.team_id)
    version = _version_or_404(plan, number)
    if version.status == VersionStatus.PENDING:
        # Nothing to copy: hand the same pending row to the queue again.
        services.plan_version_enqueue(version=version)
        return redirect(_version_url(version))
    try:
        new = services.plan_version_retry(version=version, user=request.user)
    except services.PlannerError as exc:
        messages.error(request, str(exc))
        return redirect(_version_url(version))
    return redirect(_version_url(new))


@login_required
@require_GET
def plan_diff(request, plan_id: int):
    plan = _plan_or_404(request, plan_id)
    numbers = [v.number for v in plan.history]
    try:
        a = int(request.GET.get("a") or (numbers[1] if len(numbers) > 1 else numbers[0]))
        b = int(request.GET.get("b") or numbers[0])
    except (ValueError, IndexError) as exc:
        raise Http404("bad version numbers") from exc
    old, new = _version_or_404(plan, a), _version_or_404(plan, b)
    diff = presentation.version_diff(old=old, new=new)
    return render(request, "planner/diff.html", {"plan": plan, "old": old, "new": new, "diff": diff,
                                                  "numbers": numbers, "diff_only": [
                                                      (diff["only_old"], old.number, new.number),
                                                      (diff["only_new"], new.number, old.number)]})


# --- share links -----------------------------------------------------------------------


@login_required
@require_POST
def share_create(request, plan_id: int):
    plan = _plan_or_404(request, plan_id)
    _require_edit(request, plan.team_id)
    expires_at = None
    raw = request.POST.get("expires_on", "").strip()
    if raw:
        try:
            day = datetime.strptime(raw, "%Y-%m-%d").date()
            expires_at = timezone.make_aware(datetime.combine(day, time.max))
            _link, token = services.share_link_create(plan=plan, user=request.user, expires_at=expires_at)
        except (ValueError, services.PlannerError):
            messages.error(request, _("The expiry date must be a future date (YYYY-MM-DD)."))
            return redirect("plan_detail", plan_id=plan.id)
    else:
        _link, token = services.share_link_create(plan=plan, user=request.user)
    # Shown once on the next page; only its hash is stored.
    request.session[f"share-token-{plan.id}"] = request.build_absolute_uri(reverse("shared_plan", args=[token]))
    return redirect(reverse("plan_detail", args=[plan.id]) + "#share")


@login_required
@require_POST
def share_revoke(request, plan_id: int, link_id: int):
    plan = _plan_or_404(request, plan_id)
    _require_edit(request, plan.team_id)
    link = get_object_or_404(ShareLink.objects.filter(plan=plan), pk=link_id)
    services.share_link_revoke(link=link)
    messages.success(request, _("The link is revoked; it now answers 404."))
    return redirect(reverse("plan_detail", args=[plan.id]) + "#share")


@require_GET
def shared_plan(request, token: str):
    link = selectors.share_link_resolve(token=token)
    if link is None:
        raise Http404("unknown, revoked or expired link")
    plans = selectors.plan_with_history(plans=selectors.Plan.objects.filter(pk=link.plan_id))
    plan = plans.get()
    done = [v for v in plan.history if v.status == VersionStatus.DONE]
    if not done:
        raise Http404("nothing computed yet")
    return _render_version(request, plan, done[0].number, shared_link=link)


@require_GET
def shared_export(request, token: str, fmt: str):
    """h/form: the shared plan's CSV/XLSX/PDF for the reader; a revoked or expired link is a 404 here too."""
    link = selectors.share_link_resolve(token=token)
    if link is None:
        raise Http404("unknown, revoked or expired link")
    version = PlanVersion.objects.filter(plan_id=link.plan_id, status=VersionStatus.DONE).order_by("-number").first()
    if version is None:
        raise Http404("nothing computed yet")
    content, content_type, filename = plan_exports.export(version=version, fmt=fmt, request=request)
    response = HttpResponse(content, content_type=content_type)
    response["Content-Disposition"] = attachment(filename)
    response["X-Robots-Tag"] = "noindex"
    return response


# --- compare and exports ---------------------------------------------------------------


@login_required
@require_GET
def compare(request):
    """2-6 plans in one chosen currency (GET form, works without JavaScript; htmx swaps the result)."""
    from . import compare as cmp

    try:
        ids = [int(x) for x in request.GET.getlist("plans")]
    except ValueError as exc:
        raise Http404("bad plan id") from exc
    ids = list(dict.fromkeys(ids))
    found = {p.id: p for p in selectors.plans_for_user(user=request.user).filter(pk__in=ids)}
    plans = [found[i] for i in ids if i in found]  # in the order the user chose
    if len(ids) and len(plans) != len(ids):
        raise Http404("plan not found")
    form = cmp.CompareForm(request.GET or None)
    error = None
    if not cmp.MIN_PLANS <= len(plans) <= cmp.MAX_PLANS:
        error = _("Choose between 2 and 6 plans to compare.")
    elif form.is_bound and not form.is_valid():
        error = _("Choose the currency from the list (RUB or USD).")
    columns = cmp.compare_columns(plans) if error is None else []
    basis = None
    currency = ""
    if columns:
        currency = (form.cleaned_data.get("currency") if form.is_bound else "") or cmp.default_currency(columns)
        basis = cmp.convert(columns, currency=currency)
    context = {"columns": columns, "kinds": cmp.compare_kinds(columns), "error": error, "form": form,
               "basis": basis, "currency": currency,
               "all_plans": selectors.plans_for_user(user=request.user), "selected": ids}
    if request.htmx:  # htmx swaps only 2xx answers: the error is drawn in the swapped result
        return render(request, "planner/partials/compare_result.html", context)
    return render(request, "planner/compare.html", context, status=200 if error is None or not ids else 400)


@login_required
@require_GET
def version_export(request, plan_id: int, number: int, fmt: str):
    plan = _plan_or_404(request, plan_id)
    version = _version_or_404(plan, number)
    if version.status != VersionStatus.DONE:
        raise Http404("the version has no result yet")
    content, content_type, filename = plan_exports.export(version=version, fmt=fmt, request=request)
    response = HttpResponse(content, content_type=content_type)
    response["Content-Disposition"] = attachment(filename)
    return response


# --- log in ------------------------------------------------------------------------------


def demo_login_hint() -> dict | None:
    """On the embedded default (SQLite, as `make run` sets it up) the login page says how to
    log in as the demo user; never on a configured database (PostgreSQL in production)."""
    import os

    from django.conf import settings
    from django.contrib.auth import get_user_model

    if settings.DATABASES["default"]["ENGINE"] != "django.db.backends.sqlite3":
        return None
    username = os.environ.get("DEMO_USERNAME", "demo")
    if not get_user_model().objects.filter(username=username, is_active=True).exists():
        return None
    return {"username": username, "password": os.environ.get("DEMO_PASSWORD", "demo-planner")}


class LoginView(auth_views.LoginView):
    def get_context_data(self, **kwargs):
        return {**super().get_context_data(**kwargs), "demo_login": demo_login_hint()}
