"""Issue 13: costs that answer the decision. Hand-checked numbers for a one-off pre-training run
(cloud and on-prem), a monthly LoRA fine-tune, a 24/7 70B service and an API agent; operations
that grow with the fleet; priced traffic; a break-even between the best on-prem and the best
cloud option that agrees with the cumulative totals (terminal amounts included).

Rates are the shipped rate card (tests/unit/cost_inputs.py: USD 1 = RUB 80); each figure below
is worked out in the comment next to it."""

from decimal import Decimal as D

from costs.cash_flow import cumulative
from costs.engine.inputs import ApiPrice, CloudOffer, ServerPrice
from costs.engine.plan import cost_plan
from tests.unit.cost_inputs import inputs, usd, workload


def _opt(d, kind, candidate=None):
    return next(o for o in d["options"] if o["kind"] == kind and (candidate is None or o["candidate"] == candidate))


def _line(o, key):
    return next(ln for r in o["rows"] for ln in r["lines"] if ln["key"] == key)


def _lines(o):
    return {ln["key"]: ln for r in o["rows"] for ln in r["lines"]}


PRETRAIN = dict(
    is_training=True,
    training_gpu_hours_per_run=D(5840),  # 8 GPUs x 730 h: one month of the 8-GPU fleet at e = 1
    checkpoint_interval_hours=D(1),
)


def _pretrain(**opts):
    base = dict(
        workloads=[workload(**PRETRAIN)],
        offers=[
            CloudOffer(
                provider="AWS", region="us-east-1", instance_type="p5.48xlarge", accelerator_id="h100",
                gpus_per_instance=8, on_demand=usd("40", "per instance-hour"),
            )
        ],
        options=("cloud_on_demand", "onprem"),
        horizon_months=12,
        efficiency=D(1),
        rate_values={"residual_value_share": "0"},
    )
    base.update(opts)
    return cost_plan(inputs=inputs(**base)).to_dict()


def test_one_off_pretraining_run_in_the_cloud_bills_the_run_only():
    d = _pretrain(downtime_cost_per_hour=D(625))  # 50 000 RUB / 80
    od = _opt(d, "cloud_on_demand")
    lines = _lines(od)
    # the run: 5840 GPU-h / 8 GPUs = 730 h on 1 instance x 40 USD = 29 200.00, in month 1 only
    assert lines["gpu_time.useful"]["total_net"] == "29200.00"
    assert lines["gpu_time.idle"]["total_net"] == "0.00"
    assert od["cash_flow"]["net"][2:] == ["0.00"] * 11
    # setup: (40 h x 4000 + 16 h x 3000 + 1 instance x 1 h x 3000) RUB / 80 = 2637.50
    assert lines["engineering.setup"]["total_net"] == "2637.50"
    # operations only while the run is on: (10 x 4000 + 4 x 3000 + 0.5 x 4000 + 0.5 x 3000) / 80 = 693.75
    assert lines["engineering.operations"]["total_net"] == "693.75"
    # platform incidents in that month: 4 / 12 x 2 h x 50 000 RUB / 80 = 416.67: a risk, not in the total
    assert lines["downtime_risk.outage"]["total_net"] == "416.67"
    assert od["risk"]["expected_downtime_net"] == "416.67"
    # GPU failures: 8 x 0.173 / 12 x (1/2 + 0.25) h x 8 GPUs redone x 5 USD per GPU-h = 3.46: re-run
    # on-demand hours are billed, so they are GPU time in the budget (with VAT like the rest of it)
    assert lines["gpu_time.rerun_after_failures"]["total_net"] == "3.46"
    assert lines["gpu_time.rerun_after_failures"]["vat_applies"] is True
    assert "downtime_risk.lost_progress" not in lines
    # 29 200 + 2637.50 + 693.75 + 3.46
    assert od["totals"]["net"] == "32534.71"
    assert od["job"]["runs"] == "1.00" and od["job"]["per_run_net"] == "32534.71"


