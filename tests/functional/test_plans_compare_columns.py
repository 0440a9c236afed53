"""Plans compare (issue 21, part 4): 2-6 plans, every column in one currency and one VAT basis
(converted at each plan's dated rate, labelled), a clear form error for 1 or 7 plans (never a 500)."""

from decimal import Decimal

import pytest
from django.urls import reverse

from planner.choices import Role
from tests.functional.test_compare_currency import _plan
from tests.planner_factories import member

pytestmark = pytest.mark.django_db


@pytest.fixture
def viewer(client):
    user = member(Role.VIEWER)
    client.force_login(user)
    client.team = user.memberships.get().team
    return client


def _get(client, plans, lang="en", **params):
    return client.get(reverse("plan_compare"), {"plans": [p.id for p in plans], **params}, HTTP_ACCEPT_LANGUAGE=lang)


def _text(response) -> str:
    return response.content.decode().replace("\xa0", " ")


def test_three_plans_in_mixed_currencies_in_one_currency(viewer):
    plans = [_plan(viewer.team, name="RUB plan", currency="RUB", net="4958019.76"),
             _plan(viewer.team, name="USD plan", currency="USD", net="1234.56"),
             _plan(viewer.team, name="Second USD plan", currency="USD", net="100.00")]
    response = _get(viewer, plans, currency="RUB")
    assert response.status_code == 200
    columns = response.context["columns"]
    assert len(columns) == 3 and {c["currency"] for c in columns} == {"RUB"}
    # 1 234.56 x 78.2696 = 96 628.52; 100 x 78.2696 = 7 826.96
    assert [c["cheapest"]["amount"] for c in columns] == [Decimal("4958019.76"), Decimal("96628.52"),
                                                         Decimal("7826.96")]
    html = _text(response)
    assert "All amounts in RUB over 24 months." in html and "Net of VAT." in html
    assert html.count("1 USD = 78.2696 RUB") == 2  # each converted column names its rate
    assert 'class="compare-scroll"' in html  # the table scrolls sideways inside its wrapper


def test_six_plans_and_the_vat_basis(viewer):
    plans = [_plan(viewer.team, name=f"Plan {i}", currency="USD" if i % 2 else "RUB", net="1000.00",
                   include_vat=i != 3, vat="200.00") for i in range(6)]
    response = _get(viewer, plans, "ru", currency="USD")
    assert response.status_code == 200
    assert len(response.context["columns"]) == 6
    html = _text(response)
    assert "Все суммы в USD" in html
    # plan 3 is net of VAT: every plan is compared net of VAT, and the page says so
    assert response.context["basis"]["vat"] == "net" and response.context["basis"]["vat_mixed"]
    assert all(c["cheapest"]["amount"] in (Decimal("1000.00"), Decimal("12.78")) for c in response.context["columns"])


@pytest.mark.parametrize("count", [1, 7])
def test_one_or_seven_plans_is_a_form_error(viewer, count):
    plans = [_plan(viewer.team, name=f"Plan {i}", currency="RUB", net="1000.00") for i in range(count)]
    response = _get(viewer, plans)
    assert response.status_code == 400
    assert "Choose between 2 and 6 plans to compare." in _text(response)
    assert response.context["columns"] == []
    ru = _get(viewer, plans, "ru")
    assert ru.status_code == 400 and "Выберите от 2 до 6 планов для сравнения." in _text(ru)
    htmx = viewer.get(reverse("plan_compare"), {"plans": [p.id for p in plans]}, HTTP_HX_REQUEST="true")
    assert htmx.status_code == 200 and "Choose between 2 and 6 plans" in _text(htmx)
