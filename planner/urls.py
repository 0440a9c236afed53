from django.contrib.auth import views as auth_views
from django.urls import path

from . import options_compare_views, team_views, views
from .calibration import views as calibration_views

urlpatterns = [
    path("", views.home, name="home"),
    path("accounts/login/", views.LoginView.as_view(), name="login"),
    path("accounts/logout/", auth_views.LogoutView.as_view(), name="logout"),
    path("accounts/password/", auth_views.PasswordChangeView.as_view(), name="password_change"),
    path("accounts/password/done/", auth_views.PasswordChangeDoneView.as_view(), name="password_change_done"),
    path("teams/new/", team_views.team_create, name="team_create"),
    path("teams/<int:team_id>/procurement/", team_views.team_procurement, name="team_procurement"),
    path("workloads/new/", views.workload_create, name="workload_create"),
    path("workloads/new/steps/", views.workload_form_partial, name="workload_form_partial"),
    path("workloads/new/validate/", views.workload_validate, name="workload_validate"),
    path("plans/compare/", views.compare, name="plan_compare"),
    path("plans/<int:plan_id>/", views.plan_detail, name="plan_detail"),
    path("plans/<int:plan_id>/recompute/", views.plan_recompute, name="plan_recompute"),
    path("plans/<int:plan_id>/assumptions/", views.plan_assumptions, name="plan_assumptions"),
    path("plans/<int:plan_id>/diff/", views.plan_diff, name="plan_diff"),
    path("plans/<int:plan_id>/share/", views.share_create, name="share_create"),
    path("plans/<int:plan_id>/share/<int:link_id>/revoke/", views.share_revoke, name="share_revoke"),
    path("plans/<int:plan_id>/v/<int:number>/", views.plan_version, name="plan_version"),
    path("plans/<int:plan_id>/v/<int:number>/status/", views.plan_version_status, name="plan_version_status"),
    path("plans/<int:plan_id>/v/<int:number>/retry/", views.plan_version_retry, name="plan_version_retry"),
    path("plans/<int:plan_id>/v/<int:number>/options/", options_compare_views.options_compare, name="plan_options_compare"),
    # == options comparison (h/compare): exports and read-only share links ==
    path("plans/<int:plan_id>/v/<int:number>/options/export.<str:fmt>", options_compare_views.options_compare_export,
         name="options_compare_export"),
    path("plans/<int:plan_id>/v/<int:number>/options/share/", options_compare_views.options_compare_share,
         name="options_compare_share"),
    path("plans/<int:plan_id>/options-links/<int:link_id>/revoke/", options_compare_views.options_compare_revoke,
         name="options_compare_revoke"),
    path("s/c/<str:token>/", options_compare_views.shared_options_compare, name="shared_options_compare"),
    path("s/c/<str:token>/export.<str:fmt>", options_compare_views.shared_options_compare_export,
         name="shared_options_compare_export"),
    # == end options comparison ==
    path("plans/<int:plan_id>/v/<int:number>/export.<str:fmt>", views.version_export, name="plan_version_export"),
    path("s/<str:token>/", views.shared_plan, name="shared_plan"),
    path("s/<str:token>/export.<str:fmt>", views.shared_export, name="shared_export"),
    path("calibration/", calibration_views.scoreboard, name="calibration"),
    path("calibration/upload/", calibration_views.run_upload, name="calibration_upload"),
    path("calibration/runs/new/<str:kind>/", calibration_views.run_create, name="calibration_run_create"),
    path("calibration/runs/<int:run_id>/delete/", calibration_views.run_delete, name="calibration_run_delete"),
    path("calibration/activate/", calibration_views.calibration_activate, name="calibration_activate"),
    path("calibration/<int:calibration_id>/deactivate/", calibration_views.calibration_deactivate,
         name="calibration_deactivate"),
]
