"""How a serving engine runs, as array arithmetic (docs/SIZING.md, "Serving model").

Continuous batching: every engine step runs the decodes of the running sequences plus a chunk of
pending prompt (prefill) tokens, within a per-step token budget. A step takes

    T = max(compute, memory traffic) + fixed overheads + tensor-parallel all-reduces

compute = the step's tokens x 2 x active parameters (+ attention over each token's context) over
the GPUs' dense peak x prefill_efficiency; memory = the weights (read once per step, shared by the
whole batch; MoE: the experts the step's tokens touch) + each decoding sequence's KV cache over
bandwidth x decode_bandwidth_efficiency.

Load: at a steady arrival rate lam (requests/s per replica) Little's law gives the decoding
sequences per step (lam x osl x T) and the prompt tokens per step (lam x isl x T); both are linear
in T, so the steady step time solves a linear fixed point in closed form. A closed loop of C
clients is the rate at which lam x (TTFT + osl x T) = C (bisection), with the wait for a free
slot when C exceeds what the KV memory / scheduler admits. Every function takes numpy arrays that
broadcast (accelerators x layouts in the search, rows in the replay).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

import numpy as np

from .architecture import ModelArch
from .serving_constants import MOE_TILE_ROWS, REQUEST_OVERHEAD_S
from .serving_math import aitken, balance_arrivals, bisect_largest

Z95 = 1.645  # one-sided 95 % normal quantile
Z99 = 2.326  # one-sided 99 % normal quantile
LN2 = float(np.log(2.0))  # median of an exponential wait = ln(2) x mean
LN20 = float(np.log(20.0))  # p95 of an exponential wait = ln(20) x mean
LN100 = float(np.log(100.0))  # p99 of an exponential wait = ln(100) x mean
# TensorRT-LLM's attention-DP balancing gives up waiting after this many steps: timeout_iters 60
# (batching_wait_iters 0) in the DeepSeek-R1 attention-DP recipes of InferenceX (benchmarks/
# dsr1_fp4_b200_trt.sh and siblings) whose rows the TensorRT-LLM constants are fitted on.
DP_BALANCE_TIMEOUT_STEPS = 60.0
# fixed-point passes of the steady state (the step mix, and MoE's experts touched, depend on T), with Aitken's
# extrapolation after every third pass: 7 passes give the MdAPE of 40 plain passes on serving_measured.csv and the
# InferenceX rows (plain passes converge slowly at high load: 6 of them left the InferenceX TPOT 0.1 pt off)
MOE_ITERATIONS = 7
# Without stated targets a plan keeps p95 latencies within these multiples of one request alone
# (planner defaults, not measurements: interactive use tolerates queueing up to ~4x the bare
# prefill and batching up to ~3x the single-stream step).
DEFAULT_TTFT_SLACK = 4.0
# Expert routing is not uniform from one step to the next: some experts draw more of a batch's tokens than
# others (the load imbalance that DeepSeek-V3's EPLB and SGLang's / TensorRT-LLM's expert load balancers
# redistribute), so a decode step of n tokens reads fewer distinct experts than n uniform draws would.
# Model: each expert's share of the step's routing is k/E x g with g ~ Gamma(shape, 1/shape) (mean 1,
# coefficient of variation 1/sqrt(shape)); a step of n tokens misses an expert with probability
# E[(1 - k/E)^(n g)] = (1 + n x -ln(1 - k/E) / shape)^-shape, the uniform (1 - k/E)^n as shape -> inf.
# Fitted (docs/SIZING.md "Expert routing skew"): one value for every runtime, chip and MoE model, on the
# 3,745 evaluated InferenceX rows (grid inf, 4, 3, 2, 1.5, 1; 2 = load CV 0.71); nothing else refitted.
MOE_ROUTING_SHAPE = 2.0


def experts_touched(tokens, log_miss, shape=None):
    """Expected share of the experts a step with `tokens` tokens reads; log_miss = ln(1 - k/E) (<= 0).
    Gamma-distributed expert popularity of `shape` (MOE_ROUTING_SHAPE; inf: uniform routing)."""
    a = MOE_ROUTING_SHAPE if shape is None else float(shape)
    if not np.isfinite(a):
        return -np.expm1(tokens * log_miss)
    base = 1.0 - tokens * log_miss / a
    if a == 2.0:  # the fitted shape: a square instead of a general power (the search's hottest line)
        return 1.0 - 1.0 / (base * base)
    return 1.0 - base ** (-a)
DEFAULT_TPOT_SLACK = 3.0


def moe_split(a: ModelArch) -> tuple[float, float]:
    """(parameters always read, routed-expert parameters) of a model."""
    if not a.is_moe or not a.is_transformer:
        return float(a.params), 0.0
    width = a.moe_ffn_hidden_size or a.ffn_hidden_size
    expert = (3 if a.gated_ffn else 2) * a.hidden_size * width
    routed = float((a.layers - a.dense_layers) * a.experts * expert)
    return float(a.params) - routed, routed


@dataclass(frozen=True, kw_only=True)
class Engine:
    """One replica's engine, as broadcastable arrays (per GPU unless named otherwise)."""

    isl: np.ndarray
    osl: np.ndarray
    flops_per_token: np.ndarray  # 2 x active params
    attn_flops_per_ctx: np.ndarray  # attention FLOPs per token per context token
    layers: np.ndarray
    tp: np.ndarray
    pp: np.ndarray
    dense_weight_bytes: np.ndarray  # whole replica
    expert_weight_bytes: np.ndarray  # whole replica (routed experts)
    expert_touch: np.ndarray  # k / E: probability a token routes to a given expert (0 for dense)
    experts: np.ndarray = 0.0  # routed experts per MoE layer (E)
    expert_row_flops: np.ndarray = 0.0  # FLOPs of one token row through one routed expert of every MoE layer
    kv_bytes_per_token_gpu: np.ndarray  # one token of one sequence's KV, per GPU (split by KV heads x PP)
    kv_split: np.ndarray
    flops_s: np.ndarray  # per GPU: dense peak x prefill_efficiency x kernel factor
    bytes_s: np.ndarray  # per GPU: bandwidth x decode_bandwidth_efficiency x kernel factor
    overhead_s: np.ndarray  # per step: step_overhead_s + layers x layer_overhead_s (+ PP hops)
    comm_fixed_s: np.ndarray  # per step: collective latencies (all-reduces; the MoE all-to-all per doubling of EP)
    comm_per_token_s: np.ndarray  # per step token: all-reduce bytes over the link
    hc_per_token_s: np.ndarray = 0.0  # per step token: hyper-connection streams through memory (hyper_connections.py)
    # per prompt token: measured attention-module time beyond the FLOPs charged for it (DeepSeek-V4 prefill,
    # compressed_attention.prefill_module_s_per_token)
    prefill_module_s: np.ndarray = 0.0
    budget: np.ndarray  # tokens per step and per prompt chunk (per attention-DP rank where budget_ranks > 1)
    # attention-DP ranks scheduling `budget` tokens each (serving_moe.PER_RANK_BUDGET_RUNTIMES): a step carries budget x ranks
    budget_ranks: np.ndarray = 1.0
    n_max: np.ndarray  # sequences the replica can run at once (scheduler cap, KV memory)
    cohort_factor: np.ndarray = 0.0  # closed loops: prompts prefilled with a new one, per sqrt(clients - 1)
    request_overhead_s: np.ndarray = REQUEST_OVERHEAD_S
    # The scheduler takes in new requests every poll_steps steps (serving_constants.SCHEDULER_POLL_STEPS): a new
    # request waits for the rest of the running step plus (poll_steps - 1) / 2 steps on average.
    poll_steps: np.ndarray = 1.0
    # Speculative decoding (serving_spec.py, docs/SIZING.md "Speculative decoding (MTP)"): each decode
    # step verifies spec_q tokens per sequence (1 + draft tokens) and keeps spec_a of them on average;
    # the draft passes add draft_tokens x MTP layers / layers of a step's matmuls and weight read.
    spec_q: np.ndarray = 1.0
    spec_a: np.ndarray = 1.0
    draft_share: np.ndarray = 0.0
    # 1: this engine prefills its prompts; 0: a decode-only worker of a disaggregated deployment
    # (the prompt's KV arrives from the prefill pool: context without prefill work).
    prompt_share: np.ndarray = 1.0
    # TensorRT-LLM attention DP with context balancing (attention_dp_config enable_balance): a context
    # request is scheduled once every one of the dp_balance_ranks ranks has one, or after
    # DP_BALANCE_TIMEOUT_STEPS steps (1: no balancing).
    dp_balance_ranks: np.ndarray = 1.0
    # Attention whose work is not linear in the context (DeepSeek-V4 compressed attention,
    # compressed_attention.py): FLOPs per decoded token, mean FLOPs per prompt token and KV bytes read
    # per decoding sequence per step (per GPU), evaluated at this engine's lengths; None: linear in the
    # context (attn_flops_per_ctx, kv_bytes_per_token_gpu).
    attn_flops_decode: np.ndarray | None = None
    # Decode attention runs in its own format (the KV cache's: fp8 MLA / flash-decoding kernels, else
    # bf16), not the matmuls' (fp4 has no attention kernels): its FLOP rate relative to flops_s.
    dec_attn_rate: np.ndarray = 1.0
    attn_flops_prefill: np.ndarray | None = None
    kv_read_decode_gpu: np.ndarray | None = None

    @cached_property
    def dec_attn(self):
        """Attention FLOPs of one decoded token (at the mean decode context isl + osl / 2)."""
        if self.attn_flops_decode is not None:
            return self.attn_flops_decode
        return self.attn_flops_per_ctx * (self.isl + self.osl / 2.0)

    @cached_property
    def pre_attn(self):
        """Attention FLOPs of one prompt token, averaged over the prompt (context isl / 2)."""
        if self.attn_flops_prefill is not None:
            return self.attn_flops_prefill
        return self.attn_flops_per_ctx * (self.isl / 2.0)

    @cached_property
    def dec_kv(self):
        """KV bytes one decoding sequence reads per step, per GPU."""
        if self.kv_read_decode_gpu is not None:
            return self.kv_read_decode_gpu
        return self.kv_bytes_per_token_gpu * (self.isl + self.osl / 2.0)

    @cached_property
    def step_budget(self):  # tokens one step carries over all its attention-DP ranks
        return self.budget * self.budget_ranks

    @cached_property
    def prompt(self):
        """Prompt tokens this engine prefills per request."""
        return self.isl * self.prompt_share

    @cached_property
    def steps(self):
        """Decode steps per request (osl / accepted tokens per step)."""
        return self.osl / self.spec_a

    @cached_property
    def dq(self):
        """Matmul tokens per decoding sequence per step: the verified tokens plus the draft passes."""
        return self.spec_q + self.draft_share

    # ------------------------------------------------------------------ one step

    def prefill_s_per_token(self):
        """Compute seconds of one prompt token (matmuls + its mean attention)."""
        return (self.flops_per_token + self.pre_attn) / (self.tp * self.pp * self.flops_s) + self.prefill_module_s

    def weight_read_s(self, tokens):
        """Weights read per step (PP: every micro-batch re-reads its stage, so W/tp per token pass)."""
        if not np.any(self.expert_weight_bytes):
            return (1.0 + self.draft_share) * self.dense_weight_bytes / (self.tp * self.bytes_s) + 0.0 * tokens
        return self._moe_costs(tokens)[0]

    def moe_padding_s(self, tokens):
        """Seconds of the padded rows of the grouped expert GEMMs (MoE only; 0 for dense models).

        A grouped GEMM computes each touched expert's rows in tiles of MOE_TILE_ROWS (Hopper wgmma
        is m64; vLLM/SGLang fused_moe pads every expert's token list to a multiple of BLOCK_SIZE_M,
        moe_align_block_size): a touched expert with n rows costs ceil(n / 64) x 64 rows. Expected
        padded rows beyond tokens x k, per layer: max(touched x 64 - tokens x k, touched x 64 / 2)
        (few rows per expert: the tile is mostly empty; many: half a tile per expert on average)."""
        if not np.any(self.expert_row_flops):
            return 0.0 * tokens
        return self._moe_costs(tokens)[1]

    @cached_property
    def _moe_k(self) -> dict:
        return {"log_miss": np.log1p(-np.minimum(self.expert_touch, 1.0 - 1e-12)),
                "w_s": (1.0 + self.draft_share) * self.expert_weight_bytes / (self.tp * self.bytes_s),
                "dense_s": (1.0 + self.draft_share) * self.dense_weight_bytes / (self.tp * self.bytes_s),
                "pad_s": self.experts * MOE_TILE_ROWS * self.expert_row_flops / (self.tp * self.flops_s),
                "rows_per_tile": self.expert_touch / MOE_TILE_ROWS}

    def _moe_costs(self, tokens):
        """(weight read s, tile padding s) of a step with `tokens` tokens (one power per call)."""
        k = self._moe_k
        per_micro = np.maximum(tokens / self.pp, 1.0)
        touched = experts_touched(per_micro, k["log_miss"])  # share of the experts the step's tokens touch
        w = k["dense_s"] + k["w_s"] * touched
        # padded rows / (E x 64) = max(touched - tokens x k / (E x 64), touched / 2); x pp micro-batches
        pad = k["pad_s"] * np.maximum(touched - k["rows_per_tile"] * per_micro, 0.5 * touched)
        return w, pad

    def step_s(self, n_decode, prefill_tokens):
        """Seconds of one engine step (one token pass through every stage) and its parts.

        The matmuls (bounded by their FLOPs or by reading the weights) and attention (bounded by
        its FLOPs or by reading the KV cache) are separate kernels, so their times add."""
        tokens = n_decode * self.dq + prefill_tokens
        gemm_c = tokens * self.flops_per_token / (self.tp * self.pp * self.flops_s) + self.moe_padding_s(tokens)
        attn_c = (n_decode * self.spec_q * self.dec_attn / self.dec_attn_rate + prefill_tokens * self.pre_attn) / (
            self.tp * self.pp * self.flops_s)
        kv = (n_decode * self.dec_kv + prefill_tokens * self.kv_bytes_per_token_gpu) / self.bytes_s
        w = self.weight_read_s(tokens)
        comm = self.comm_fixed_s + tokens * self.comm_per_token_s
        hc = tokens * self.hc_per_token_s
        module = prefill_tokens * self.prefill_module_s
        t = np.maximum(gemm_c, w) + np.maximum(attn_c, kv) + self.overhead_s + comm + hc + module
        return t, gemm_c + attn_c + module, w + kv + hc, comm

    # ------------------------------------------------------------ steady state at a rate

    @cached_property
    def _k(self) -> dict:
        """Per-engine invariants of the steady state (computed once; steady() runs inside bisections)."""
        per_flop = 1.0 / (self.tp * self.pp * self.flops_s)
        P, S = self.prompt, self.steps
        g = (P + S * self.dq) * self.flops_per_token * per_flop  # matmul seconds per (request/s)
        a = (S * self.spec_q * self.dec_attn / self.dec_attn_rate + P * self.pre_attn) * per_flop
        kv = (S * self.dec_kv + P * self.kv_bytes_per_token_gpu) / self.bytes_s
        k = (P + S * self.dq) * (self.comm_per_token_s + self.hc_per_token_s) + P * self.prefill_module_s
        fixed = self.overhead_s + self.comm_fixed_s
        c_pre = self.prefill_s_per_token()
        chunks = np.ceil(P / self.budget)
        w1 = self.weight_read_s(1.0)
        return {"g": g, "m": np.maximum(a, kv), "k": k, "fixed": fixed, "c_pre": c_pre, "chunks": chunks,
                "own": P * (c_pre + self.comm_per_token_s + self.hc_per_token_s) + np.maximum(chunks - 1.0, 0.0) * (fixed + w1), "w1": w1,
                "moe": bool(np.any(self.expert_weight_bytes)), "slots": np.maximum(self.n_max, 1.0),
                "slot_exp": np.sqrt(2.0 * (np.maximum(self.n_max, 1.0) + 1.0)) - 1.0,
                "tpot_sd": P * c_pre / np.sqrt(np.maximum(S, 1.0)),
                # attention-DP balancing arrivals (None: no engine balances ranks) and the poll window
                "arrivals": balance_arrivals(self.dp_balance_ranks) if np.any(self.dp_balance_ranks > 1.0) else None,
                "poll": np.maximum(self.poll_steps, 1.0), "polls": bool(np.any(self.poll_steps > 1.0))}

    def _slopes(self, lam):
        k = self._k
        return lam * k["g"], lam * k["m"], lam * k["m"], lam * k["k"]

    def _step_mix(self, lam, T):
        """Mean weight read, mean tile padding and the step-mix gap at rate lam and step time T.

        Steps are of two kinds: decode-only (the running decodes: lam x osl x T sequences) and steps
        that also carry a prompt chunk (+ isl / chunks tokens), a share lam x chunks x T of the steps
        (at most 1). MoE: the experts touched are concave in the step's tokens, so the weight read
        and the tile padding are averaged per kind, not taken at the mean token count (which
        overstates the experts a decode-only step reads). Every model: each kind of step takes
        max(matmuls, weight read) + max(attention, KV read) of its own tokens, and the mean of a max
        exceeds the max of the means (a chunk-carrying step is compute-bound while the decode-only
        steps around it are memory-bound); the gap is the excess of the per-kind mean over the
        mean step the closed form prices (0 when no step or every step carries a prompt)."""
        c = self._mix_k
        finite = np.isfinite(T)
        Tf = np.where(finite, T, 0.0)
        lam_t = lam * Tf
        share = np.minimum(lam_t * c["chunks"], 1.0)
        # prompt tokens per chunk-carrying step: the mean lam x isl x T spread over that share of steps
        # (one chunk, isl / chunks tokens, at low load; several prompts per step at high load)
        p_c = lam_t * self.prompt / np.maximum(share, 1e-12)
        if c["moe"]:
            n_tok = np.maximum(lam_t * self.steps, 1.0) * self.dq
            w_c, pad_c = self._moe_costs(n_tok + p_c)
            w_d, pad_d = self._moe_costs(n_tok)
        else:
            w_c = w_d = c["w1"]
            pad_c = pad_d = 0.0
        rest = 1.0 - share
        w_mean = share * w_c + rest * w_d
        pad_mean = share * pad_c + rest * pad_d
        # per kind: matmuls (g), attention (a) and KV read (k) of the decodes (_d), plus a prompt chunk (_c)
        g_d = lam_t * c["g_seq"] + pad_d
        g_c = g_d - pad_d + p_c * c["g_tok"] + pad_c
        a_d = lam_t * c["a_seq"]
        a_c = a_d + p_c * c["a_tok"]
        k_d = lam_t * c["k_seq"]
        k_c = k_d + p_c * c["k_tok"]
        mix = share * (np.maximum(g_c, w_c) + np.maximum(a_c, k_c)) + rest * (np.maximum(g_d, w_d) + np.maximum(a_d, k_d))
        lin = (np.maximum(share * g_c + rest * g_d, w_mean)
               + np.maximum(share * a_c + rest * a_d, share * k_c + rest * k_d))
        return w_mean, pad_mean, np.where(finite, np.maximum(mix - lin, 0.0), 0.0)

    @cached_property
    def shape(self) -> tuple:
        """The shape every per-engine figure broadcasts to (its array fields' shapes together)."""
        return np.broadcast_shapes(*(np.shape(getattr(self, f)) for f in self.__dataclass_fields__
                                     if getattr(self, f) is not None))

    @cached_property
    def _mix_k(self) -> dict:
        """Per-engine constants of _step_mix (it runs a few times inside every steady state)."""
        per_flop = 1.0 / (self.tp * self.pp * self.flops_s)
        return {"moe": bool(np.any(self.expert_weight_bytes)), "chunks": np.ceil(self.prompt / self.budget),
                "w1": self.weight_read_s(1.0),
                # per (request/s x second of step): the running decodes' matmuls, attention and KV read
                "g_seq": self.steps * self.dq * self.flops_per_token * per_flop,
                "a_seq": self.steps * self.spec_q * self.dec_attn / self.dec_attn_rate * per_flop,
                "k_seq": self.steps * self.dec_kv / self.bytes_s,
                # per prompt token of a chunk
                "g_tok": self.flops_per_token * per_flop, "a_tok": self.pre_attn * per_flop,
                "k_tok": self.kv_bytes_per_token_gpu / self.bytes_s}

    def steady(self, lam, parts=True):
        """Steady state at lam requests/s per replica (open loop, Poisson arrivals).

        Everything per step is proportional to the step time T (decodes lam*osl*T, prompt tokens
        lam*isl*T), and T = max(matmul FLOPs, weight read) + max(attention FLOPs, KV read) + fixed +
        all-reduces, so T solves a linear fixed point per branch in closed form.
        Returns arrays: T (mean step = TPOT), ttft (mean), ttft_p95, tpot_p95, n_running, stable (the
        engine keeps up within its token budget and KV memory) and, with parts, the step's parts."""
        k = self._k
        lam = np.asarray(lam, dtype=float)
        g, m, kk = lam * k["g"], lam * k["m"], lam * k["k"]
        fixed = k["fixed"]
        den_c = 1.0 - g - m - kk
        den_m = 1.0 - m - kk
        ok = den_c > 0
        w0 = k["w1"]
        pad0 = self.moe_padding_s(1.0) if k["moe"] else 0.0
        T = None
        gap = 0.0
        seen = []
        for i in range(MOE_ITERATIONS):  # the step mix (and MoE's experts touched) depend on T
            T = np.where(ok, np.maximum((fixed + gap + pad0) / np.where(ok, den_c, 1.0),
                                        (fixed + gap + w0) / np.where(ok, den_m, 1.0)), np.inf)
            seen.append(T)
            if len(seen) == 3:  # Aitken's delta-squared on three successive passes (the passes converge slowly at high load)
                T = aitken(*seen)
                seen = [T]
            if i < MOE_ITERATIONS - 1:
                w0, pad0, gap = self._step_mix(lam, T)
        tokens_step = lam * (self.prompt + self.steps * self.dq) * T
        n_decode = lam * self.steps * T
        # A new prompt waits for the running step (on average half of it), then rides the next step
        # with the prompts that arrived meanwhile; beyond the budget it waits for more steps (M/D/1).
        own = k["own"]
        rho = lam * self.prompt * T / np.maximum(self.step_budget - n_decode * self.dq, 1.0)
        wait = np.where(rho < 1.0, T * rho / (2.0 * np.maximum(1.0 - rho, 1e-9)), np.inf)
        residence = (1.0 + 0.5 * k["poll"]) * T + own + wait + self.steps * T
        n_running = lam * residence
        # Waiting for a free sequence slot (KV memory / scheduler cap): the slots are c = n_max servers
        # of a request's residence time; M/M/c mean wait by Sakasegawa's approximation.
        rho_s = n_running / k["slots"]
        # (the power of the clipped load: np.where evaluates both branches, and an overloaded rho_s would overflow)
        slot_wait = np.where(rho_s < 1.0, residence / k["slots"] * np.minimum(rho_s, 1.0) ** k["slot_exp"]
                             / np.maximum(1.0 - rho_s, 1e-9), np.inf)
        # TTFT's distribution, term by term (docs/SIZING.md, "Percentiles"): the rest of the running
        # step (uniform over one step: mean and median half a step, p95/p99 the whole step), this
        # prompt's own prefill, the prompts sharing its step (Poisson, normal approximation: sd
        # isl x c_pre x sqrt(lam T)) and the two queue waits (exponential with their means: median
        # ln 2, p95 ln 20, p99 ln 100 times the mean). Each percentile sums its terms' percentiles.
        root = np.sqrt(lam * T)
        share_sd = self.prompt * k["c_pre"] * root
        # Attention-DP balancing: a prompt waits for the other ranks' prompts, (ranks - 1) / 2 arrivals on
        # average, at most the timeout (counted with the queue waits: median ln 2, p95 ln 20 x the mean).
        ranks = self.dp_balance_ranks
        balance = 0.0 if k["arrivals"] is None else np.where(
            ranks > 1.0, np.minimum(k["arrivals"] / np.maximum(lam, 1e-12),
                                    DP_BALANCE_TIMEOUT_STEPS * np.where(np.isfinite(T), T, 0.0)), 0.0)
        waits = wait + slot_wait + balance
        # the wait to be taken in: uniform over poll_steps steps (mean and median half of them, p95/p99 all)
        poll = k["poll"] * T
        # Prefill batching across the poll window: what one poll takes in is prefilled as one batch (SGLang's
        # scheduler prefers a waiting prefill batch to the next decode step), so a prompt's first token waits for
        # every prompt that arrived in its window, lam x poll_steps x T of them; the average step (T) already
        # carries lam x T of them, the rest, lam x (poll_steps - 1) x T prompts, are added here (docs/SIZING.md
        # "Scheduler polling"). 0 when the scheduler takes requests in every step.
        extra_steps = k["poll"] - 1.0
        batched = 0.0 if not k["polls"] else np.where(
            extra_steps > 0.0, lam * extra_steps * T * self.prompt * k["c_pre"], 0.0)
        fixed_part = T + own + self.request_overhead_s + batched
        ttft = fixed_part + 0.5 * poll + waits
        ttft_p50 = fixed_part + 0.5 * poll + waits * LN2
        ttft_p95 = fixed_part + poll + Z95 * share_sd + waits * LN20
        ttft_p99 = fixed_part + poll + Z99 * share_sd + waits * LN100
        # TPOT is a request's mean step over osl steps; steps vary with the prompts they carry (normal:
        # median = mean = T).
        # MTP: a step emits spec_a tokens per sequence, so a token's time is T / spec_a.
        tpot = T / self.spec_a
        tpot_sd = k["tpot_sd"] * root / self.spec_a
        tpot_p95 = tpot + Z95 * tpot_sd
        tpot_p99 = tpot + Z99 * tpot_sd
        stable = ok & (tokens_step <= self.step_budget) & (rho < 1.0) & (rho_s < 1.0)
        out = {"T": T, "tpot": tpot, "ttft": ttft, "ttft_p50": ttft_p50, "ttft_p95": ttft_p95, "ttft_p99": ttft_p99,
               "tpot_p95": tpot_p95, "tpot_p99": tpot_p99, "stable": stable}
        if not parts:
            return out
        step_t, compute, memory, comm = self.step_s(n_decode, lam * self.prompt * T)
        return {**out, "n_running": n_running, "n_decode": n_decode, "compute_s": compute, "memory_s": memory,
                "comm_s": comm, "tokens_per_step": tokens_step}

    def unloaded(self):
        """One request alone: TTFT = its prefill, TPOT = one decode step."""
        T1, *_ = self.step_s(np.ones_like(self.isl * 1.0), 0.0)
        c_pre = self.prefill_s_per_token()
        chunks = np.ceil(self.prompt / self.budget)
        pad = chunks * self.moe_padding_s(np.minimum(self.prompt, self.budget))
        pre = (np.maximum(self.prompt * c_pre + pad, chunks * self.weight_read_s(np.minimum(self.prompt, self.budget)))
               + chunks * (self.overhead_s + self.comm_fixed_s)
               + self.prompt * (self.comm_per_token_s + self.hc_per_token_s))
        return pre + self.request_overhead_s, T1 / self.spec_a

    def max_stable_rate(self):
        """Highest rate the engine sustains (token budget, compute, bandwidth or KV memory)."""
        def ok(lam):
            return self.steady(lam, parts=False)["stable"]
        return bisect_largest(ok, self._rate_upper(), shape=self.shape)

    def _rate_upper(self):
        """The rate where compute or KV traffic alone would fill every second (no steady state beyond)."""
        g_c, a_c, a_kv, a_k = self._slopes(1.0)
        slope = np.maximum(g_c + np.maximum(a_c, a_kv), np.maximum(a_c, a_kv)) + a_k
        full = np.broadcast_shapes(np.shape(slope), np.shape(self.n_max), np.shape(self.overhead_s))
        return np.broadcast_to(1.0 / np.maximum(slope, 1e-12), full).astype(float)

    def cohort_s(self, clients):
        """Closed loops with equal request lengths run in cohorts: clients that started together finish
        together and send their next prompts together, so a prompt shares its prefill with others
        (ttft_cohort_factor x sqrt(clients - 1) prompts' worth, fitted on the measured closed loops)."""
        c = np.maximum(np.minimum(clients, self.n_max) - 1.0, 0.0)
        return self.cohort_factor * np.sqrt(c) * self.prompt * self.prefill_s_per_token()

    def rate_meeting(self, ttft_s, tpot_s, *, closed=False, hi=None):
        """Highest rate per replica whose p95 TTFT and TPOT stay within the targets (0: never).

        closed=True: the rate of a closed loop (clients = rate x cycle, Little's law) including the
        cohort wait of closed loops."""
        def ok(lam):
            s = self.steady(lam, parts=False)
            ttft = s["ttft_p95"]
            if closed:
                ttft = ttft + 2.0 * self.cohort_s(lam * (s["ttft"] + (self.osl - 1.0) * s["tpot"]))
            return s["stable"] & (ttft <= ttft_s) & (s["tpot_p95"] <= tpot_s)
        lam = bisect_largest(ok, self._rate_upper() if hi is None else hi,
                             shape=np.broadcast_shapes(self.shape, np.shape(ttft_s), np.shape(tpot_s)))
        # lam is the top of the feasible range; 0 with an infeasible floor means never.
        return np.where(ok(np.maximum(lam, 1e-9)), lam, 0.0)

    def closed_loop(self, clients, cap=None):
        """Closed loop: `clients` each send the next request when the last one ends (benchmark tools).

        The throughput lam solves lam x (TTFT + osl x T) = clients; when the engine cannot run all
        clients at once (scheduler cap, KV memory, prefill budget) the rest wait, and TTFT grows by
        that wait (Little's law on the whole loop)."""
        clients = np.asarray(clients, dtype=float)
        cap = self.max_stable_rate() if cap is None else cap

        cohort = self.cohort_s(clients)

        def fewer(lam):
            s = self.steady(lam, parts=False)
            return s["stable"] & (lam * (s["ttft"] + cohort + (self.osl - 1.0) * s["tpot"]) <= clients)
        lam = bisect_largest(fewer, cap, shape=np.broadcast_shapes(self.shape, clients.shape, np.shape(cohort)))
        s = self.steady(lam)
        # The cohort wait is part of every request's cycle, so it is in the balance above: the rate,
        # the step time and the latencies are one operating point (Little's law on the loop holds).
        cycle = s["ttft"] + cohort + (self.osl - 1.0) * s["tpot"]
        queued = np.maximum(clients / np.maximum(lam, 1e-12) - cycle, 0.0)  # waiting for a slot / budget
        queued = np.where(queued > 1e-3 * cycle, queued, 0.0)
        # Cohort wait (the start-up wave, docs/SIZING.md "Closed-loop TTFT: median and mean"): in the mean (c) and the
        # tail (p95/p99 ~2c), not in the median.
        s["ttft"] = s["ttft"] + queued + cohort
        s["ttft_p50"] = s["ttft_p50"] + queued
        s["ttft_p95"] = s["ttft_p95"] + queued + 2.0 * cohort
        s["ttft_p99"] = s["ttft_p99"] + queued + 2.0 * cohort
        s["rate"] = lam
        s["queued_s"] = queued
        s["clients"] = clients + 0.0 * lam
        return s

