"""Views of the options comparison (planner.options_compare): the page, its exports, its
read-only share links. Team-scoped like every planner view: another team's plan is a 404."""

from __future__ import annotations

from datetime import datetime, time
from urllib.parse import urlencode

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.utils import timezone
from django.utils.translation import gettext as _
from django.views.decorators.http import require_GET, require_POST

from . import options_compare as oc
from . import selectors
from .choices import VersionStatus
from .compare_models import CompareShareLink
from .downloads import attachment
from .options_compare_export import export as export_comparison
from .options_compare_share import share_link_create, share_link_resolve
from .views import _plan_or_404, _require_edit, _version_or_404, _version_url


def _ids(source) -> list[str]:
    return list(dict.fromkeys(source.getlist("options")))


def _query(ids: list[str]) -> str:
    return urlencode([("options", i) for i in ids])


def _table_or_404(version, ids):
    if version.status != VersionStatus.DONE:
        raise Http404("the version has no result yet")
    table = oc.build(version, ids)
    if table is None:
        raise Http404("unknown option")
    return table


def _context(table, *, plan, version, ids, shared=None):
    return {"plan": plan, "version": version, "table": table, "sentences": oc.sentences(table),
            "options_query": _query(ids), "shared": shared is not None, "shared_link": shared}


@login_required
@require_GET
def options_compare(request, plan_id: int, number: int):
    """2-4 deployment options of one version: chart, break-even in words, CAPEX/OPEX table."""
    plan = _plan_or_404(request, plan_id)
    version = _version_or_404(plan, number)
    ids = _ids(request.GET)
    if version.status != VersionStatus.DONE:
        raise Http404("the version has no result yet")
    if not oc.MIN_OPTIONS <= len(ids) <= oc.MAX_OPTIONS:
        messages.error(request, _("Choose between 2 and 4 options to compare."))
        return redirect(_version_url(version) + "#costs")
    table = _table_or_404(version, ids)
    context = _context(table, plan=plan, version=version, ids=ids)
    can_edit = selectors.can_edit(user=request.user, team_id=plan.team_id)
    context["can_edit"] = can_edit
    if can_edit:
        context["links"] = [link for link in CompareShareLink.objects.filter(version=version)
                            if link.options == ids]
        context["new_token"] = request.session.pop(f"compare-token-{version.id}", None)
    return render(request, "planner/options_compare.html", context)


@login_required
@require_GET
def options_compare_export(request, plan_id: int, number: int, fmt: str):
    plan = _plan_or_404(request, plan_id)
    version = _version_or_404(plan, number)
    ids = _ids(request.GET)
    if not oc.MIN_OPTIONS <= len(ids) <= oc.MAX_OPTIONS:
        raise Http404("choose 2-4 options")
    return _download(_table_or_404(version, ids), plan=plan, version=version, fmt=fmt, request=request)


def _download(table, *, plan, version, fmt, request):
    content, content_type, filename = export_comparison(table, plan=plan, version=version, fmt=fmt, request=request)
    response = HttpResponse(content, content_type=content_type)
    response["Content-Disposition"] = attachment(filename)
    return response


@login_required
@require_POST
def options_compare_share(request, plan_id: int, number: int):
    plan = _plan_or_404(request, plan_id)
    _require_edit(request, plan.team_id)
    version = _version_or_404(plan, number)
    ids = _ids(request.POST)
    if not oc.MIN_OPTIONS <= len(ids) <= oc.MAX_OPTIONS:
        raise Http404("choose 2-4 options")
    _table_or_404(version, ids)
    back = reverse("plan_options_compare", args=[plan.id, version.number]) + "?" + _query(ids)
    expires_at = None
    raw = request.POST.get("expires_on", "").strip()
    try:
        if raw:
            day = datetime.strptime(raw, "%Y-%m-%d").date()
            expires_at = timezone.make_aware(datetime.combine(day, time.max))
        _link, token = share_link_create(version=version, option_ids=ids, user=request.user, expires_at=expires_at)
    except ValueError:
        messages.error(request, _("The expiry date must be a future date (YYYY-MM-DD)."))
        return redirect(back)
    request.session[f"compare-token-{version.id}"] = request.build_absolute_uri(
        reverse("shared_options_compare", args=[token]))
    return redirect(back + "#share")


@login_required
@require_POST
def options_compare_revoke(request, plan_id: int, link_id: int):
    plan = _plan_or_404(request, plan_id)
    _require_edit(request, plan.team_id)
    link = get_object_or_404(CompareShareLink.objects.filter(plan=plan).select_related("version"), pk=link_id)
    if link.revoked_at is None:
        link.revoked_at = timezone.now()
        link.save(update_fields=["revoked_at"])
    messages.success(request, _("The link is revoked; it now answers 404."))
    return redirect(reverse("plan_options_compare", args=[plan.id, link.version.number]) + "?"
                    + _query(link.options) + "#share")


def _shared(token: str):
    link = share_link_resolve(token=token)
    if link is None:
        raise Http404("unknown, revoked or expired link")
    return link, _table_or_404(link.version, link.options)


@require_GET
def shared_options_compare(request, token: str):
    """The public read-only comparison: no login, no share or edit controls; exports allowed."""
    link, table = _shared(token)
    context = _context(table, plan=link.plan, version=link.version, ids=link.options, shared=link)
    context["token"] = token
    return render(request, "planner/options_compare.html", context)


@require_GET
def shared_options_compare_export(request, token: str, fmt: str):
    link, table = _shared(token)
    return _download(table, plan=link.plan, version=link.version, fmt=fmt, request=request)
