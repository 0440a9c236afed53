"""The team forms: a new team and its procurement settings (planner.procurement)."""

from __future__ import annotations

from django import forms
from django.utils.translation import gettext_lazy as _

from costs.engine.errors import CostValidationError
from costs.engine.inputs import OPTION_KINDS
from costs.labels import KIND_LABELS as OPTION_KIND_LABELS

from .procurement import parse_procurement


class ProcurementForm(forms.Form):
    data_residency = forms.MultipleChoiceField(
        label=_("Jurisdictions the team may buy in"), required=False, widget=forms.CheckboxSelectMultiple,
        help_text=_("Providers and cloud regions in these countries only (e.g. Russia for personal data under "
                    "152-FZ). On-premises servers are always allowed. None ticked: any country."))
    providers = forms.MultipleChoiceField(
        label=_("Providers the team buys from"), required=False, widget=forms.CheckboxSelectMultiple,
        help_text=_("Clouds, server rental and model API providers the team has contracts with or may sign. "
                    "None ticked: any provider in the jurisdictions above."))
    options = forms.MultipleChoiceField(
        label=_("Ways to buy"), required=False, widget=forms.CheckboxSelectMultiple,
        help_text=_("Buying servers, renting cloud GPUs on demand, with a 1- or 3-year commitment or as spot, "
                    "renting dedicated servers, a hybrid of owned and cloud, or a model API. None ticked: all."))

    def __init__(self, *args, **kwargs):
        from catalog.selectors import jurisdiction_choices
        from catalog.snapshots import providers_snapshot

        super().__init__(*args, **kwargs)
        self.fields["data_residency"].choices = jurisdiction_choices()
        providers, _regions = providers_snapshot()
        self.fields["providers"].choices = [(p["name"], f'{p["name"]} ({p["country"]})') for p in providers]
        self.fields["options"].choices = [(k, OPTION_KIND_LABELS.get(k, k)) for k in OPTION_KINDS]

    def procurement(self) -> dict:
        return {k: list(self.cleaned_data.get(k) or []) for k in ("data_residency", "providers", "options")}

    def clean(self):
        cleaned = super().clean()
        if not self.errors:
            try:
                parse_procurement(self.procurement())
            except CostValidationError as exc:
                for e in exc.errors:
                    field = e.path.split(".", 1)[-1]
                    self.add_error(field if field in self.fields else None, e.message)
        return cleaned


class TeamCreateForm(ProcurementForm):
    name = forms.CharField(label=_("Team name"), max_length=120,
                           help_text=_("E.g. \"ML platform\"; you become its owner."))
    field_order = ["name", "data_residency", "providers", "options"]

    def clean_name(self):
        name = self.cleaned_data["name"].strip()
        if not name:
            raise forms.ValidationError(_("Enter a name."))
        return name
