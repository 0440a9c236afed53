"""Background catalog work. Thin: the services do the work; each is idempotent."""

from celery import shared_task
from django.conf import settings

from catalog.services import catalog_import_run_execute


@shared_task(name="catalog.run_catalog_import", time_limit=300, soft_time_limit=240)
def run_catalog_import(run_id: int) -> str:
    return catalog_import_run_execute(run_id=run_id).status


@shared_task(name="catalog.import_cbr_daily", time_limit=120, soft_time_limit=90)
def import_cbr_daily_task() -> str:
    """Daily (beat): the Bank of Russia rates from settings.CBR_DAILY_URL. A failure is recorded
    on its FeedImportRun and the old rates stay; the next day's run tries again."""
    from catalog.feeds.cbr import import_cbr_daily

    return import_cbr_daily(url=settings.CBR_DAILY_URL, timeout_s=settings.FEED_TIMEOUT_SECONDS).status


@shared_task(name="catalog.import_skypilot_catalogs", time_limit=600, soft_time_limit=540)
def import_skypilot_catalogs_task() -> dict:
    """Weekly (beat, when SKYPILOT_CATALOG_SOURCES is set): one import per provider."""
    from catalog.feeds.skypilot import import_skypilot_vms

    return {
        provider: import_skypilot_vms(source=source, provider=provider, timeout_s=settings.FEED_TIMEOUT_SECONDS).status
        for provider, source in settings.SKYPILOT_CATALOG_SOURCES.items()
    }
