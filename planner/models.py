"""Teams, workloads, plans, plan versions and share links.

A Plan is a workload plus cost options; each computation of it is an immutable PlanVersion
that freezes its inputs and the price and rate snapshots it was computed with (R6.4).
"""

from django.conf import settings
from django.db import models
from django.db.models import Q
from django.utils.translation import gettext_lazy as _

from .choices import Role, VersionStatus, WorkloadKind
from .result_parts import merged


class Team(models.Model):
    name = models.CharField(_("name"), max_length=120)
    slug = models.SlugField(_("slug"), max_length=120, unique=True)
    created_at = models.DateTimeField(auto_now_add=True)
    # Where, from whom and how the team may buy (planner.procurement: data_residency, providers,
    # options); {} = no rule. Frozen into each plan version when it is queued.
    procurement = models.JSONField(_("procurement settings"), default=dict, blank=True)
    members = models.ManyToManyField(
        settings.AUTH_USER_MODEL, through="Membership", related_name="teams"
    )

    class Meta:
        ordering = ["name"]
        verbose_name = _("team")
        verbose_name_plural = _("teams")

    def __str__(self):
        return self.name


class Membership(models.Model):
    team = models.ForeignKey(Team, on_delete=models.CASCADE, related_name="memberships")
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="memberships")
    role = models.CharField(_("role"), max_length=16, choices=Role.choices, default=Role.VIEWER)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        verbose_name = _("membership")
        verbose_name_plural = _("memberships")
        constraints = [
            models.UniqueConstraint(fields=["team", "user"], name="planner_membership_team_user_uniq"),
            models.CheckConstraint(condition=Q(role__in=Role.values), name="planner_membership_role_valid"),
        ]

    def __str__(self):
        return f"{self.user} @ {self.team} ({self.role})"


class Workload(models.Model):
    team = models.ForeignKey(Team, on_delete=models.CASCADE, related_name="workloads")
    name = models.CharField(_("name"), max_length=200)
    kind = models.CharField(_("kind"), max_length=32, choices=WorkloadKind.choices)
    # The WorkloadSpec input exactly as validated by planner.engine.spec.parse_workload_spec.
    spec = models.JSONField(_("workload spec"))
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["-created_at"]
        verbose_name = _("workload")
        verbose_name_plural = _("workloads")
        constraints = [
            models.CheckConstraint(condition=Q(kind__in=WorkloadKind.values), name="planner_workload_kind_valid"),
        ]

    def __str__(self):
        return self.name


class Plan(models.Model):
    team = models.ForeignKey(Team, on_delete=models.CASCADE, related_name="plans")
    workload = models.ForeignKey(Workload, on_delete=models.PROTECT, related_name="plans")
    name = models.CharField(_("name"), max_length=200)
    # Cost options (costs.engine.options): horizon_months, currency, include_vat, utilisation, overrides.
    cost_options = models.JSONField(_("cost options"), default=dict, blank=True)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["-created_at"]
        verbose_name = _("plan")
        verbose_name_plural = _("plans")

    def __str__(self):
        return self.name


class PlanVersion(models.Model):
    plan = models.ForeignKey(Plan, on_delete=models.CASCADE, related_name="versions")
    number = models.PositiveIntegerField(_("number"))
    status = models.CharField(
        _("status"), max_length=16, choices=VersionStatus.choices, default=VersionStatus.PENDING
    )
    # Frozen at creation: {"spec": WorkloadSpec JSON, "costs": cost options JSON}.
    inputs = models.JSONField(_("inputs"))
    price_snapshot = models.JSONField(_("price snapshot"), default=dict, blank=True)
    rate_snapshot = models.JSONField(_("rate snapshot"), default=dict, blank=True)
    # The team's active calibrations when the version was made (Calibrations.to_data()), so a
    # recomputation of these inputs gives the same numbers (docs/CALIBRATION.md).
    calibrations = models.JSONField(_("calibrations"), default=dict, blank=True)
    as_of = models.DateField(_("prices as of"))
    # The result a version serves: the decision and the options the plan names; every priced and
    # skipped option is in option_catalog (planner.result_parts: a result of at most 250 KB, issue 20).
    result = models.JSONField(_("result"), null=True, blank=True)
    option_catalog = models.JSONField(_("option catalog"), null=True, blank=True)
    error = models.TextField(_("error"), blank=True)
    engine_version = models.CharField(_("engine version"), max_length=40, blank=True)
    attempts = models.PositiveIntegerField(_("attempts"), default=0)
    note = models.CharField(_("note"), max_length=200, blank=True)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["plan", "-number"]
        verbose_name = _("plan version")
        verbose_name_plural = _("plan versions")
        constraints = [
            models.UniqueConstraint(fields=["plan", "number"], name="planner_planversion_plan_number_uniq"),
            models.CheckConstraint(condition=Q(number__gte=1), name="planner_planversion_number_positive"),
            models.CheckConstraint(
                condition=Q(status__in=VersionStatus.values), name="planner_planversion_status_valid"
            ),
            # A done version always has a result; a failed one always says why.
            models.CheckConstraint(
                condition=~Q(status=VersionStatus.DONE) | Q(result__isnull=False),
                name="planner_planversion_done_has_result",
            ),
            models.CheckConstraint(
                condition=~Q(status=VersionStatus.FAILED) | ~Q(error=""),
                name="planner_planversion_failed_has_error",
            ),
        ]
        indexes = [models.Index(fields=["status", "created_at"], name="planner_pv_status_created")]

    def __str__(self):
        return f"{self.plan} v{self.number}"

    @property
    def is_finished(self):
        return self.status in (VersionStatus.DONE, VersionStatus.FAILED)

    @property
    def full_result(self) -> dict | None:
        """The engines' whole result: `result` with every priced and skipped option put back (what the page,
        the PDF, the XLSX and the compare pages read)."""
        return merged(self.result, self.option_catalog)


class ShareLink(models.Model):
    plan = models.ForeignKey(Plan, on_delete=models.CASCADE, related_name="share_links")
    # Only the sha256 hex digest of the token is stored; the token is shown once.
    token_hash = models.CharField(max_length=64, unique=True)
    # First characters of the token so owners can tell links apart (not enough to guess it).
    token_prefix = models.CharField(max_length=8)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    expires_at = models.DateTimeField(_("expires at"), null=True, blank=True)
    revoked_at = models.DateTimeField(_("revoked at"), null=True, blank=True)

    class Meta:
        ordering = ["-created_at"]
        verbose_name = _("share link")
        verbose_name_plural = _("share links")
        constraints = [
            models.CheckConstraint(
                condition=Q(token_hash__regex=r"^[0-9a-f]{64}$"), name="planner_sharelink_token_hash_sha256"
            ),
        ]

    def __str__(self):
        return f"{self.plan} [{self.token_prefix}…]"


class IdempotencyKey(models.Model):
    """An `Idempotency-Key` seen on plan creation: a repeat returns the same plan (API)."""

    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+")
    key = models.CharField(max_length=255)
    # sha256 of the request body, so a reused key with a different body can be refused.
    request_hash = models.CharField(max_length=64)
    plan = models.ForeignKey(Plan, on_delete=models.CASCADE, related_name="+")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["user", "key"], name="planner_idempotencykey_user_key_uniq"),
        ]

    def __str__(self):
        return self.key


from .calibration.models import Calibration, MeasuredRun  # noqa: E402,F401  (registered with the planner app)
from .compare_models import CompareShareLink  # noqa: E402,F401  (options comparison share links)
