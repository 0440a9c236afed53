"""load_catalog / export_catalog: every bad input gives a clear message and leaves the DB unchanged."""

import csv
import shutil
from io import StringIO
from pathlib import Path

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from catalog import models as m

DATA = Path(__file__).resolve().parents[2] / "catalog" / "data"
CATALOG_MODELS = [
    m.VatRate, m.ExchangeRate, m.ElectricityTariff, m.Accelerator, m.Cpu, m.ServerPlatform, m.StorageTier,
    m.NetworkOption, m.CloudOffer, m.DedicatedServerOffer, m.HardwarePrice,
]

pytestmark = pytest.mark.django_db


def db_state():
    return [list(model.objects.order_by("pk").values()) for model in CATALOG_MODELS]


def write_csv(path: Path, header: list[str], rows: list[list[str]]) -> Path:
    with path.open("w", encoding="utf-8", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(header)
        writer.writerows(rows)
    return path


def read_rows(path: Path) -> tuple[list[str], list[dict]]:
    with path.open(encoding="utf-8", newline="") as handle:
        reader = csv.DictReader(handle)
        return list(reader.fieldnames), list(reader)


def write_dicts(path: Path, header: list[str], rows: list[dict]) -> None:
    with path.open("w", encoding="utf-8", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=header)
        writer.writeheader()
        writer.writerows(rows)


@pytest.fixture
def catalog_dir(tmp_path):
    target = tmp_path / "catalog"
    shutil.copytree(DATA, target, ignore=shutil.ignore_patterns("*.py", "__pycache__"))
    return target


@pytest.fixture
def loaded(catalog_dir):
    call_command("load_catalog", dir=str(catalog_dir), stdout=StringIO())
    return catalog_dir


def load(path: Path):
    call_command("load_catalog", dir=str(path), stdout=StringIO())


def accelerators_with(tmp_path: Path, change) -> Path:
    """A directory with only accelerators.csv, where `change(rows)` edited the shipped rows."""
    directory = tmp_path / "edit"
    directory.mkdir()
    header, rows = read_rows(DATA / "accelerators.csv")
    change(rows)
    write_dicts(directory / "accelerators.csv", header, rows)
    return directory


def test_shipped_catalog_loads_every_accelerator_and_cloud_offer(loaded):
    assert m.Accelerator.objects.count() == 41  # 40 + MI350X (issue 24)
    assert m.CloudOffer.objects.count() == 128


def test_flagged_cloud_offers_are_imported_with_their_reason(loaded):
    flagged = m.CloudOffer.objects.filter(flagged=True)
    assert flagged.exists()
    assert not flagged.filter(flag_reason="").exists()


def test_loading_twice_gives_the_same_rows(loaded):
    before = db_state()
    load(loaded)
    assert db_state() == before


def test_malformed_csv_names_file_and_line(loaded, tmp_path):
    bad = tmp_path / "bad"
    bad.mkdir()
    (bad / "accelerators.csv").write_text((DATA / "accelerators.csv").read_text() + 'x,"unterminated\n')
    before = db_state()
    with pytest.raises(CommandError, match=r"accelerators\.csv, line \d+: malformed CSV"):
        load(bad)
    assert db_state() == before


def test_row_with_wrong_number_of_fields_is_refused(loaded, tmp_path):
    bad = tmp_path / "bad"
    bad.mkdir()
    text = (DATA / "accelerators.csv").read_text()
    (bad / "accelerators.csv").write_text(text + "only,three,fields\n")
    line = len(text.splitlines()) + 1  # the appended row, after the header and every accelerator
    before = db_state()
    with pytest.raises(CommandError, match=rf"accelerators\.csv, line {line}: expected 29 fields, found 3"):
        load(bad)
    assert db_state() == before


def test_unknown_column_is_refused(loaded, tmp_path):
    bad = tmp_path / "bad"
    bad.mkdir()
    header, rows = read_rows(DATA / "accelerators.csv")
    for row in rows:
        row["colour"] = "green"
    write_dicts(bad / "accelerators.csv", [*header, "colour"], rows)
    before = db_state()
    with pytest.raises(CommandError, match=r"accelerators\.csv: unknown column 'colour'"):
        load(bad)
    assert db_state() == before


def test_missing_required_column_is_refused(loaded, tmp_path):
    bad = tmp_path / "bad"
    bad.mkdir()
    header, rows = read_rows(DATA / "accelerators.csv")
    header.remove("memory_gib")
    for row in rows:
        del row["memory_gib"]
    write_dicts(bad / "accelerators.csv", header, rows)
    before = db_state()
    with pytest.raises(CommandError, match=r"accelerators\.csv: required column 'memory_gib' is missing"):
        load(bad)
    assert db_state() == before


@pytest.mark.parametrize("memory", ["-80", "0"])
def test_negative_or_zero_memory_is_refused(loaded, tmp_path, memory):
    def change(rows):
        rows[4]["memory_gib"] = memory

    bad = accelerators_with(tmp_path, change)
    before = db_state()
    with pytest.raises(CommandError, match=rf"accelerators\.csv, line 6, column memory_gib: must be greater than 0 \(got {memory}\)"):
        load(bad)
    assert db_state() == before


def test_price_without_currency_is_refused(loaded, tmp_path):
    bad = tmp_path / "bad"
    bad.mkdir()
    header, rows = read_rows(DATA / "cloud_offers.csv")
    rows[2]["currency"] = ""
    write_dicts(bad / "cloud_offers.csv", header, rows)
    before = db_state()
    with pytest.raises(CommandError, match=r"cloud_offers\.csv, line 4, column currency: a price needs its currency"):
        load(bad)
    assert db_state() == before


def test_duplicate_key_is_refused(loaded, tmp_path):
    def change(rows):
        rows.append(dict(rows[0]))

    bad = accelerators_with(tmp_path, change)
    before = db_state()
    with pytest.raises(CommandError, match=rf"accelerators\.csv, line {len(read_rows(DATA / 'accelerators.csv')[1]) + 2}: duplicate key \(nvidia-v100-sxm2-32gb\) \(first on line 2\)"):
        load(bad)
    assert db_state() == before


def test_offer_naming_an_unknown_accelerator_is_refused(loaded, tmp_path):
    bad = tmp_path / "bad"
    bad.mkdir()
    header, rows = read_rows(DATA / "cloud_offers.csv")
    rows[0]["accelerator"] = "nvidia-imaginary-1tb"
    write_dicts(bad / "cloud_offers.csv", header, rows)
    before = db_state()
    with pytest.raises(CommandError, match=r"cloud_offers\.csv, line 2, column accelerator: unknown accelerator 'nvidia-imaginary-1tb'"):
        load(bad)
    assert db_state() == before


def test_non_utf8_file_is_refused(loaded, tmp_path):
    bad = tmp_path / "bad"
    bad.mkdir()
    text = (DATA / "accelerators.csv").read_text().replace("Tesla V100 SXM2 32GB", "Tesla V100 — SXM2 32GB", 1)
    (bad / "accelerators.csv").write_bytes(text.encode("cp1251"))
    before = db_state()
    with pytest.raises(CommandError, match=r"accelerators\.csv, line 2: the file is not UTF-8"):
        load(bad)
    assert db_state() == before


def test_empty_file_is_refused(loaded, tmp_path):
    bad = tmp_path / "bad"
    bad.mkdir()
    (bad / "accelerators.csv").write_bytes(b"")
    before = db_state()
    with pytest.raises(CommandError, match=r"accelerators\.csv: the file is empty"):
        load(bad)
    assert db_state() == before


def test_a_bad_row_in_a_later_file_leaves_earlier_files_unwritten(loaded, tmp_path):
    bad = tmp_path / "bad"
    bad.mkdir()
    header, rows = read_rows(DATA / "accelerators.csv")
    rows[0]["memory_gib"] = "33"  # a valid change that must be rolled back
    write_dicts(bad / "accelerators.csv", header, rows)
    header, rows = read_rows(DATA / "cloud_offers.csv")
    rows[0]["gpu_count"] = "-1"
    write_dicts(bad / "cloud_offers.csv", header, rows)
    before = db_state()
    with pytest.raises(CommandError, match=r"cloud_offers\.csv, line 2, column gpu_count"):
        load(bad)
    assert db_state() == before


def test_a_changed_figure_updates_the_row_in_place(loaded, tmp_path):
    def change(rows):
        rows[0]["notes"] = "edited"

    load(accelerators_with(tmp_path, change))
    assert m.Accelerator.objects.count() == 41  # 40 + MI350X (issue 24)
    assert m.Accelerator.objects.get(slug="nvidia-v100-sxm2-32gb").notes == "edited"


def comparable_state():
    """Every row's own values (ids dropped) plus its foreign keys as slugs, order-independent."""
    state = []
    for model in CATALOG_MODELS:
        rows = []
        for obj in model.objects.all():
            values = {f.name: getattr(obj, f.name) for f in model._meta.concrete_fields if f.name != "id"}
            rows.append(repr(sorted((k, getattr(v, "slug", v)) for k, v in values.items())))
        state.append(sorted(rows))
    return state


@pytest.mark.parametrize("fmt", ["csv", "xlsx"])
def test_export_then_import_gives_the_same_rows(loaded, tmp_path, fmt):
    before = comparable_state()
    out = tmp_path / ("export" if fmt == "csv" else "catalog.xlsx")
    call_command("export_catalog", format=fmt, out=str(out), stdout=StringIO())
    for model in reversed(CATALOG_MODELS):
        model.objects.all().delete()
    if fmt == "csv":
        load(out)
    else:
        call_command("load_catalog", file=str(out), stdout=StringIO())
    assert comparable_state() == before


def test_shipped_cloud_offers_link_only_unambiguous_variants(loaded):
    def linked(instance_type):
        offer = m.CloudOffer.objects.filter(instance_type=instance_type).select_related("accelerator").first()
        return offer.accelerator.slug if offer.accelerator else None

    assert linked("p5.48xlarge") == "nvidia-h100-sxm5-80gb"
    assert linked("Standard_NC24ads_A100_v4") == "nvidia-a100-pcie-80gb"
    assert linked("1x_A100-80GB_SECURE") is None  # RunPod does not say SXM or PCIe


def test_a_file_that_is_not_a_workbook_is_refused(loaded, tmp_path):
    fake = tmp_path / "catalog.xlsx"
    fake.write_text("not a zip")
    before = db_state()
    with pytest.raises(CommandError, match=r"catalog\.xlsx: not a readable \.xlsx workbook"):
        call_command("load_catalog", file=str(fake), stdout=StringIO())
    assert db_state() == before


def test_a_workbook_with_an_unknown_sheet_is_refused(loaded, tmp_path):
    from openpyxl import Workbook

    workbook = Workbook()
    workbook.active.title = "gpus"
    workbook.active.append(["id"])
    workbook.save(tmp_path / "catalog.xlsx")
    with pytest.raises(CommandError, match=r"catalog\.xlsx: unknown sheet 'gpus'"):
        call_command("load_catalog", file=str(tmp_path / "catalog.xlsx"), stdout=StringIO())
