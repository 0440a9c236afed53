from django.contrib import admin

from .models import Calibration, MeasuredRun, Membership, Plan, PlanVersion, ShareLink, Team, Workload


class MembershipInline(admin.TabularInline):
    model = Membership
    extra = 0
    autocomplete_fields = ["user"]


@admin.register(Team)
class TeamAdmin(admin.ModelAdmin):
    list_display = ["name", "slug", "created_at"]
    search_fields = ["name", "slug"]
    prepopulated_fields = {"slug": ["name"]}
    inlines = [MembershipInline]


@admin.register(Workload)
class WorkloadAdmin(admin.ModelAdmin):
    list_display = ["name", "team", "kind", "created_at"]
    list_filter = ["kind", "team"]
    search_fields = ["name"]


@admin.register(Plan)
class PlanAdmin(admin.ModelAdmin):
    list_display = ["name", "team", "workload", "created_at"]
    list_filter = ["team"]
    search_fields = ["name"]


@admin.register(PlanVersion)
class PlanVersionAdmin(admin.ModelAdmin):
    # Versions are immutable records of a computation: read-only in the admin.
    list_display = ["plan", "number", "status", "as_of", "engine_version", "attempts", "created_at"]
    list_filter = ["status"]
    readonly_fields = [f.name for f in PlanVersion._meta.fields]

    def has_add_permission(self, request):
        return False


@admin.register(ShareLink)
class ShareLinkAdmin(admin.ModelAdmin):
    list_display = ["plan", "token_prefix", "created_at", "expires_at", "revoked_at"]
    readonly_fields = ["token_hash", "token_prefix"]


@admin.register(MeasuredRun)
class MeasuredRunAdmin(admin.ModelAdmin):
    # Runs are recorded by the team (pages, API, import_runs) and audited: read-only here.
    list_display = ["team", "kind", "model_preset", "accelerator", "count", "runtime", "runtime_version", "source",
                    "created_by", "created_at"]
    list_filter = ["kind", "source", "team"]
    readonly_fields = [f.name for f in MeasuredRun._meta.fields]

    def has_add_permission(self, request):
        return False


@admin.register(Calibration)
class CalibrationAdmin(admin.ModelAdmin):
    list_display = ["team", "kind", "accelerator", "runtime", "precision", "active", "run_count", "updated_at"]
    list_filter = ["kind", "active", "team"]
    readonly_fields = [f.name for f in Calibration._meta.fields if f.name != "active"]

    def has_add_permission(self, request):
        return False


# == compare (h/compare): read-only links to an options comparison ==
from .compare_models import CompareShareLink  # noqa: E402


@admin.register(CompareShareLink)
class CompareShareLinkAdmin(admin.ModelAdmin):
    list_display = ["plan", "version", "token_prefix", "created_at", "expires_at", "revoked_at"]
    readonly_fields = ["plan", "version", "options", "token_hash", "token_prefix"]
