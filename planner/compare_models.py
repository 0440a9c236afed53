"""A read-only link to one options comparison (planner.options_compare): a sibling of ShareLink.

Like a plan's share link: only the sha256 of the token is stored, with its first characters to tell
links apart; optional expiry; revocation is immediate. It shows exactly the options it was made
for, of the version it was made from (a later version does not change what the reader sees)."""

from django.conf import settings
from django.db import models
from django.db.models import Q
from django.utils.translation import gettext_lazy as _


class CompareShareLink(models.Model):
    plan = models.ForeignKey("planner.Plan", on_delete=models.CASCADE, related_name="compare_links")
    version = models.ForeignKey("planner.PlanVersion", on_delete=models.CASCADE, related_name="compare_links")
    # The compared option ids, in the order of the page.
    options = models.JSONField(_("options"))
    token_hash = models.CharField(max_length=64, unique=True)
    token_prefix = models.CharField(max_length=8)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    expires_at = models.DateTimeField(_("expires at"), null=True, blank=True)
    revoked_at = models.DateTimeField(_("revoked at"), null=True, blank=True)

    class Meta:
        app_label = "planner"
        ordering = ["-created_at"]
        verbose_name = _("comparison share link")
        verbose_name_plural = _("comparison share links")
        constraints = [
            models.CheckConstraint(
                condition=Q(token_hash__regex=r"^[0-9a-f]{64}$"), name="planner_comparesharelink_token_hash_sha256"
            ),
        ]

    def __str__(self):
        return f"{self.plan} v{self.version.number} [{self.token_prefix}…]"
