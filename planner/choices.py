"""Choices for planner models (TextChoices, one place)."""

from django.db import models
from django.utils.translation import gettext_lazy as _


class Role(models.TextChoices):
    OWNER = "owner", _("Owner")
    EDITOR = "editor", _("Editor")
    VIEWER = "viewer", _("Viewer")


# Roles that may create and change workloads, plans, versions and share links.
EDIT_ROLES = (Role.OWNER, Role.EDITOR)


class WorkloadKind(models.TextChoices):
    # Values are the WorkloadSpec `kind` values (docs/WORKLOADSPEC.md).
    PRETRAINING = "pretraining", _("Pre-training from scratch")
    FINETUNING = "finetuning", _("Fine-tuning (full, LoRA, QLoRA)")
    INFERENCE = "inference", _("Inference / LLM serving")
    RAG = "rag", _("RAG (embeddings + vector search + LLM)")
    CLASSIC_TRAINING = "classic_training", _("Classic training (vision and other non-LLM nets)")
    EXTERNAL_API = "external_api", _("Agent / RAG on an external model API")


class VersionStatus(models.TextChoices):
    PENDING = "pending", _("Queued")
    RUNNING = "running", _("Computing")
    DONE = "done", _("Done")
    FAILED = "failed", _("Failed")


FINISHED_STATUSES = (VersionStatus.DONE, VersionStatus.FAILED)


class Currency(models.TextChoices):
    RUB = "RUB", "RUB"
    USD = "USD", "USD"
    EUR = "EUR", "EUR"
