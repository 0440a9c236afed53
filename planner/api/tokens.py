"""API token services and selectors: create (the key is returned once), revoke, resolve."""

from __future__ import annotations

import hashlib
import hmac
import secrets
from datetime import datetime, timedelta

from django.utils import timezone
from django.utils.translation import gettext as _

from planner.services import PlannerError

from .models import ApiToken

# Refresh last_used_at at most this often, so reads do not each cost a write.
LAST_USED_RESOLUTION = timedelta(minutes=5)
MAX_KEY_LENGTH = 200


def hash_api_key(key: str) -> str:
    return hashlib.sha256(key.encode("utf-8")).hexdigest()


def api_token_create(*, user, name: str, expires_at: datetime | None = None) -> tuple[ApiToken, str]:
    """A new token for `user`; returns (token, key). Only the key's sha256 is stored."""
    if expires_at is not None and expires_at <= timezone.now():
        raise PlannerError(_("The expiry must be in the future."))
    key = secrets.token_urlsafe(32)  # 256 bits of randomness
    token = ApiToken.objects.create(
        user=user, name=name, key_hash=hash_api_key(key), prefix=key[:6], expires_at=expires_at
    )
    return token, key


def api_token_revoke(*, token: ApiToken) -> ApiToken:
    if token.revoked_at is None:
        token.revoked_at = timezone.now()
        token.save(update_fields=["revoked_at"])
    return token


def api_tokens_for_user(*, user):
    return ApiToken.objects.filter(user=user)


def api_token_resolve(*, key: str) -> ApiToken | None:
    """The live token for a key, or None when unknown, revoked, expired or its user inactive."""
    if not key or len(key) > MAX_KEY_LENGTH:
        return None
    digest = hash_api_key(key)
    token = ApiToken.objects.select_related("user").filter(key_hash=digest).first()
    # Looked up by digest; compared again in constant time so no path depends on timing.
    if token is None or not hmac.compare_digest(token.key_hash, digest):
        return None
    now = timezone.now()
    if not token.is_live(now=now) or not token.user.is_active:
        return None
    if token.last_used_at is None or now - token.last_used_at > LAST_USED_RESOLUTION:
        ApiToken.objects.filter(pk=token.pk).update(last_used_at=now)
        token.last_used_at = now
    return token
