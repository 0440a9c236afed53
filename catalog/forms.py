from django import forms
from django.utils.translation import gettext_lazy as _

from catalog.choices import FormFactorKind

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
