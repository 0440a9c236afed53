"""Engine texts at the edges: Msg (catalog.domain.messages) rendered through gettext in the
active language, with that language's number separators and plural forms.

Pages, the PDF, XLSX and CSV exports and the API (by Accept-Language) all call these, so an
engine text reads the same everywhere. Plain strings stored by an older engine (no `_i18n`
sibling) still translate when their text is a msgid.
"""

from __future__ import annotations

from django.utils import translation

from catalog.domain import messages

# Keys whose plain-string values are engine texts (translated as msgids when no structure is kept).
TEXT_KEYS = frozenset({"text", "item", "explain", "why", "reason", "warnings", "assumptions", "notes", "remedies", "ranking",
                       "message", "note", "summary", "unit", "unknowns", "help", "source", "why_not",
                       "min_driver", "min_cuda", "min_framework", "layers", "metrics", "preflight_checklist",
                       "monitoring", "intra_node", "inter_node", "user_traffic", "storage", "payment"})


def conventions(language: str | None = None) -> messages.Conventions:
    lang = (language or translation.get_language() or "en").lower()
    return messages.RUSSIAN if lang.startswith("ru") else messages.ENGLISH


def _translate(text: str) -> str:
    if not text:
        return text
    out = translation.gettext(text)
    if out == text and (translation.get_language() or "").lower().startswith("ru"):
        from costs.data_texts import in_russian

        out = in_russian(text)  # a shipped rate card source: data, not a msgid
    return out


def render(value, language: str | None = None) -> str:
    """One engine text (a Msg, its stored JSON form, or a plain string) in `language`
    (default: the active one)."""
    if language:
        with translation.override(language):
            return messages.render(value, translate=_translate, conventions=conventions(language))
    return messages.render(value, translate=_translate, conventions=conventions())


def _option_labels(tree) -> dict[str, str]:
    """{engine label: label in the active language} of the cost options in a stored result, so a
    text naming an option ("{cheaper} is cheaper from month 7") names it in that language."""
    from costs.labels import option_label

    costs = tree.get("costs") if isinstance(tree, dict) and "costs" in tree else tree
    options = (costs or {}).get("options") if isinstance(costs, dict) else None
    out = {}
    for o in options or []:
        if isinstance(o, dict) and isinstance(o.get("label"), str):
            out[o["label"]] = option_label(o)
    return out


def localise(tree, language: str | None = None, *, keep_structured: bool = False):
    """A copy of a stored result with every engine text in `language` (default: active)."""
    def run():
        labels = _option_labels(tree)
        return messages.localise_tree(tree, translate=_translate, conventions=conventions(language),
                                      text_keys=TEXT_KEYS, keep_structured=keep_structured,
                                      translate_param=lambda s: labels.get(s) or _translate(s))

    if language:
        with translation.override(language):
            return run()
    return run()


def number(value, spec: str = ",", language: str | None = None) -> str:
    """A number with a str.format spec, in the language's separators ('1 234 567,89')."""
    return messages.format_template("{v:" + spec + "}", {"v": value}, conventions(language))


def for_api(result):
    """A stored result as the API answers it: in English as stored; in another language asked
    for by Accept-Language, every engine text rendered in it, the `_i18n` structure kept."""
    lang = (translation.get_language() or "en").lower()
    if result is None or lang.startswith("en"):
        return result
    out = localise(result, keep_structured=True)
    # an option's label, wherever the result names the option (costs.options, the decision, its alternatives,
    # the ranking), in the language too: read from the rendered detail (the label itself is stored in English)
    return _relabelled(out, _option_labels(out))


def _relabelled(tree, labels: dict[str, str]):
    if isinstance(tree, dict):
        return {k: labels.get(v, v) if k == "label" and isinstance(v, str) else _relabelled(v, labels)
                for k, v in tree.items()}
    if isinstance(tree, list):
        return [_relabelled(v, labels) for v in tree]
    return tree
