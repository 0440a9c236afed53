"""The workload form and the cost assumptions form.

Fields are declared once in FIELDS with the WorkloadSpec path they fill; the form builds the
spec JSON from them and lets planner.engine.spec.parse_workload_spec judge it, so the browser,
the API and the CLI share one validator. Its errors come back by field path and are shown on
the form field of that path (or at the top of the form when no field matches).
"""

from __future__ import annotations

import json

from django import forms
from django.utils.translation import gettext_lazy as _

from config.textsafety import SafeTextFormMixin, UnsafeText, loads_checked

from .choices import Currency, WorkloadKind
from .form_fields import (  # noqa: F401 (FIELDS, FIELD_BY_PATH: read from planner.forms by the pages and tests)
    COST_FIELDS,
    FIELD_BY_PATH,
    FIELDS,
    MODEL_SOURCES,
    OPTIONAL_COSTS,
    OPTIONAL_SHARES,
    STEPS,
    NumberField,
    WholeNumberField,
    preset_choices,
)
from .i18n import render as render_text


class CostOptionsForm(SafeTextFormMixin, forms.Form):
    """Cost assumptions; validated in full by costs.engine.options.parse_cost_options."""

    def __init__(self, *args, **kwargs):
        kwargs.setdefault("label_suffix", "")  # labels head their inputs: no trailing colon
        super().__init__(*args, **kwargs)
        from catalog.selectors import jurisdiction_choices

        from .form_layout import default_currency
        from .humanize import country_choices

        # Country names in the page's language; the stored values stay ISO codes ("RU").
        self.fields["data_residency"].choices = country_choices(code for code, _name in jurisdiction_choices())
        if not self.is_bound and not self.initial.get("currency"):
            self.initial["currency"] = default_currency()  # RUB on a Russian page, USD in English

    horizon_months = WholeNumberField(label=_("Horizon"), initial=36, min_value=1, max_value=120,
                                        help_text=_("Period the options are compared over. Unit: months. Default: 36."))
    currency = forms.ChoiceField(label=_("Currency"), choices=Currency.choices, initial=Currency.USD,
                                 help_text=_("Totals are shown in this currency. Default: roubles on the Russian page, dollars on the English one."))
    include_vat = forms.BooleanField(label=_("Include VAT"), required=False, initial=False,
                                     help_text=_("Show totals with VAT (the rate valid on the price date). Default: no."))
    # No initial value: an empty field lets the cost engine derive utilisation from the workload.
    utilisation = NumberField(
        label=_("Utilisation"), required=False, min_value=0, max_value=1,
        help_text=_("Share of the month's hours the GPUs run the workload (0–1). Hourly cloud bills only these "
                    "hours; owned, committed and monthly-rented GPUs are paid for every hour and idle the rest. "
                    "1 = around the clock; empty = derived from the workload (serving hours a day, training "
                    "runs a month)."),
    )
    efficiency = NumberField(
        label=_("Efficiency"), required=False, min_value=0, max_value=1,
        help_text=_("Of the hours the GPUs run, the share doing useful work (0–1); the rest waits for data, "
                    "people or the next experiment and is shown as idle GPU time. Empty = the rate card's default."),
    )
    runs = forms.IntegerField(
        label=_("Training runs"), required=False, min_value=1,
        help_text=_("Training and fine-tuning: how many runs over the horizon, one after the other. Empty = one run."),
    )
    runs_per_month = forms.FloatField(
        label=_("Runs per month"), required=False, min_value=0,
        help_text=_("A recurring job (e.g. a monthly fine-tune): runs each month. Leave empty for a one-off job."),
    )
    discount_rate = forms.FloatField(
        label=_("Discount rate"), required=False, min_value=0, max_value=0.99,
        help_text=_("Per year (0.12 = 12 %): options are compared at present value. Empty = no discounting."),
    )
    vat_recoverable = forms.BooleanField(
        label=_("VAT is recovered"), required=False, initial=False,
        help_text=_("The company recovers input VAT on purchases (general tax regime): options are compared net."),
    )
    downtime_cost_per_hour = forms.FloatField(
        label=_("Cost of an hour of downtime"), required=False, min_value=0,
        help_text=_("What one hour of outage costs the business, in the chosen currency. It prices the expected "
                    "cost of incidents, shown beside each total and never inside it. Empty = not priced: each "
                    "option shows its expected hours of downtime a year instead."),
    )
    decision_basis = forms.ChoiceField(
        label=_("Decision rule"), required=False, initial="cheapest",
        choices=[("cheapest", _("Cheapest budget")),
                 ("risk_adjusted", _("Risk-adjusted: budget plus the expected cost of downtime")),
                 ("fewest_gpus", _("Fewest GPUs, then the cheapest"))],
        help_text=_("How the plan picks its option among those that meet the targets. Risk-adjusted needs the "
                    "cost of an hour of downtime. Default: the cheapest budget."),
    )
    data_residency = forms.MultipleChoiceField(
        label=_("Data residency"), required=False, widget=forms.CheckboxSelectMultiple,
        help_text=_("Keep only providers and regions in these jurisdictions (e.g. Russia, for personal data under "
                    "152-FZ); options elsewhere are left out with that reason. On-premises options stay. "
                    "None ticked = no restriction."),
    )
    overrides = forms.CharField(
        label=_("Rate overrides (JSON)"), required=False, widget=forms.Textarea(attrs={"rows": 3}),
        help_text=_("Optional: rate card values to replace, as a JSON object, e.g. {\"pue\": 1.3}. PUE: the data centre's total power divided by the servers' power (1.3 = 30 % more for cooling and losses). Default: none."),
    )
    more = forms.CharField(
        label=_("More cost options (JSON)"), required=False, widget=forms.Textarea(attrs={"rows": 3}),
        help_text=_("Optional: other fields of the costs section, e.g. a supplier's server quote: "
                    "{\"server_prices\": [{\"accelerator\": \"nvidia-h100-sxm5-80gb\", \"gpus_per_server\": 8, "
                    "\"amount\": 300000, \"currency\": \"USD\", \"source\": \"quote, date\"}]}; "
                    "support_lines, egress_gb_per_month, api_prices. See docs/COSTS.md."),
    )

    def clean_overrides(self):
        raw = (self.cleaned_data.get("overrides") or "").strip()
        if not raw:
            return {}
        try:
            value = loads_checked(raw)
        except UnsafeText as exc:  # NUL, lone surrogates or nesting past the cap
            raise forms.ValidationError("%(where)s%(err)s", params={
                "where": f"{exc.path}: " if exc.path else "", "err": exc.message}) from None
        except ValueError as exc:
            raise forms.ValidationError(_("Not valid JSON: %(err)s"), params={"err": exc}) from exc
        if not isinstance(value, dict):
            raise forms.ValidationError(_("Must be a JSON object."))
        return value

    def clean_more(self):
        raw = (self.cleaned_data.get("more") or "").strip()
        if not raw:
            return {}
        try:
            value = json.loads(raw)
        except ValueError as exc:
            raise forms.ValidationError(_("Not valid JSON: %(err)s"), params={"err": exc}) from exc
        if not isinstance(value, dict):
            raise forms.ValidationError(_("Must be a JSON object."))
        return value

    def options(self) -> dict:
        data = dict(self.cleaned_data.get("more") or {})
        data.update({k: self.cleaned_data[k] for k in ("horizon_months", "currency", "include_vat")})
        data.update({k: self.cleaned_data[k] for k in OPTIONAL_SHARES if self.cleaned_data.get(k) is not None})
        data.update({k: self.cleaned_data[k] for k in OPTIONAL_COSTS if self.cleaned_data.get(k) is not None})
        if self.cleaned_data.get("vat_recoverable"):
            data["vat_recoverable"] = True
        if self.cleaned_data.get("decision_basis") not in (None, "", "cheapest"):
            data["decision_basis"] = self.cleaned_data["decision_basis"]
        if self.cleaned_data.get("overrides"):
            data["overrides"] = self.cleaned_data["overrides"]
        if self.cleaned_data.get("data_residency"):
            data["data_residency"] = list(self.cleaned_data["data_residency"])
        return data

    @classmethod
    def initial_from(cls, options: dict) -> dict:
        own = ("horizon_months", "currency", "include_vat", *OPTIONAL_SHARES, *OPTIONAL_COSTS, "vat_recoverable",
               "decision_basis", "data_residency")
        initial = {k: options[k] for k in own if k in options}
        if options.get("overrides"):
            initial["overrides"] = json.dumps(options["overrides"], indent=1)
        if options.get("data_residency"):
            initial["data_residency"] = list(options["data_residency"])
        more = {k: v for k, v in options.items() if k not in own and k != "overrides"}
        if more:
            initial["more"] = json.dumps(more, indent=1)
        return initial

    def clean(self):
        cleaned = super().clean()
        if any(name in self.errors for name in COST_FIELDS):
            return cleaned
        from costs.adapters import parse_options
        from costs.engine import errors as cost_errors

        try:
            parse_options(self.options())
        except cost_errors.CostValidationError as exc:
            more = set(self.cleaned_data.get("more") or {})
            for err in exc.errors:
                name = err.path.split(".")[-1] if err.path.split(".")[-1] in self.fields else None
                if err.path.startswith(("overrides", "costs.overrides")):
                    name = "overrides"
                elif err.path.removeprefix("costs.").split(".")[0].split("[")[0] in more:
                    name = "more"
                message = render_text(err.message)
                self.add_error(name, f"{err.path}: {message}" if name is None else message)
        return cleaned


