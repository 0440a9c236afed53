"""The four-row cost table of one deployment option (REQUIREMENTS R4): one module per kind.

- ``lines``: Line, Context, the rows every kind shares (engineering, downtime, storage, traffic)
- ``cloud``: on demand, spot, commitments; ``dedicated``: monthly rented servers;
  ``onprem``: owned servers; ``hybrid``: owned baseline + cloud burst; ``api``: a model API.

This module keeps the old import path.
"""

from __future__ import annotations

import datetime as dt
from decimal import Decimal

from .api import api_option
from .cloud import MODE_TEXT, cloud_option
from .dedicated import dedicated_option
from .errors import fail
from .hybrid import hybrid_option
from .lines import (
    MILLION,
    ROWS,
    Context,
    Line,
    Usage,
    ceil_div,
    ceil_to,
    fleet_text,
    holds_tp_group,
    layout_warnings,
    usage,
)
from .money import add_months
from .onprem import amortised, onprem_option
from .option import OptionCost

__all__ = [
    "MILLION",
    "MODE_TEXT",
    "ROWS",
    "Context",
    "Line",
    "OptionCost",
    "Usage",
    "amortised",
    "api_option",
    "ceil_div",
    "ceil_to",
    "check_utilisation",
    "cloud_option",
    "dedicated_option",
    "fleet_text",
    "holds_tp_group",
    "hybrid_option",
    "layout_warnings",
    "month_dates",
    "onprem_option",
    "usage",
]


def month_dates(*, as_of: dt.date, horizon_months: int) -> list[dt.date]:
    """Index 0: the plan date (upfront payments); index m: the first day of month m of use."""
    return [as_of] + [add_months(as_of, m - 1) for m in range(1, horizon_months + 1)]


def check_utilisation(value: Decimal, *, path: str) -> Decimal:
    if not (0 <= value <= 1):
        raise fail(path, "must be between 0 and 1")
    return value
