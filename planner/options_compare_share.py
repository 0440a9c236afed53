"""Read-only share links to one options comparison (planner.options_compare): created with a
random token of which only the sha256 is stored, resolved while neither revoked nor expired.
"""

from __future__ import annotations

import hashlib
import secrets

from django.utils import timezone


def share_link_create(*, version, option_ids: list[str], user, expires_at=None):
    """A read-only link to this comparison: (link, token); only the token's sha256 is stored."""
    from .compare_models import CompareShareLink
    from .selectors import hash_share_token

    if expires_at is not None and expires_at <= timezone.now():
        raise ValueError("expiry in the past")
    token = secrets.token_urlsafe(32)
    link = CompareShareLink.objects.create(
        plan=version.plan, version=version, options=list(option_ids), token_hash=hash_share_token(token),
        token_prefix=token[:6], created_by=user if getattr(user, "is_authenticated", False) else None,
        expires_at=expires_at)
    return link, token


def share_link_resolve(*, token: str):
    """The live link for a token, or None when unknown, revoked or expired."""
    import hmac

    from .compare_models import CompareShareLink

    if not token or len(token) > 200:
        return None
    digest = hashlib.sha256(token.encode("utf-8")).hexdigest()
    link = (CompareShareLink.objects.select_related("plan", "plan__team", "version")
            .filter(token_hash=digest).first())
    if link is None or not hmac.compare_digest(link.token_hash, digest):
        return None
    if link.revoked_at is not None or (link.expires_at is not None and link.expires_at <= timezone.now()):
        return None
    return link
