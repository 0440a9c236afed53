from django import forms
from django.utils.translation import gettext_lazy as _

from catalog.choices import FormFactorKind
from catalog.models import Accelerator, SupplierQuote

SORT_CHOICES = [
    ("memory", _("Memory (largest first)")),
    ("bandwidth", _("Memory bandwidth (highest first)")),
    ("bf16", _("BF16 TFLOPS (highest first)")),
    ("price_per_gib", _("Price per GiB (lowest first)")),
    ("price_per_tflop", _("Price per BF16 TFLOP (lowest first)")),
]


class AcceleratorFilterForm(forms.Form):
    """GET filters of the catalog page. Invalid fields are reported and ignored, never a 500."""

    min_memory_gib = forms.DecimalField(
        label=_("Memory at least, GiB"), required=False, min_value=0, max_value=100000, max_digits=8, decimal_places=2
    )
    vendor = forms.ChoiceField(label=_("Vendor"), required=False)
    form_factor = forms.ChoiceField(
        label=_("Form factor"), required=False, choices=[("", _("any"))] + list(FormFactorKind.choices)
    )
    sort = forms.ChoiceField(label=_("Sort by"), required=False, choices=SORT_CHOICES)

    def __init__(self, *args, vendors: list[str], **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["vendor"].choices = [("", _("any"))] + [(v, v) for v in vendors]


class CloudOfferFilterForm(forms.Form):
    provider = forms.ChoiceField(label=_("Provider"), required=False)
    hide_flagged = forms.BooleanField(label=_("Hide rows flagged at the source"), required=False)

    def __init__(self, *args, providers: list[str], **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["provider"].choices = [("", _("any"))] + [(p, p) for p in providers]


class SupplierQuoteForm(forms.ModelForm):
    """One supplier quote. The same form validates the web form, the API and each uploaded row."""

    accelerator = forms.ModelChoiceField(
        queryset=None, to_field_name="slug", label=_("Accelerator"),
        help_text=_("as listed in the catalog; an uploaded table or the API gives its catalog id, "
                    "e.g. nvidia-h200-sxm-141gb"),
    )

    class Meta:
        model = SupplierQuote
        fields = [
            "supplier", "item_kind", "accelerator", "gpus_per_server", "description", "quantity", "unit_price",
            "currency", "includes_vat", "quote_date", "valid_until", "document_name", "notes",
        ]
        widgets = {"quote_date": forms.DateInput(attrs={"type": "date"}),
                   "valid_until": forms.DateInput(attrs={"type": "date"})}

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["accelerator"].queryset = Accelerator.objects.order_by("vendor", "model")
        self.fields["includes_vat"].required = False

    def clean(self):
        data = super().clean()
        if data.get("item_kind") == "server" and not data.get("gpus_per_server"):
            self.add_error("gpus_per_server", _("A whole server configuration needs its number of GPUs."))
        if data.get("quote_date") and data.get("valid_until") and data["valid_until"] < data["quote_date"]:
            self.add_error("valid_until", _("The quote cannot expire before its date."))
        if data.get("unit_price") is not None and data["unit_price"] <= 0:
            self.add_error("unit_price", _("Must be greater than 0."))
        return data


class SupplierQuoteUploadForm(forms.Form):
    file = forms.FileField(label=_("Quote table (.csv or .xlsx)"))
