"""{% computation_service as status %}: "ok", "broker_unavailable" or "no_worker" (config.health)."""

from django import template

register = template.Library()


@register.simple_tag
def computation_service() -> str:
    from config.health import computation_service_status

    return computation_service_status()
