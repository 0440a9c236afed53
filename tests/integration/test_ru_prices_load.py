"""load_ru_prices: the shipped Russian files load (every row, stale marked, idempotent); bad input
names file/line/column, exits non-zero and writes nothing."""

import shutil
from io import StringIO
from pathlib import Path

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from catalog import models as m

pytestmark = pytest.mark.django_db
RU = Path(__file__).resolve().parents[2] / "catalog" / "data" / "ru"
MODELS = [m.Provider, m.ProviderRegion, m.CloudVmShape, m.PublishedPrice, m.ExchangeRate]


@pytest.fixture
def catalog(db):
    call_command("load_catalog", stdout=StringIO())


def state():
    return [list(model.objects.order_by("pk").values()) for model in MODELS]


def test_shipped_files_load_every_row_and_twice_is_unchanged(catalog):
    out = StringIO()
    call_command("load_ru_prices", stdout=out)
    assert "cloud_gpu_offers_ru: 75 created" in out.getvalue()
    assert m.PublishedPrice.objects.filter(dataset="cloud_gpu_offers_ru").count() == 75
    assert m.PublishedPrice.objects.filter(dataset="onprem_gpu_server_prices_ru").count() == 3
    assert m.PublishedPrice.objects.filter(dataset="power_and_colo_ru").count() == 5
    assert m.PublishedPrice.objects.filter(stale=True).count() == 40
    gen2_old = m.PublishedPrice.objects.get(platform="gpu-standard-v3i", price="1667.30", billing="on_demand")
    assert gen2_old.stale and gen2_old.valid_to.isoformat() == "2026-01-23"  # superseded by the 2026 table
    assert m.PublishedPrice.objects.filter(dataset="cloud_gpu_offers_ru", valid_from__year=2022,
                                           includes_vat__isnull=True).count() == 26
    assert m.Provider.objects.get(name="Selectel").priced is False
    assert m.ProviderRegion.objects.get(provider__name="Yandex Cloud").jurisdiction == "RU"
    before = state()
    again = StringIO()
    call_command("load_ru_prices", stdout=again)
    assert "75 unchanged" in again.getvalue() and state() == before


@pytest.mark.parametrize(("file", "old", "new", "expected"), [
    ("cloud_gpu_offers_ru.csv", ",745.21,RUB,hour,on_demand,", ",abc,RUB,hour,on_demand,",
     "cloud_gpu_offers_ru.csv, line 2, column price: 'abc' is not a number"),
    ("cloud_gpu_offers_ru.csv", ",745.21,RUB,hour,on_demand,true,", ",745.21,RUB,hour,on_demand,perhaps,",
     "column includes_vat: 'perhaps' is not one of true, false, unknown"),
    ("cloud_gpu_offers_ru.csv", ",745.21,RUB,hour,on_demand,", ",745.21,GBP,hour,on_demand,", "column currency"),
    ("cloud_gpu_offers_ru.csv", ",745.21,RUB,hour,on_demand,", ",745.21,RUB,hour,monthly,", "column billing"),
    ("vm_shapes.csv", ",nvidia-t4-16gb,", ",nvidia-t5-16gb,", "unknown accelerator 'nvidia-t5-16gb'"),
    ("provider_regions.csv", "Yandex Cloud,ru-central1,RU,", "Yandex Cloud,ru-central1,Russia,",
     "not a two-letter ISO country code"),
    ("fx_cbr.csv", "2026-07-01,USD,78.2696", "01.07.2026,USD,78.2696", "column date"),
    # a provider price without its date (and no 'undated' in its notes), or without its source
    ("cloud_gpu_offers_ru.csv", ",745.21,RUB,hour,on_demand,true,2026-01-23,", ",745.21,RUB,hour,on_demand,true,,",
     "cloud_gpu_offers_ru.csv, line 2, column valid_from: a value is required"),
    ("cloud_gpu_offers_ru.csv", ",https://github.com/yandex-cloud/docs/blob/0c47554457b47bc19aee8dfdba5c4ae36ed10d83/"
     "ru/_pricing/compute/rub-from-23-01-2026.md,2026-12-01,", ",,2026-12-01,",
     "cloud_gpu_offers_ru.csv, line 2, column source_url: a value is required"),
    ("vm_shapes.csv", ",nvidia-h200-sxm-141gb,\"inferred: ", ",,\"inferred: ",
     "vm_shapes.csv, line 25, column accelerator_inference: an inference without an accelerator"),
    ("vm_shapes.csv", ",nvidia-h200-sxm-141gb,\"inferred: 141 GB", ",nvidia-h200-sxm-141gb,\"141 GB",
     "column accelerator_inference: must start with 'inferred: '"),
])
def test_bad_cell_names_file_line_column_and_writes_nothing(catalog, tmp_path, file, old, new, expected):
    d = tmp_path / "ru"
    shutil.copytree(RU, d)
    text = (d / file).read_text(encoding="utf-8")
    assert old in text
    (d / file).write_text(text.replace(old, new, 1), encoding="utf-8")
    before = state()
    with pytest.raises(CommandError, match="Russian prices not loaded") as exc:
        call_command("load_ru_prices", dir=str(d), stdout=StringIO())
    assert expected in str(exc.value)
    assert state() == before


def test_missing_column_empty_and_duplicate_rows(catalog, tmp_path):
    d = tmp_path / "ru"
    shutil.copytree(RU, d)
    lines = (d / "cloud_gpu_offers_ru.csv").read_text(encoding="utf-8").splitlines(keepends=True)
    (d / "cloud_gpu_offers_ru.csv").write_text("".join(lines + [lines[1]]), encoding="utf-8")
    (d / "power_and_colo_ru.csv").write_text("", encoding="utf-8")
    (d / "providers.csv").write_text("name,country\nX,RU\n", encoding="utf-8")
    with pytest.raises(CommandError) as exc:
        call_command("load_ru_prices", dir=str(d), stdout=StringIO())
    msg = str(exc.value)
    assert f"line {len(lines) + 1}: duplicate of cloud_gpu_offers_ru.csv, line 2" in msg
    assert "power_and_colo_ru.csv: the file is empty" in msg
    assert "providers.csv: missing column(s) kind, priced" in msg
    assert not m.PublishedPrice.objects.exists()
