from django.urls import path
from django.views.generic import TemplateView

app_name = "catalog"

# The catalog pages are filled in by catalog.views (foundation issue).
urlpatterns = [
    path("", TemplateView.as_view(template_name="base.html"), name="accelerators"),
]
