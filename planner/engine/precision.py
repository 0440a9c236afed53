"""Number formats: storage bytes per value and which catalog peak a compute format runs at."""

from __future__ import annotations

from .hardware import AcceleratorSpec

PRECISIONS = ("fp32", "bf16", "fp16", "fp8", "int8", "int4", "fp4")
EIGHT_BIT = ("fp8", "int8")  # compute formats with their own (8-bit) efficiency base

BYTES_PER_VALUE = {"fp32": 4.0, "bf16": 2.0, "fp16": 2.0, "fp8": 1.0, "int8": 1.0, "int4": 0.5, "fp4": 0.5}

# Group-wise quantisation keeps one 16-bit scale (and zero point) per group of 128 weights
# (GPTQ/AWQ/bitsandbytes defaults): 0.25 bits/weight for int4 (int8 uses per-channel scales: negligible).
# fp4 means NVFP4 (Blackwell, what engines quantise to): one FP8 E4M3 scale per 16 values = 1/16 byte
# (0.5 bits) per weight. MXFP4 (OCP MX v1.0, gpt-oss checkpoints) keeps one 8-bit E8M0 scale per 32
# values = 1/32 byte (0.25 bits): see WEIGHT_SCHEMES. Sources in docs/SIZING.md "Weight formats".
QUANT_SCALE_BYTES_PER_VALUE = {"int4": 2 * 2 / 128, "fp4": 1 / 16}


def weight_bytes_per_param(precision: str) -> float:
    """Bytes per parameter of one uniform format; a checkpoint's mixed format (WeightFormat) gives its
    routed experts' bytes here: use weight_part_bytes for the split."""
    if isinstance(precision, WeightFormat):
        return precision.experts_bytes
    return BYTES_PER_VALUE[precision] + QUANT_SCALE_BYTES_PER_VALUE.get(precision, 0.0)


# Storage schemes published checkpoints use: (precision class, bytes per value incl. scales).
# The class is what compute-format rules, runtime constants and launch flags key on.
WEIGHT_SCHEMES = {
    **{p: (p, BYTES_PER_VALUE[p] + QUANT_SCALE_BYTES_PER_VALUE.get(p, 0.0)) for p in PRECISIONS},
    "mxfp4": ("fp4", 0.5 + 1 / 32),  # E2M1 + one E8M0 scale per 32 values (OCP MX v1.0): 4.25 bits
    "nvfp4": ("fp4", 0.5 + 1 / 16),  # E2M1 + one E4M3 scale per 16 values (+ one fp32 per tensor): 4.5 bits
    "fp8-block128": ("fp8", 1.0 + 4 / (128 * 128)),  # E4M3 + one fp32 scale per 128x128 block (DeepSeek-V3)
    "int4-group32": ("int4", 0.5 + 2 / 32),  # symmetric int4 + one 16-bit scale per 32 (compressed-tensors)
}
WEIGHT_PARTS = ("experts", "rest", "embeddings")


class WeightFormat(str):
    """A checkpoint's own storage, part by part: 'experts=mxfp4;rest=bf16' (routed-expert weights, every
    other parameter; optional 'embeddings=' for the input embedding + lm_head when they differ from the
    rest). Its str value is the precision class of the experts (of the rest for a dense model): the
    format the compute rules, runtime constants and launch flags see, so nothing downstream changes."""

    parts: dict  # part -> scheme (WEIGHT_SCHEMES)
    text: str  # as written in the data column

    def __new__(cls, text: str):
        parts = dict(kv.split("=", 1) for kv in text.replace(" ", "").split(";") if kv)
        if not parts.get("rest") or set(parts) - set(WEIGHT_PARTS) or set(parts.values()) - set(WEIGHT_SCHEMES):
            raise ValueError(f"not a checkpoint weight format: {text!r}")
        parts.setdefault("experts", parts["rest"])
        parts.setdefault("embeddings", parts["rest"])
        obj = super().__new__(cls, WEIGHT_SCHEMES[parts["experts"]][0])
        obj.parts = parts
        obj.text = text
        return obj

    def __getnewargs__(self):  # pickle / deepcopy rebuild from the text, not from the class value
        return (self.text,)

    @property
    def experts_bytes(self) -> float:
        return WEIGHT_SCHEMES[self.parts["experts"]][1]


def weight_part_bytes(weights: str, *, rest_params, expert_params, embedding_params=0.0):
    """(bytes of the non-expert parameters, bytes of the routed experts); `embedding_params` (input
    embedding + lm_head) are part of rest_params and may be stored in their own format."""
    if not isinstance(weights, WeightFormat):
        bpp = weight_bytes_per_param(weights)
        return rest_params * bpp, expert_params * bpp
    b = {part: WEIGHT_SCHEMES[s][1] for part, s in weights.parts.items()}
    rest = rest_params * b["rest"] + embedding_params * (b["embeddings"] - b["rest"])
    return rest, expert_params * b["experts"]


# Which catalog column a compute format uses, in order of preference. Formats a part lacks fall
# back to the next wider one it has (int4 weights are dequantised to 16-bit for the matmul).
_PEAK_COLUMNS = {
    "fp32": ("tf32_tflops_dense", "fp32_tflops"),
    "bf16": ("bf16_tflops_dense", "fp16_tflops_dense"),
    "fp16": ("fp16_tflops_dense", "bf16_tflops_dense"),
    "fp8": ("fp8_tflops_dense", "bf16_tflops_dense", "fp16_tflops_dense"),
    "int8": ("int8_tops_dense", "fp8_tflops_dense", "bf16_tflops_dense", "fp16_tflops_dense"),
    "int4": ("bf16_tflops_dense", "fp16_tflops_dense"),
    "fp4": ("fp4_tflops_dense", "bf16_tflops_dense", "fp16_tflops_dense"),
}


def peak_tflops(acc: AcceleratorSpec, precision: str) -> tuple[float | None, str]:
    """Dense peak for this compute format and the catalog column it came from (None if unknown)."""
    for column in _PEAK_COLUMNS[precision]:
        value = getattr(acc, column)
        if value:
            return float(value), column
    return None, ""


def has_eight_bit_units(compute_precision: str, column: str) -> bool:
    """False when an 8-bit (or 4-bit) compute format fell back to a 16-bit peak column (fp8 on A100, fp4
    on H100): the matmuls then run in 16 bits. True for every other case (int8 on an fp8 column is still 8-bit;
    no known peak at all: nothing to say)."""
    low = (*EIGHT_BIT, "fp4")
    return compute_precision not in low or not column or column.split("_")[0] in low
