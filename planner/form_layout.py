"""How the workload form is laid out and spoken to a new user (issue 21, part 9).

- The currency follows the page's language (RUB in Russian, USD in English) unless the
  deployment sets PLANNER_DEFAULT_CURRENCY.
- Each step shows its everyday fields; expert ones (the architecture behind a preset, parallelism,
  optimizer internals, raw JSON) sit in a folded "advanced" section that opens on demand, or by
  itself when one of its fields has a value or an error.
- On error, a summary at the top links to each field; an accelerator the catalog does not know is
  named back with the names it does know (never an internal id).
"""

from __future__ import annotations

from dataclasses import dataclass

from django.conf import settings
from django.utils.translation import get_language
from django.utils.translation import gettext as _

from .choices import Currency

# Fields folded under "advanced" in every case (form field names).
ADVANCED = frozenset({
    "precision__compute", "precision__kv_cache",
    "training__lora_rank", "training__optimizer", "training__optimizer_states", "training__master_weights",
    "training__adapter_precision", "training__double_quant", "training__expert_overlap",
    "training__context_parallel", "training__goodput", "training__zero_stage", "training__activation_checkpointing",
    "training__micro_batch_size", "training__checkpoint_every_hours", "training__checkpoints_kept",
    "serving__context_length", "serving__runtime",
    "rag__chunk_tokens", "rag__embedding_dimension", "rag__index", "rag__tokens_per_document",
    "hardware__tensor_parallel", "hardware__pipeline_parallel", "hardware__gpus_per_server", "hardware__mfu",
    "efficiency", "discount_rate", "vat_recoverable", "downtime_cost_per_hour", "overrides", "more",
})
HF_CONFIG_FIELDS = ("hf_config", "hf_config_file")


def default_currency() -> str:
    """PLANNER_DEFAULT_CURRENCY when the deployment sets one, else the page language's convention."""
    configured = (getattr(settings, "PLANNER_DEFAULT_CURRENCY", "") or "").upper()
    if configured in Currency.values:
        return configured
    return Currency.RUB if (get_language() or "").startswith("ru") else Currency.USD


def is_advanced(name: str, *, source: str, architecture_names: set[str]) -> bool:
    if name in architecture_names:  # the preset's (or config's) numbers: shown only on demand
        return source != "architecture"
    if name in HF_CONFIG_FIELDS:  # the raw config.json: only when it is the model's source
        return source != "hf_config"
    return name in ADVANCED


@dataclass
class StepGroup:
    step: str
    heading: str
    fields: list
    advanced: list
    open: bool  # the advanced section starts open (a value was given or a field has an error)
    advanced_note: str = ""


def _has_value(bound_field) -> bool:
    form = bound_field.form
    if not form.is_bound:
        return False
    value = form.data.getlist(bound_field.html_name) if hasattr(form.data, "getlist") else \
        form.data.get(bound_field.html_name)
    if isinstance(value, list):
        value = [v for v in value if v not in ("", "unknown")]
    return bool(value) and value != "unknown"


def step_groups(form, *, show_errors: bool, architecture_names: set[str]) -> list[StepGroup]:
    """``architecture_names``: the form's fields that describe the model's architecture."""
    source = (form.data.get("model_source") if form.is_bound else None) or \
        str(form.initial.get("model_source") or form.fields["model_source"].initial)
    groups = []
    for step, heading, fields in form.steps():
        main = [bf for bf in fields if not is_advanced(bf.name, source=source, architecture_names=architecture_names)]
        # the preset's numbers first, the config.json inputs last (they belong to another source)
        advanced = sorted((bf for bf in fields if bf not in main), key=lambda bf: bf.name in HF_CONFIG_FIELDS)
        if source != "architecture":
            for bf in advanced:  # shown for reference: read-only, as they are used
                if bf.name in architecture_names and getattr(bf.field.widget, "input_type", "") == "text":
                    bf.field.widget.attrs["readonly"] = True
        preset_arch = any(bf.name in architecture_names for bf in advanced)
        opened = any((show_errors and bf.errors) for bf in advanced) or any(
            _has_value(bf) for bf in advanced if bf.name not in architecture_names)
        note = ""
        if preset_arch and source == "preset":
            note = _("These numbers come from the chosen preset and are used as they are; to change them, "
                     "choose \u201cArchitecture\u201d as the model source, or \u201cHugging Face config.json\u201d "
                     "to give the model's own config file (the fields at the end).")
        elif preset_arch and source == "hf_config":
            note = _("The architecture is read from config.json; to type the numbers yourself, choose "
                     "\u201cArchitecture\u201d as the model source.")
        groups.append(StepGroup(step, str(heading), main, advanced, opened, note))
    return groups


def error_summary(form) -> list[dict]:
    """[{"anchor", "label", "message"}] for every error, in the order of the form; a message with
    no field of its own has no anchor."""
    out = [{"anchor": "", "label": "", "message": str(e)} for e in form.non_field_errors()]
    for step, _heading, fields in form.steps():
        del step
        for bf in fields:
            for e in bf.errors:
                out.append({"anchor": f"field-{bf.html_name}", "label": str(bf.label), "message": str(e)})
    return out


# --- the accelerator pin, by name -----------------------------------------------------------


def accelerator_names(specs) -> list[str]:
    """Catalog accelerators as a person writes them ("NVIDIA H100 SXM5 80GB"), each resolving to itself."""
    from planner.engine.errors import SpecValidationError
    from planner.engine.resolve import resolve_accelerator

    names = []
    for a in specs:
        name = f"{a.vendor} {a.model}".strip() if a.vendor and not a.model.lower().startswith(a.vendor.lower()) \
            else a.model
        try:
            found, _note = resolve_accelerator(name, specs)
        except SpecValidationError:
            continue
        if found.id == a.id:
            names.append(name)
    return sorted(set(names))


def accelerator_error(query: str, specs) -> str:
    """The resolver's error about a pin, said with names: what was typed and what the catalog has."""
    from planner.engine.resolve import _matches, _tokens

    words = _tokens(query)
    matches = [a for a in specs if words and _matches(words, a, exact=False)]
    if matches:
        names = ", ".join(sorted({a.model for a in matches}))
        return _("\u201c%(query)s\u201d fits several accelerators: %(names)s. Write the full name of one of them.") % {
            "query": query, "names": names}
    names = ", ".join(accelerator_names(specs))
    return _("No accelerator in the catalog is called \u201c%(query)s\u201d. Choose one from the list: %(names)s.") % {
        "query": query, "names": names}
