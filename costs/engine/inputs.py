"""Plain inputs of the cost engine. Built by costs.adapters from a sizing result, the catalog
price snapshot and the rate card; unit tests build them by hand.

Units: hours, GB (10^9 bytes, as clouds bill), W, kWh. Money is Price (Decimal + currency).
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field
from decimal import Decimal

from .money import FxTable, Price, VatTable

HOURS_PER_MONTH = Decimal("730")  # 8760 / 12, the convention cloud price lists use
STORAGE_TIERS = ("nvme", "ssd", "hdd", "object")
OPTION_KINDS = (
    "cloud_on_demand",
    "cloud_spot",
    "cloud_commit_1y",
    "cloud_commit_3y",
    "dedicated",
    "onprem",
    "hybrid",
    "api",
)
REDUNDANCY = ("none", "n_plus_1", "multi_zone")
# How the decision picks among the options that meet the targets: the lowest budget total, the
# lowest budget plus the expected cost of downtime, or the fewest GPUs (then the lowest budget).
DECISION_BASES = ("cheapest", "risk_adjusted", "fewest_gpus")


@dataclass(frozen=True, kw_only=True)
class Workload:
    """What one candidate configuration of the sized workload needs, per month."""

    candidate_id: str  # e.g. "nvidia-h100-sxm5-80gb x8"
    accelerator_id: str | None  # None: no GPU needed (API / CPU-only workloads)
    gpu_count: int  # GPUs in the fleet
    accelerator_name: str = ""  # e.g. "H100 SXM5 80GB", for labels
    # Parallel layout from the sizing: a tensor-parallel group must sit inside one instance or
    # server (NVLink/PCIe); pipeline stages and replicas / data-parallel groups may span hosts.
    tensor_parallel: int = 1
    pipeline_parallel: int = 1
    # A disaggregated serving layout's pools: (prefill workers, prefill TP, decode workers, decode TP);
    # None: one kind of replica, TP/PP say the layout
    pools: tuple[int, int, int, int] | None = None
    # Serving with a TTFT/TPOT target: a spot interruption is an outage, not just a restart.
    latency_target: bool = False
    gpus_per_server: int = 8
    server_count: int = 1
    server_power_w: Decimal | None = None  # IT load of one server at full load
    server_rack_units: int = 0  # 0: unknown
    is_training: bool = False
    training_gpu_hours_per_run: Decimal | None = None  # useful GPU-hours of one run
    tokens_in_per_month: Decimal | None = None
    tokens_out_per_month: Decimal | None = None
    storage_gb: dict[str, Decimal] = field(default_factory=dict)  # tier -> GB
    egress_gb_per_month: Decimal = Decimal("0")
    checkpoint_interval_hours: Decimal = Decimal("1")
    restart_hours: Decimal = Decimal("0.25")
    # Share of calendar hours the fleet has useful work, as derived from sizing (serving hours a
    # day / 24); None: the user's costs.utilisation or the rate-card default applies. The fleet
    # runs (and hourly cloud bills) this / efficiency, capped at 1: lower efficiency, more hours.
    utilisation: Decimal | None = None
    # Serving: the average load over the serving hours / the peak the fleet is sized for (the volume
    # of serving.requests_per_day against the peak held all the serving hours). The fleet runs all
    # its serving hours, but only this share of them does useful work; None: 1 (jobs, no serving).
    load_share: Decimal | None = None
    # Does this configuration meet the workload's targets (sizing's meets_target); None: unknown.
    meets_targets: bool | None = None
    # The sizing's own recommendation (its rule: fewest GPUs meeting the targets, ...).
    sizing_recommended: bool = False
    # GPU server shapes that can be bought for this accelerator (catalog/data/server_shapes.csv:
    # HGX boards of 4/8, OAM boards of 8, PCIe chassis of 1-10 cards).
    buyable_gpus_per_server: tuple[int, ...] = ()
    # The one cloud provider the accelerator is rented from, never sold as hardware (e.g. "AWS" for
    # the A10G, catalog/data/cloud_only_accelerators.csv); "": it can be bought.
    sold_only_in_cloud: str = ""
    # Why the site cannot hold this configuration's servers if bought (its power budget or racks,
    # spec.hardware.power_budget_kw / racks); "": it can, or the site set no limit.
    site_limit: str = ""
    # A workload with no GPU (an agent on a model API): the CPU server it runs on, as the sizing
    # states it (physical cores, RAM in GiB); None: not stated, no CPU server priced.
    cpu_cores_needed: int | None = None
    host_ram_gib_needed: Decimal | None = None


@dataclass(frozen=True, kw_only=True)
class CpuInstance:
    """A CPU-only cloud instance (catalog/data/cpu_instances.csv), priced per instance-hour."""

    provider: str
    region: str
    instance_type: str
    vcpus: int
    physical_cores: int
    ram_gib: Decimal
    on_demand: Price


@dataclass(frozen=True, kw_only=True)
class CloudOffer:
    provider: str
    region: str
    instance_type: str
    accelerator_id: str
    gpus_per_instance: int
    on_demand: Price | None = None  # per instance-hour
    spot: Price | None = None
    commit_1y: Price | None = None
    commit_3y: Price | None = None
    billing_granularity_hours: Decimal = Decimal("0.0002777777777777777777777777778")  # per second


@dataclass(frozen=True, kw_only=True)
class DedicatedOffer:
    provider: str
    name: str
    accelerator_id: str
    gpus_per_server: int
    monthly: Price  # per server-month
    setup_fee: Price | None = None


@dataclass(frozen=True, kw_only=True)
class ServerPrice:
    """Purchase price of one GPU server (with its GPUs) for on-prem: a server that can be bought
    (a catalog platform, an HGX 4/8 or OAM 8 board, a PCIe chassis of 1-10 cards, or the user's quote)."""

    accelerator_id: str
    gpus_per_server: int  # GPUs installed (and bought) per server
    price: Price
    name: str = ""  # e.g. "NVIDIA DGX H100", "HGX 8-GPU (built from the GPU price)"
    power_w: Decimal | None = None  # IT load of this server at full load; None: the workload's estimate
    rack_units: int = 0  # 0: unknown
    slots: int = 0  # GPU slots of the chassis (0: = gpus_per_server)


@dataclass(frozen=True, kw_only=True)
class ApiPrice:
    provider: str
    model: str
    input_per_1m_tokens: Price
    output_per_1m_tokens: Price
    # The model preset id when the API serves that open-weights model (family): a like-for-like
    # comparison with self-hosting it. None: another (proprietary or unnamed) model.
    open_weights_model: str | None = None


@dataclass(frozen=True, kw_only=True)
class Rate:
    """One rate-card value: a number (money when currency is set) with unit and provenance."""

    value: Decimal
    unit: str = ""
    currency: str | None = None
    source: str = ""
    valid_from: dt.date | None = None

    def price(self) -> Price:
        assert self.currency is not None
        return Price(
            amount=self.value,
            currency=self.currency,
            unit=self.unit,
            source=self.source,
            as_of=self.valid_from,
        )


@dataclass(frozen=True, kw_only=True)
class PriceBook:
    cloud_offers: tuple[CloudOffer, ...] = ()
    dedicated_offers: tuple[DedicatedOffer, ...] = ()
    servers: tuple[ServerPrice, ...] = ()
    api_prices: tuple[ApiPrice, ...] = ()
    cpu_instances: tuple[CpuInstance, ...] = ()
    power_tariff_per_kwh: Price | None = None
    fx: FxTable = field(default_factory=FxTable)
    vat: VatTable = field(default_factory=VatTable)


@dataclass(frozen=True, kw_only=True)
class HybridSplit:
    """Owned baseline plus cloud burst: ``owned_share`` of the servers are bought, the rest rented."""

    owned_share: Decimal = Decimal("0.5")


@dataclass(frozen=True, kw_only=True)
class CostOptions:
    horizon_months: int = 36
    currency: str = "USD"
    include_vat: bool = True
    country: str = "RU"
    as_of: dt.date = dt.date(2026, 1, 1)
    utilisation: Decimal | None = None  # None: the adapter derives it or takes the rate card default
    efficiency: Decimal | None = None
    options: tuple[str, ...] = OPTION_KINDS
    redundancy: str = "none"
    hybrid: HybridSplit = field(default_factory=HybridSplit)
    monte_carlo_samples: int = 10_000
    seed: int = 20260101
    overrides: dict[str, Decimal] = field(default_factory=dict)
    # Prices the user typed in (e.g. a vendor quote, an API price list): used next to the catalog's.
    user_servers: tuple[ServerPrice, ...] = ()
    user_api_prices: tuple[ApiPrice, ...] = ()
    egress_gb_per_month: Decimal | None = None  # None: what the workload says
    # Keep only providers/regions in these jurisdictions (ISO codes); () = no restriction. Applied
    # where options are built from offers (costs.price_sources), not inside the cost model.
    data_residency: tuple[str, ...] = ()
    # Keep only offers of these providers (catalog names, e.g. "Yandex Cloud"); () = any provider.
    # A team's procurement settings set it (planner.procurement); on-premises options stay.
    providers: tuple[str, ...] = ()
    inter_zone_gb_per_month: Decimal | None = None  # None: none (multi_zone says it is not priced)
    # Jobs (training, fine-tuning): runs over the horizon. ``runs``: that many runs, one after the
    # other from month 1 (default 1: a one-off run); ``runs_per_month``: a recurring job.
    runs: int | None = None
    runs_per_month: Decimal | None = None
    discount_rate: Decimal = Decimal("0")  # per year, for the NPV; 0: no discounting
    vat_recoverable: bool = False  # input VAT on purchases is recovered (general tax regime)
    # In the reporting currency. None: not given, and downtime is not priced (the risk figure
    # states the expected hours of downtime instead; no rate-card default is assumed).
    downtime_cost_per_hour: Decimal | None = None
    decision_basis: str = "cheapest"  # one of DECISION_BASES
    support_lines: tuple[SupportLine, ...] = ()


@dataclass(frozen=True, kw_only=True)
class SupportLine:
    """A support or licence contract the user enters (e.g. NVIDIA DGX support, AI Enterprise)."""

    label: str
    price: Price
    per: str  # "month" | "year" | "once"
    scale: str = "fixed"  # "fixed" | "per_gpu" | "per_server"
    kinds: tuple[str, ...] = ("onprem", "hybrid")  # the option kinds it applies to


@dataclass(frozen=True, kw_only=True)
class CostInputs:
    workloads: tuple[Workload, ...]
    prices: PriceBook
    rates: dict[str, Rate]
    options: CostOptions
    model_preset: str | None = None  # the self-hosted model's preset id (None: a typed architecture)
    model_name: str | None = None  # its display name, for texts (the cost engine reads no presets)
