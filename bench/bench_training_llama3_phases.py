"""Llama 3 405B: the published run's phases against the single 8K phase the whole-run row models (issue 24).

    .venv/bin/python bench/bench_training_llama3_phases.py        # seconds, no database

The whole-run row `llama3_405b_gpu_hours` (planner/engine/data/training_published.json) is one phase: 15.6T
tokens at 8K on 16,384 H100 with 16M-token batches. The paper (arXiv:2407.21783, read 2026-12-03) states
more: sec. 3.4.1, batches of 4M tokens at 4K for the first 252M tokens, 8M tokens at 8K up to 2.87T, then
16M; sec. 3.4.2, about 800B tokens of long-context pre-training in six stages from 8K to 128K; Table 4, the
steady TFLOP/s of three layouts (430 on 8,192 GPUs, 400 on 16,384, 380 at 131K with CP16). Each phase is
evaluated here with its layout pinned (goodput 1: steps only), by the planner and, where Table 4 has the
layout, at the published rate. Phase GPU counts and the tokens per long-context stage are not published:
both readings are printed, never fitted.
"""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from planner.engine import compute, parse_workload_spec, size_workload  # noqa: E402
from planner.engine.catalog_csv import load_accelerators_csv  # noqa: E402
from planner.engine.presets import preset_arch  # noqa: E402

ACCS = load_accelerators_csv(ROOT / "catalog" / "data" / "accelerators.csv")
ARCH = preset_arch("llama-3.1-405b")
PUBLISHED_GPU_HOURS = 30.84e6  # Llama 3.1 model card, 405B


def layout(tokens, *, gpus, seq, batch_tokens, cp=1, ckpt="none"):
    """Steady GPU-hours and tokens/s per GPU of one phase, TP8 PP16 VP4 pinned (paper Table 4, sec. 3.3.2)."""
    dp = gpus // (8 * 16 * cp)
    spec = {"kind": "pretraining", "model": {"preset": "llama-3.1-405b"}, "precision": {"compute": "bf16"},
            "training": {"tokens": tokens, "sequence_length": seq, "global_batch_tokens": batch_tokens,
                         "micro_batch_size": 1, "tensor_parallel": 8, "pipeline_parallel": 16, "context_parallel": cp,
                         "data_parallel": dp, "virtual_pipeline_stages": 4, "activation_checkpointing": ckpt,
                         "goodput": 1.0},
            "hardware": {"accelerator": "nvidia-h100-sxm5-80gb", "count": gpus}}
    tl = size_workload(spec=parse_workload_spec(spec), accelerators=ACCS).to_dict()["compute"]["training_layout"]
    return tl["gpu_hours"]["value"], tl["tokens_per_second_per_gpu"]["value"]


def published_hours(tokens, tflops, seq):
    """GPU-hours at a Table 4 rate (TFLOP/s per GPU in the 6N + attention convention the paper uses)."""
    x = float(compute.attention_ratio(ARCH, seq=seq))
    return tokens * 6.0 * ARCH.active_params * (1.0 + x) / (tflops * 1e12) / 3600.0


def main():
    t_ramp, t_long = 2.87e12 - 0.252e9, 0.8e12
    t_main = 15.6e12 - 2.87e12 - t_long
    one, _ = layout(15.6e12, gpus=16384, seq=8192, batch_tokens=16777216)
    rows = [("one phase (the whole-run row): 15.6T, 8K, 16M batch, 16,384 GPUs", one, published_hours(15.6e12, 400, 8192))]
    for gpus in (8192, 16384):
        h, _ = layout(t_ramp, gpus=gpus, seq=8192, batch_tokens=8388608)
        pub = published_hours(t_ramp, 430, 8192) if gpus == 8192 else None  # Table 4 has 8,192 GPUs at M = 32 only
        rows.append((f"8M-token batches (252M-2.87T: {t_ramp / 1e12:.2f}T), {gpus:,} GPUs, M = {8388608 // 8192 // (gpus // 128)}",
                     h, pub))
    h, _ = layout(t_main, gpus=16384, seq=8192, batch_tokens=16777216)
    rows.append((f"16M-token batches at 8K ({t_main / 1e12:.2f}T), 16,384 GPUs", h, published_hours(t_main, 400, 8192)))
    h8, _ = layout(t_long, gpus=16384, seq=8192, batch_tokens=16777216)
    h128, _ = layout(t_long, gpus=16384, seq=131072, batch_tokens=16777216, cp=16, ckpt="selective")
    rows.append(("long context 0.8T, bound: all at 8K", h8, published_hours(t_long, 400, 8192)))
    rows.append(("long context 0.8T, bound: all at 131K (CP16)", h128, published_hours(t_long, 380, 131072)))
    print("| phase | planner steady GPU-h | at the published Table 4 rate |\n| --- | ---: | ---: |")
    for name, h, pub in rows:
        print(f"| {name} | {h / 1e6:.2f}M | {'-' if pub is None else f'{pub / 1e6:.2f}M'} |")
    ramp = {g: layout(t_ramp, gpus=g, seq=8192, batch_tokens=8388608)[0] for g in (8192, 16384)}
    main_h = layout(t_main, gpus=16384, seq=8192, batch_tokens=16777216)[0]
    print()
    for g in (8192, 16384):
        for name, lc in (("8K", h8), ("131K", h128)):
            total = ramp[g] + main_h + lc
            print(f"- planner, phases (8M batches on {g:,} GPUs, long context at {name}): {total / 1e6:.2f}M steady GPU-h, "
                  f"x{total / one:.3f} the one-phase figure")
    pub_phases = published_hours(t_ramp, 430, 8192) + published_hours(t_main, 400, 8192)
    for name, lc in (("8K", published_hours(t_long, 400, 8192)), ("131K", published_hours(t_long, 380, 131072))):
        s = pub_phases + lc
        print(f"- at the published rates (ramp at 430 on 8,192 GPUs, long context at {name}): {s / 1e6:.2f}M steady GPU-h,"
              f" run goodput {s / PUBLISHED_GPU_HOURS:.3f} (one phase at 400: {published_hours(15.6e12, 400, 8192) / PUBLISHED_GPU_HOURS:.3f})")


if __name__ == "__main__":
    main()