class WorkloadForm(CostOptionsForm):
    name = forms.CharField(label=_("Name"), max_length=200,
                           help_text=_("A name your team will recognise, e.g. \"Support bot, 70B\"."))
    team = forms.ModelChoiceField(label=_("Team"), queryset=None, empty_label=None,
                                  help_text=_("The team that owns the workload and its plans."))
    kind = forms.ChoiceField(label=_("Kind"), choices=WorkloadKind.choices, initial=WorkloadKind.INFERENCE,
                             help_text=_("What the hardware is for. The fields below follow the kind."))
    # Not required: the external-API kind has no model step, so the choice is not even sent.
    model_source = forms.ChoiceField(label=_("Model given as"), choices=MODEL_SOURCES, initial="preset",
                                     widget=forms.RadioSelect, required=False,
                                     help_text=_("A known preset, its architecture numbers, or a Hugging Face config.json."))
    preset = forms.ChoiceField(label=_("Model preset"), required=False,
                               help_text=_("Well-known open models with architecture from their own config files."))
    hf_config = forms.CharField(label=_("config.json (paste)"), required=False,
                                widget=forms.Textarea(attrs={"rows": 6, "spellcheck": "false"}),
                                help_text=_("Paste the model's config.json from Hugging Face; unknown keys are ignored."))
    hf_config_file = forms.FileField(label=_("config.json (upload)"), required=False,
                                     help_text=_("Or upload the file (at most 1 MB)."))

    field_order = ["name", "team", "kind", "model_source", "preset", "hf_config", "hf_config_file"]

    def __init__(self, *args, teams=None, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["team"].queryset = teams
        try:
            self.fields["preset"].choices = [("", "—")] + preset_choices()
        except ImportError:  # engine presets not installed: the other sources still work
            self.fields["preset"].choices = [("", "—")]
        for spec_field in FIELDS:
            self.fields[spec_field.name] = spec_field.make()
        self.fields["hardware__accelerator"].widget.attrs["list"] = "accelerator-names"  # catalog names
        self.spec: dict | None = None

    # --- presentation helpers used by the template --------------------------------------

    def current_kind(self) -> str:
        value = self.data.get("kind") if self.is_bound else None
        return value if value in WorkloadKind.values else str(self.initial.get("kind") or self.fields["kind"].initial)

    def steps(self):
        """[(heading, [bound fields])] for the kind being edited; fields of other kinds are left out."""
        kind = self.current_kind()
        fixed = {"basics": ["name", "team", "kind"],
                 "model": ["model_source", "preset", "hf_config", "hf_config_file"] if kind != "external_api" else [],
                 "costs": list(COST_FIELDS)}
        out = []
        for step, heading in STEPS:
            names = list(fixed.get(step, []))
            names += [f.name for f in FIELDS if f.step == step and kind in f.kinds]
            out.append((step, heading, [self[n] for n in names]))
        return out

    def step_groups(self, show_errors: bool = False):
        """Each step's everyday fields and its folded "advanced" ones (planner/form_layout.py)."""
        from .form_layout import step_groups

        return step_groups(self, show_errors=show_errors,
                           architecture_names={f.name for f in FIELDS if f.sources == ("architecture",)})

    def error_summary(self):
        from .form_layout import error_summary

        return error_summary(self)

    def accelerator_names(self) -> list[str]:
        """The names the accelerator field suggests (a datalist), from today's catalog."""
        from django.utils import timezone

        from catalog.selectors import accelerator_specs

        from .form_layout import accelerator_names

        return accelerator_names(accelerator_specs(as_of=timezone.localdate()))

    # --- validation --------------------------------------------------------------------

    def clean_hf_config_file(self):
        upload = self.cleaned_data.get("hf_config_file")
        if upload and upload.size > 1024 * 1024:
            raise forms.ValidationError(_("The file is larger than 1 MB."))
        return upload

    def _hf_config(self) -> dict | None:
        upload = self.cleaned_data.get("hf_config_file")
        raw = upload.read().decode("utf-8", errors="replace") if upload else self.cleaned_data.get("hf_config", "")
        if not raw.strip():
            self.add_error("hf_config", _("Paste or upload a config.json."))
            return None
        where = "hf_config_file" if upload else "hf_config"
        try:
            value = loads_checked(raw)
        except UnsafeText as exc:  # NUL, lone surrogates or nesting past the cap
            self.add_error(where, f"{exc.path}: {exc.message}" if exc.path else exc.message)
            return None
        except ValueError as exc:
            self.add_error(where, _("Not valid JSON: %(err)s") % {"err": exc})
            return None
        if not isinstance(value, dict):
            self.add_error("hf_config", _("config.json must be a JSON object."))
            return None
        return value

    def build_spec(self) -> dict:
        kind = self.cleaned_data["kind"]
        source = self.cleaned_data.get("model_source") or "preset"
        spec: dict = {"kind": kind}
        if kind != "external_api":
            if source == "preset":
                if not self.cleaned_data.get("preset"):
                    self.add_error("preset", _("Choose a preset."))
                spec["model"] = {"preset": self.cleaned_data.get("preset")}
            elif source == "hf_config":
                spec["model"] = {"hf_config": self._hf_config()}
            else:
                spec["model"] = {"architecture": {}}
        for f in FIELDS:
            if kind not in f.kinds or (f.sources and source not in f.sources):
                continue
            value = self.cleaned_data.get(f.name)
            if value is None or value == "" or value == []:
                continue
            if f.path in ("training.zero_stage", "training.context_parallel"):
                value = int(value)
            node = spec
            *parents, leaf = f.path.split(".")
            for p in parents:
                node = node.setdefault(p, {})
            node[leaf] = value
        return spec

    def clean(self):
        cleaned = super().clean()
        if any(k in self.errors for k in ("kind", "model_source")):
            return cleaned
        # Unrelated errors (say, an empty name) do not stop the spec check, so every field
        # shows its own problem as soon as it changes; only a spec that cannot be built does.
        before = set(self.errors)
        spec = self.build_spec()
        if set(self.errors) - before:
            return cleaned
        from planner.engine.errors import SpecValidationError
        from planner.engine.spec import parse_workload_spec
        from planner.model_apis import check_model_api

        try:
            parsed = parse_workload_spec(spec)
            self._check_accelerator_pin(spec)
            check_model_api(spec)
            self._check_serving_pin_fits(parsed)
        except SpecValidationError as exc:
            for err in exc.errors:
                self.add_error(self.field_for_path(err.field), self.message_for(err))
            return cleaned
        self.spec = spec
        self._check_service_utilisation(spec)
        return cleaned

    def _check_service_utilisation(self, spec: dict) -> None:
        """The rule that joins the spec and the costs (a served workload at utilisation 0),
        shown on the utilisation field instead of failing the computed version."""
        if any(name in self.errors for name in COST_FIELDS) or "more" in self.errors:
            return  # options() needs every cost field cleaned
        from costs.adapters import parse_options
        from costs.engine import errors as cost_errors
        from costs.engine import options as cost_options
        from planner.model_apis import serving_hours_per_day

        try:
            parsed = parse_options(self.options())
            cost_options.check_options_for_service(parsed, serving_hours_per_day=serving_hours_per_day(spec))
        except cost_errors.CostValidationError as exc:
            for err in exc.errors:
                if err.path == "costs.utilisation" and "utilisation" in self.fields:
                    self.add_error("utilisation", render_text(err.message))

    @staticmethod
    def _check_accelerator_pin(spec: dict) -> None:
        """A pin the catalog cannot resolve (unknown, or ambiguous like "H100") is refused here,
        on its field, rather than failing the computed version later."""
        pin = (spec.get("hardware") or {}).get("accelerator")
        if not pin:
            return
        from django.utils import timezone

        from catalog.selectors import accelerator_specs
        from planner.engine.errors import FieldError, SpecValidationError
        from planner.engine.resolve import resolve_accelerator

        from .form_layout import accelerator_error

        specs = accelerator_specs(as_of=timezone.localdate())
        try:
            resolve_accelerator(pin, specs)
        except SpecValidationError:
            # said with names (what was typed, what the catalog has), never a catalog id
            raise SpecValidationError([FieldError(field="hardware.accelerator",
                                                  message=accelerator_error(pin, specs))]) from None

    @staticmethod
    def _check_serving_pin_fits(parsed) -> None:
        """A pinned accelerator that cannot hold the model within the pinned count is refused on
        hardware.accelerator, with what would fit (the engine's own check)."""
        if not (parsed.hardware.accelerator and parsed.hardware.count):
            return
        from django.utils import timezone

        from catalog.selectors import accelerator_specs
        from planner.engine.sizing_serving import check_pinned_fit

        check_pinned_fit(parsed, accelerator_specs(as_of=timezone.localdate()))

    def field_for_path(self, path: str) -> str | None:
        """The form field showing an error at a spec path: the field itself, or its section's."""
        if path in FIELD_BY_PATH and FIELD_BY_PATH[path].name in self.fields:
            return FIELD_BY_PATH[path].name
        if path.startswith("model.hf_config"):
            return "hf_config"
        if path.startswith("model.preset"):
            return "preset"
        if path == "kind":
            return "kind"
        return None

    def message_for(self, err) -> str:
        # A message shown away from its field keeps the path so the user can find it.
        exact = err.field in FIELD_BY_PATH or err.field == "kind"
        message = render_text(err.message)  # the engine's text in the page's language
        return message if exact else f"{err.field}: {message}"
