"""One plan, one answer (issue 20): for every workload kind, the plan page (both languages), the
PDF's page 1, the XLSX summary and the API name the same hardware, option, provider and payment
mode as the result's top-level `decision` — never the sizing's own fewest-GPU pick beside another
hardware in the cost decision."""

import io
import re

import openpyxl
import pytest
from django.urls import reverse
from pypdf import PdfReader

from planner.i18n import localise
from tests.functional.api_fixtures import client_for
from tests.functional.test_russian_everywhere import KINDS, plans  # noqa: F401 - the module's computed plans

pytestmark = pytest.mark.django_db


@pytest.fixture
def owner(client, plans):  # noqa: F811
    client.force_login(plans["owner"])
    return client


def _text(html: str) -> str:
    return " ".join(re.sub(r"<[^>]+>", " ", html).split())


def _section(html: str, section_id: str) -> str:
    start = html.index(f'id="{section_id}"')
    return _text(html[start:html.index("</section>", start)])


@pytest.mark.parametrize("kind", KINDS)
def test_every_place_names_the_decided_option(owner, plans, kind):  # noqa: F811
    plan = plans["plans"][kind]
    version = plan.versions.get()
    result = version.result
    decision = result["decision"]
    costs = result["costs"]
    rec = costs["decision"]["recommended"]
    assert decision["option_id"] == rec["id"] and decision["option_kind"] == rec["kind"]
    option = next(o for o in costs["options"] if o["id"] == rec["id"])
    hardware = decision["hardware"]
    sizing_rec = result["sizing"]["recommendation"]
    if rec["kind"] == "api":
        assert hardware is None
    else:
        # the sizing describes the decided configuration, not its own pick
        assert (hardware["accelerator_id"], hardware["gpu_count"]) == (sizing_rec["accelerator_id"], sizing_rec["count"])
        assert option["candidate"] == f"{sizing_rec['accelerator_id']} x{sizing_rec['count']}"
        assert hardware["layout"]["tensor_parallel"] == option["detail"]["tensor_parallel"]
        assert hardware["layout"]["pipeline_parallel"] == option["detail"]["pipeline_parallel"]
        assert decision["provider"] == option["detail"].get("provider")
    assert decision["budget"]["total"] == option["totals"]["gross"]  # RUB with VAT: gross is the budget

    for lang in ("ru", "en"):
        html = owner.get(reverse("plan_detail", args=[plan.id]), HTTP_ACCEPT_LANGUAGE=lang).content.decode()
        assert f'data-option-id="{rec["id"]}"' in html
        if hardware:
            said = f'{hardware["gpu_count"]} × {hardware["accelerator"]}'
            assert said in _text(html[html.index('id="decision-hardware"'):][:600]), (lang, said)
            assert said in _section(html, "recommendation"), (lang, said)
            # no other hardware headline on the page
            others = {f'{r["count"]} × {r["accelerator"]}' for r in result["sizing"]["candidates"].get("best_per_accelerator") or []}
            others.discard(said)
            headline = _section(html, "recommendation").split("  ")[0][:200]
            assert not any(o in headline for o in others), (lang, headline)

    pdf = PdfReader(io.BytesIO(owner.get(reverse("plan_version_export", args=[plan.id, 1, "pdf"]),
                                         HTTP_ACCEPT_LANGUAGE="ru").content))
    first = " ".join(pdf.pages[0].extract_text().split())
    if hardware:
        assert f'{hardware["gpu_count"]} × {hardware["accelerator"]}' in first
    assert "Решение" in first and "Сравниваемые варианты" in first  # the decision, then the alternatives

    book = openpyxl.load_workbook(io.BytesIO(owner.get(reverse("plan_version_export", args=[plan.id, 1, "xlsx"]),
                                                       HTTP_ACCEPT_LANGUAGE="en").content))
    ws = book[book.sheetnames[0]]
    header_row = next(r for r in range(1, 40) if ws.cell(r, 1).value == "Rank")
    first_option = ws.cell(header_row + 1, 2).value
    assert first_option == localise({"costs": costs}, "en")["costs"]["options"][costs["options"].index(option)]["label"]

    api = client_for(plans["owner"])
    body = api.get(f"/api/v1/plans/{plan.id}/versions/1/").json()
    assert body["result"]["decision"]["option_id"] == rec["id"]
    assert body["result"]["decision"]["hardware"] == hardware


def test_a_training_decision_states_run_time_and_gpu_hours(plans):  # noqa: F811
    for kind in ("pretraining", "finetuning", "classic_training"):
        decision = plans["plans"][kind].versions.get().result["decision"]
        targets = decision["targets"]
        assert targets["wall_clock_hours"] > 0 and targets["gpu_hours"] >= targets["wall_clock_hours"], kind
        assert "per_month" not in decision["budget"] or decision["budget"].get("per_run") is None
