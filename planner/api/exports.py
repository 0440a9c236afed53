"""Exports of a done plan version for the API: the web planner's exporter
(planner.presentation.export: CSV/XLSX from costs.exports, PDF via WeasyPrint), so a file
downloaded from the API is the same file the browser gets."""

from __future__ import annotations

from planner.presentation import EXPORT_TYPES

EXPORT_FORMATS = tuple(EXPORT_TYPES)
__all__ = ["EXPORT_FORMATS", "EXPORT_TYPES", "export_version"]


def export_version(*, version, fmt: str, request=None) -> tuple[bytes, str, str]:
    """(content, content type, file name)."""
    from planner.presentation import export

    return export(version=version, fmt=fmt, request=request)
