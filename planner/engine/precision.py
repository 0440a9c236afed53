"""Number formats: storage bytes per value and which catalog peak a compute format runs at."""

from __future__ import annotations

from .hardware import AcceleratorSpec

PRECISIONS = ("fp32", "bf16", "fp16", "fp8", "int8", "int4", "fp4")
EIGHT_BIT = ("fp8", "int8")  # compute formats with their own (8-bit) efficiency base

BYTES_PER_VALUE = {"fp32": 4.0, "bf16": 2.0, "fp16": 2.0, "fp8": 1.0, "int8": 1.0, "int4": 0.5, "fp4": 0.5}

# Group-wise quantisation keeps one 16-bit scale (and zero point) per group of 128 weights
# (GPTQ/AWQ/bitsandbytes defaults): 0.25 bits/weight for int4 (int8 uses per-channel scales: negligible). See docs/SIZING.md.
# NVFP4 (Blackwell) keeps one FP8 scale per 16 values: 0.5 bits/weight (MXFP4: 8-bit scale per 32, less).
QUANT_SCALE_BYTES_PER_VALUE = {"int4": 2 * 2 / 128, "fp4": 1 / 16}


def weight_bytes_per_param(precision: str) -> float:
    return BYTES_PER_VALUE[precision] + QUANT_SCALE_BYTES_PER_VALUE.get(precision, 0.0)


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
