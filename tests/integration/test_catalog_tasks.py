"""Background catalog import: idempotent under a row lock; a real worker through Redis in CI."""

import time
from pathlib import Path

import pytest

from catalog import models as m
from catalog.choices import ImportStatus
from catalog.services import catalog_import_run_create, catalog_import_run_execute
from catalog.tasks import run_catalog_import

DATA = Path(__file__).resolve().parents[2] / "catalog" / "data"


@pytest.mark.django_db
def test_import_run_loads_the_catalog_and_records_counts():
    run = catalog_import_run_create(source_path=str(DATA))
    run_catalog_import.delay(run.pk)  # eager here: no broker configured in tests
    run.refresh_from_db()
    assert run.status == ImportStatus.DONE
    assert run.counts["accelerators"]["created"] == 41  # 40 + MI350X (issue 24)
    assert run.started_at is not None and run.finished_at is not None


@pytest.mark.django_db
def test_a_finished_run_is_not_run_again():
    run = catalog_import_run_create(source_path=str(DATA))
    catalog_import_run_execute(run_id=run.pk)
    m.Accelerator.objects.filter(slug="nvidia-t4-16gb").update(notes="edited after import")
    catalog_import_run_execute(run_id=run.pk)  # a duplicate delivery of the same task
    assert m.Accelerator.objects.get(slug="nvidia-t4-16gb").notes == "edited after import"


@pytest.mark.django_db
def test_a_bad_import_fails_with_its_errors_and_writes_nothing(tmp_path):
    (tmp_path / "accelerators.csv").write_bytes(b"")
    run = catalog_import_run_create(source_path=str(tmp_path))
    catalog_import_run_execute(run_id=run.pk)
    run.refresh_from_db()
    assert run.status == ImportStatus.FAILED
    assert "accelerators.csv: the file is empty" in run.errors[0]
    assert not m.Accelerator.objects.exists()


@pytest.mark.worker
@pytest.mark.django_db(transaction=True)
def test_real_worker_imports_the_catalog_into_postgresql(celery_worker_process):
    run = catalog_import_run_create(source_path=str(DATA))
    run_catalog_import.delay(run.pk)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        run.refresh_from_db()
        if run.status in (ImportStatus.DONE, ImportStatus.FAILED):
            break
        time.sleep(0.5)
    assert run.status == ImportStatus.DONE, (run.status, run.errors, celery_worker_process["log"])
    assert m.Accelerator.objects.count() == 41  # 40 + MI350X (issue 24)
    assert m.CloudOffer.objects.filter(flagged=True).exclude(flag_reason="").exists()
