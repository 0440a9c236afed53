"""The options comparison (issue 21, part 3): the break-even said in words naming the cheaper
option, CAPEX vs OPEX, net / VAT / gross labelled, hardware per option, both languages; XLSX and
PDF downloads read back; the read-only share link (expiry, revocation, another team).

The plan is hand-made so every figure is known: on-prem pays 11 500 up front and 500 a month,
the cloud 1 500 a month, over 24 months, 20 % VAT. Cumulative net: on-prem 11 500 + 500 m, cloud
1 500 m; at month 11 on-prem 17 000 > cloud 16 500, at month 12 on-prem 17 500 < 18 000: after
month 12 the on-prem option is cheaper."""

import datetime as dt
import io
from decimal import Decimal

import openpyxl
import pytest
from django.urls import reverse
from django.utils import timezone

from planner.choices import Role, VersionStatus
from planner.compare_models import CompareShareLink
from tests.planner_factories import PlanFactory, PlanVersionFactory, member

pytestmark = pytest.mark.django_db

HORIZON = 24
VAT = Decimal("0.20")


def _line(key, *, upfront="0", monthly="0", months=HORIZON):
    up, mo = Decimal(upfront), Decimal(monthly)
    total = up + mo * months
    return {"key": key, "label": key, "upfront_net": str(up), "monthly_net": str(mo), "terminal_net": "0",
            "total_net": str(total), "vat": str(total * VAT), "total_gross": str(total * (1 + VAT)),
            "vat_applies": True}


def _option(oid, kind, *, upfront, monthly, detail):
    up, mo = Decimal(upfront), Decimal(monthly)
    cum = [up + mo * m for m in range(HORIZON + 1)]
    net = cum[-1]
    lines = [_line("gpu_time.useful", upfront=upfront, monthly=monthly)]
    return {
        "id": oid, "kind": kind, "candidate": "nvidia-l4-24gb x3", "label": f"the long engine label of {oid}",
        "detail": detail,
        "rows": [{"row": "gpu_time", "total_net": str(net), "total_gross": str(net * (1 + VAT)), "lines": lines},
                 {"row": "downtime_risk", "in_total": False, "total_net": None, "total_gross": None, "lines": []}],
        "totals": {"net": str(net), "vat": str(net * VAT), "gross": str(net * (1 + VAT))},
        "per_month_average": {"net": str(net / HORIZON), "gross": str(net * (1 + VAT) / HORIZON)},
        "cash_flow": {"cumulative_net": [str(v) for v in cum], "cumulative_gross": [str(v * (1 + VAT)) for v in cum]},
        "risk": {"priced": False, "in_total": False,
                 "text": "8.3 expected hours of downtime a year; enter the cost of an hour of downtime to price it",
                 "text_i18n": {"template": "{hours} expected hours of downtime a year; enter the cost of an hour of "
                                           "downtime to price it", "params": {"hours": 8.3}}},
    }


ONPREM = _option("onprem-1", "onprem", upfront="11500", monthly="500",
                 detail={"servers": 1, "gpus": 3, "server_power_w": "2060", "accelerator": "L4"})
CLOUD = _option("cloud-1", "cloud_on_demand", upfront="0", monthly="1500",
                detail={"provider": "AWS", "instance_type": "g6.xlarge", "instances": 3, "gpus": 3,
                        "gpus_per_instance": 1, "accelerator": "L4", "region": "us-east-1"})
SIZING = {"candidates": {"ranked": [{"accelerator_id": "nvidia-l4-24gb", "count": 3, "meets_target": True,
                                     "ttft_p95_ms": 420.4, "tpot_p95_ms": 31.2}]}}


COMMIT = _option("commit-1", "cloud_commit_1y", upfront="0", monthly="1200",
                 detail={"provider": "Yandex Cloud", "instance_type": "gpu-standard-v3-l4", "instances": 3, "gpus": 3,
                         "gpus_per_instance": 1, "accelerator": "L4", "region": "ru-central1"})