def test_one_off_pretraining_run_on_prem_shows_the_idle_remainder():
    d = _pretrain()
    op = _opt(d, "onprem")
    lines = _lines(op)
    # 250 000 over 36 months, 12 used, no residual: 83 333.33 charged (166 666.67 credited at month 12)
    assert lines["gpu_time.useful"]["total_net"] == "6944.44"  # 1 month of 12 useful: 83 333.33 / 12
    assert lines["gpu_time.idle"]["total_net"] == "76388.89"
    # power: 10 kW x PUE 1.5 x 730 h = 10 950 kWh a full month; month 1 at full load, 11 months idle
    # (0.3): 10 950 x 4.3 = 47 085 kWh x 8 RUB / 80 = 4708.50
    assert lines["infrastructure.power"]["total_net"] == "4708.50"
    # colocation 10 kW x 12 000 RUB / 80 = 1500 a month x 12 = 18 000.00
    assert lines["infrastructure.colocation"]["total_net"] == "18000.00"
    # setup: floor (40 x 4000 + 160 x 3000) + 1 server x (1 x 4000 + 8 x 3000) = 668 000 RUB / 80 = 8350.00
    assert lines["engineering.setup"]["total_net"] == "8350.00"
    # ops: (10 x 4000 + 40 x 3000 + 0.5 x 4000 + 2 x 3000) / 80 = 2100 a month x 12 = 25 200.00
    assert lines["engineering.operations"]["total_net"] == "25200.00"
    job = op["job"]
    assert job["runs"] == "1.00"
    # the run used 1/12 of the owned hours: its share and the idle remainder add up to the total
    assert D(job["runs_share_net"]) + D(job["idle_remainder_net"]) == D(op["totals"]["net"])
    assert D(job["runs_share_net"]) == (D(op["totals"]["net"]) / 12).quantize(D("0.01"))


def test_lower_efficiency_runs_more_gpu_hours_and_costs_more():
    base = _opt(_pretrain(efficiency=D(1)), "cloud_on_demand")
    slow = _opt(_pretrain(efficiency=D("0.5")), "cloud_on_demand")
    # half the running hours do useful work: 1460 h instead of 730, GPU time doubles
    paid = lambda o: D(_line(o, "gpu_time.useful")["total_net"]) + D(_line(o, "gpu_time.idle")["total_net"])  # noqa: E731
    assert paid(slow) == 2 * paid(base) == D("58400.00")
    assert _line(slow, "gpu_time.useful")["total_net"] == "29200.00"


def test_break_even_in_runs_between_on_prem_and_cloud():
    d = _pretrain()
    be = d["decision"]["break_even"]
    assert be["state"] == "b_never_more_expensive"  # one run: the cloud wins over 12 months
    # per run the cloud adds 29 200 GPU time + 693.75 ops + 3.46 GPU time re-run = 29 897.21 and on-prem
    # 0.7 x 10 950 kWh x 0.1 = 766.50 power (the outage and the on-prem progress lost are risks, not in
    # the budget); the fixed difference is (on-prem at 1 run - 766.50) - (cloud at 1 run - 29 897.21)
    op, od = _opt(d, "onprem"), _opt(d, "cloud_on_demand")
    fixed_op = D(op["totals"]["net"]) - D("766.50")
    fixed_od = D(od["totals"]["net"]) - D("29897.21")
    expected = (fixed_op - fixed_od) / (D("29897.21") - D("766.50"))
    assert abs(D(be["runs"]["runs"]) - expected) < D("0.05")
    # the text names a whole number of runs: the first at which owning is cheaper
    import math

    from planner.i18n import render

    assert f"from {math.floor(expected) + 1} runs over the horizon" in render(be["runs"]["text"])


def test_a_one_off_job_is_compared_for_its_runs_not_over_the_months():
    from planner.i18n import render

    one = render(_pretrain()["decision"]["basis"]["text"])
    assert "for 1 run (hardware bought counted over 12 months)" in one and "over 12 months)" in one
    three = render(_pretrain(runs=3)["decision"]["basis"]["text"], "ru")
    assert "за 3 запуска (купленное оборудование — за 12 мес.)" in three


