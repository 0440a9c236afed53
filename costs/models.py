"""Dated rate cards: the assumptions and published rates the cost engine reads.

One row = one value of one rate (``key`` from costs.engine.rates.RATE_SCHEMA, optionally with an
``@scope``) valid from ``valid_from`` (inclusive) to ``valid_to`` (exclusive, null = open).
Admin-editable; a plan version stores the values it used (costs.selectors.rate_card_snapshot).
"""

from django.db import models
from django.db.models import Q
from django.utils.translation import gettext_lazy as _
from django.utils.translation import pgettext_lazy

from catalog.choices import Currency


class RateCard(models.Model):
    key = models.CharField(
        pgettext_lazy("rate card row", "rate"),
        max_length=100,
        help_text=_("e.g. pue, engineering_rate_per_hour.mlops, egress_per_gb@dedicated"),
    )
    value = models.DecimalField(_("value"), max_digits=18, decimal_places=6)
    unit = models.CharField(_("unit"), max_length=100)
    currency = models.CharField(
        _("currency"), max_length=3, choices=Currency.choices, blank=True, help_text=_("money rates only")
    )
    valid_from = models.DateField(_("valid from"))
    valid_to = models.DateField(_("valid to (exclusive)"), null=True, blank=True)
    source = models.TextField(
        _("source"), help_text=_("URL and date of a published figure, or 'assumption: why'")
    )
    is_assumption = models.BooleanField(
        _("assumption"), help_text=_("not a published fact: check it for your case")
    )
    notes = models.TextField(_("notes"), blank=True)
    updated_at = models.DateTimeField(_("updated"), auto_now=True)

    class Meta:
        ordering = ["key", "valid_from"]
        verbose_name = _("rate card value")
        verbose_name_plural = _("rate card")
        constraints = [
            models.UniqueConstraint(
                fields=["key", "valid_from"], name="costs_ratecard_unique_key_valid_from"
            ),
            models.CheckConstraint(
                condition=Q(valid_to__isnull=True) | Q(valid_to__gt=models.F("valid_from")),
                name="costs_ratecard_valid_range",
            ),
            models.CheckConstraint(
                condition=Q(currency="") | Q(currency__in=Currency.values),
                name="costs_ratecard_currency_known",
            ),
            models.CheckConstraint(condition=~Q(source=""), name="costs_ratecard_has_source"),
        ]

    def __str__(self) -> str:
        return f"{self.key} = {self.value} {self.currency or ''} from {self.valid_from}".replace("  ", " ")

    def clean(self):
        from django.core.exceptions import ValidationError

        from costs.engine.rates import validate_rate

        errors = (
            validate_rate(self.key, self.value, self.currency or None, path="value")
            if self.value is not None
            else []
        )
        if errors:
            raise ValidationError({"value": [e.message for e in errors]})


class ApiTokenPrice(models.Model):
    """Price of an external model API per 1M tokens (for the self-hosting vs API comparison).

    Only prices with a published source and date belong here (admin-editable); the shipped ones come
    from costs/data/api_token_prices.csv via load_rate_cards.
    """

    provider = models.CharField(_("provider"), max_length=100)
    model = models.CharField(_("model"), max_length=200)
    input_per_1m_tokens = models.DecimalField(_("input, per 1M tokens"), max_digits=18, decimal_places=6)
    output_per_1m_tokens = models.DecimalField(_("output, per 1M tokens"), max_digits=18, decimal_places=6)
    currency = models.CharField(_("currency"), max_length=3, choices=Currency.choices)
    includes_vat = models.BooleanField(_("includes VAT"), default=False)
    valid_from = models.DateField(_("valid from"))
    valid_to = models.DateField(_("valid to (exclusive)"), null=True, blank=True)
    open_weights_model = models.CharField(
        _("open-weights model served"), max_length=80, blank=True,
        help_text=_("the model preset id when the API serves that open-weights model (family), e.g. deepseek-v3; "
                    "empty for a proprietary model"))
    source = models.TextField(_("source"), help_text=_("URL of the price page and the date it was read"))
    updated_at = models.DateTimeField(_("updated"), auto_now=True)

    class Meta:
        ordering = ["provider", "model", "valid_from"]
        verbose_name = _("API token price")
        verbose_name_plural = _("API token prices")
        constraints = [
            models.UniqueConstraint(
                fields=["provider", "model", "valid_from"], name="costs_apitokenprice_unique"
            ),
            models.CheckConstraint(
                condition=Q(valid_to__isnull=True) | Q(valid_to__gt=models.F("valid_from")),
                name="costs_apitokenprice_valid_range",
            ),
            models.CheckConstraint(
                condition=Q(currency__in=Currency.values), name="costs_apitokenprice_currency_known"
            ),
            models.CheckConstraint(
                condition=Q(input_per_1m_tokens__gte=0) & Q(output_per_1m_tokens__gte=0),
                name="costs_apitokenprice_prices_not_negative",
            ),
            models.CheckConstraint(condition=~Q(source=""), name="costs_apitokenprice_has_source"),
        ]

    def __str__(self) -> str:
        return f"{self.provider} {self.model} from {self.valid_from}"
