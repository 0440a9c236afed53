"""Exports of a done plan version for the API: the web planner's exporter
(planner.plan_exports.export: CSV/XLSX from costs.exports, PDF via WeasyPrint), so a file
downloaded from the API is the same file the browser gets.

A PDF takes seconds of CPU (WeasyPrint lays out a ~23-page report: 2-3 s on an idle core,
9-13 s measured at load average 7 on the 2-core CI machine), so each process keeps the last
PDF_CACHE_SIZE rendered PDFs. Safe because a done version never changes; the key also holds
what the file shows besides the version (language, plan name, the day it is exported on).
Access is checked on every request before a file is served."""

from __future__ import annotations

import threading
from collections import OrderedDict

from planner.plan_exports import EXPORT_TYPES

EXPORT_FORMATS = tuple(EXPORT_TYPES)
__all__ = ["EXPORT_FORMATS", "EXPORT_TYPES", "export_version", "pdf_cache_clear"]

PDF_CACHE_SIZE = 16  # ~80 KB each
_pdfs: OrderedDict[tuple, tuple[bytes, str, str]] = OrderedDict()
_lock = threading.Lock()


def pdf_cache_clear() -> None:
    with _lock:
        _pdfs.clear()


def export_version(*, version, fmt: str, request=None) -> tuple[bytes, str, str]:
    """(content, content type, file name)."""
    from django.utils import timezone, translation

    from planner.plan_exports import export

    if fmt != "pdf":
        return export(version=version, fmt=fmt, request=request)
    key = (version.pk, translation.get_language(), version.plan.name, timezone.localdate())
    with _lock:
        hit = _pdfs.get(key)
        if hit is not None:
            _pdfs.move_to_end(key)
            return hit
    out = export(version=version, fmt=fmt, request=request)
    with _lock:
        _pdfs[key] = out
        while len(_pdfs) > PDF_CACHE_SIZE:
            _pdfs.popitem(last=False)
    return out