def test_monthly_lora_fine_tune_bills_its_hours_every_month():
    d = cost_plan(
        inputs=inputs(
            workloads=[
                workload(candidate_id="l4x1", accelerator_id="l4", gpu_count=1, gpus_per_server=1,
                         is_training=True, training_gpu_hours_per_run=D(19), checkpoint_interval_hours=D(1))
            ],
            offers=[CloudOffer(provider="X", region="r", instance_type="g1", accelerator_id="l4",
                               gpus_per_instance=1, on_demand=usd("2", "per instance-hour"))],
            servers=[],
            options=("cloud_on_demand",),
            horizon_months=12,
            efficiency=D(1),
            runs_per_month=D(1),
            downtime_cost_per_hour=D(625),
        )
    ).to_dict()
    od = _opt(d, "cloud_on_demand")
    lines = _lines(od)
    # 19 h x 2 USD = 38 a month x 12 = 456.00 (not 730 h a month)
    assert lines["gpu_time.useful"]["total_net"] == "456.00"
    assert lines["engineering.setup"]["total_net"] == "2637.50"
    assert lines["engineering.operations"]["total_net"] == "8325.00"  # 693.75 x 12
    # a risk beside the total, and a job meets platform incidents only while it runs: 416.67 a month of
    # exposure x 19/730 of the month = 10.84 x 12 (a whole month's exposure would be 5 000.04)
    assert lines["downtime_risk.outage"]["total_net"] == "130.08"
    # 456 + 2637.50 + 8325 (+ 1 GPU x 0.173 / 12 x 0.75 h x 2 USD x 19/730 of a month re-run: 0.00)
    assert lines["gpu_time.rerun_after_failures"]["total_net"] == "0.00"
    assert od["totals"]["net"] == "11418.50"
    assert od["job"]["runs"] == "12.00" and od["job"]["per_run_net"] == "951.54"  # 11 418.50 / 12
    # all-in per GPU-hour while it runs: 11 418.50 / (1 GPU x 19 h x 12 months) = 50.0811
    assert od["unit_costs"]["per_running_gpu_hour_net"] == "50.0811"


SERVICE = dict(
    candidate_id="h100x4", gpu_count=4, gpus_per_server=4, tensor_parallel=4, utilisation=D(1),
    tokens_in_per_month=D(2_628_000_000), tokens_out_per_month=D(657_000_000),
    egress_gb_per_month=D("131.4"),  # 657 M tokens x 200 bytes (the adapter's derivation)
    latency_target=True, meets_targets=True, sizing_recommended=True,
)


def _service(**opts):
    base = dict(
        workloads=[workload(**SERVICE)],
        offers=[CloudOffer(provider="AWS", region="r", instance_type="p5.4g", accelerator_id="h100",
                           gpus_per_instance=4, on_demand=usd("20", "per instance-hour"),
                           spot=usd("8", "per instance-hour"))],
        servers=[],
        options=("cloud_on_demand", "cloud_spot"),
        horizon_months=12,
        efficiency=D("0.8"),
    )
    base.update(opts)
    return cost_plan(inputs=inputs(**base)).to_dict()


def test_a_24_7_70b_service_with_egress():
    d = _service(downtime_cost_per_hour=D(625))
    od = _opt(d, "cloud_on_demand")
    lines = _lines(od)
    # 730 h x 20 USD x 12 = 175 200: 80 % useful, 20 % idle
    assert (lines["gpu_time.useful"]["total_net"], lines["gpu_time.idle"]["total_net"]) == ("140160.00", "35040.00")
    # egress 131.4 GB x 0.09 USD = 11.83 a month x 12
    assert lines["infrastructure.traffic"]["total_net"] == "141.96"
    # 4 GPUs x 0.173 / 12 x 2 h x 1/1 of capacity x 625 USD = 72.08 a month
    assert lines["downtime_risk.hardware_failures"]["total_net"] == "864.96"
    # platform incidents 4 / 12 x 2 h x 625 = 416.67 a month x 12 = 5000.04: risk 5865.00 beside the total
    assert lines["downtime_risk.outage"]["total_net"] == "5000.04"
    assert od["risk"]["expected_downtime_net"] == "5865.00"
    # the budget: 175 200 GPU time + 141.96 traffic + 2637.50 setup + 693.75 x 12 ops = 186 304.46
    assert od["totals"]["net"] == "186304.46"
    # spot is priced but not recommended for a service with a latency target
    assert D(_opt(d, "cloud_spot")["totals"]["net"]) < D(od["totals"]["net"])
    assert d["decision"]["recommended"]["id"] == od["id"]


def test_efficiency_does_not_change_a_service_total():
    a = _opt(_service(efficiency=D("0.8")), "cloud_on_demand")["totals"]["net"]
    b = _opt(_service(efficiency=D("0.5")), "cloud_on_demand")["totals"]["net"]
    assert a == b


