"""A done plan version as a file (CSV, XLSX, PDF): the web planner's and the API's exporter. Above
planner.presentation (the page's view model) and planner.pdf_summary (the PDF's pages), which it
puts together."""

from __future__ import annotations

from .presentation import meets_by_candidate, version_view

EXPORT_TYPES = {
    "csv": "text/csv; charset=utf-8",
    "xlsx": "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
    "pdf": "application/pdf",
}


def export(*, version, fmt: str, request=None) -> tuple[bytes, str, str]:
    """(content, content type, file name) of a done version as CSV, XLSX or PDF."""
    from django.http import Http404

    from .downloads import export_filename

    if fmt not in EXPORT_TYPES:
        raise Http404("unknown export format")
    filename = export_filename(version.plan.name, version.number, fmt)
    if fmt == "pdf":
        return render_pdf(version=version, request=request), EXPORT_TYPES[fmt], filename
    from costs import exports, exports_xlsx

    from .i18n import localise

    costs = localise((version.full_result or {}).get("costs") or {})  # engine texts in the file's language
    meta = export_meta(version)
    if fmt == "csv":
        content = exports.costs_csv(costs, meta=meta)
    else:
        content = exports_xlsx.costs_xlsx(costs, title=f"{version.plan.name} v{version.number}", meta=meta)
    if isinstance(content, str):
        content = content.encode("utf-8")
    return content, EXPORT_TYPES[fmt], filename


def export_meta(version):
    from django.utils import timezone

    from costs.exports import ExportMeta

    return ExportMeta(plan=version.plan.name, version=version.number, exported_on=timezone.localdate(),
                      meets=meets_by_candidate((version.full_result or {}).get("sizing") or {}))


def render_pdf(*, version, request=None) -> bytes:
    from django.template.loader import render_to_string
    from weasyprint import HTML

    from .pdf_summary import pdf_summary

    view = version_view(version)
    html = render_to_string(
        "planner/plan_pdf.html",
        {"plan": version.plan, "version": version, "view": view, "summary": pdf_summary(version, view)},
        request=request,
    )
    # No base_url: the PDF template carries its own styles and loads nothing over the network.
    return HTML(string=html).write_pdf()
