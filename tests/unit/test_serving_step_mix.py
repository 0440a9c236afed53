"""The step mix (docs/SIZING.md "Step mix", h/tpotm): decode-only and chunk-carrying steps each take their own
max(matmuls, weights) + max(attention, KV), so the mean step exceeds the step priced at the mean token count
wherever the chunk-carrying steps are compute-bound and the decode-only steps memory-bound."""

import numpy as np

from planner.engine.catalog_csv import load_accelerators_csv
from planner.engine.presets import preset_arch
from planner.engine.serving_layout import make_engine
from planner.engine.serving_replay import ACCELERATORS_CSV

H100 = next(a for a in load_accelerators_csv(ACCELERATORS_CSV) if a.id == "nvidia-h100-sxm5-80gb")


def _engine():
    eng, _, _ = make_engine(arch=preset_arch("llama-3.1-8b"), acc=H100, runtime="trtllm", weights="bf16",
                            compute="bf16", kv_precision="bf16", tp=1, pp=1, isl=2048, osl=256)
    return eng


def test_gap_is_zero_without_prompts_and_positive_at_mid_load():
    eng = _engine()
    lam = np.array([1e-6, 2.0, 8.0])
    T = eng.steady(lam, parts=False)["T"]
    _, _, gap = eng._step_mix(lam, T)
    assert gap[0] < 1e-6 * T[0]  # (almost) no step carries a prompt
    assert gap[1] > 0.05 * T[1]  # a 2048-token chunk is compute-bound, the 8-16 decodes around it are not


def test_mean_step_is_the_mean_of_the_two_kinds():
    """T = fixed + share x step(with chunk) + (1 - share) x step(decodes only) at the steady state."""
    eng = _engine()
    lam = 3.0
    s = eng.steady(np.array([lam]), parts=False)
    T = float(s["T"][0])
    n = lam * eng.steps * T
    share = min(lam * np.ceil(eng.prompt / eng.budget) * T, 1.0)
    with_chunk, *_ = eng.step_s(n, lam * eng.prompt * T / share)
    decodes, *_ = eng.step_s(n, 0.0)
    assert abs(T - (share * with_chunk + (1 - share) * decodes)) < 0.01 * T


def test_the_mix_slows_mid_load_steps():
    eng = _engine()
    # a closed loop of 16 clients: slower than the step at the mean token count would be
    s = eng.closed_loop(np.array([16.0]))
    T = float(s["T"][0])
    lam = float(s["rate"][0])
    at_mean, *_ = eng.step_s(lam * eng.steps * T, lam * eng.prompt * T)
    assert T > 1.05 * float(at_mean)


def test_aitken_finds_the_limit_of_a_geometric_sequence_and_keeps_diverging_entries():
    from planner.engine.serving_math import aitken
    limit, q = np.array([4.0, 5.0]), np.array([0.9, 0.5])
    t = [limit + 1.0 * q ** k for k in range(3)]
    assert np.allclose(aitken(*t), limit)
    # an extrapolation beyond a factor 2 of the iterates is not trusted: the last iterate stays
    far = [2.0 + 3.0 * 0.9 ** k for k in range(3)]
    assert aitken(*map(np.array, far)) == far[-1]
    inf = np.array([np.inf])
    assert aitken(inf, inf, inf)[0] == np.inf
