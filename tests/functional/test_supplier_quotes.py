"""Supplier quotes through the API, the upload and the page: validated, team-scoped, all or nothing."""

import io
import re

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse
from openpyxl import Workbook

from catalog.models import Accelerator, SupplierQuote
from tests.functional.api_fixtures import *  # noqa: F403
from tests.functional.api_fixtures import client_for

pytestmark = pytest.mark.django_db
URL = "/api/v1/supplier-quotes/"
HEADER = ("supplier,item_kind,accelerator,gpus_per_server,description,quantity,unit_price,currency,includes_vat,"
          "quote_date,valid_until,document_name,notes\n")
GOOD = ("ООО Интегратор,server,acc-h200,8,HGX H200 8-GPU,5,42000000,RUB,true,2026-11-20,2026-12-31,КП-17.pdf,\n"
        "Supplier Two,accelerator,acc-h200,,H200 card,8,30000,USD,false,2026-11-25,2027-01-31,,\n")


@pytest.fixture
def acc(db):
    return Accelerator.objects.create(
        slug="acc-h200", vendor="NVIDIA", model="H200 SXM 141GB", architecture="Hopper", form_factor="SXM",
        form_factor_kind="SXM", memory_gib=141, memory_bandwidth_gb_s=4800, verified="yes",
        source_title="t", source_url="u", retrieved_on="2026-12-01",
    )


def quote_body(world, **kw):
    return {"team": world.team.pk, "supplier": "ООО Интегратор", "item_kind": "server", "accelerator": "acc-h200",
            "gpus_per_server": 8, "quantity": 1, "unit_price": "42000000", "currency": "RUB", "includes_vat": True,
            "quote_date": "2026-11-20", "valid_until": "2026-12-31", "document_name": "КП-17.pdf", **kw}


def upload(client, world, name, data):
    return client.post(URL + "upload/", {"team": world.team.pk, "file": SimpleUploadedFile(name, data)},
                       format="multipart")


def test_create_list_and_isolation(world, acc):
    editor = client_for(world.users["editor"])
    r = editor.post(URL, quote_body(world), format="json")
    assert r.status_code == 201, r.json()
    assert r.json()["unit_price"] == {"amount": "42000000", "currency": "RUB"}
    qid = r.json()["id"]
    assert [q["id"] for q in editor.get(URL).json()["results"]] == [qid]
    outsider = client_for(world.outsider)
    assert outsider.get(URL).json()["results"] == []
    assert outsider.get(f"{URL}{qid}/").status_code == 404
    assert outsider.delete(f"{URL}{qid}/").status_code == 404
    # writing into a team you are not in, or only view, is refused with the field named
    r = outsider.post(URL, quote_body(world), format="json")
    assert r.status_code == 404 and r.json()["errors"][0]["field"] == "team"  # not theirs: not found
    assert client_for(world.users["viewer"]).post(URL, quote_body(world), format="json").status_code in (400, 403)
    assert SupplierQuote.objects.count() == 1


@pytest.mark.parametrize(("change", "field"), [
    ({"unit_price": "-5"}, "unit_price"),
    ({"currency": "GBP"}, "currency"),
    ({"accelerator": "no-such-gpu"}, "accelerator"),
    ({"gpus_per_server": None}, "gpus_per_server"),
    ({"valid_until": "2026-01-01"}, "valid_until"),
    ({"quote_date": "20.11.2026"}, "quote_date"),
    ({"includes_vat": None}, "includes_vat"),
])
def test_bad_quote_is_a_400_naming_the_field(world, acc, change, field):
    r = client_for(world.users["editor"]).post(URL, quote_body(world, **change), format="json")
    assert r.status_code == 400
    assert field in str(r.json())
    assert not SupplierQuote.objects.exists()


def test_upload_csv_and_xlsx(world, acc):
    editor = client_for(world.users["editor"])
    r = upload(editor, world, "quotes.csv", (HEADER + GOOD).encode())
    assert r.status_code == 201, r.json()
    assert r.json()["created"] == 2
    wb = Workbook()
    ws = wb.active
    for line in (HEADER + GOOD).strip().split("\n"):
        ws.append(line.split(","))
    buf = io.BytesIO()
    wb.save(buf)
    r = upload(editor, world, "quotes.xlsx", buf.getvalue())
    assert r.status_code == 201, r.json()
    assert SupplierQuote.objects.filter(team=world.team).count() == 4
    assert SupplierQuote.objects.filter(currency="USD", includes_vat=False).count() == 2


