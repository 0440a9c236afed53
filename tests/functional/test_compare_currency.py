"""The compare page puts every plan in one chosen currency at the dated rate of each plan's price
date (saying which rate, of which date, from which source), compares on one VAT basis, and
aligns horizons (per month) or says plainly why a plan cannot be aligned.

The versions here are stored results with known amounts and a known rate, so every converted
figure below is computed by hand."""

from decimal import Decimal

import pytest
from django.urls import reverse

from planner.choices import Role, VersionStatus
from tests.planner_factories import PlanFactory, PlanVersionFactory, member

pytestmark = pytest.mark.django_db

# A known rate: the price snapshot holds 1 USD = 78.2696 RUB dated 1 July 2026.
FX_ROW = {"id": 1, "date": "2026-07-01", "base": "USD", "quote": "RUB", "rate": "78.2696",
          "source": {"title": "Bank of Russia official rate", "url": "https://www.cbr.ru/currency_base/daily/"}}
RATE_SOURCE = "Bank of Russia official rate"


def _option(option_id, kind, net, vat="0.00"):
    gross = str(Decimal(net) + Decimal(vat))
    return {"id": option_id, "kind": kind, "candidate": "nvidia-l4 x1", "label": f"Option {option_id}",
            "totals": {"net": net, "vat": vat, "gross": gross},
            "rows": [{"row": "gpu_time", "total_net": net, "total_gross": gross, "lines": []}]}


def _plan(team, *, name, currency, net, horizon=24, include_vat=False, vat="0.00", kind="cloud_on_demand",
          fx_rows=(FX_ROW,), job=False, cost_inputs=None):
    option = _option(f"{name}-1", kind, net, vat)
    if job:
        option["job"] = {"runs": "1.00", "per_run_net": net}
    costs = {"currency": currency, "as_of": "2026-11-01", "include_vat": include_vat, "horizon_months": horizon,
             "options": [option]}
    plan = PlanFactory(workload__team=team, name=name,
                       cost_options={"horizon_months": horizon, "currency": currency, "include_vat": include_vat})
    PlanVersionFactory(plan=plan, number=1, status=VersionStatus.DONE, result={"costs": costs},
                       price_snapshot={"fx_rates": list(fx_rows)}, as_of="2026-11-01",
                       inputs={"spec": plan.workload.spec, "costs": cost_inputs or plan.cost_options})
    return plan


@pytest.fixture
def team_client(client):
    user = member(Role.VIEWER)
    client.force_login(user)
    client.team = user.memberships.get().team
    return client


def _get(client, plans, lang="en", **params):
    return client.get(reverse("plan_compare"), {"plans": [p.id for p in plans], **params},
                      HTTP_ACCEPT_LANGUAGE=lang)


def _flat(html: str) -> str:
    return html.replace("\xa0", " ").replace("&nbsp;", " ")


def test_usd_plan_in_rub_at_the_known_rate(team_client):
    rub = _plan(team_client.team, name="RUB plan", currency="RUB", net="4958019.76")
    usd = _plan(team_client.team, name="USD plan", currency="USD", net="1234.56")
    response = _get(team_client, [rub, usd], currency="RUB")
    assert response.status_code == 200
    first, second = response.context["columns"]
    # 1 234.56 USD x 78.2696 RUB/USD = 96 628.517376 -> 96 628.52 RUB
    assert second["cheapest"]["amount"] == Decimal("96628.52")
    assert first["cheapest"]["amount"] == Decimal("4958019.76")  # already in RUB: unchanged
    assert second["fx"]["legs"][0]["rate"] == Decimal("78.2696")
    assert second["fx"]["legs"][0]["date"].isoformat() == "2026-07-01"
    html = _flat(response.content.decode())
    assert "96,628.52 RUB" in html and "4,958,019.76 RUB" in html and " USD</strong>" not in html
    assert "1 USD = 78.2696 RUB" in html and "rate of July 1, 2026" in html and RATE_SOURCE in html


