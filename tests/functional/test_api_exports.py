"""Exports of a computed version over the API: CSV, XLSX, PDF; only done versions; team-scoped."""

import pytest

from planner.choices import VersionStatus
from tests.functional.api_fixtures import *  # noqa: F403

pytestmark = pytest.mark.django_db


@pytest.fixture
def computed(world, real_result):
    """A done version holding a result the real engines computed."""
    world.plan.name = "export"
    world.plan.save()
    make_version(world.plan, 2, VersionStatus.DONE, result=real_result)  # noqa: F405
    client = client_for(world.users["editor"])  # noqa: F405
    return client, client.get(f"/api/v1/plans/{world.plan.id}/versions/2/").json()


def test_plan_created_through_the_api_is_computed_and_exportable(world, catalog,
                                                                 django_capture_on_commit_callbacks):
    client = client_for(world.users["editor"])  # noqa: F405
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post("/api/v1/plans/", {"workload": world.workload.id, "name": "export"}, format="json")
    version = client.get(response.json()["version_url"]).json()
    assert version["status"] == VersionStatus.DONE, version["error"]
    assert set(version["exports"]) == {"csv", "xlsx", "pdf"}


def test_xlsx_export(computed):
    client, version = computed
    response = client.get(version["exports"]["xlsx"])
    assert response.status_code == 200
    assert response["Content-Type"].startswith("application/vnd.openxmlformats")
    assert response.content[:2] == b"PK"  # a zip container
    assert 'filename="export-v2.xlsx"' in response["Content-Disposition"]


def test_csv_export(computed):
    client, version = computed
    response = client.get(version["exports"]["csv"])
    assert response["Content-Type"].startswith("text/csv")
    assert response.content.decode("utf-8").strip()


def test_pdf_export(computed):
    client, version = computed
    assert client.get(version["exports"]["pdf"]).content[:5] == b"%PDF-"


def test_unknown_format_is_404(computed):
    client, version = computed
    assert client.get(version["url"] + "export/docx/").status_code == 404


def test_export_of_pending_version_is_409(world):
    make_version(world.plan, 2, VersionStatus.PENDING)  # noqa: F405
    client = client_for(world.users["viewer"])  # noqa: F405
    response = client.get(f"/api/v1/plans/{world.plan.id}/versions/2/export/xlsx/")
    assert response.status_code == 409


def test_export_of_another_teams_plan_is_404(world, computed):
    _client, version = computed
    outsider = client_for(world.users["other_team"])  # noqa: F405
    assert outsider.get(version["exports"]["xlsx"]).status_code == 404


def test_file_name_keeps_a_russian_title(world, real_result):
    """Issue 21, part 8: "Агент на внешнем API модели" was downloaded as api-v1.xlsx."""
    from urllib.parse import unquote

    world.plan.name = "Агент на внешнем API модели"
    world.plan.save()
    make_version(world.plan, 2, VersionStatus.DONE, result=real_result)  # noqa: F405
    client = client_for(world.users["editor"])  # noqa: F405
    for fmt in ("csv", "xlsx", "pdf"):
        header = client.get(f"/api/v1/plans/{world.plan.id}/versions/2/export/{fmt}/")["Content-Disposition"]
        assert f'filename="agent-na-vneshnem-api-modeli-v2.{fmt}"' in header
        assert unquote(header.split("filename*=UTF-8''", 1)[1]) == f"агент-на-внешнем-api-модели-v2.{fmt}"
