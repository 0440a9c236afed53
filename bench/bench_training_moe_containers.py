"""MoE pre-training across Megatron-Bridge containers: the planner against published runs it was not fitted on.

    .venv/bin/python bench/bench_training_moe_containers.py [MIRROR_DIR] [--exact-ep]

Rows: NVIDIA Megatron-Bridge performance archive (docs/performance-summary-archive.md at the commit below),
pre-training tables of the 26.02-26.06 NeMo containers, MoE models the planner has presets for, on
8-GPU HGX systems (B200, B300, H100) and GB200/GB300 trays. Each row is the published layout
(GBS, MBS, sequence, TP, PP, CP, VP; precision MXFP8/FP8 -> fp8) pinned in a WorkloadSpec; by default the
planner derives EP (EP8 inside an 8-GPU server, EP4 on a 4-GPU GB tray), printed next to the published EP;
`--exact-ep` pins the published DP and EP (the exact mode; 61- and 94-layer models on uneven pipeline stages
are accepted since h/train4, one row still falls back: EP32 on DP16). With MIRROR_DIR (a clone of NVIDIA-NeMo/Megatron-Bridge as MIRROR_DIR/NVIDIA-NeMo+Megatron-Bridge/repo)
every figure is checked to be in the file at that commit. Nothing here is fitted.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from planner.engine import parse_workload_spec, size_workload  # noqa: E402
from planner.engine.catalog_csv import load_accelerators_csv  # noqa: E402
from planner.engine.errors import SpecValidationError  # noqa: E402

COMMIT = "4ab94dfad36641cabdeb96452b21bf676aac4772"  # 2026-08-11
PATH = "docs/performance-summary-archive.md"
URL = f"https://github.com/NVIDIA-NeMo/Megatron-Bridge/blob/{COMMIT}/{PATH}"
ACC = {"B200": "nvidia-b200-sxm-180gb", "B300": "nvidia-b300-sxm-288gb", "H100": "nvidia-h100-sxm5-80gb",
       "GB200": "nvidia-gb200-186gb", "GB300": "nvidia-gb300-288gb"}
# (container, system, model, GPUs, GBS, MBS, seq, TP, PP, CP, VP, published EP, tokens/s/GPU)
ROWS = [
    ("26.02", "B200", "qwen3-30b-a3b", 8, 512, 1, 4096, 1, 1, 1, 1, 8, 9691),
    ("26.02", "H100", "qwen3-30b-a3b", 16, 1024, 1, 4096, 1, 2, 1, 12, 8, 5113),
    ("26.02.01", "H100", "qwen3-30b-a3b", 16, 1024, 1, 4096, 1, 2, 1, 12, 8, 9058),
    ("26.02.01", "B200", "qwen3-30b-a3b", 8, 512, 4, 4096, 1, 1, 1, 1, 8, 26695),
    ("26.02.01", "B300", "qwen3-30b-a3b", 8, 512, 8, 4096, 1, 1, 1, 1, 8, 29454),
    ("26.04", "B200", "qwen3-30b-a3b", 8, 512, 4, 4096, 1, 1, 1, 1, 8, 26859),
    ("26.04", "B300", "qwen3-30b-a3b", 8, 512, 8, 4096, 1, 1, 1, 1, 8, 30553),
    ("26.04", "GB200", "qwen3-30b-a3b", 8, 512, 4, 4096, 1, 1, 1, 1, 8, 26032),
    ("26.04", "GB300", "qwen3-30b-a3b", 8, 512, 8, 4096, 1, 1, 1, 1, 8, 31470),
    ("26.04", "H100", "qwen3-30b-a3b", 16, 1024, 1, 4096, 1, 1, 1, 1, 16, 8901),
    ("26.06", "B300", "qwen3-30b-a3b", 8, 512, 8, 4096, 1, 1, 1, 1, 8, 40769),
    ("26.04", "B200", "deepseek-v3", 256, 4096, 1, 4096, 1, 16, 1, 1, 8, 2815),
    ("26.04", "B300", "deepseek-v3", 256, 4096, 1, 4096, 1, 16, 1, 1, 8, 3131),
    ("26.04", "GB200", "deepseek-v3", 256, 4096, 1, 4096, 1, 4, 1, 4, 64, 4193),
    ("26.04", "GB300", "deepseek-v3", 256, 4096, 2, 4096, 1, 2, 1, 8, 32, 4965),
    ("26.04.01", "B300", "deepseek-v3", 256, 4096, 2, 4096, 1, 8, 1, 1, 8, 3456),
    ("26.04.01", "B200", "deepseek-v3", 256, 4096, 1, 4096, 1, 8, 1, 2, 32, 3328),
    ("26.04.01", "B200", "qwen3-235b-a22b", 256, 8192, 1, 4096, 1, 8, 1, 1, 8, 3776),
    ("26.04.01", "B300", "qwen3-235b-a22b", 256, 8192, 2, 4096, 1, 8, 1, 1, 8, 5936),
    ("26.04.01", "GB200", "qwen3-235b-a22b", 256, 8192, 1, 4096, 1, 8, 1, 3, 32, 5680),
    ("26.04.01", "H100", "qwen3-235b-a22b", 256, 8192, 1, 4096, 2, 8, 1, 4, 32, 1712),
]


def check(mirror: Path) -> None:
    text = subprocess.run(["git", "-C", str(mirror / "NVIDIA-NeMo+Megatron-Bridge" / "repo"), "show", f"{COMMIT}:{PATH}"],
                          capture_output=True, text=True, check=True).stdout
    for row in ROWS:
        assert f"| {row[-1]} |" in text, row  # the published figure is in the file


def main() -> None:
    """--exact-ep: the exact-layout mode (training.data_parallel and training.expert_parallel pinned to the
    published DP and EP) instead of the planner's derived EP."""
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    exact = "--exact-ep" in sys.argv
    if args:
        check(Path(args[0]))
    accs = load_accelerators_csv(ROOT / "catalog" / "data" / "accelerators.csv")
    print(f"Source: {URL}\n")
    print("| container | system | model | GPUs | MBS | TP/PP/VP | EP published / planner | published | planner | error |")
    print("| --- | --- | --- | ---: | ---: | --- | --- | ---: | ---: | ---: |")
    for cont, system, model, gpus, gbs, mbs, seq, tp, pp, cp, vp, ep, tps in ROWS:
        t = {"tokens": 1e11, "sequence_length": seq, "global_batch_tokens": gbs * seq, "micro_batch_size": mbs,
             "tensor_parallel": tp, "pipeline_parallel": pp, "context_parallel": cp}
        if vp > 1:
            t["virtual_pipeline_stages"] = vp
        if exact:
            t["data_parallel"], t["expert_parallel"] = gpus // (tp * pp * cp), ep
        spec = {"kind": "pretraining", "model": {"preset": model}, "precision": {"compute": "fp8"}, "training": t,
                "hardware": {"accelerator": ACC[system], "count": gpus}}
        try:
            parsed = parse_workload_spec(spec)
        except SpecValidationError:  # exact mode refuses EP32 on DP16 (H100 Qwen3-235B, TP2: the run folds experts
            # across TP with expert TP 1, the spec takes expert TP = TP): derived EP
            t.pop("data_parallel"), t.pop("expert_parallel")
            parsed = parse_workload_spec(spec)
        res = size_workload(spec=parsed, accelerators=accs).to_dict()
        pred = res["compute"]["tokens_per_second_per_gpu"]["value"]
        expl = res["compute"]["mfu"]["explain"]
        ep_model = expl.split("(EP", 1)[1].split(":", 1)[0] if "(EP" in expl else "1"
        print(f"| {cont} | {system} | {model} | {gpus} | {mbs} | {tp}/{pp}/{vp} | {ep} / {ep_model} | {tps:,} | "
              f"{pred:,.0f} | {pred / tps - 1:+.1%} |")


if __name__ == "__main__":
    main()
