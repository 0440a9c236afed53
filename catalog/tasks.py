"""Background catalog work. Thin: the service does the work and is idempotent under a row lock."""

from celery import shared_task

from catalog.services import catalog_import_run_execute


@shared_task(name="catalog.run_catalog_import", time_limit=300, soft_time_limit=240)
def run_catalog_import(run_id: int) -> str:
    return catalog_import_run_execute(run_id=run_id).status
