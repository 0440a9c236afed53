"""Every line key the engine can produce has a translatable label."""

from decimal import Decimal as D

from costs.engine.plan import cost_plan
from costs.labels import KIND_LABELS, ROW_LABELS, line_label
from tests.unit.cost_inputs import inputs, workload


def test_every_line_row_and_kind_of_a_full_plan_has_a_label():
    res = cost_plan(
        inputs=inputs(
            workloads=[
                workload(
                    gpu_count=16,
                    server_count=2,
                    is_training=True,
                    storage_gb={"nvme": D(100), "object": D(100)},
                    egress_gb_per_month=D(10),
                )
            ]
        )
    )
    keys = {lt.line.key for p in res.options for lt in p.lines}
    assert {k for k in keys if line_label(k) == k} == set()
    assert {lt.line.row for p in res.options for lt in p.lines} <= set(ROW_LABELS)
    assert {p.option.kind for p in res.options} <= set(KIND_LABELS)


def test_every_line_of_a_service_with_traffic_and_contracts_has_a_label():
    from costs.engine.inputs import SupportLine
    from tests.unit.cost_inputs import usd

    res = cost_plan(
        inputs=inputs(
            workloads=[workload(utilisation=D(1), egress_gb_per_month=D(10), tokens_out_per_month=D(10))],
            redundancy="multi_zone",
            inter_zone_gb_per_month=D(5),
            support_lines=(SupportLine(label="AI Enterprise", price=usd("4500"), per="year", scale="per_gpu"),),
        )
    )
    keys = {lt.line.key for p in res.options for lt in p.lines}
    assert {"downtime_risk.hardware_failures", "infrastructure.traffic_inter_zone",
            "infrastructure.support_contract.0"} <= keys
    assert {k for k in keys if line_label(k) == k} == set()


def test_hybrid_suffix_is_labelled():
    assert line_label("gpu_time.idle.owned") == "GPU time, idle (paid, no useful work), owned"


def test_option_label_in_english_equals_the_engine_label():
    from costs.engine.inputs import DedicatedOffer
    from costs.labels import option_label
    from tests.unit.cost_inputs import offer, usd

    ded = DedicatedOffer(
        provider="H", name="GEX", accelerator_id="h100", gpus_per_server=8, monthly=usd("9000")
    )
    w = workload(
        accelerator_name="H100 SXM", tensor_parallel=4, pipeline_parallel=2, gpu_count=16, server_count=2
    )
    for redundancy in ("none", "n_plus_1"):
        d = cost_plan(
            inputs=inputs(
                workloads=[w],
                offers=[offer()],
                dedicated=[ded],
                redundancy=redundancy,
                options=("cloud_on_demand", "cloud_spot", "dedicated", "onprem"),
            )
        ).to_dict()
        assert len(d["options"]) == 4
        for o in d["options"]:
            assert option_label(o) == o["label"]


def test_option_label_of_a_result_without_detail_is_its_stored_label():
    from costs.labels import option_label

    assert (
        option_label({"kind": "cloud_spot", "label": "AWS x (spot)", "detail": {"provider": "AWS"}})
        == "AWS x (spot)"
    )


def test_a_hybrid_option_label_is_translated():
    """A hybrid option's label was left in English on Russian pages (the version diff showed
    '8 GPUs on 1 x 8-GPU server owned + ... on-demand burst')."""
    from django.utils import translation

    from costs.labels import option_label
    from tests.unit.cost_inputs import offer

    w = workload(accelerator_name="H100 SXM", tensor_parallel=8, gpu_count=16, server_count=2)
    d = cost_plan(inputs=inputs(workloads=[w], offers=[offer()], options=("hybrid",))).to_dict()
    hybrid = [o for o in d["options"] if o["kind"] == "hybrid"]
    assert hybrid, [o["kind"] for o in d["options"]]
    with translation.override("en"):
        assert option_label(hybrid[0]) == hybrid[0]["label"]
    with translation.override("ru"):
        text = option_label(hybrid[0])
    assert "owned" not in text and "burst" not in text and "на своих серверах" in text, text
