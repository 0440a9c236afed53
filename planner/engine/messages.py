"""Engine texts that the edges can translate.

The engines are framework-free (no gettext), so a user-visible text they produce is a `Msg`:
a `str` that renders in English (so logs, tests and old callers keep working) and carries
its template and parameters, so pages, exports and the API can render it through gettext in
the user's language, with numbers formatted for that language.

    Msg("TTFT {ttft_ms:.0f} ms exceeds the {target_ms:g} ms target", ttft_ms=812.4, target_ms=500)

Rules: the template is a literal (it is the gettext msgid); parameters are JSON values
(numbers, strings, or nested Msg); units are part of the template or a parameter, never
glued into a number.
"""

from __future__ import annotations


class Msg(str):
    """An English text with its template and parameters kept for translation."""

    def __new__(cls, template: str, /, **params):
        text = template.format(**params) if params else template
        obj = super().__new__(cls, text)
        obj.template = template
        obj.params = params
        return obj

    def __getnewargs_ex__(self):  # copy/deepcopy/pickle keep the template and parameters
        return (self.template,), self.params

    def to_data(self) -> dict:
        """JSON form: {"text": English, "template": msgid, "params": {...}}."""
        return {"text": str(self), "template": self.template,
                "params": {k: (v.to_data() if isinstance(v, Msg) else v) for k, v in self.params.items()}}
