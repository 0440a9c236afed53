"""scripts/fit_serving_moe.py: which constants a group searches, and the leave-one-out options' validation."""

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from scripts import fit_serving_moe as fit  # noqa: E402


def _row(**kw):
    base = {"model_key": "dsr1", "framework": "dynamo-sglang", "gpu": "gb200", "data_parallel_attention": "True",
            "expert_parallel": "32", "disaggregated": "True", "speculative": "none"}
    return {**base, **kw}


def test_rows_running_the_all_to_all_fit_its_latency_and_gathered_rows_do_not():
    a2a = fit.group_names(("sglang", "blackwell"), [_row()])  # NVL72: DeepEP
    assert "all_to_all_latency_s" in a2a and "all_to_all_efficiency" in a2a and "moe_gather_efficiency" not in a2a
    gathered = fit.group_names(("sglang", "blackwell"), [_row(gpu="b200", disaggregated="False")])  # HGX: gather
    assert "moe_gather_efficiency" in gathered and "all_to_all_latency_s" not in gathered
    assert fit.BOUNDS["all_to_all_latency_s"][0] <= fit.ALL_TO_ALL_LATENCY_START_S <= fit.BOUNDS["all_to_all_latency_s"][1]


@pytest.mark.parametrize("argv", [["--held-generation-only"], ["--held-generation-only", "--exclude-gpu", "h100",
                                                                 "--only", "vllm,hopper"]])
def test_held_generation_only_needs_a_held_out_gpu_and_no_single_group(argv, capsys):
    written = dict(fit.sc.FITTED_IX)
    with pytest.raises(SystemExit) as e:
        fit.main(argv)
    assert fit.sc.FITTED_IX == written  # refused before anything is touched
    assert e.value.code == 2
    assert "--held-generation-only needs --exclude-gpu" in capsys.readouterr().err


def test_an_unknown_held_out_gpu_is_refused_by_name(capsys):
    with pytest.raises(SystemExit) as e:
        fit.main(["--exclude-gpu", "h1000", "--held-generation-only"])
    assert e.value.code == 2 and "'h1000' is not a GPU of serving_fit.csv" in capsys.readouterr().err


def test_a_guard_outside_a_share_is_refused(capsys):
    guard = dict(fit.MEASURED_GUARD)
    with pytest.raises(SystemExit) as e:
        fit.main(["--guard-ttft", "22.4"])
    assert e.value.code == 2 and "--guard-ttft: a share between 0 and 1" in capsys.readouterr().err
    assert fit.MEASURED_GUARD == guard