@pytest.mark.parametrize(("body", "expected"), [
    (HEADER + GOOD.replace("42000000", "lots"), "quotes.csv, line 2, column unit_price"),
    (HEADER + GOOD.replace(",true,", ",maybe,"), "line 2, column includes_vat"),
    (HEADER + GOOD.replace(",true,", ",,"), "line 2, column includes_vat"),
    (HEADER + GOOD.replace("acc-h200,,", "nope,,"), "line 3, column accelerator"),
    (HEADER.replace("currency,", ""), "missing column(s) currency"),
    ("", "the file is empty"),
    (HEADER + 'x,"unterminated\n', "quotes.csv"),
])
def test_bad_upload_saves_nothing(world, acc, body, expected):
    r = upload(client_for(world.users["editor"]), world, "quotes.csv", body.encode())
    assert r.status_code == 400
    assert expected in str(r.json())
    assert not SupplierQuote.objects.exists()


def test_quote_page_form_and_list(world, acc, client):
    client.force_login(world.users["editor"])
    page = client.get(reverse("catalog:quotes"))
    assert page.status_code == 200
    data = {k: v for k, v in quote_body(world).items() if k != "team"}
    r = client.post(reverse("catalog:quotes"), {**data, "team": world.team.pk, "includes_vat": "on"})
    assert r.status_code == 302
    q = SupplierQuote.objects.get()
    assert q.team == world.team and q.created_by == world.users["editor"] and q.includes_vat
    page = client.get(reverse("catalog:quotes"))
    assert "ООО Интегратор" in page.content.decode()
    client.force_login(world.outsider)
    assert "ООО Интегратор" not in client.get(reverse("catalog:quotes")).content.decode()


def test_freshness_page_lists_stale_rows(client, db):
    from io import StringIO

    from django.core.management import call_command

    call_command("load_catalog", stdout=StringIO())
    call_command("load_ru_prices", stdout=StringIO())
    page = client.get(reverse("catalog:stale_prices")).content.decode()
    assert "marked stale in the source file" in page and "USD/RUB" in page
    assert "the source is undated" in page


def test_catalog_api_lists_providers_with_jurisdictions_and_published_prices(client, db):
    from io import StringIO

    from django.core.management import call_command

    call_command("load_catalog", stdout=StringIO())
    call_command("load_ru_prices", stdout=StringIO())
    providers = client.get("/api/v1/providers/?country=RU").json()["results"]
    yandex = next(p for p in providers if p["name"] == "Yandex Cloud")
    assert yandex["regions"][0]["jurisdiction"] == "RU"
    assert {p["name"] for p in providers if not p["priced"]} >= {"Selectel", "Cloud.ru", "VK Cloud"}
    stale = client.get("/api/v1/published-prices/?stale=true&page_size=200").json()
    assert stale["count"] == 40
    gpu = client.get("/api/v1/published-prices/?platform=gpu-standard-v3&component=gpu&billing=on_demand").json()
    assert gpu["results"][0]["price"] == "371.700000" and gpu["results"][0]["includes_vat"] is None


def test_cloud_page_shows_composed_yandex_prices_with_components(client, db):
    from io import StringIO

    from django.core.management import call_command

    call_command("load_catalog", stdout=StringIO())
    call_command("load_ru_prices", stdout=StringIO())
    html = client.get(reverse("catalog:cloud_offers")).content.decode()
    assert "GPU 8 × 745.21 + vCPU 180 × 0.90 + RAM, GB 1440 × 0.28" in html and "6526.88 RUB" in html


def test_quote_form_fields_are_stacked_and_a_bad_one_is_named(world, acc, client):
    """Each field of the quote form is a labelled block (label above, help and error under it),
    as on the other forms; the accelerator, a list of catalog names, is not described as an id
    to type."""
    client.force_login(world.users["editor"])
    html = client.get(reverse("catalog:quotes"), HTTP_ACCEPT_LANGUAGE="ru").content.decode()
    assert 'class="stacked"' in html and 'id="field-accelerator"' in html and 'id="field-notes"' in html
    assert "идентификатор в каталоге, например" not in html
    data = {k: v for k, v in quote_body(world).items() if k != "team"}
    r = client.post(reverse("catalog:quotes"), {**data, "team": world.team.pk, "unit_price": "-1"},
                    HTTP_ACCEPT_LANGUAGE="ru")
    assert r.status_code in (200, 400) and not SupplierQuote.objects.exists()
    assert re.search(r'id="field-unit_price".*?class="errorlist"', r.content.decode(), re.S)
