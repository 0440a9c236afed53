"""A done version serves the options its plan names in `result` and every priced and skipped option at
its options_url (issue 20: a result JSON of at most 250 KB that still lists every option); the page,
the exports and the compare pages read both parts put back together."""

import jsonschema
import pytest
from drf_spectacular.generators import SchemaGenerator

from planner.api.body_schema import validator_schema
from planner.choices import VersionStatus
from planner.result_parts import split
from planner.services import share_link_create
from tests.functional.api_fixtures import *  # noqa: F403

pytestmark = pytest.mark.django_db


@pytest.fixture
def split_version(world, real_result):
    version = make_version(world.plan, 2, VersionStatus.DONE, result=real_result)  # noqa: F405
    version.result, version.option_catalog = split(real_result)
    version.save(update_fields=["result", "option_catalog"])
    return version


def _validate(name: str, instance) -> None:
    document = SchemaGenerator().get_schema(request=None, public=True)
    root = {"$ref": f"#/components/schemas/{name}",
            "components": {"schemas": validator_schema(document["components"]["schemas"])}}
    errors = list(jsonschema.Draft4Validator(root).iter_errors(instance))
    assert not errors, errors[0].message[:300]


def test_result_names_the_decided_options_and_the_options_url_lists_them_all(world, split_version, real_result):
    client = client_for(world.users["viewer"])  # noqa: F405
    base = f"/api/v1/plans/{world.plan.id}/versions/{split_version.number}/"
    body = client.get(base).json()
    costs = body["result"]["costs"]
    everything = real_result["costs"]["options"]
    assert split_version.option_catalog is not None, "the real plan prices more options than it names"
    listed = [o["id"] for o in costs["options"]]
    assert 0 < len(listed) < len(everything)
    assert costs["options_left_out"] == len(everything) - len(listed)
    assert body["result"]["decision"]["option_id"] in listed
    assert {a["option_id"] for a in body["result"]["decision"]["alternatives"]} <= set(listed)
    assert body["options_url"] == base + "options/"
    _validate("VersionOut", body)

    options = client.get(body["options_url"])
    assert options.status_code == 200
    all_body = options.json()
    assert [o["id"] for o in all_body["options"]] == [o["id"] for o in everything]
    assert all_body["options_listed"] == len(everything)
    assert [s["reason"] for s in all_body["skipped"]] == [s["reason"] for s in real_result["costs"]["skipped"]]
    _validate("VersionOptionsOut", all_body)
    assert all_body["prices"] == real_result["costs"]["freshness"]["prices"]
    # the whole result the page and the exports read is the engines' result
    assert split_version.full_result == real_result


def test_options_url_in_russian_localises_engine_texts_and_option_labels(world, split_version):
    client = client_for(world.users["viewer"])  # noqa: F405
    body = client.get(f"/api/v1/plans/{world.plan.id}/versions/2/options/", HTTP_ACCEPT_LANGUAGE="ru").json()
    reasons = " ".join(s["reason"] for s in body["skipped"])
    assert any("а" <= ch <= "я" for ch in reasons.lower()), reasons[:200]
    # the options are named in Russian wherever the result names them ("на 1 ×", "по требованию", "покупка")
    assert all(" on " not in o["label"] for o in body["options"]), [o["label"] for o in body["options"]][:3]
    version = client.get(f"/api/v1/plans/{world.plan.id}/versions/2/", HTTP_ACCEPT_LANGUAGE="ru").json()
    decision = version["result"]["decision"]
    listed = {o["id"]: o["label"] for o in version["result"]["costs"]["options"]}
    assert decision["label"] == listed[decision["option_id"]]
    assert all(a["label"] == listed[a["option_id"]] for a in decision["alternatives"])
    assert any("а" <= ch <= "я" for ch in " ".join(listed.values()).lower())


def test_options_url_is_scoped_and_needs_a_done_version(world, split_version):
    outsider = client_for(world.users["other_team"])  # noqa: F405
    assert outsider.get(f"/api/v1/plans/{world.plan.id}/versions/2/options/").status_code == 404
    pending = make_version(world.plan, 3, VersionStatus.PENDING)  # noqa: F405
    viewer = client_for(world.users["viewer"])  # noqa: F405
    response = viewer.get(f"/api/v1/plans/{world.plan.id}/versions/{pending.number}/options/")
    assert response.status_code == 409
    assert viewer.get(f"/api/v1/plans/{world.plan.id}/versions/9/options/").status_code == 404


def test_shared_version_lists_its_options(world, split_version, real_result, anon):
    _link, token = share_link_create(plan=world.plan, user=world.users["owner"])
    body = anon.get(f"/api/v1/shared/{token}/versions/2/").json()
    assert body["options_url"] == f"/api/v1/shared/{token}/versions/2/options/"
    everything = anon.get(body["options_url"]).json()["options"]
    assert len(everything) == len(real_result["costs"]["options"])


def test_page_and_xlsx_count_and_list_every_priced_option(world, split_version, real_result, client):
    import io

    import openpyxl

    client.force_login(world.users["viewer"])
    total = len(real_result["costs"]["options"])
    html = client.get(f"/plans/{world.plan.id}/?v=2", HTTP_ACCEPT_LANGUAGE="en").content.decode()
    assert f"of {total} priced" in html
    listed = {o["id"] for o in split_version.result["costs"]["options"]}
    left_out = [o["label"] for o in real_result["costs"]["options"] if o["id"] not in listed]
    viewer = client_for(world.users["viewer"])  # noqa: F405
    xlsx = viewer.get(f"/api/v1/plans/{world.plan.id}/versions/2/export/xlsx/")
    assert xlsx.status_code == 200
    book = openpyxl.load_workbook(io.BytesIO(xlsx.content), read_only=True)
    cells = {str(c) for ws in book.worksheets for row in ws.iter_rows(values_only=True) for c in row if c}
    assert all(label in cells for label in left_out), [lb for lb in left_out if lb not in cells][:3]
