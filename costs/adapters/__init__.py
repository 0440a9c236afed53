"""Glue between stored JSON and the pure cost engine (no database, no clock).

``price_sizing_result`` turns a sizing result (planner.engine SizingResult.to_dict()), the
catalog price snapshot (docs/CATALOG.md), the rate-card snapshot (costs.selectors) and the
user's ``costs`` section into CostInputs, runs costs.engine and returns its JSON.

Modules: ``entry`` (the entry point), ``workloads`` (sizing result -> workloads), ``rates`` (rate
card, FX, VAT, API prices, tariffs), ``offers`` (cloud, dedicated, on-prem and CPU offers), ``site``
(power and rack limits), ``common`` (shared helpers). Their public names are re-exported here.
"""

from .common import GB, SERVING_KINDS, TRAINING_KINDS
from .entry import build_cost_inputs, build_cost_inputs_with_sources, parse_options, price_sizing_result
from .offers import (
    buyable_shape,
    cloud_offers_from_snapshot,
    cpu_instances_from_snapshot,
    dedicated_from_snapshot,
    servers_from_snapshot,
)
from .rates import (
    NOT_STANDARD,
    STORAGE_PROVIDERS,
    api_prices_from_snapshot,
    chosen_api_prices,
    fx_from_snapshot,
    model_api_key,
    power_tariff_from_snapshot,
    rates_from_snapshot,
    storage_rates_from_snapshot,
    vat_from_snapshots,
)
from .workloads import MAX_CONFIGURATIONS, configurations_to_price, workloads_from_sizing

__all__ = [
    "GB",
    "MAX_CONFIGURATIONS",
    "NOT_STANDARD",
    "SERVING_KINDS",
    "STORAGE_PROVIDERS",
    "TRAINING_KINDS",
    "api_prices_from_snapshot",
    "build_cost_inputs",
    "build_cost_inputs_with_sources",
    "buyable_shape",
    "chosen_api_prices",
    "cloud_offers_from_snapshot",
    "configurations_to_price",
    "cpu_instances_from_snapshot",
    "dedicated_from_snapshot",
    "fx_from_snapshot",
    "model_api_key",
    "parse_options",
    "power_tariff_from_snapshot",
    "price_sizing_result",
    "rates_from_snapshot",
    "servers_from_snapshot",
    "storage_rates_from_snapshot",
    "vat_from_snapshots",
    "workloads_from_sizing",
]
