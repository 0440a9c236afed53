"""The entry point: snapshots + sizing + the user's cost options -> CostInputs -> the cost engine's JSON."""

from __future__ import annotations

from dataclasses import replace

from catalog.domain.messages import Msg
from costs import price_sources
from costs.engine.errors import CostValidationError, FieldError
from costs.engine.inputs import (
    CostInputs,
    PriceBook,
    Workload,
)
from costs.engine.options import parse_cost_options
from costs.engine.plan import cost_plan
from costs.engine.rates import RATE_SCHEMA, apply_overrides
from costs.rate_csv import rates_from_rows, read_rate_csv

from .common import (
    TRAINING_KINDS,
    _date,
)
from .offers import (
    cloud_offers_from_snapshot,
    cpu_instances_from_snapshot,
    dedicated_from_snapshot,
    servers_from_snapshot,
)
from .rates import (
    api_prices_from_snapshot,
    chosen_api_prices,
    fx_from_snapshot,
    power_tariff_from_snapshot,
    rates_from_snapshot,
    storage_rates_from_snapshot,
    vat_from_snapshots,
)
from .workloads import workloads_from_sizing

# ---- the entry point -------------------------------------------------------------------------


def _is_model_preset(model_id: str) -> bool:
    from planner.engine.presets import get_preset

    return get_preset(model_id) is not None


def parse_options(data, **kw):
    """costs.engine.options.parse_cost_options with the sizing engine's model presets as the known
    open-weights models: what every caller outside the pure cost engine uses."""
    return parse_cost_options(data, is_model_preset=_is_model_preset, **kw)


def build_cost_inputs(
    *, sizing: dict, price_snapshot: dict, rate_snapshot: dict, options: dict | None, spec=None
) -> tuple[CostInputs, list[str]]:
    inputs, notes, _sources = build_cost_inputs_with_sources(
        sizing=sizing, price_snapshot=price_snapshot, rate_snapshot=rate_snapshot, options=options, spec=spec
    )
    return inputs, notes


def build_cost_inputs_with_sources(
    *, sizing: dict, price_snapshot: dict, rate_snapshot: dict, options: dict | None, spec=None
) -> tuple[CostInputs, list[str], price_sources.Sources]:
    as_of = _date(price_snapshot.get("as_of")) or _date(rate_snapshot.get("as_of"))
    opts = parse_options(options or {}, default_as_of=as_of)
    if as_of is not None and opts.as_of != as_of:
        # one plan date: the prices were taken on as_of; FX and VAT of another day would not match them
        raise CostValidationError(
            [
                FieldError(
                    path="costs.as_of",
                    message=f"{opts.as_of.isoformat()} differs from the plan's price date {as_of.isoformat()}; "
                    "set the plan date (--as-of) instead",
                )
            ]
        )
    rates = rates_from_snapshot(rate_snapshot)
    missing = [k for k in RATE_SCHEMA if k not in rates]
    if missing:
        # an older stored snapshot, or a database without the rate card: the shipped defaults fill in
        shipped = rates_from_rows(read_rate_csv(), as_of=opts.as_of)
        rates.update({k: shipped[k] for k in missing if k in shipped})
        notes_pre = [
            f"{len(missing)} rate(s) not in the stored rate card, shipped defaults used: "
            f"{', '.join(sorted(missing)[:8])}{' ...' if len(missing) > 8 else ''}"
        ]
    else:
        notes_pre = []
    rates.update(storage_rates_from_snapshot(price_snapshot))
    fx = fx_from_snapshot(price_snapshot)
    effective = apply_overrides(rates, opts.overrides, path="costs.overrides")
    if "training_runs_per_month" in opts.overrides and opts.runs is None and opts.runs_per_month is None:
        # the old way to say "a recurring job" (a rate-card override) still works
        opts = replace(opts, runs_per_month=opts.overrides["training_runs_per_month"] or None)
    workloads, notes = workloads_from_sizing(sizing, price_snapshot=price_snapshot, spec=spec, rates=effective)
    notes = notes_pre + notes
    gps: dict[str, set[int]] = {}
    tps: dict[str, set[int]] = {}
    for w in workloads:
        if w.accelerator_id:
            gps.setdefault(w.accelerator_id, set()).add(w.gpus_per_server)
            tps.setdefault(w.accelerator_id, set()).add(w.tensor_parallel)
    tariff, tariff_note = power_tariff_from_snapshot(price_snapshot, country=opts.country)
    if tariff_note:
        notes.append(tariff_note)
    composed, composed_meta = price_sources.composed_cloud_offers(
        price_snapshot, training=sizing.get("kind", "") in TRAINING_KINDS
    )
    prices = PriceBook(
        cloud_offers=cloud_offers_from_snapshot(price_snapshot) + tuple(composed),
        dedicated_offers=dedicated_from_snapshot(price_snapshot),
        servers=servers_from_snapshot(
            price_snapshot, rates=effective, fx=fx, as_of=opts.as_of, gpus_per_server=gps, tensor_parallel=tps
        ),
        api_prices=chosen_api_prices(api_prices_from_snapshot(rate_snapshot), spec),
        cpu_instances=cpu_instances_from_snapshot(price_snapshot),
        power_tariff_per_kwh=tariff,
        fx=fx,
        vat=vat_from_snapshots(price_snapshot, rate_snapshot),
    )
    if any(not o.get("billing_granularity_seconds") for o in price_snapshot.get("cloud_offers", [])):
        notes.append(Msg("cloud billing granularity unknown for some offers: per-second billing assumed for them"))
    if not workloads:
        workloads = [Workload(candidate_id="none", accelerator_id=None, gpu_count=0)]
    sources = _sources(price_snapshot, prices=prices, opts=opts, rates=effective, composed_meta=composed_meta,
                       gpu_needed=any(w.accelerator_id for w in workloads))
    notes += sources.notes
    inputs = CostInputs(workloads=tuple(workloads), prices=sources.book, rates=rates, options=sources.options,
                        model_preset=(sizing.get("model") or {}).get("preset_id"),
                        model_name=(sizing.get("model") or {}).get("name"))
    return inputs, notes, sources


