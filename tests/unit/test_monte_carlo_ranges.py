"""The Monte Carlo's ranges by hand (issue 20, part 5): a job's hours move with its efficiency only,
a service's utilisation stays within half its plan, and gross percentiles scale each line by its
own VAT share. The engine's analysis runs on hand-made linear models; every spread but the one
under test is 0."""

from decimal import Decimal as D
from types import SimpleNamespace

import numpy as np
import pytest

from costs.engine import analysis
from costs.labels import mc_range

Z90 = 1.2815515655446004


def _rates(**sd):
    keys = ("mc_utilisation_sd", "mc_efficiency_sd", "mc_price_drift_sd", "mc_fx_sd", "mc_incident_sd",
            "price_drift_per_year")
    return {k: SimpleNamespace(value=D(str(sd.get(k, 0)))) for k in keys}


def _priced(option_id, *, u, e=0.8, kind="cloud_on_demand"):
    return SimpleNamespace(
        option=SimpleNamespace(option_id=option_id, kind=kind), utilisation=D(str(u)), efficiency=D(str(e)),
        cumulative=lambda vat: [D(0), D(100)],
    )


def _line(a, b, *, vat_share=0.0, tag="gpu_rent", market=False, currency=""):
    return {"key": tag, "a": a, "b": b, "market": market, "tag": tag, "origin_currency": currency,
            "downtime": False, "vat_share": vat_share}


def _run(priced, linear, **sd):
    return analysis.analyse(
        priced=priced, linear=linear, shortlist={"c": [p.option.option_id for p in priced]}, rates=_rates(**sd),
        options=SimpleNamespace(currency="RUB", monte_carlo_samples=20_000, seed=1), calendar_drift=[D(1)] * 12,
        vat=True,
    )["monte_carlo"]["options"]


def test_a_jobs_hours_follow_its_efficiency_not_a_utilisation_spread():
    # 1 000 RUB net at u = 1, 20 % VAT; the job runs 10 % of the horizon at efficiency 0.8
    linear = {"job": {"lines": [_line(0.0, 1000.0, vat_share=0.2)], "efficiency_driven": True}}
    mc = _run([_priced("job", u=0.1)], linear, mc_utilisation_sd=0.1, mc_efficiency_sd=0.1)["job"]
    # total = 1000 x 0.1 x 0.8 / e; e = 0.8 + N(0, 0.1) (cut at +-0.2, beyond the P10/P90)
    p10, p90 = 100 * 0.8 / (0.8 + Z90 * 0.1), 100 * 0.8 / (0.8 - Z90 * 0.1)  # 86.19, 119.08
    assert float(mc["p10_net"]) == pytest.approx(p10, rel=0.01)
    assert float(mc["p90_net"]) == pytest.approx(p90, rel=0.01)
    assert float(mc["p10_gross"]) == pytest.approx(p10 * 1.2, rel=0.01)
    assert float(mc["p90_gross"]) == pytest.approx(p90 * 1.2, rel=0.01)


def test_a_service_runs_at_least_half_its_planned_hours():
    # 1 hour a day (u = 1/24): an absolute spread of 0.1 is cut at +-50 % of u
    u0 = 1 / 24
    linear = {"svc": {"lines": [_line(0.0, 2400.0)], "efficiency_driven": False}}
    mc = _run([_priced("svc", u=u0)], linear, mc_utilisation_sd=0.1)["svc"]
    # base 100; P(|0.1 z| > u0 / 2) = P(|z| > 0.208) = 84 %: P10 and P90 sit on the cuts
    assert float(mc["p10_net"]) == pytest.approx(50.0, rel=1e-6)
    assert float(mc["p50_net"]) == pytest.approx(100.0, rel=0.05)  # steep at the median: sampling noise
    assert float(mc["p90_net"]) == pytest.approx(150.0, rel=1e-6)


def test_gross_percentiles_scale_each_line_by_its_own_vat_share():
    # a foreign line with 20 % VAT (900 net) moves with FX; a line without VAT (100 net) does not
    linear = {"o": {"lines": [_line(900.0, 0.0, vat_share=0.2, currency="USD"),
                              _line(100.0, 0.0, tag="engineering_staff")], "efficiency_driven": False}}
    mc = _run([_priced("o", u=0.5)], linear, mc_fx_sd=0.15)["o"]
    lo, hi = 2.718281828459045 ** (-Z90 * 0.15), 2.718281828459045 ** (Z90 * 0.15)  # 0.825, 1.212
    assert float(mc["p10_net"]) == pytest.approx(900 * lo + 100, rel=0.005)
    assert float(mc["p90_net"]) == pytest.approx(900 * hi + 100, rel=0.005)
    # not net x one gross/net ratio: (900 x 1.2 x fx + 100), e.g. P90 1 409.0, not 1 190.7 x 1.18 = 1 405.1
    assert float(mc["p10_gross"]) == pytest.approx(1080 * lo + 100, rel=0.005)
    assert float(mc["p90_gross"]) == pytest.approx(1080 * hi + 100, rel=0.005)


def test_equipment_prices_have_their_documented_span():
    linear = {"o": {"lines": [_line(1000.0, 0.0, tag="capex")], "efficiency_driven": False}}
    mc = _run([_priced("o", u=0.5, kind="onprem")], linear)["o"]
    assert float(mc["p10_net"]) == pytest.approx(850.0, rel=0.01)
    assert float(mc["p90_net"]) == pytest.approx(1150.0, rel=0.01)


def test_mc_range_picks_the_basis_and_labels_stored_net_results():
    new = {"p10_net": "1", "p50_net": "2", "p90_net": "3", "p10_gross": "4", "p50_gross": "5", "p90_gross": "6"}
    assert mc_range(new, gross=True)["p50"] == "5" and mc_range(new, gross=True)["basis"] == "gross"
    assert mc_range(new, gross=False)["p50"] == "2" and mc_range(new, gross=False)["basis"] == "net"
    old = {"p10": "1", "p50": "2", "p90": "3", "mean": "2"}
    assert mc_range(old, gross=True) == {"p10": "1", "p50": "2", "p90": "3", "mean": "2", "basis": "net",
                                         "basis_label": "without VAT"}
    assert mc_range(None, gross=True) is None


@pytest.mark.parametrize("samples", [1, 2, 3, 11, 10_000])
def test_percentiles_from_the_partition_are_numpys_to_the_bit(samples):
    rows = np.random.default_rng(samples).lognormal(15.0, 0.4, size=(5, samples))
    rows[0] = rows[0, 0]  # ties: every sample the same
    got = analysis._percentiles(rows)
    want = np.percentile(rows, analysis.PERCENTILES, axis=1)
    assert np.array_equal(got, want)
