"""Request rates: per API token (or per user for browser sessions), and per IP for anonymous
callers. Rates come from API_THROTTLE_RATE / API_ANON_THROTTLE_RATE (see .env.example)."""

from rest_framework.throttling import SimpleRateThrottle

from .models import ApiToken


class TokenRateThrottle(SimpleRateThrottle):
    scope = "token"

    def get_cache_key(self, request, view):
        if not request.user or not request.user.is_authenticated:
            return None  # the anonymous throttle applies instead
        if isinstance(request.auth, ApiToken):
            ident = f"t{request.auth.pk}"
        else:
            ident = f"u{request.user.pk}"
        return self.cache_format % {"scope": self.scope, "ident": ident}


class AnonIpRateThrottle(SimpleRateThrottle):
    scope = "anon"

    def get_cache_key(self, request, view):
        if request.user and request.user.is_authenticated:
            return None
        return self.cache_format % {"scope": self.scope, "ident": self.get_ident(request)}
