"""Authentication backends."""

from axes.backends import AxesStandaloneBackend


class LockoutBackend(AxesStandaloneBackend):
    """django-axes lockout for HTTP logins only.

    A call to authenticate() without a request is not a login over HTTP (Django's test
    client.login(), management commands); axes cannot count it by IP and would raise, so it
    is left to the next backend. Every web and API login passes its request and is counted.
    """

    def authenticate(self, request, username=None, password=None, **kwargs):
        if request is None:
            return None
        return super().authenticate(request, username=username, password=password, **kwargs)


def client_ip(request) -> str:
    """The client address for lockout counting (AXES_CLIENT_IP_CALLABLE).

    Behind TRUSTED_PROXY_COUNT reverse proxies, each appends the address it saw to
    X-Forwarded-For, so the client is the N-th entry from the right; anything further left
    was written by the client and is ignored (it could be spoofed to dodge the lockout or to
    lock someone else out). With no trusted proxy, REMOTE_ADDR.
    """
    from django.conf import settings

    proxies = settings.TRUSTED_PROXY_COUNT
    if proxies > 0:
        hops = [h.strip() for h in request.META.get("HTTP_X_FORWARDED_FOR", "").split(",") if h.strip()]
        if len(hops) >= proxies:
            return hops[-proxies]
    return request.META.get("REMOTE_ADDR", "")
