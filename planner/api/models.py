"""Per-user API tokens. Only the sha256 of a token is stored; the token is shown once."""

from django.conf import settings
from django.db import models
from django.db.models import Q
from django.utils import timezone
from django.utils.translation import gettext_lazy as _


class ApiToken(models.Model):
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="api_tokens")
    name = models.CharField(_("name"), max_length=100)
    key_hash = models.CharField(max_length=64, unique=True)
    # First characters of the key so a user can tell tokens apart (not enough to guess one).
    prefix = models.CharField(max_length=8)
    created_at = models.DateTimeField(auto_now_add=True)
    expires_at = models.DateTimeField(_("expires at"), null=True, blank=True)
    revoked_at = models.DateTimeField(_("revoked at"), null=True, blank=True)
    last_used_at = models.DateTimeField(_("last used at"), null=True, blank=True)

    class Meta:
        ordering = ["-created_at"]
        verbose_name = _("API token")
        verbose_name_plural = _("API tokens")
        constraints = [
            models.CheckConstraint(
                condition=Q(key_hash__regex=r"^[0-9a-f]{64}$"), name="planner_api_apitoken_key_hash_sha256"
            ),
        ]

    def __str__(self):
        return f"{self.name} [{self.prefix}…]"

    def is_live(self, *, now=None) -> bool:
        now = now or timezone.now()
        if self.revoked_at is not None:
            return False
        return self.expires_at is None or self.expires_at > now
