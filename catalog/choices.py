"""Choices of the catalog app (TextChoices, stored values are stable codes)."""

from django.db import models
from django.utils.translation import gettext_lazy as _


class Currency(models.TextChoices):
    RUB = "RUB", _("Russian rouble")
    USD = "USD", _("US dollar")
    EUR = "EUR", _("Euro")


class FormFactorKind(models.TextChoices):
    SXM = "SXM", "SXM"
    PCIE = "PCIE", "PCIe"
    OAM = "OAM", "OAM"
    SUPERCHIP = "SUPERCHIP", _("Superchip module")
    TPU = "TPU", _("TPU chip (cloud only)")


class Verification(models.TextChoices):
    YES = "yes", _("vendor text")
    SECONDARY = "secondary", _("secondary source")


class StorageMedia(models.TextChoices):
    NVME = "nvme", "NVMe"
    SSD = "ssd", "SATA/SAS SSD"
    HDD = "hdd", "HDD"
    OBJECT = "object", _("S3-compatible object storage")


class NetworkTechnology(models.TextChoices):
    ETHERNET = "ethernet", "Ethernet"
    ROCE = "roce", "Ethernet RoCE v2"
    INFINIBAND = "infiniband", "InfiniBand"


class CloudPriceBasis(models.TextChoices):
    INSTANCE = "instance", _("whole instance")
    HOST_PLUS_ACCELERATOR = "host+accelerator", _("host VM + accelerator")
    ACCELERATOR_ONLY = "accelerator_only", _("accelerator only (add a host VM)")


class HardwareItemKind(models.TextChoices):
    ACCELERATOR = "accelerator", _("accelerator")
    SERVER_PLATFORM = "server_platform", _("server platform")
    CPU = "cpu", _("CPU")


class ImportStatus(models.TextChoices):
    PENDING = "pending", _("pending")
    RUNNING = "running", _("running")
    DONE = "done", _("done")
    FAILED = "failed", _("failed")


class PriceBilling(models.TextChoices):
    """How a published cloud price is billed (the Russian price files' `billing` column)."""

    ON_DEMAND = "on_demand", _("on demand")
    PREEMPTIBLE = "preemptible", _("preemptible (spot)")
    CAPACITY_RESERVATION = "capacity_reservation", _("capacity reservation")


class PriceComponent(models.TextChoices):
    """What one published price row prices: a VM component (billed per unit per hour) or a whole item."""

    GPU = "gpu", _("per GPU")
    VGPU = "vgpu", _("per fractional GPU (vGPU)")
    VCPU = "vcpu", _("per vCPU")
    RAM_GIB = "ram_gib", _("per GB of RAM")
    GPU_CLUSTER_PER_VM = "gpu_cluster_per_vm", _("GPU cluster fee per VM")
    INSTANCE = "instance", _("whole configuration")
    SERVER = "server", _("server or card purchase")
    COLOCATION = "colocation", _("colocation")
    ELECTRICITY = "electricity", _("electricity")


class QuoteItemKind(models.TextChoices):
    SERVER = "server", _("whole server configuration")
    ACCELERATOR = "accelerator", _("accelerator (per GPU)")


class FeedKind(models.TextChoices):
    CBR_DAILY = "cbr_daily", _("Bank of Russia daily rates (XML_daily)")
    SKYPILOT = "skypilot", _("SkyPilot catalog CSV")
