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
