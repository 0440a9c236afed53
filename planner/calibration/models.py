"""A team's measured runs and the calibrations fitted on them (issue 12, docs/CALIBRATION.md).

A MeasuredRun is one benchmark result as the team recorded it (a vLLM or SGLang result file,
a CSV row, a form or an API call), validated and resolved against the catalog. A Calibration
is the fit over the team's runs of one key (serving: accelerator + runtime + compute precision;
training: accelerator), switched on or off by the team; the active ones replace the presets
in that team's estimates. Both are audited (config/apps.py).
"""

from django.conf import settings
from django.db import models
from django.db.models import Q
from django.utils.translation import gettext_lazy as _


class RunKind(models.TextChoices):
    SERVING = "serving", _("Serving")
    TRAINING = "training", _("Training")


class RunSource(models.TextChoices):
    VLLM_JSON = "vllm_json", _("vLLM bench serve result (JSON)")
    SGLANG_JSONL = "sglang_jsonl", _("SGLang bench_serving output (JSONL)")
    SERVING_CSV = "serving_csv", _("Serving CSV")
    TRAINING_CSV = "training_csv", _("Training CSV")
    FORM = "form", _("Form")
    API = "api", _("API")


class MeasuredRun(models.Model):
    team = models.ForeignKey("planner.Team", on_delete=models.CASCADE, related_name="measured_runs")
    kind = models.CharField(_("kind"), max_length=16, choices=RunKind.choices)
    source = models.CharField(_("source"), max_length=16, choices=RunSource.choices)
    source_name = models.CharField(_("file name"), max_length=255, blank=True)
    source_line = models.PositiveIntegerField(_("line in the file"), null=True, blank=True)
    # What the team wrote, and what the catalog resolved it to.
    model_given = models.CharField(_("model as given"), max_length=200)
    model_preset = models.CharField(_("model preset"), max_length=80)
    accelerator_given = models.CharField(_("accelerator as given"), max_length=200)
    accelerator = models.CharField(_("accelerator"), max_length=120)
    count = models.PositiveIntegerField(_("accelerators"))
    tensor_parallel = models.PositiveIntegerField(_("tensor parallel"), default=1)
    pipeline_parallel = models.PositiveIntegerField(_("pipeline parallel"), default=1)
    precision = models.CharField(_("precision"), max_length=8)
    # Serving.
    runtime = models.CharField(_("engine"), max_length=32, blank=True)
    runtime_version = models.CharField(_("engine version"), max_length=40, blank=True)
    input_tokens = models.PositiveIntegerField(_("input tokens"), null=True, blank=True)
    output_tokens = models.PositiveIntegerField(_("output tokens"), null=True, blank=True)
    concurrency = models.PositiveIntegerField(_("concurrency"), null=True, blank=True)
    request_rate = models.FloatField(_("request rate (req/s)"), null=True, blank=True)
    num_prompts = models.PositiveIntegerField(_("requests"), null=True, blank=True)
    ttft_mean_ms = models.FloatField(_("TTFT mean (ms)"), null=True, blank=True)
    ttft_p95_ms = models.FloatField(_("TTFT p95 (ms)"), null=True, blank=True)
    tpot_mean_ms = models.FloatField(_("TPOT mean (ms)"), null=True, blank=True)
    tpot_p95_ms = models.FloatField(_("TPOT p95 (ms)"), null=True, blank=True)
    output_tokens_per_s = models.FloatField(_("output tokens/s"), null=True, blank=True)
    # Training.
    data_parallel = models.PositiveIntegerField(_("data parallel"), null=True, blank=True)
    activation_checkpointing = models.CharField(_("activation checkpointing"), max_length=16, blank=True)
    sequence_length = models.PositiveIntegerField(_("sequence length"), null=True, blank=True)
    global_batch_size = models.PositiveIntegerField(_("global batch (sequences)"), null=True, blank=True)
    tokens_per_s = models.FloatField(_("tokens/s (whole job)"), null=True, blank=True)
    step_time_s = models.FloatField(_("step time (s)"), null=True, blank=True)
    total_tokens = models.FloatField(_("tokens of the whole run"), null=True, blank=True)
    gpu_hours = models.FloatField(_("GPU-hours of the whole run"), null=True, blank=True)
    wall_clock_hours = models.FloatField(_("wall-clock hours of the whole run"), null=True, blank=True)
    measured_on = models.DateField(_("measured on"), null=True, blank=True)
    # The source record as read (large per-request arrays left out).
    raw = models.JSONField(_("source record"), default=dict, blank=True)
    # What reading the file assumed or found (medians taken as means, failed or empty requests):
    # engine texts in their JSON form (catalog.domain.messages), rendered in the reader's language.
    notes = models.JSONField(_("notes"), default=list, blank=True)
    # sha256 of the validated figures: the same run recorded twice would count twice in a fit.
    fingerprint = models.CharField(max_length=64, editable=False)
    # The run's own fit (calibration.services._stored_fit): tens of engine evaluations, done when the
    # run is recorded and kept with the key of the engine and accelerator data it was made with.
    fit_memo = models.JSONField(default=dict, blank=True, editable=False)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-created_at", "-id"]
        verbose_name = _("measured run")
        verbose_name_plural = _("measured runs")
        constraints = [
            models.CheckConstraint(condition=Q(kind__in=RunKind.values), name="planner_measuredrun_kind_valid"),
            models.CheckConstraint(condition=Q(source__in=RunSource.values), name="planner_measuredrun_source_valid"),
            models.CheckConstraint(condition=Q(count__gte=1), name="planner_measuredrun_count_positive"),
            models.UniqueConstraint(fields=["team", "fingerprint"], name="planner_measuredrun_team_fingerprint_uniq"),
        ]
        indexes = [models.Index(fields=["team", "kind", "accelerator"], name="planner_run_team_kind_acc")]

    def __str__(self):
        return f"{self.model_preset} on {self.count} x {self.accelerator} ({self.get_source_display()})"

    @property
    def note_texts(self) -> list[str]:
        """The reading notes in the active language."""
        from ..i18n import render

        return [render(n) for n in self.notes or []]

    @property
    def calibration_key(self) -> tuple[str, str, str]:
        from .fit import compute_precision

        if self.kind == RunKind.SERVING:
            return (self.accelerator, self.runtime, compute_precision(self.precision))
        return (self.accelerator, "", "")