def test_an_api_agent():
    d = cost_plan(
        inputs=inputs(
            workloads=[workload(tokens_in_per_month=D(100_000_000), tokens_out_per_month=D(20_000_000),
                                egress_gb_per_month=D(4), storage_gb={"nvme": D(500), "object": D(100)})],
            offers=[], servers=[], options=("api",), horizon_months=12, downtime_cost_per_hour=D(625),
            user_api_prices=(ApiPrice(provider="X", model="m", input_per_1m_tokens=usd("1"),
                                      output_per_1m_tokens=usd("4")),),
        )
    ).to_dict()
    api = _opt(d, "api")
    lines = _lines(api)
    assert lines["gpu_time.api_tokens"]["total_net"] == "2160.00"  # (100 x 1 + 20 x 4) x 12
    assert lines["infrastructure.traffic"]["total_net"] == "4.32"  # 4 GB x 0.09 x 12
    assert "infrastructure.storage.nvme" not in lines  # the API hosts the weights
    assert lines["infrastructure.storage.object"]["total_net"] == "27.60"  # 100 GB x 0.023 x 12
    assert lines["engineering.setup"]["total_net"] == "800.00"  # 16 h x 4000 RUB / 80
    assert lines["engineering.operations"]["total_net"] == "2850.00"  # (4 x 4000 + 3000) / 80 x 12
    assert lines["downtime_risk.outage"]["total_net"] == "3750.00"  # 6 / 12 x 1 h x 625 x 12, beside the total
    assert api["risk"]["expected_downtime_net"] == "3750.00"
    assert api["totals"]["net"] == "5841.92"  # 2160 + 4.32 + 27.60 + 800 + 2850
    assert d["decision"]["recommended"]["id"] == api["id"]


def test_engineering_and_incidents_grow_with_the_fleet():
    def run(gpus):
        d = _service(workloads=[workload(**{**SERVICE, "gpu_count": gpus, "tensor_parallel": 4})],
                     downtime_cost_per_hour=D(625))
        return _lines(_opt(d, "cloud_on_demand"))

    small, big = run(4), run(400)
    # 1 vs 100 instances: 0.5 h infra + 0.5 h mlops more a month each
    assert D(big["engineering.operations"]["total_net"]) - D(small["engineering.operations"]["total_net"]) == (
        D(99) * (D("0.5") * 4000 + D("0.5") * 3000) / 80 * 12
    )
    assert D(big["engineering.setup"]["total_net"]) > D(small["engineering.setup"]["total_net"])
    # 100 x the GPUs fail 100 x as often, each failure takes 1/100 of the capacity: same capacity lost
    assert big["downtime_risk.hardware_failures"]["total_net"] == small["downtime_risk.hardware_failures"]["total_net"]


def test_training_lost_progress_grows_faster_than_the_fleet():
    def lost(gpus):
        w = workload(**{**PRETRAIN, "gpu_count": gpus, "training_gpu_hours_per_run": D(gpus * 730)})
        return D(_line(_opt(_pretrain(workloads=[w]), "cloud_on_demand"), "gpu_time.rerun_after_failures")["total_net"])

    # failures grow with the GPUs and each one makes every GPU redo its work: quadratic
    assert lost(80) > 90 * lost(8)


def test_break_even_between_best_on_prem_and_best_cloud_across_configurations():
    a = workload(candidate_id="h100x8", utilisation=D("0.9"), meets_targets=True, sizing_recommended=True)
    b = workload(candidate_id="l40x8", accelerator_id="l40", utilisation=D("0.9"), meets_targets=True)
    d = cost_plan(
        inputs=inputs(
            workloads=[a, b],
            offers=[CloudOffer(provider="X", region="r", instance_type="l40.8", accelerator_id="l40",
                               gpus_per_instance=8, on_demand=usd("30", "per instance-hour"))],
            servers=[ServerPrice(accelerator_id="h100", gpus_per_server=8, price=usd("250000"))],
            options=("cloud_on_demand", "onprem"),
            horizon_months=36,
        )
    ).to_dict()
    dec = d["decision"]
    assert dec["cheapest_onprem"]["candidate"] == "h100x8" and dec["cheapest_cloud"]["candidate"] == "l40x8"
    be = dec["break_even"]
    opts = {o["id"]: o for o in d["options"]}
    cum_a, cum_b = (cumulative(opts[i], be["on"]) for i in (be["a"], be["b"]))
    total = "gross" if be["on"] == "gross" else "net"
    # the last cumulative value is the total: the terminal amounts are in it
    assert cum_a[-1] == D(opts[be["a"]]["totals"][total]) and cum_b[-1] == D(opts[be["b"]]["totals"][total])
    assert be["state"] == "crossing"
    winner, loser = (cum_a, cum_b) if be["cheaper_after"] == "a" else (cum_b, cum_a)
    assert all(winner[k] <= loser[k] for k in range(be["month"], len(cum_a)))
    assert winner[be["month"] - 1] > loser[be["month"] - 1]


