"""Resolve hardware.accelerator (a catalog id or a name) against the catalog given to the engine."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence

from catalog.domain.messages import Msg

from .errors import FieldError, SpecValidationError
from .hardware import AcceleratorSpec


def _tokens(text: str) -> list[str]:
    return [t for t in re.split(r"[^a-z0-9]+", text.lower()) if t]


def _matches(query: list[str], acc: AcceleratorSpec, *, exact: bool) -> bool:
    own = _tokens(acc.id) + _tokens(acc.model) + _tokens(acc.vendor)
    if exact:
        return all(q in own for q in query)
    return all(any(t.startswith(q) for t in own) for q in query)


# Words a tool or provider may put before the model name ("NVIDIA H100 80GB HBM3" from nvidia-smi).
_VENDOR_WORDS = ("nvidia", "amd", "intel")


def alias_key(text: str) -> str:
    """A name as an alias table compares it: lower-case words, any leading vendor word dropped."""
    words = _tokens(text)
    if words and words[0] in _VENDOR_WORDS:
        words = words[1:]
    return " ".join(words)


def resolve_accelerator(query: str, accelerators: Sequence[AcceleratorSpec],
                        aliases: Mapping[str, str] | None = None) -> tuple[AcceleratorSpec, str]:
    """Return (accelerator, note). Exact id wins; otherwise every word of the query must start a
    word of the id/name ("H100 SXM 80GB" -> nvidia-h100-sxm5-80gb). When a name matches the
    SXM and the PCIe board of the same chip ("A100 80GB"), the SXM part is taken, as cloud
    catalogs mean, and the note says so. Anything else ambiguous is an error listing matches.
    Whole-word matches win over prefix matches ("L4" is not also "L40").

    `aliases` maps names as tools and providers write them (keyed by `alias_key`, e.g.
    "h100 80gb hbm3" from nvidia-smi's "NVIDIA H100 80GB HBM3") to catalog ids; an alias naming
    an accelerator of the catalog wins over word matching."""
    field = "hardware.accelerator"
    by_id = {a.id: a for a in accelerators}
    if query in by_id:
        return by_id[query], ""
    target = (aliases or {}).get(alias_key(query))
    if target in by_id:
        return by_id[target], ""
    q = _tokens(query)
    # Whole words first ("L4" is the L4, not also the L40/L40S), then word prefixes ("SXM" -> "SXM5").
    found = [a for a in accelerators if q and _matches(q, a, exact=True)]
    if len(found) != 1:
        found = [a for a in accelerators if q and _matches(q, a, exact=False)]
    if len(found) == 1:
        return found[0], ""
    if not found:
        raise SpecValidationError([FieldError(field=field, message=Msg("no accelerator in the catalog matches {query}", query=repr(query)))])
    sxm = [a for a in found if a.form_factor.upper().startswith("SXM")]
    same_chip = len({(a.architecture, a.memory_gib) for a in found}) == 1
    if len(sxm) == 1 and same_chip:
        others = ", ".join(a.id for a in found if a is not sxm[0])
        return sxm[0], Msg("'{query}' read as {id} (SXM, as cloud catalogs mean it); also matched: {others}", query=query, id=sxm[0].id, others=others)
    listing = ", ".join(f"{a.id} ({a.model})" for a in found)
    raise SpecValidationError([FieldError(field=field, message=Msg("{query} is ambiguous; matches: {listing}", query=repr(query), listing=listing))])
