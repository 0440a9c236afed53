from django.urls import path

from catalog import views

app_name = "catalog"

urlpatterns = [
    path("", views.accelerator_list, name="accelerators"),
    path("cloud/", views.cloud_offer_list, name="cloud_offers"),
    path("servers/", views.server_platform_list, name="server_platforms"),
    path("quotes/", views.quote_list, name="quotes"),
    path("freshness/", views.stale_prices, name="stale_prices"),
]
