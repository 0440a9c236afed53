"""Bad input gives a clear error naming the field, never a crash or a silent default."""

import datetime as dt
from dataclasses import replace
from decimal import Decimal as D

import pytest

from costs.engine.errors import CostValidationError
from costs.engine.options import parse_cost_options
from costs.engine.plan import cost_plan
from tests.unit.cost_inputs import inputs, workload


def _paths(exc: CostValidationError) -> list[str]:
    return [e.path for e in exc.errors]


def test_utilisation_above_one():
    with pytest.raises(CostValidationError) as exc:
        parse_cost_options({"utilisation": 1.2})
    assert str(exc.value) == "costs.utilisation: must be between 0 and 1"


def test_horizon_zero():
    with pytest.raises(CostValidationError) as exc:
        parse_cost_options({"horizon_months": 0})
    assert _paths(exc.value) == ["costs.horizon_months"]


def test_unknown_currency():
    with pytest.raises(CostValidationError) as exc:
        parse_cost_options({"currency": "GBP"})
    assert "unknown currency 'GBP'" in str(exc.value) and _paths(exc.value) == ["costs.currency"]


def test_every_error_is_reported_at_once():
    with pytest.raises(CostValidationError) as exc:
        parse_cost_options({"utilisation": -1, "horizon_months": "x", "options": ["moon"], "colour": 1})
    assert set(_paths(exc.value)) == {
        "costs.utilisation",
        "costs.horizon_months",
        "costs.options",
        "costs.colour",
    }


def test_negative_hours_in_the_workload():
    with pytest.raises(CostValidationError) as exc:
        cost_plan(inputs=inputs(workloads=[workload(training_gpu_hours_per_run=D(-5))]))
    assert _paths(exc.value) == ["workloads[0].training_gpu_hours_per_run"]


def test_negative_override():
    with pytest.raises(CostValidationError) as exc:
        parse_cost_options({"overrides": {"ops_hours_per_month.cloud.mlops": -3}})
    assert str(exc.value) == "costs.overrides.ops_hours_per_month.cloud.mlops: must not be negative"


def test_override_of_an_unknown_rate():
    with pytest.raises(CostValidationError) as exc:
        parse_cost_options({"overrides": {"puee": 1.3}})
    assert _paths(exc.value) == ["costs.overrides.puee"]


def test_pue_below_one():
    with pytest.raises(CostValidationError) as exc:
        parse_cost_options({"overrides": {"pue": "0.5"}})
    assert "must be at least 1" in str(exc.value)


def test_no_fx_rate_for_the_date():
    # the test FX table starts on 2025-01-01; engineering rates are in roubles, the report in dollars
    with pytest.raises(CostValidationError) as exc:
        inp = inputs()
        cost_plan(inputs=replace(inp, options=replace(inp.options, as_of=dt.date(2024, 6, 1))))
    assert "no FX rate" in str(exc.value) and "2024-06-01" in str(exc.value)


def test_no_vat_rate_for_the_country():
    with pytest.raises(CostValidationError) as exc:
        cost_plan(inputs=inputs(country="DE"))
    assert _paths(exc.value) == ["costs.country"]


def test_options_built_in_code_are_validated_too():
    with pytest.raises(CostValidationError) as exc:
        cost_plan(inputs=inputs(horizon_months=0))
    assert _paths(exc.value) == ["costs.horizon_months"]


def test_bad_user_api_price():
    with pytest.raises(CostValidationError) as exc:
        parse_cost_options(
            {
                "api_prices": [
                    {
                        "provider": "X",
                        "model": "m",
                        "currency": "USD",
                        "input_per_1m_tokens": "-1",
                        "output_per_1m_tokens": "2",
                    }
                ]
            }
        )
    assert _paths(exc.value) == ["costs.api_prices[0].input_per_1m_tokens"]


def test_valid_section_parses():
    opts = parse_cost_options(
        {
            "horizon_months": 24,
            "currency": "RUB",
            "utilisation": "0.75",
            "options": ["onprem", "cloud_on_demand"],
            "overrides": {"pue": 1.3},
            "server_prices": [
                {"accelerator": "h100", "gpus_per_server": 8, "amount": 300000, "currency": "USD"}
            ],
        }
    )
    assert (opts.horizon_months, opts.currency, opts.utilisation, opts.overrides["pue"]) == (
        24,
        "RUB",
        D("0.75"),
        D("1.3"),
    )
    assert opts.user_servers[0].price.amount == D(300000)


@pytest.mark.parametrize(
    ("data", "path"),
    [
        ({"unknown": 1}, "costs.unknown"),
        ({"runs": -1}, "costs.runs"),
        ({"runs": 0}, "costs.runs"),
        ({"discount_rate": 1}, "costs.discount_rate"),
        ({"discount_rate": -0.1}, "costs.discount_rate"),
        ({"country": "ZZ", "include_vat": False}, "costs.country"),
        ({"runs": 2, "runs_per_month": 1}, "costs.runs_per_month"),
        ({"vat_recoverable": "yes"}, "costs.vat_recoverable"),
        ({"downtime_cost_per_hour": -5}, "costs.downtime_cost_per_hour"),
    ],
)
def test_issue_13_cost_options_are_validated(data, path):
    from costs.engine.options import parse_cost_options

    with pytest.raises(CostValidationError) as exc:
        parse_cost_options(data)
    assert path in [e.path for e in exc.value.errors]


def test_a_country_without_a_vat_table_costs_with_vat_off():
    from costs.engine.plan import cost_plan
    from tests.unit.cost_inputs import inputs

    res = cost_plan(inputs=inputs(country="KZ", include_vat=False)).to_dict()
    assert all(o["totals"]["vat"] == "0.00" for o in res["options"])
    assert any("KZ" in n for n in res["notes"])


def test_utilisation_zero_is_refused_for_a_24_hour_service():
    from decimal import Decimal as D

    from costs.engine.plan import cost_plan
    from tests.unit.cost_inputs import inputs, workload

    with pytest.raises(CostValidationError) as exc:
        cost_plan(inputs=inputs(utilisation=D(0), workloads=[workload(utilisation=D(1))]))
    assert exc.value.errors[0].path == "costs.utilisation"


def test_open_weights_model_is_checked_by_the_callers_preset_check():
    """The pure cost engine knows no model presets (they are the sizing engine's): the caller hands the
    check in (costs.adapters.parse_options passes the presets); an empty id is refused either way."""
    from costs.adapters import parse_options

    item = {"provider": "Hoster", "model": "m", "currency": "USD", "input_per_1m_tokens": 1,
            "output_per_1m_tokens": 2, "open_weights_model": "llama-9"}
    with pytest.raises(CostValidationError) as exc:
        parse_cost_options({"api_prices": [item]}, is_model_preset=lambda m: m == "llama-3.1-8b")
    assert [e.path for e in exc.value.errors] == ["costs.api_prices[0].open_weights_model"]
    with pytest.raises(CostValidationError):
        parse_options({"api_prices": [item]})
    ok = parse_options({"api_prices": [{**item, "open_weights_model": "llama-3.1-8b"}]})
    assert ok.user_api_prices[0].open_weights_model == "llama-3.1-8b"
    with pytest.raises(CostValidationError):
        parse_cost_options({"api_prices": [{**item, "open_weights_model": " "}]})
