"""Serving constants fitted on the InferenceX rows (../shared/reference/inferencex/serving_fit.csv),
per (runtime, chip generation). Written by scripts/fit_serving_moe.py; docs/SIZING.md "Serving model"
and docs/BENCHMARKS.md "Serving: InferenceX fit set (issue 22)" list the rows and the error.

Empty until fitted: every value then comes from serving_constants.FITTED and its generation factor.
"""

FITTED_IX: dict[tuple[str, str], dict[str, float]] = {}
FITTED_IX_ROWS: dict[tuple[str, str], str] = {}