def _plan(team, *, include_vat=False, name="Агент на внешнем API модели", options=(ONPREM, CLOUD)):
    costs = {"currency": "RUB", "as_of": "2026-11-30", "include_vat": include_vat, "horizon_months": HORIZON,
             "vat_rates_by_month": ["0.20"] * HORIZON, "options": list(options),
             "monte_carlo": {"options": {"onprem-1": {"p10_net": "20000", "p50_net": "23500", "p90_net": "27000",
                                                      "p10_gross": "24000", "p50_gross": "28200",
                                                      "p90_gross": "32400"}}}}
    plan = PlanFactory(workload__team=team, name=name,
                       cost_options={"horizon_months": HORIZON, "currency": "RUB", "include_vat": include_vat})
    PlanVersionFactory(plan=plan, number=1, status=VersionStatus.DONE, result={"costs": costs, "sizing": SIZING},
                       as_of="2026-11-30", inputs={"spec": plan.workload.spec, "costs": plan.cost_options})
    return plan


@pytest.fixture
def owner():
    return member(Role.OWNER)


@pytest.fixture
def plan(owner):
    return _plan(owner.memberships.get().team)


def _url(plan, name="plan_options_compare", *extra):
    return reverse(name, args=[plan.id, 1, *extra])


def _get(client, plan, lang="en", options=("onprem-1", "cloud-1"), name="plan_options_compare", *extra):
    return client.get(_url(plan, name, *extra), {"options": list(options)}, HTTP_ACCEPT_LANGUAGE=lang)


def _text(response) -> str:
    return response.content.decode().replace("\xa0", " ").replace("&nbsp;", " ")


def test_break_even_names_the_cheaper_option_english(client, owner, plan):
    client.force_login(owner)
    response = _get(client, plan)
    assert response.status_code == 200
    html = _text(response)
    assert "Cheapest at first: 2. Cloud, on demand · AWS g6.xlarge × 3" in html
    assert "after month 12 cheaper: 1. On-prem (owned) · 3 × L4" in html
    table = response.context["table"]
    assert [s["from_month"] for s in table["segments"]] == [0, 12]
    # the same month as the cost engine's own break-even of the two curves
    from costs.engine.analysis import break_even_month
    cum = [o["cumulative"] for o in table["options"]]
    assert break_even_month(cum[0], cum[1])["month"] == 12
    assert 'class="break-even"' in html  # the chart marks it


def test_capex_opex_and_net_gross_labels(client, owner, plan):
    client.force_login(owner)
    html = _text(_get(client, plan))
    table_start = html.index('id="row-capex"')
    capex = html[table_start:html.index("</tr>", table_start)]
    assert "CAPEX: paid up front" in capex and "net of VAT" in capex
    assert "11,500 RUB" in capex and "0 RUB" in capex
    opex = html[html.index('id="row-opex"'):]
    opex = opex[:opex.index("</tr>")]
    assert "500 RUB" in opex and "1,500 RUB" in opex
    # totals three times, each labelled: on-prem 23 500 net, 4 700 VAT, 28 200 gross
    for row, figure in (("row-net", "23,500 RUB"), ("row-vat", "4,700 RUB"), ("row-gross", "28,200 RUB")):
        part = html[html.index(f'id="{row}"'):]
        assert figure in part[:part.index("</tr>")]
    assert "Total, net of VAT" in html and "Total, with VAT" in html
    p50 = html[html.index('id="row-p50"'):]
    p50 = p50[:p50.index("</tr>")]
    assert "23,500 RUB" in p50 and "net of VAT" in p50  # P50 on the page's basis (net), labelled
    # hardware per option
    assert "2.1 kW" in html  # one 3 x L4 server: 2 060 W
    assert "in the rental price" in html
    assert "first token p95 420 ms" in html


def test_gross_basis_when_the_plan_includes_vat(client, owner):
    plan = _plan(owner.memberships.get().team, include_vat=True)
    client.force_login(owner)
    html = _text(_get(client, plan))
    capex = html[html.index('id="row-capex"'):]
    capex = capex[:capex.index("</tr>")]
    assert "13,800 RUB" in capex and "with VAT" in capex  # 11 500 x 1.2
    p50 = html[html.index('id="row-p50"'):]
    assert "28,200 RUB" in p50[:p50.index("</tr>")]


