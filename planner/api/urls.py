"""/api/v1/ routes of the planner API (included from config/urls.py under api/v1/)."""

from django.urls import path, re_path
from drf_spectacular.views import SpectacularRedocView, SpectacularSwaggerSplitView

from catalog.api import quotes

from . import calibration, sharing, token_login, views
from .errors import json_not_found

app_name = "api"

FMT = "<str:fmt>"

urlpatterns = [
    # The split view serves its init script as a file: the CSP allows no inline scripts.
    path("docs/", SpectacularSwaggerSplitView.as_view(url_name="api-schema"), name="docs"),
    path("redoc/", SpectacularRedocView.as_view(url_name="api-schema"), name="redoc"),
    path("me/", views.MeView.as_view(), name="me"),
    path("teams/", views.TeamListView.as_view(), name="team-list"),
    path("tokens/", views.TokenListView.as_view(), name="token-list"),
    path("tokens/password/", token_login.TokenPasswordView.as_view(), name="token-password"),
    path("tokens/<int:pk>/", views.TokenDetailView.as_view(), name="token-detail"),
    path("workloads/", views.WorkloadListView.as_view(), name="workload-list"),
    path("workloads/<int:pk>/", views.WorkloadDetailView.as_view(), name="workload-detail"),
    path("plans/", views.PlanListView.as_view(), name="plan-list"),
    path("plans/<int:pk>/", views.PlanDetailView.as_view(), name="plan-detail"),
    path("plans/<int:plan_id>/versions/", views.VersionListView.as_view(), name="version-list"),
    path("plans/<int:plan_id>/versions/<int:number>/", views.VersionDetailView.as_view(), name="version-detail"),
    path("plans/<int:plan_id>/versions/<int:number>/status/", views.VersionStatusView.as_view(),
         name="version-status"),
    path(f"plans/<int:plan_id>/versions/<int:number>/export/{FMT}/", views.ExportView.as_view(),
         name="version-export"),
    path("plans/<int:plan_id>/versions/<int:number>/options/", views.VersionOptionsView.as_view(),
         name="version-options"),
    path("plans/<int:plan_id>/recompute/", views.RecomputeView.as_view(), name="plan-recompute"),
    path("plans/<int:plan_id>/diff/", views.DiffView.as_view(), name="plan-diff"),
    path("plans/<int:plan_id>/share-links/", sharing.ShareLinkListView.as_view(), name="share-link-list"),
    path("plans/<int:plan_id>/share-links/<int:pk>/", sharing.ShareLinkDetailView.as_view(),
         name="share-link-detail"),
    path("shared/<str:token>/", sharing.SharedPlanView.as_view(), name="shared-plan"),
    path("shared/<str:token>/versions/<int:number>/", sharing.SharedVersionView.as_view(), name="shared-version"),
    path("shared/<str:token>/versions/<int:number>/options/", sharing.SharedVersionOptionsView.as_view(),
         name="shared-version-options"),
    path(f"shared/<str:token>/versions/<int:number>/export/{FMT}/", sharing.SharedExportView.as_view(),
         name="shared-export"),
    path("estimate/", views.EstimateView.as_view(), name="estimate"),
    path("calibration/runs/", calibration.RunListView.as_view(), name="calibration-run-list"),
    path("calibration/runs/upload/", calibration.RunUploadView.as_view(), name="calibration-run-upload"),
    path("calibration/runs/<int:pk>/", calibration.RunDetailView.as_view(), name="calibration-run-detail"),
    path("calibration/scoreboard/", calibration.ScoreboardView.as_view(), name="calibration-scoreboard"),
    path("calibration/calibrations/", calibration.CalibrationListView.as_view(), name="calibration-list"),
    path("calibration/calibrations/<int:pk>/", calibration.CalibrationDetailView.as_view(),
         name="calibration-detail"),
    path("supplier-quotes/", quotes.SupplierQuoteListView.as_view(), name="supplier-quote-list"),
    path("supplier-quotes/upload/", quotes.SupplierQuoteUploadView.as_view(), name="supplier-quote-upload"),
    path("supplier-quotes/<int:pk>/", quotes.SupplierQuoteDetailView.as_view(), name="supplier-quote-detail"),
    # Unknown URLs under /api/v1/ answer in the API's error shape. Keep this include last.
    re_path(r"^.*$", json_not_found),
]
