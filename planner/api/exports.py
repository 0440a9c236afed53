"""Export a done plan version as CSV, XLSX or PDF, using the exporters of costs.exports and
the web planner's PDF renderer. Returns (bytes, content type, file name)."""

from __future__ import annotations

from django.utils.text import slugify

EXPORT_FORMATS = ("csv", "xlsx", "pdf")
CONTENT_TYPES = {
    "csv": "text/csv; charset=utf-8",
    "xlsx": "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
    "pdf": "application/pdf",
}


def export_filename(*, version, fmt: str) -> str:
    base = slugify(version.plan.name) or "plan"
    return f"{base}-v{version.number}.{fmt}"


def export_version(*, version, fmt: str) -> tuple[bytes, str, str]:
    raise NotImplementedError  # wired once costs.exports lands
