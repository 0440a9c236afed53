"""Walk every URL pattern with another team's ids: each answers 404 (or 405), nothing changes.

New routes are picked up automatically; a route with a parameter this test does not know
fails the test, so whoever adds it says which object the parameter names.
"""

import re

import pytest
from django.urls import URLPattern, URLResolver, get_resolver
from django.utils import timezone
from rest_framework.test import APIClient

from planner import services
from planner.api.tokens import api_token_create
from planner.choices import Role
from planner.models import Calibration, MeasuredRun, Plan, PlanVersion, ShareLink, Workload
from tests.planner_factories import MembershipFactory, PlanVersionFactory

pytestmark = pytest.mark.django_db

# Routes that carry no team object (health, metrics, admin has its own staff gate, i18n, docs).
SKIP_PREFIXES = ("admin/", "i18n/", "static/", "media/", "__debug__/")
# Share-token routes take a secret, not an id: covered by the share-link tests.
# "kind" of the run form (serving/training) names no object: the form records into the caller's teams.
SKIP_PARAMS = {"token", "kind"}
FORMATS = {"fmt": "json"}


def _walk(patterns, prefix=""):
    for p in patterns:
        if isinstance(p, URLResolver):
            yield from _walk(p.url_patterns, prefix + str(p.pattern))
        elif isinstance(p, URLPattern):
            yield prefix + str(p.pattern), p


def _routes_with_ids():
    for route, pattern in _walk(get_resolver().url_patterns):
        params = set(pattern.pattern.converters)
        if route.startswith(SKIP_PREFIXES) or not params or params & SKIP_PARAMS:
            continue
        yield route, pattern


def _victim_quote(team):
    import datetime as dt

    from catalog.models import Accelerator, SupplierQuote

    acc = Accelerator.objects.create(
        slug="victim-gpu", vendor="V", model="M", architecture="A", form_factor="SXM", form_factor_kind="SXM",
        memory_gib=80, memory_bandwidth_gb_s=2000, verified="yes", source_title="t", source_url="u",
        retrieved_on=dt.date(2026, 12, 1),
    )
    return SupplierQuote.objects.create(
        team=team, supplier="S", item_kind="server", accelerator=acc, gpus_per_server=8, unit_price=1,
        currency="RUB", includes_vat=False, quote_date=dt.date(2026, 12, 1), valid_until=dt.date(2026, 12, 31),
    )


def _victim():
    """Team A's objects; returns a function from (url name, parameter) to the id to use."""
    owner = MembershipFactory(role=Role.OWNER).user
    version = PlanVersionFactory(number=1, plan__workload__team=owner.teams.get())
    link, _token = services.share_link_create(plan=version.plan, user=owner)
    api_token, _key = api_token_create(user=owner, name="victim")
    team = owner.teams.get()
    quote = _victim_quote(team)
    run = MeasuredRun.objects.create(team=team, kind="serving", source="form", model_given="qwen3-32b",
                                     model_preset="qwen3-32b", accelerator_given="H100",
                                     accelerator="nvidia-h100-sxm5-80gb", count=1, precision="bf16")
    cal = Calibration.objects.create(team=team, kind="serving", accelerator="nvidia-h100-sxm5-80gb",
                                     runtime="vllm", precision="bf16", values={"mbu": 0.5}, label="x", run_count=1)
    by_pk_name = {"token": api_token.pk, "workload": version.plan.workload_id, "plan": version.plan_id,
                  "share-link": link.pk, "supplier-quote": quote.pk, "calibration-run": run.pk,
                  "calibration": cal.pk}

    def value(name: str, param: str):
        if param in FORMATS:
            return FORMATS[param]
        if param == "plan_id":
            return version.plan_id
        if param == "number":
            return version.number
        if param == "link_id":
            return link.pk
        if param == "run_id":
            return run.pk
        if param == "calibration_id":
            return cal.pk
        if param == "team_id":
            return team.pk
        if param == "pk":
            for prefix, pk in sorted(by_pk_name.items(), key=lambda kv: -len(kv[0])):  # longest prefix first
                if name and name.startswith(prefix + "-"):
                    return pk
        raise AssertionError(f"route {name!r}: unknown parameter {param!r}; map it in {__file__}")

    return value


def _counts():
    from catalog.models import SupplierQuote

    return (Plan.objects.count(), PlanVersion.objects.count(), Workload.objects.count(),
            ShareLink.objects.filter(revoked_at__isnull=True).count(), SupplierQuote.objects.count(),
            MeasuredRun.objects.count(), Calibration.objects.filter(active=True).count())


def test_every_route_with_an_id_answers_404_to_another_team(client):
    value = _victim()
    outsider = MembershipFactory(role=Role.OWNER).user
    client.force_login(outsider)
    api = APIClient()
    api.force_authenticate(outsider)
    before = _counts()
    checked = []
    for route, pattern in _routes_with_ids():
        kwargs = {p: value(pattern.name, p) for p in pattern.pattern.converters}
        path = "/" + route
        for param, v in kwargs.items():
            # Replace "<conv:param>" (or "<param>") with the victim's value.
            path = re.sub(rf"<(?:\w+:)?{param}>", str(v), path)
        caller = api if route.startswith("api/") else client
        seen = {}
        for method in ("get", "post", "patch", "delete"):
            response = getattr(caller, method)(path)
            seen[method] = response.status_code
        assert set(seen.values()) <= {404, 405}, f"{path}: {seen}"
        assert 404 in seen.values(), f"{path}: {seen}"
        checked.append(path)
    assert _counts() == before
    print(f"walked {len(checked)} routes")
    assert len(checked) >= 10, checked  # the walk really found the plan, version and API routes


def test_a_revoked_or_unknown_share_token_is_404(client):
    owner = MembershipFactory(role=Role.OWNER).user
    version = PlanVersionFactory(number=1, plan__workload__team=owner.teams.get())
    link, token = services.share_link_create(plan=version.plan, user=owner)
    services.share_link_revoke(link=link)
    assert client.get(f"/s/{token}/").status_code == 404
    assert client.get("/s/not-a-real-token/").status_code == 404
    assert link.revoked_at <= timezone.now()