def test_russian_page(client, owner, plan):
    client.force_login(owner)
    html = _text(_get(client, plan, lang="ru"))
    assert "после месяца 12 дешевле: 1. Собственное оборудование" in html
    assert "CAPEX: оплата сразу" in html and "OPEX: в среднем в месяц" in html
    assert "Итого без НДС" in html and "Итого с НДС" in html
    assert "11 500 RUB" in html
    for english in ("Cheapest", "after month", "Total, net", "paid up front", "in the rental price"):
        assert english not in html


def test_xlsx_download(client, owner, plan):
    client.force_login(owner)
    response = _get(client, plan, "ru", ("onprem-1", "cloud-1"), "options_compare_export", "xlsx")
    assert response.status_code == 200
    assert response["Content-Type"] == "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet"
    assert "filename*=UTF-8''" in response["Content-Disposition"]
    assert "%D1%81%D1%80%D0%B0%D0%B2%D0%BD%D0%B5%D0%BD%D0%B8%D0%B5" in response["Content-Disposition"]  # сравнение
    book = openpyxl.load_workbook(io.BytesIO(response.content))
    assert book.sheetnames == ["Сравнение", "Накопленные затраты"]
    rows = {r[0]: r[1:] for r in book["Сравнение"].iter_rows(values_only=True) if r and r[0]}
    assert rows["CAPEX (оплата сразу), без НДС"][:2] == (11500, 0)
    assert rows["Итого с НДС"][:2] == (28200, 43200)  # 23 500 and 36 000 net, x 1.2
    assert "после месяца 12 дешевле" in " ".join(str(v) for v in rows["Точка безубыточности"] if v)
    flow = list(book["Накопленные затраты"].iter_rows(values_only=True))
    assert flow[13][:3] == (12, 17500, 18000)


def test_pdf_download(client, owner, plan):
    pypdf = pytest.importorskip("pypdf")
    client.force_login(owner)
    response = _get(client, plan, "ru", ("onprem-1", "cloud-1"), "options_compare_export", "pdf")
    assert response.status_code == 200
    assert response["Content-Type"] == "application/pdf"
    reader = pypdf.PdfReader(io.BytesIO(response.content))
    assert len(reader.pages) <= 2
    text = " ".join(p.extract_text() for p in reader.pages).replace("\xa0", " ")
    assert "после месяца 12 дешевле" in text
    assert "CAPEX" in text and "Итого с НДС" in text


def test_share_link_is_read_only_and_respects_expiry_and_revocation(client, owner, plan):
    client.force_login(owner)
    response = client.post(reverse("options_compare_share", args=[plan.id, 1]),
                           {"options": ["onprem-1", "cloud-1"]})
    assert response.status_code == 302
    page = client.get(response["Location"])
    url = page.context["new_token"]
    assert "/s/c/" in url and 'data-copy="#new-compare-link"' in _text(page)
    path = url[url.index("/s/c/"):]
    client.logout()
    shared = client.get(path, HTTP_ACCEPT_LANGUAGE="en")
    assert shared.status_code == 200
    html = _text(shared)
    assert "after month 12 cheaper" in html
    assert "<form" not in html.split("<main", 1)[-1].split("</main>")[0].replace('<form method="post" action="/i18n', "")
    assert "Create a read-only link" not in html and "Revoke" not in html
    assert client.get(path + "export.xlsx").status_code == 200  # the reader can download
    link = CompareShareLink.objects.get()
    assert link.options == ["onprem-1", "cloud-1"] and len(link.token_hash) == 64
    link.expires_at = timezone.now() - dt.timedelta(seconds=1)
    link.save()
    assert client.get(path).status_code == 404
    assert client.get(path + "export.pdf").status_code == 404
    link.expires_at = None
    link.revoked_at = timezone.now()
    link.save()
    assert client.get(path).status_code == 404
    assert client.get("/s/c/not-a-token/").status_code == 404


