"""`Authorization: Token <key>` (or `Bearer <key>`) authentication for API clients.

Our own small class rather than a package: DRF's built-in TokenAuthentication stores keys in
clear, and a hashed, expiring, revocable token is a few lines on DRF with no extra dependency.
"""

from django.utils.translation import gettext_lazy as _
from rest_framework import authentication, exceptions

from .tokens import api_token_resolve

SCHEMES = (b"token", b"bearer")


class ApiTokenAuthentication(authentication.BaseAuthentication):
    keyword = "Token"

    def authenticate(self, request):
        parts = authentication.get_authorization_header(request).split()
        if not parts or parts[0].lower() not in SCHEMES:
            return None  # not ours: let session authentication try
        if len(parts) != 2:
            raise exceptions.AuthenticationFailed(_("Invalid token header: expected 'Token <key>'."))
        try:
            key = parts[1].decode("ascii")
        except UnicodeDecodeError:
            raise exceptions.AuthenticationFailed(_("Invalid token.")) from None
        token = api_token_resolve(key=key)
        if token is None:
            raise exceptions.AuthenticationFailed(_("Invalid, expired or revoked token."))
        return token.user, token

    def authenticate_header(self, request):
        # Makes DRF answer 401 (with WWW-Authenticate) rather than 403 to anonymous callers.
        return self.keyword