def test_rub_plan_in_usd_divides_by_the_rate(team_client):
    rub = _plan(team_client.team, name="RUB plan", currency="RUB", net="4958019.76")
    usd = _plan(team_client.team, name="USD plan", currency="USD", net="60252.97")
    response = _get(team_client, [rub, usd], currency="USD")
    first, second = response.context["columns"]
    # 4 958 019.76 RUB / 78.2696 RUB per USD = 63 345.408... -> 63 345.41 USD
    assert first["cheapest"]["amount"] == Decimal("63345.41")
    assert second["cheapest"]["amount"] == Decimal("60252.97")
    html = _flat(response.content.decode())
    assert "63,345.41 USD" in html and "60,252.97 USD" in html and "RUB</strong>" not in html
    assert "none: the plan is in USD" in html  # the USD plan needs no rate, and says so


def test_russian_page_formats_and_dates_the_rate(team_client):
    rub = _plan(team_client.team, name="План в рублях", currency="RUB", net="4958019.76")
    usd = _plan(team_client.team, name="План в долларах", currency="USD", net="1234.56")
    html = _flat(_get(team_client, [rub, usd], lang="ru", currency="RUB").content.decode())
    assert "96 628,52 RUB" in html and "4 958 019,76 RUB" in html
    assert "1 USD = 78,2696 RUB" in html and "курс на 1 июля 2026 г." in html
    assert "Все суммы в RUB за 24 мес." in html


def test_default_currency_is_the_first_plans(team_client):
    usd = _plan(team_client.team, name="USD plan", currency="USD", net="1000.00")
    rub = _plan(team_client.team, name="RUB plan", currency="RUB", net="78269.60")
    response = _get(team_client, [usd, rub])
    assert response.context["currency"] == "USD"
    # 78 269.60 RUB / 78.2696 = 1 000.00 USD
    assert response.context["columns"][1]["cheapest"]["amount"] == Decimal("1000.00")
    assert _get(team_client, [rub, usd]).context["currency"] == "RUB"


def test_a_eur_first_plan_defaults_to_the_languages_currency(team_client):
    eur_row = {"id": 2, "date": "2026-07-01", "base": "EUR", "quote": "RUB", "rate": "89.2743", "source": {}}
    eur = _plan(team_client.team, name="EUR plan", currency="EUR", net="100.00", fx_rows=(FX_ROW, eur_row))
    usd = _plan(team_client.team, name="USD plan", currency="USD", net="100.00", fx_rows=(FX_ROW, eur_row))
    assert _get(team_client, [eur, usd], lang="ru").context["currency"] == "RUB"
    response = _get(team_client, [eur, usd], lang="en")
    assert response.context["currency"] == "USD"
    # crossed through RUB as the costs engine crosses: 100 EUR x 89.2743 / 78.2696 = 114.060... USD
    assert response.context["columns"][0]["cheapest"]["amount"] == Decimal("114.06")
    assert len(response.context["columns"][0]["fx"]["legs"]) == 2


def test_different_horizons_compare_per_month(team_client):
    short = _plan(team_client.team, name="Twelve months", currency="USD", net="1200.00", horizon=12)
    long = _plan(team_client.team, name="Two years", currency="RUB", net="187847.04", horizon=24)
    response = _get(team_client, [short, long], currency="USD")
    basis = response.context["basis"]
    assert basis["per_month"] and basis["horizons"] == [12, 24]
    short_c, long_c = response.context["columns"]
    assert short_c["cheapest"]["amount"] == Decimal("100.00")  # 1 200 USD / 12 months
    # 187 847.04 RUB / 24 months = 7 826.96 RUB a month; / 78.2696 = 100.00 USD
    assert long_c["cheapest"]["amount"] == Decimal("100.00")
    html = _flat(response.content.decode())
    assert "All amounts in USD per month." in html and "The horizons differ (12, 24 months)" in html


def test_same_horizon_compares_totals(team_client):
    a = _plan(team_client.team, name="A", currency="USD", net="1200.00")
    b = _plan(team_client.team, name="B", currency="USD", net="2400.00")
    response = _get(team_client, [a, b], currency="USD")
    assert not response.context["basis"]["per_month"]
    assert [c["cheapest"]["amount"] for c in response.context["columns"]] == [Decimal("1200.00"), Decimal("2400.00")]
    assert "All amounts in USD over 24 months." in _flat(response.content.decode())