def test_revoke_through_the_page(client, owner, plan):
    client.force_login(owner)
    client.post(reverse("options_compare_share", args=[plan.id, 1]),
                {"options": ["onprem-1", "cloud-1"], "expires_on": "2099-01-01"})
    link = CompareShareLink.objects.get()
    assert link.expires_at.date() == dt.date(2099, 1, 1)
    response = client.post(reverse("options_compare_revoke", args=[plan.id, link.id]))
    assert response.status_code == 302
    link.refresh_from_db()
    assert link.revoked_at is not None
    bad = client.post(reverse("options_compare_share", args=[plan.id, 1]),
                      {"options": ["onprem-1", "cloud-1"], "expires_on": "2001-01-01"})
    assert bad.status_code == 302 and CompareShareLink.objects.count() == 1


def test_another_team_cannot_see_share_or_download(client, plan):
    client.force_login(member(Role.OWNER))  # owner of another team
    assert _get(client, plan).status_code == 404
    assert _get(client, plan, "en", ("onprem-1", "cloud-1"), "options_compare_export", "xlsx").status_code == 404
    share = client.post(reverse("options_compare_share", args=[plan.id, 1]), {"options": ["onprem-1", "cloud-1"]})
    assert share.status_code == 404
    assert CompareShareLink.objects.count() == 0


def test_viewer_reads_and_downloads_but_cannot_share(client, plan):
    client.force_login(member(Role.VIEWER, team=plan.team))
    response = _get(client, plan)
    assert response.status_code == 200 and "Create a read-only link" not in _text(response)
    assert client.post(reverse("options_compare_share", args=[plan.id, 1]),
                       {"options": ["onprem-1", "cloud-1"]}).status_code == 403


def test_bad_option_counts_and_formats(client, owner, plan):
    client.force_login(owner)
    assert _get(client, plan, options=("onprem-1",)).status_code == 302
    assert _get(client, plan, "en", ("onprem-1",), "options_compare_export", "xlsx").status_code == 404
    assert _get(client, plan, "en", ("onprem-1", "cloud-1"), "options_compare_export", "doc").status_code == 404


def test_an_option_without_monthly_figures_is_left_out_of_the_chart_and_said(client, owner):
    # options outside the result's shortlist carry totals only (no cash flow, no lines)
    spot = {"id": "spot-1", "kind": "cloud_spot", "candidate": "nvidia-l4-24gb x3", "label": "spot",
            "detail": {"provider": "AWS", "instance_type": "g6.xlarge", "instances": 3, "gpus": 3},
            "totals": {"net": "30000", "vat": "6000", "gross": "36000"}}
    plan = _plan(owner.memberships.get().team, options=(ONPREM, CLOUD, spot))
    client.force_login(owner)
    response = _get(client, plan, options=("onprem-1", "cloud-1", "spot-1"))
    assert response.status_code == 200
    html = _text(response)
    assert "after month 12 cheaper: 1. On-prem (owned) · 3 × L4" in html
    assert 'id="without-months"' in html and "3. Cloud, spot · AWS g6.xlarge × 3" in html
    assert "30,000 RUB" in html  # its totals are still in the table
    # with fewer than two month-by-month curves, the words compare the totals
    alone = _text(_get(client, plan, options=("onprem-1", "spot-1")))
    assert "Cheapest in total over 24 months: 1. On-prem (owned) · 3 × L4" in alone


def test_a_one_off_job_has_no_opex_per_month(client, owner):
    job = {**CLOUD, "id": "job-1", "job": {"runs": "1.00", "per_run_net": "36000"}}
    plan = _plan(owner.memberships.get().team, options=(ONPREM, job))
    version = plan.versions.get()
    version.inputs = {**version.inputs, "costs": {**version.inputs["costs"], "runs": 1}}
    version.save()
    client.force_login(owner)
    html = _text(_get(client, plan, options=("onprem-1", "job-1")))
    opex = html[html.index('id="row-opex"'):]
    opex = opex[:opex.index("</tr>")]
    assert "36,000 RUB" in opex and "for its runs, not per month" in opex
