"""The JSON Schema of a supplier quote's body (POST /api/v1/supplier-quotes/): checked by the view
and published in the OpenAPI document, which reads it from here (not from the view module)."""

from __future__ import annotations

from django.utils.translation import gettext as _

from catalog.choices import Currency, QuoteItemKind
from catalog.models import Accelerator
from planner.api.body_schema import catalog_enum
from planner.api.input_schema_parts import _visible

# A price: up to 12 whole digits and 6 decimals (catalog.models.MONEY), above zero.
# The end is "(?![\s\S])", not "$": Python's "$" also matches before a final newline, ECMA's does not.
PRICE_PATTERN = r"^(?=[0-9.]*[1-9])[0-9]{1,12}(\.[0-9]{1,6})?(?![\s\S])"
QUOTE_REQUIRED = ["team", "supplier", "item_kind", "accelerator", "unit_price", "currency", "includes_vat",
                  "quote_date", "valid_until"]


def quote_body_schema() -> dict:
    """The body of POST /supplier-quotes/: every single-field rule of SupplierQuoteForm, with the
    catalog's accelerator ids of the day. Checked by the view (planner.api.body_schema) and
    published in the OpenAPI document (planner.api.schema)."""
    text = {"type": "string"}
    return {
        "type": "object",
        "additionalProperties": False,
        "required": QUOTE_REQUIRED,
        "properties": {
            "team": {"type": "integer", "minimum": 1, "maximum": 2**63 - 1},
            "supplier": _visible(200),
            "item_kind": {"type": "string", "enum": list(QuoteItemKind.values)},
            "accelerator": {"type": "string", "minLength": 1, "description": "A catalog id (GET /api/v1/accelerators/).",
                            **catalog_enum(lambda: Accelerator.objects.order_by("slug").values_list("slug", flat=True))},
            "gpus_per_server": {"type": "integer", "minimum": 1, "maximum": 32767, "nullable": True,
                                "description": "Required for a whole server configuration."},
            "description": text,
            "quantity": {"type": "integer", "minimum": 1, "maximum": 2**31 - 1, "description": "Default 1."},
            "unit_price": {"type": "string", "pattern": PRICE_PATTERN,
                           "x-pattern-message": _("A price above 0 as a decimal string, e.g. \"42000000.50\"."),
                           "description": "Per unit, as a decimal string (no float rounding)."},
            "currency": {"type": "string", "enum": list(Currency.values)},
            "includes_vat": {"type": "boolean"},
            "quote_date": {"type": "string", "format": "date"},
            "valid_until": {"type": "string", "format": "date", "description": "On or after quote_date."},
            "document_name": {"type": "string", "maxLength": 255},
            "notes": text,
        },
    }