def test_a_one_off_job_against_a_service_says_why_it_is_not_aligned(team_client):
    job = _plan(team_client.team, name="Training run", currency="USD", net="5000.00", horizon=6, job=True)
    service = _plan(team_client.team, name="Chat service", currency="USD", net="2400.00", horizon=24)
    response = _get(team_client, [job, service], currency="USD")
    basis = response.context["basis"]
    assert basis["not_aligned"] == ["Training run"]
    job_c, service_c = response.context["columns"]
    assert job_c["cheapest"]["amount"] == Decimal("5000.00") and not job_c["per_month"]  # its runs' total
    assert service_c["cheapest"]["amount"] == Decimal("100.00")  # 2 400 / 24
    html = _flat(response.content.decode())
    assert "Not aligned: Training run" in html and "for its runs, not per month" in html


def test_a_recurring_job_is_put_per_month(team_client):
    job = _plan(team_client.team, name="Monthly retrain", currency="USD", net="600.00", horizon=6, job=True,
                cost_inputs={"horizon_months": 6, "currency": "USD", "runs_per_month": 1})
    service = _plan(team_client.team, name="Service", currency="USD", net="2400.00", horizon=24)
    response = _get(team_client, [job, service], currency="USD")
    assert response.context["basis"]["not_aligned"] == []
    assert response.context["columns"][0]["cheapest"]["amount"] == Decimal("100.00")


def test_mixed_vat_settings_compare_net(team_client):
    gross = _plan(team_client.team, name="With VAT", currency="RUB", net="1000.00", vat="220.00", include_vat=True)
    net = _plan(team_client.team, name="Net", currency="RUB", net="1000.00")
    response = _get(team_client, [gross, net], currency="RUB")
    assert response.context["basis"]["vat"] == "net"
    assert [c["cheapest"]["amount"] for c in response.context["columns"]] == [Decimal("1000.00")] * 2
    both = [_plan(team_client.team, name=f"G{i}", currency="RUB", net="1000.00", vat="220.00", include_vat=True)
            for i in range(2)]
    response = _get(team_client, both, currency="RUB")
    assert response.context["basis"]["vat"] == "gross"
    assert response.context["columns"][0]["cheapest"]["amount"] == Decimal("1220.00")


@pytest.mark.parametrize("bad", ["EUR", "XYZ", "rub", "<script>", "1" * 300])
def test_bad_currency_is_a_form_error_not_a_500(team_client, bad):
    a = _plan(team_client.team, name="A", currency="USD", net="1.00")
    b = _plan(team_client.team, name="B", currency="RUB", net="1.00")
    response = _get(team_client, [a, b], currency=bad)
    assert response.status_code == 400
    assert response.context["form"].errors["currency"]
    assert response.context["columns"] == []
    html = response.content.decode()
    assert 'aria-invalid="true"' in html and "<script>" not in html.split("<main", 1)[-1].split("</main>")[0]
    russian = _get(team_client, [a, b], lang="ru", currency=bad)
    assert russian.status_code == 400 and "Выберите валюту из списка" in russian.content.decode()


def test_htmx_gets_the_result_only(team_client):
    a = _plan(team_client.team, name="A", currency="USD", net="1.00")
    b = _plan(team_client.team, name="B", currency="RUB", net="78.27")
    response = team_client.get(reverse("plan_compare"), {"plans": [a.id, b.id], "currency": "USD"},
                               HTTP_HX_REQUEST="true")
    html = response.content.decode()
    assert response.status_code == 200 and html.startswith('<div id="compare-result"')
    assert "<form" not in html and "1 USD = 78.2696 RUB" in html
    bad = team_client.get(reverse("plan_compare"), {"plans": [a.id, b.id], "currency": "XYZ"}, HTTP_HX_REQUEST="true")
    assert bad.status_code == 200 and 'role="alert"' in bad.content.decode()  # htmx swaps 2xx only