def test_npv_and_vat_recovery():
    plain = _opt(_pretrain(), "onprem")["totals"]
    disc = _pretrain(discount_rate=D("0.2"))
    # on-prem pays at month 0 and gets the book value back at month 12: discounting shrinks the credit
    assert D(_opt(disc, "onprem")["totals"]["npv"]) > D(plain["gross"])
    # the cloud run is paid in month 1: (29 200 x 1.22 ...) / 1.2^(1/12) is less than its gross total
    cloud = _opt(disc, "cloud_on_demand")["totals"]
    assert D(cloud["npv"]) < D(cloud["gross"])
    assert disc["decision"]["basis"]["discounted"] is True
    rec = _pretrain(vat_recoverable=True)
    assert rec["decision"]["basis"]["amount"] == "net"
    assert _opt(rec, "onprem")["totals"]["vat_recovered"] == plain["vat"]


def test_every_line_has_a_breakdown_with_sources():
    d = _pretrain()
    for o in d["options"]:
        for ln in (ln for r in o["rows"] for ln in r["lines"]):
            assert ln["breakdown"], ln["key"]
            for b in ln["breakdown"]:
                if b["unit_price"] is None:  # downtime not priced: hours only, no price (and no 0 per hour)
                    assert b["rate"] == "downtime_cost_per_hour" and b["amount"] is None, b
                    assert b["basis"] == "not given" and D(b["quantity"]) > 0
                    continue
                q, p = D(b["quantity"]), D(b["unit_price"])
                months = D(b["months"]) if b["per"] == "month" else 1
                assert abs(q * p * months - D(b["amount"])) <= D("0.01")
    server = _line(_opt(d, "onprem"), "gpu_time.useful")["breakdown"][0]
    assert server["basis"] == "list price" and server["source"] == "test"


def _one_off_job(**opts):
    return cost_plan(
        inputs=inputs(
            workloads=[workload(candidate_id="l4x1", accelerator_id="l4", gpu_count=1, gpus_per_server=1,
                                is_training=True, training_gpu_hours_per_run=D(73), checkpoint_interval_hours=D(1))],
            offers=[CloudOffer(provider="X", region="r", instance_type="g1", accelerator_id="l4",
                               gpus_per_instance=1, on_demand=usd("2", "per instance-hour"))],
            servers=[], options=("cloud_on_demand",), horizon_months=12, efficiency=D(1), **opts,
        )
    ).to_dict()


def test_a_one_off_job_meets_platform_incidents_only_while_it_runs_priced_or_not():
    # 4 incidents a year x 2 h (rate card, cloud) = 0.6667 outage hours per month of exposure; the run takes
    # 73 of a month's 730 hours: 0.0667 h of downtime for the run, said per run, whether or not an hour
    # of downtime has a price (the schedule used to be skipped for an unpriced line: a whole horizon's 8 h)
    unpriced = _opt(_one_off_job(), "cloud_on_demand")
    priced = _opt(_one_off_job(downtime_cost_per_hour=D(625)), "cloud_on_demand")
    for o in (unpriced, priced):
        assert o["job"]["runs"] == "1.00"
        assert o["risk"]["expected_downtime_hours_per_run"] == "0.0667"
    assert unpriced["risk"]["text"] == ("0.067 expected hours of downtime per run; enter the cost of an hour of "
                                        "downtime to price it")
    # 0.6667 h x 73/730 x 625 = 41.67 (the outage line's month-1 amount)
    assert _line(priced, "downtime_risk.outage")["total_net"] == "41.67"
    assert _line(priced, "downtime_risk.outage")["breakdown"][0]["months"] == "0.1"
