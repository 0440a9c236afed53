"""Pipeline stages across hosts: what the link between them must carry depends on the work."""

from costs.engine.inputs import Workload
from costs.engine.lines import layout_warnings


def _w(**kw):
    return Workload(candidate_id="x", accelerator_id="a", gpu_count=6, tensor_parallel=1, pipeline_parallel=2, **kw)


def test_serving_stages_on_one_gpu_instances_need_a_private_10_gbps_link_not_rdma():
    (text,) = layout_warnings(_w(), hosts=6, gpus_per_host=1, what="instance")
    assert "10 Gb/s" in text and "RDMA" not in text and "do not count this hop" in text


def test_training_stages_across_servers_need_a_fast_rdma_network():
    (text,) = layout_warnings(_w(is_training=True), hosts=6, gpus_per_host=1, what="server")
    assert "span servers" in text and "RDMA" in text


def test_stages_inside_one_host_say_nothing():
    assert layout_warnings(_w(), hosts=1, gpus_per_host=8, what="instance") == []
    assert layout_warnings(_w(), hosts=3, gpus_per_host=2, what="instance") == []