class Calibration(models.Model):
    """The fit over a team's runs of one key; `active` ones replace the presets in its estimates."""

    team = models.ForeignKey("planner.Team", on_delete=models.CASCADE, related_name="calibrations")
    kind = models.CharField(_("kind"), max_length=16, choices=RunKind.choices)
    accelerator = models.CharField(_("accelerator"), max_length=120)
    runtime = models.CharField(_("engine"), max_length=32, blank=True)
    precision = models.CharField(_("compute precision"), max_length=8, blank=True)
    active = models.BooleanField(_("active"), default=True)
    # Named as the engine's constants (planner.engine.calibration); what estimates use.
    values = models.JSONField(_("values"))
    # How they were fitted: scales, per-run implied values, range, run ids.
    fit = models.JSONField(_("fit"), default=dict, blank=True)
    label = models.CharField(_("label"), max_length=300)
    run_count = models.PositiveIntegerField(_("runs"))
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["kind", "accelerator", "runtime", "precision"]
        verbose_name = _("calibration")
        verbose_name_plural = _("calibrations")
        constraints = [
            models.UniqueConstraint(fields=["team", "kind", "accelerator", "runtime", "precision"],
                                    name="planner_calibration_team_key_uniq"),
            models.CheckConstraint(condition=Q(kind__in=RunKind.values), name="planner_calibration_kind_valid"),
        ]

    def __str__(self):
        return self.label
