"""/metrics behind access control (docs/RELIABILITY.md, "Observability").

The Prometheus exposition shows traffic per view, queue depths and failure counts: useful
to an attacker, so production settings serve it only to
- a scraper that sends `Authorization: Bearer <METRICS_TOKEN>` (compared in constant time), or
- a client whose address (config.auth.client_ip, so DJANGO_TRUSTED_PROXY_COUNT applies) is in
  METRICS_ALLOWED_IPS (addresses or networks, e.g. "10.0.0.0/8,127.0.0.1").
Anything else gets 401 (with `WWW-Authenticate: Bearer`) and no data. With neither setting
the endpoint is closed. METRICS_PUBLIC=True (the development default, forced off in
config.settings_production) serves everyone.
"""

from __future__ import annotations

import hmac
import ipaddress

from django.conf import settings
from django.http import HttpResponse
from django_prometheus.exports import ExportToDjangoView


def _address_allowed(address: str, allowed: list[str]) -> bool:
    try:
        ip = ipaddress.ip_address(address)
    except ValueError:
        return False
    for entry in allowed:
        try:
            if ip in ipaddress.ip_network(entry.strip(), strict=False):
                return True
        except ValueError:
            continue
    return False


def metrics_allowed(request) -> bool:
    if settings.METRICS_PUBLIC:
        return True
    token = settings.METRICS_TOKEN
    header = request.headers.get("Authorization", "")
    if token and header.startswith("Bearer ") and hmac.compare_digest(header[7:].strip().encode(), token.encode()):
        return True
    if settings.METRICS_ALLOWED_IPS:
        from .auth import client_ip

        return _address_allowed(client_ip(request), settings.METRICS_ALLOWED_IPS)
    return False


def metrics(request):
    if not metrics_allowed(request):
        response = HttpResponse("metrics: authentication required\n", status=401, content_type="text/plain")
        response["WWW-Authenticate"] = 'Bearer realm="metrics"'
        return response
    return ExportToDjangoView(request)
