"""The hardware and price catalog.

Conventions (docs/CATALOG.md): units are in field names; money is Decimal with an ISO currency;
every price row carries its source, the date it was read (`retrieved_on`), the source's own
date when known (`source_date`), an includes-VAT flag and a validity range
[valid_from, valid_to) where valid_to is exclusive and NULL means "still valid".
A figure nobody published is NULL and shown as "unknown".

One module per subdomain (base, hardware, offers, prices, providers, quotes, revision, runs); every model
is re-exported here, where Django finds the app's models.
"""

from .base import MONEY, SPEC, Priced, Sourced
from .hardware import Accelerator, Cpu, NetworkOption, ServerPlatform, StorageTier
from .offers import CloudOffer, DedicatedServerOffer
from .prices import ElectricityTariff, ExchangeRate, HardwarePrice, VatRate
from .providers import CloudVmShape, Provider, ProviderRegion, PublishedPrice
from .quotes import SupplierQuote
from .revision import CatalogRevision
from .runs import CatalogImportRun, FeedImportRun

__all__ = [
    "MONEY",
    "SPEC",
    "Accelerator",
    "CatalogImportRun",
    "CatalogRevision",
    "CloudOffer",
    "CloudVmShape",
    "Cpu",
    "DedicatedServerOffer",
    "ElectricityTariff",
    "ExchangeRate",
    "FeedImportRun",
    "HardwarePrice",
    "NetworkOption",
    "Priced",
    "Provider",
    "ProviderRegion",
    "PublishedPrice",
    "ServerPlatform",
    "Sourced",
    "StorageTier",
    "SupplierQuote",
    "VatRate",
]
