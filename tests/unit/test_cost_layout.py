"""A tensor-parallel group sits inside one instance or server; labels say what is priced."""

from decimal import Decimal as D

from costs.engine.inputs import DedicatedOffer, ServerPrice
from costs.engine.plan import cost_plan
from tests.unit.cost_inputs import inputs, offer, usd, workload


def _tp4(**kw):
    return workload(candidate_id="h100x8", gpu_count=8, gpus_per_server=4, tensor_parallel=4, **kw)


def test_instances_smaller_than_the_tp_group_are_not_priced():
    one = offer(provider="A", instance_type="1gpu", gpus_per_instance=1, on_demand=usd("5"), spot=None)
    eight = offer(provider="B", instance_type="8gpu", gpus_per_instance=8, on_demand=usd("40"), spot=None)
    d = cost_plan(
        inputs=inputs(workloads=[_tp4()], offers=[one, eight], options=("cloud_on_demand",))
    ).to_dict()
    assert [o["detail"]["instance_type"] for o in d["options"]] == ["8gpu"]


def test_instance_size_must_be_a_multiple_of_the_tp_group():
    six = offer(instance_type="6gpu", gpus_per_instance=6, on_demand=usd("30"), spot=None)
    d = cost_plan(inputs=inputs(workloads=[_tp4()], offers=[six], options=("cloud_on_demand",))).to_dict()
    assert d["options"] == []
    assert "tensor-parallel group (TP4)" in d["skipped"][0]["reason"]


def test_pipeline_stages_and_replicas_may_span_instances():
    four = offer(instance_type="4gpu", gpus_per_instance=4, on_demand=usd("20"), spot=None)
    w = _tp4(pipeline_parallel=2)
    d = cost_plan(inputs=inputs(workloads=[w], offers=[four], options=("cloud_on_demand",))).to_dict()
    (o,) = d["options"]
    assert o["detail"]["instances"] == 2
    assert any("span instances" in x and "private network of 10 Gb/s" in x for x in o["warnings"])  # serving: no RDMA


def test_dedicated_and_onprem_servers_must_hold_a_tp_group():
    ded = DedicatedOffer(
        provider="H", name="2x", accelerator_id="h100", gpus_per_server=2, monthly=usd("900")
    )
    small = ServerPrice(accelerator_id="h100", gpus_per_server=2, price=usd("60000"))
    d = cost_plan(
        inputs=inputs(
            workloads=[_tp4()], offers=[], servers=[small], dedicated=[ded], options=("dedicated", "onprem")
        )
    ).to_dict()
    assert d["options"] == []
    assert {s["kind"] for s in d["skipped"]} == {"dedicated", "onprem"}


def test_cloud_label_says_gpus_layout_instances_region_and_mode():
    p5 = offer(
        provider="AWS", instance_type="p5.48xlarge", region="us-east-1", on_demand=usd("40"), spot=None
    )
    w = workload(
        candidate_id="h100x2", gpu_count=2, gpus_per_server=2, tensor_parallel=2, accelerator_name="H100 SXM"
    )
    d = cost_plan(inputs=inputs(workloads=[w], offers=[p5], options=("cloud_on_demand",))).to_dict()
    assert (
        d["options"][0]["label"] == "2 x H100 SXM (TP2) on 1 x AWS p5.48xlarge (8 GPUs), us-east-1, on-demand"
    )


def test_spot_for_serving_carries_a_warning_and_an_outage_line():
    w = workload(latency_target=True)
    d = cost_plan(inputs=inputs(workloads=[w], options=("cloud_spot",), downtime_cost_per_hour=D(625))).to_dict()
    (o,) = d["options"]
    assert any("SLA" in x for x in o["warnings"])
    downtime = next(r for r in o["rows"] if r["row"] == "downtime_risk")
    line = next(ln for ln in downtime["lines"] if ln["key"] == "downtime_risk.spot_interruptions")
    assert D(line["monthly_net"]) > 0


def test_spot_for_training_has_no_outage_line_nor_warning():
    w = workload(is_training=True, training_gpu_hours_per_run=D(100))
    d = cost_plan(inputs=inputs(workloads=[w], options=("cloud_spot",))).to_dict()
    (o,) = d["options"]
    assert o["warnings"] == []
    keys = {ln["key"] for r in o["rows"] for ln in r["lines"]}
    assert "downtime_risk.spot_interruptions" not in keys


def test_two_options_with_the_same_label_are_told_apart():
    from dataclasses import replace

    from costs.engine.shortlist import _unique_labels

    res = cost_plan(
        inputs=inputs(offers=[offer(provider="A"), offer(provider="B")], options=("cloud_on_demand",))
    )
    same = [replace(p, option=replace(p.option, label="same")) for p in res.options]
    _unique_labels(same)
    assert [p.option.label for p in same] == ["same", "same [B|us-east-1|p5.48xlarge]"]
