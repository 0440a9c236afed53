"""Forms of the calibration pages: upload a benchmark file, or type one run in.

They check shapes only; the run's fields are validated (and resolved against the catalog) by
planner.calibration.formats, one validator for the file, the form and the API.
"""

from django import forms
from django.utils.translation import gettext_lazy as _

from planner.engine.precision import PRECISIONS

from .fit import RUNTIME_NAMES
from .formats import MAX_FILE_BYTES

FORMAT_CHOICES = [
    ("auto", _("Detect from the content")),
    ("vllm_json", _("vLLM bench serve result (JSON)")),
    ("sglang_jsonl", _("SGLang bench_serving output (JSONL)")),
    ("serving_csv", _("Serving CSV")),
    ("training_csv", _("Training CSV")),
]
PRECISION_CHOICES = [("", _("as in the file"))] + [(p, p) for p in PRECISIONS]
ENGINE_CHOICES = [("", _("as in the file"))] + list(RUNTIME_NAMES.items())


class TeamField(forms.ModelChoiceField):
    def label_from_instance(self, obj):
        return obj.name


class RunUploadForm(forms.Form):
    team = TeamField(queryset=None, label=_("Team"), empty_label=None)
    file = forms.FileField(label=_("Result file"),
                           help_text=_("vLLM --save-result JSON, SGLang --output-file JSONL, or a CSV (docs/CALIBRATION.md)."))
    format = forms.ChoiceField(label=_("Format"), choices=FORMAT_CHOICES, initial="auto")
    # What benchmark files do not say; a value here wins over the file's --metadata.
    model = forms.CharField(label=_("Model"), required=False, max_length=200,
                            help_text=_("Preset id or Hugging Face name; vLLM files carry model_id."))
    accelerator = forms.CharField(label=_("Accelerator"), required=False, max_length=200,
                                  help_text=_("Catalog id or name, e.g. H100 SXM."))
    count = forms.IntegerField(label=_("Number of accelerators"), required=False, min_value=1, max_value=65536)
    tensor_parallel = forms.IntegerField(label=_("Tensor parallel"), required=False, min_value=1, max_value=64)
    precision = forms.ChoiceField(label=_("Precision"), required=False, choices=PRECISION_CHOICES)
    engine = forms.ChoiceField(label=_("Engine"), required=False, choices=ENGINE_CHOICES)
    engine_version = forms.CharField(label=_("Engine version"), required=False, max_length=40)
    measured_on = forms.DateField(label=_("Measured on"), required=False, help_text=_("YYYY-MM-DD"))

    def __init__(self, *args, teams, **kwargs):
        kwargs.setdefault("label_suffix", "")
        super().__init__(*args, **kwargs)
        self.fields["team"].queryset = teams

    def clean_file(self):
        f = self.cleaned_data["file"]
        if f.size > MAX_FILE_BYTES:
            raise forms.ValidationError(
                _("The file is %(size).1f MB; at most %(limit)d MB.") % {"size": f.size / 2**20,
                                                                         "limit": MAX_FILE_BYTES // 2**20})
        return f

    def context(self) -> dict:
        d = self.cleaned_data
        out = {k: d.get(k) for k in ("model", "accelerator", "count", "tensor_parallel", "precision", "engine",
                                     "engine_version")}
        if d.get("measured_on"):
            out["measured_on"] = d["measured_on"].isoformat()
        return {k: v for k, v in out.items() if v not in (None, "")}


SERVING_FIELDS = {
    "model": _("Model"), "accelerator": _("Accelerator"), "count": _("Accelerators"),
    "tensor_parallel": _("Tensor parallel"), "engine": _("Engine"), "engine_version": _("Engine version"),
    "precision": _("Precision"), "input_tokens": _("Input tokens per request"),
    "output_tokens": _("Output tokens per request"), "concurrency": _("Concurrency (closed loop)"),
    "request_rate": _("Request rate, req/s (open loop)"), "ttft_mean_ms": _("TTFT mean, ms"),
    "ttft_p95_ms": _("TTFT p95, ms"), "tpot_mean_ms": _("TPOT mean, ms"), "tpot_p95_ms": _("TPOT p95, ms"),
    "output_tokens_per_s": _("Output tokens/s"), "measured_on": _("Measured on"),
}
TRAINING_FIELDS = {
    "model": _("Model"), "accelerator": _("Accelerator"), "count": _("Accelerators"),
    "tensor_parallel": _("Tensor parallel"), "pipeline_parallel": _("Pipeline parallel"),
    "data_parallel": _("Data parallel"), "precision": _("Precision"), "sequence_length": _("Sequence length"),
    "global_batch_size": _("Global batch, sequences"), "tokens_per_s": _("Tokens/s, whole job"),
    "step_time_s": _("Step time, s"), "activation_checkpointing": _("Activation checkpointing"),
    "total_tokens": _("Tokens of the whole run"), "gpu_hours": _("GPU-hours of the whole run"),
    "wall_clock_hours": _("Wall-clock hours of the whole run"), "measured_on": _("Measured on"),
}


class RunForm(forms.Form):
    """One run typed in; every field is text here and validated by calibration.formats."""

    team = TeamField(queryset=None, label=_("Team"), empty_label=None)

    def __init__(self, *args, teams, kind: str, **kwargs):
        kwargs.setdefault("label_suffix", "")
        super().__init__(*args, **kwargs)
        self.kind = kind
        self.fields["team"].queryset = teams
        for name, label in (SERVING_FIELDS if kind == "serving" else TRAINING_FIELDS).items():
            self.fields[name] = forms.CharField(label=label, required=False, max_length=200)

    def data_fields(self) -> dict:
        return {k: v for k, v in self.cleaned_data.items() if k != "team" and v not in (None, "")}

    def add_run_errors(self, errors) -> None:
        for e in errors:
            self.add_error(e.field if e.field in self.fields else None, e.message)
