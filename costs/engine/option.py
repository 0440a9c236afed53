"""One priced deployment option, as the calculators of each kind return it."""

from __future__ import annotations

from dataclasses import dataclass, field
from decimal import Decimal

from .lines import Line


@dataclass(frozen=True, kw_only=True)
class OptionCost:
    option_id: str
    kind: str
    candidate_id: str
    label: str
    lines: tuple[Line, ...]
    useful_gpu_hours_per_month: Decimal  # average over the horizon
    tokens_per_month: Decimal | None
    # output tokens a month at the stated volume (serving.requests_per_day x output_tokens x days)
    output_tokens_per_month: Decimal | None = None
    training_gpu_hours_per_run: Decimal | None
    # the configuration's GPU-hours while the fleet runs, over the horizon (None: not one fleet, e.g. an
    # API or a hybrid split): what a GPU-hour of this option costs all-in, and so a token at a given load
    running_gpu_hours: Decimal | None = None
    unknowns: tuple[str, ...] = ()
    warnings: tuple[str, ...] = ()  # risks the total does not show in full (e.g. spot for serving)
    detail: dict = field(default_factory=dict)