def test_the_page_works_without_javascript(team_client):
    a = _plan(team_client.team, name="A", currency="USD", net="1.00")
    b = _plan(team_client.team, name="B", currency="RUB", net="78.27")
    html = _get(team_client, [a, b], currency="USD").content.decode()
    assert '<form method="get" action="' + reverse("plan_compare") + '"' in html
    assert '<select name="currency"' in html and '<option value="USD" selected>' in html


def test_no_rate_for_the_pair_says_so(team_client):
    usd = _plan(team_client.team, name="USD plan", currency="USD", net="10.00", fx_rows=())
    rub = _plan(team_client.team, name="RUB plan", currency="RUB", net="10.00", fx_rows=())
    response = _get(team_client, [rub, usd], currency="RUB")  # the catalog has no rates in this test
    assert response.status_code == 200
    column = response.context["columns"][1]
    assert column["cheapest"] is None and "no exchange rate USD/RUB" in str(column["fx"]["error"])


def test_a_missing_snapshot_rate_is_read_from_the_catalog_for_the_plans_date(team_client):
    import datetime as dt

    from catalog.models import ExchangeRate

    src = {"source_title": "test rate", "source_url": "https://example.org/rates", "retrieved_on": dt.date(2026, 11, 30)}
    ExchangeRate.objects.create(rate_date=dt.date(2026, 10, 15), base="USD", quote="RUB", rate=Decimal("80"), **src)
    ExchangeRate.objects.create(rate_date=dt.date(2026, 11, 20), base="USD", quote="RUB", rate=Decimal("90"), **src)
    usd = _plan(team_client.team, name="USD plan", currency="USD", net="10.00", fx_rows=())
    rub = _plan(team_client.team, name="RUB plan", currency="RUB", net="10.00", fx_rows=())
    response = _get(team_client, [rub, usd], currency="RUB")
    column = response.context["columns"][1]
    # the plan's prices are of 1 Nov 2026: the rate of 15 Oct (80), not the later one of 20 Nov
    assert column["cheapest"]["amount"] == Decimal("800.00")
    assert column["fx"]["legs"][0]["date"] == dt.date(2026, 10, 15)


def test_another_teams_plan_stays_invisible(team_client):
    own = _plan(team_client.team, name="Own", currency="USD", net="1.00")
    stranger = PlanFactory()
    PlanVersionFactory(plan=stranger, number=1, status=VersionStatus.DONE, result={"costs": {}})
    response = _get(team_client, [own, stranger], currency="RUB")
    assert response.status_code == 404
    assert stranger.name not in _get(team_client, [own, own], currency="RUB").content.decode()


def test_the_compare_page_names_the_plans_own_decision_not_the_cheapest_option(team_client):
    """A service's spot option can be the cheapest, but the plan's decision excludes spot: the
    compare page must name the same option as the plan page (one "best" per plan)."""
    plan = _plan(team_client.team, name="Service", currency="USD", net="1000.00", kind="cloud_spot")
    version = plan.versions.get()
    committed = _option("Service-2", "cloud_committed", "1500.00")
    version.result["costs"]["options"].append(committed)
    version.result["costs"]["decision"] = {"recommended": {"id": "Service-2", "kind": "cloud_committed"}}
    version.save(update_fields=["result"])
    other = _plan(team_client.team, name="Other", currency="USD", net="10.00")
    response = _get(team_client, [plan, other], currency="USD")
    service = response.context["columns"][0]
    assert service["cheapest"]["id"] == "Service-1"
    assert service["recommended"]["id"] == "Service-2" and service["recommended"]["amount"] == Decimal("1500.00")
    row = _flat(response.content.decode()).split('id="compare-recommended"')[1].split("</tr>")[0]
    assert "Option Service-2" in row and "1,500.00 USD" in row and "Option Service-1" not in row
    # a result from before the decision summary: the cheapest, said so
    assert response.context["columns"][1]["recommended"]["id"] == "Other-1"
    assert "computed before the decision summary existed" in row