def _sources(price_snapshot: dict, *, prices: PriceBook, opts, rates, composed_meta: dict,
             gpu_needed: bool) -> price_sources.Sources:
    """Quotes in preference to list prices, residency, 'not priced' providers (costs.price_sources);
    a plan that needs no GPU is not told to ask GPU clouds for quotes."""
    quoted, quote_meta, expired, quote_notes = price_sources.quote_servers(
        price_snapshot, options=opts, host_rate=rates.get("server_host_capex_per_gpu_slot"), fx=prices.fx,
    )
    # quotes go before the user's typed server prices, which therefore still win (the last one is used)
    opts = replace(opts, user_servers=tuple(quoted) + opts.user_servers)
    sources = price_sources.Sources(
        book=prices, options=opts, notes=list(quote_notes), expired_quotes=expired,
        cloud_meta={**price_sources.catalog_cloud_meta(price_snapshot), **composed_meta},
        server_meta={**price_sources.catalog_server_meta(price_snapshot), **quote_meta},
    )
    if opts.data_residency:
        sources.book, sources.residency = price_sources.apply_residency(
            prices, allowed=opts.data_residency, price_snapshot=price_snapshot
        )
        sources.skipped += sources.residency["left_out"]
    if opts.providers:
        sources.book, left_out = price_sources.apply_providers(sources.book, allowed=opts.providers)
        sources.skipped += left_out
    if gpu_needed:
        sources.skipped += price_sources.not_priced_providers(price_snapshot, allowed=opts.data_residency,
                                                              providers=opts.providers)
        sources.skipped += price_sources.history_skipped(price_snapshot, allowed=opts.data_residency)
    return sources


def price_sizing_result(
    *, sizing: dict, price_snapshot: dict, rate_snapshot: dict, options: dict | None, spec: dict | None = None
) -> dict:
    """Cost JSON for a stored sizing result. ``spec`` (the WorkloadSpec JSON) gives the token volume
    and serving hours; without it the API option and derived utilisation are left out.

    Raises costs.engine.errors.CostValidationError (a ValueError) with field paths on bad input.
    """
    parsed = None
    if spec:
        from planner.engine.spec import parse_workload_spec

        parsed = parse_workload_spec(spec)
    inputs, notes, sources = build_cost_inputs_with_sources(
        sizing=sizing,
        price_snapshot=price_snapshot,
        rate_snapshot=rate_snapshot,
        options=options,
        spec=parsed,
    )
    result = cost_plan(inputs=inputs).to_dict(structured=False)
    result["notes"] = notes + result["notes"]
    price_sources.annotate(result, sources=sources, price_snapshot=price_snapshot, as_of=inputs.options.as_of)
    return _structured(result)


def _structured(result: dict) -> dict:
    """The texts annotate() added (Msg) get their translation siblings like the engine's own, where the
    engine stores them (catalog.domain.messages.with_structured; idempotent on the engine's siblings)."""
    try:
        from catalog.domain.messages import with_structured
    except ImportError:  # an engine without structured storage: the English texts stand
        return result
    return with_structured(result)
