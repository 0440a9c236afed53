"""The PDF report (issue 21, part 6): a few pages made for people, in the plan's language, not the
web page printed. Page 1: the decision and the budget (from planner.plan_decision: presented, never
re-decided) and the compared alternatives, one per way of paying (the cloud among them); page 2:
the options compared, a cumulative-cost chart (SVG, drawn here: the PDF runs no scripts; nice axis
ticks, the Okabe-Ito palette) and a table with upfront, per month, net, VAT and gross; page 3: the
bill of materials; page 4: assumptions, the prices with their dates and sources, freshness
warnings. Reads the version's stored result only."""

from __future__ import annotations

from decimal import Decimal, InvalidOperation
from html import escape

from django.utils import timezone
from django.utils.safestring import mark_safe
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy, pgettext

from costs.cash_flow import cumulative

from .chart_axis import DASHES, OKABE_ITO, nice_ticks, tick_label
from .templatetags.planner_tags import num, size

PALETTE = OKABE_ITO
SOURCES_MAX = 6
PRICES_MAX = 10  # page 4's price table (every price is in the XLSX, sheet "Inputs")
OWNED_KINDS = ("onprem", "hybrid")


def _dec(value):
    try:
        return Decimal(str(value)) if value is not None else None
    except (InvalidOperation, ValueError):
        return None


def whole(value, currency: str = "") -> str:
    """Money in whole units for headlines: "3 951 841 RUB" (kopecks are in the XLSX)."""
    amount = _dec(value)
    if amount is None:
        return str(_("unknown"))
    return f"{num(amount, 0)} {currency}".strip()


def _upfront(option: dict, gross: bool) -> Decimal | None:
    flow = (option.get("cash_flow") or {}).get("gross" if gross else "net") or []
    return _dec(flow[0]) if flow else None


def pdf_summary(version, view: dict) -> dict:
    from costs.exports import _fx_lines, _vat_text, compared_options, decision_order
    from costs.labels import KIND_LABELS

    from .i18n import localise
    from .presentation import _localised, meets_by_candidate, risk_view

    result = localise(version.full_result or {})
    costs = result.get("costs") or {}
    include_vat = bool(costs.get("include_vat"))
    currency = costs.get("currency", "")
    meets = meets_by_candidate(result.get("sizing") or {})
    ordered = [_localised(o) for o in decision_order(costs, meets)]
    decision = view.get("decision") or {}
    compared = compared_options(ordered, decision.get("option_id"))
    chosen = compared[0] if compared else None
    basis = "gross" if include_vat else "net"
    base_total = _dec((chosen or {}).get("totals", {}).get(basis)) if chosen else None
    rows = []
    for i, o in enumerate(compared, start=1):
        totals = o.get("totals") or {}
        total = _dec(totals.get(basis))
        month = (o.get("per_month_average") or {}).get(basis) if isinstance(o.get("per_month_average"), dict) else None
        rows.append({
            "rank": i, "label": o.get("label"), "kind": o.get("kind"),
            "kind_label": KIND_LABELS.get(o.get("kind"), o.get("kind")),
            "net": _dec(totals.get("net")), "vat": _dec(totals.get("vat")), "gross": _dec(totals.get("gross")),
            "total": total, "upfront": _upfront(o, include_vat), "per_month": _dec(month),
            "difference": (total - base_total) if total is not None and base_total is not None and i > 1 else None,
            "meets": _meets(o, i == 1, decision, meets),
            "color": PALETTE[(i - 1) % len(PALETTE)], "dash": DASHES[(i - 1) % len(DASHES)],
            "risk": risk_view(o, include_vat),
        })
    freshness = costs.get("freshness") or {}
    return {
        "exported_on": timezone.localdate(),
        "chosen": rows[0] if rows else None,
        "chosen_option": chosen,
        "decision": decision,
        "headline": _headline(decision, currency),
        "rows": rows, "options_total": len(ordered),
        # one way of paying only (an agent on model APIs): page 1 compares providers (costs.order)
        "by_provider": len({r.get("kind") for r in compared}) == 1 and len(compared) > 1,
        "currency": currency, "include_vat": include_vat,
        "basis_label": _("with VAT") if include_vat else _("net of VAT"),
        "vat": _vat_text(costs) if costs else "",
        "fx": [{"pair": p, "text": t, "on": on, "source": s} for p, t, on, s in _fx_lines(costs)] if costs else [],
        "sources": price_sources(compared),
        "chart": cumulative_svg(compared, currency, include_vat=include_vat),
        "uncertainty": uncertainty_svg(compared, (costs.get("monte_carlo") or {}).get("options") or {},
                                       currency, include_vat=include_vat, row_px=16),
        "uncertainty_basis": _uncertainty_basis(costs, include_vat),
        "bill": bill_of_materials(result.get("sizing") or {}, decision, chosen or {}),
        "prices": _prices(freshness.get("prices") or []),
        "prices_total": len(freshness.get("prices") or []),
        # what a reader can act on; the command that refreshes the rates is for the operator (the web page says it)
        "freshness_warnings": [str(w) for w in freshness.get("warnings") or [] if "manage.py" not in str(w)],
        "notes": [str(n) for n in costs.get("notes") or []],
        "sizing_warnings": [str(w) for w in (result.get("sizing") or {}).get("warnings") or []],
        "assumptions": _assumptions(costs, chosen or {}),
    }


def _meets(option: dict, decided: bool, decision: dict, meets: dict) -> bool | None:
    """The decided option as the decision says (its targets); the others as the sizing ranked them; a
    model API has no GPU targets."""
    said = (decision.get("targets") or {}).get("meets")
    if decided and said is not None:
        return said
    return None if option.get("kind") == "api" else meets.get(option.get("candidate"))


def _whole_runs(runs) -> int | None:
    try:
        n = Decimal(str(runs))
    except (InvalidOperation, ValueError, TypeError):
        return None
    return int(n) if n > 0 and n == n.to_integral_value() else None


def _headline(decision: dict, currency: str) -> dict:
    """What to buy or rent, in figures a budget reads: the pieces of page 1's answer box."""
    if not decision or decision.get("status") == "nothing_priced":
        return {}
    budget = decision.get("budget") or {}
    hw = decision.get("hardware") or {}
    owned = decision.get("option_kind") in OWNED_KINDS
    out = {
        "verb": _("Buy") if owned else (_("Use") if decision.get("option_kind") == "api" else _("Rent")),
        "total": whole(budget.get("total"), currency),
        "months": budget.get("horizon_months"),
        "per_month": whole(budget.get("per_month"), currency) if budget.get("per_month") else None,
        "per_run": whole(budget.get("per_run"), currency) if budget.get("per_run") else None,
        "runs": budget.get("runs"),
        # a job's budget is for its runs (the web card's "one run"), not "over 36 months"
        "runs_count": _whole_runs(budget.get("runs")),
        "owned": owned,
        "amount_gross": budget.get("amount") == "gross",
    }
    if hw.get("accelerator"):
        out["what"] = f"{hw.get('gpu_count')} × {hw.get('accelerator')}"
    elif decision.get("model_api"):
        api = decision["model_api"]
        out["what"] = f"{api.get('provider')} {api.get('model')}"
    return out


def _assumptions(costs: dict, chosen: dict) -> list[tuple[str, str]]:
    from .templatetags.planner_tags import pct

    rows = [(_("Horizon"), _("%(n)s months") % {"n": costs.get("horizon_months")}),
            (_("Currency"), costs.get("currency", "")),
            (_("Prices as of"), str(costs.get("as_of") or ""))]
    if chosen.get("utilisation") is not None and chosen.get("kind") != "api":
        rows.append((_("Utilisation of the decided option"), str(pct(chosen.get("utilisation"), 0))))
    if chosen.get("efficiency") is not None and chosen.get("kind") != "api":
        rows.append((_("Efficiency of the decided option"), str(pct(chosen.get("efficiency"), 0))))
    basis = ((costs.get("decision") or {}).get("basis") or {}).get("text")
    if basis:
        rows.append((_("Budget basis"), str(basis)))
    return rows


def _prices(prices: list[dict]) -> list[dict]:
    """Page 4's prices: the oldest first (what to refresh), each with its date, age and source."""
    ordered = sorted(prices, key=lambda p: -(p.get("age_days") or 0))
    return [{"row": p.get("row", ""), "kind": _(p["kind"]) if p.get("kind") else _("list price"),
             "date": p.get("date") or _("undated"), "age": p.get("age_days"), "source": p.get("source") or ""}
            for p in ordered[:PRICES_MAX]]


def _q(value):
    return value.get("value") if isinstance(value, dict) else value


def _why(value) -> str:
    return str(value.get("explain") or "") if isinstance(value, dict) else ""


STORAGE_LABELS = {
    "nvme_per_server_bytes": gettext_lazy("Local NVMe, per server"),
    "checkpoints_bytes": gettext_lazy("Checkpoints"),
    "datasets_bytes": gettext_lazy("Datasets (object storage)"),
    "vector_index_bytes": gettext_lazy("Vector index"),
    "model_registry_bytes": gettext_lazy("Model registry"),
    "logs_bytes": gettext_lazy("Logs"),
}
NETWORK_LABELS = {
    "intra_node": gettext_lazy("Network inside a server"),
    "inter_node": gettext_lazy("Network between servers"),
    "storage": gettext_lazy("Storage network"),
    "user_traffic": gettext_lazy("User traffic"),
}


def bill_of_materials(sizing: dict, decision: dict, option: dict) -> list[dict]:
    """[{"item", "quantity", "detail"}]: servers, GPUs, CPU, RAM, storage, network, power, racks of
    the decided configuration (or the model API and the CPU server an agent runs on)."""
    rec = sizing.get("recommendation") or {}
    hw = decision.get("hardware") or {}
    detail = option.get("detail") or {}
    out = []

    def add(item, quantity, detail_text=""):
        if quantity not in (None, ""):
            out.append({"item": item, "quantity": quantity, "detail": detail_text})

    if decision.get("model_api"):
        api = decision["model_api"]
        add(_("Model API"), f"{api.get('provider')} {api.get('model')}", str(decision.get("why") or ""))
        cpu = decision.get("cpu_server") or {}
        if cpu:
            add(_("CPU server"), f"1 × {cpu.get('provider')} {cpu.get('instance_type')}", cpu.get("region") or "")
            add(_("CPU"), _("%(n)s cores") % {"n": cpu.get("physical_cores")},
                _("needed: %(n)s") % {"n": cpu.get("cores_needed")} if cpu.get("cores_needed") else "")
            add(_("RAM"), f"{num(cpu.get('ram_gib'), 0)} GiB",
                _("needed: %(n)s GiB") % {"n": num(cpu.get("ram_gib_needed"), 1)} if cpu.get("ram_gib_needed") else "")
        if _q(rec.get("nvme_bytes")):
            add(_("Local NVMe"), size(_q(rec.get("nvme_bytes"))), _why(rec.get("nvme_bytes")))
    else:
        servers = hw.get("servers") or _q(rec.get("servers"))
        per = hw.get("gpus_per_server") or _q(rec.get("gpus_per_server"))
        owned = decision.get("option_kind") in OWNED_KINDS
        what = _("servers bought") if owned else _("servers or instances rented")
        add(_("Servers"), servers, f"{hw.get('server') or ''}{' · ' if hw.get('server') else ''}{what}")
        if hw.get("accelerator"):
            spares = detail.get("spare_gpus")
            add(_("GPUs"), f"{hw.get('gpu_count')} × {hw.get('accelerator')}",
                "; ".join(t for t in [
                    _("%(n)s per server") % {"n": per} if per else "",
                    hw.get("layout_text") or "",
                    _("plus %(n)s spare") % {"n": spares} if spares else ""] if t))
        cores = _q(rec.get("cpu_cores_per_server"))
        if cores:
            add(_("CPU"), _("%(n)s cores per server") % {"n": cores}, _why(rec.get("cpu_cores_per_server")))
        ram = _q(rec.get("host_ram_per_server_bytes"))
        if ram:
            add(_("RAM"), _("%(size)s per server") % {"size": size(ram)}, _why(rec.get("host_ram_per_server_bytes")))
        for key, label in STORAGE_LABELS.items():
            value = _q((rec.get("storage") or {}).get(key))
            if value:
                add(label, size(value), _why((rec.get("storage") or {}).get(key)))
    network = rec.get("network") or {}
    for key, label in NETWORK_LABELS.items():
        if network.get(key):
            out.append({"item": label, "quantity": "", "detail": str(network[key])})
    if not decision.get("model_api") and decision.get("option_kind") in OWNED_KINDS:  # a rental's power is the provider's
        per_kw = _q(rec.get("server_power_kw"))
        total_kw = hw.get("total_power_kw") or _q(rec.get("total_power_kw"))
        if total_kw:
            add(pgettext("bill of materials", "Power"), f"{num(total_kw, 1)} {pgettext('unit symbol', 'kW')}",
                _("%(kw)s kW per server at full load") % {"kw": num(per_kw, 1)} if per_kw else "")
        racks = hw.get("racks") or _q(rec.get("racks"))
        if racks:
            add(_("Racks"), racks, _why(rec.get("racks")))
    return out


def _uncertainty_basis(costs: dict, include_vat: bool) -> str:
    """"with VAT"/"without VAT": the basis the page's P10/P50/P90 are on (that of the totals)."""
    from costs.labels import mc_range

    for stats in ((costs.get("monte_carlo") or {}).get("options") or {}).values():
        q = mc_range(stats, gross=include_vat)
        if q:
            return q["basis_label"]
    return ""


def price_sources(options: list[dict]) -> list[str]:
    """The sources of the prices the top options are built from, each once."""
    seen: dict[str, None] = {}
    for o in options:
        for row in o.get("rows") or []:
            for line in row.get("lines") or []:
                for rate in (line.get("inputs") or {}).get("rates") or []:
                    if rate.get("currency") and rate.get("source"):
                        seen.setdefault(str(rate["source"]), None)
                for item in line.get("breakdown") or []:  # quantity x unit price x months, with its source
                    if item.get("source"):
                        seen.setdefault(str(item["source"]), None)
    return list(seen)[:SOURCES_MAX]


def cumulative_svg(options: list[dict], currency: str, *, include_vat: bool = False,
                   width: int = 560, height: int = 230) -> str:
    """Cumulative cost by month (with VAT when the totals are, else net), one line per option in the
    Okabe-Ito colours and a dash pattern each, numbered at its end as the table's rows; the y axis on
    nice ticks (0, 10 M, 20 M), the x axis on whole years or quarters."""
    series = [[float(v) for v in cumulative(o, "gross" if include_vat else "net")] for o in options]
    if not any(series):
        return ""
    left, right, top, bottom = 52, 22, 10, 30
    months = max(len(s) for s in series) - 1 or 1
    ticks = nice_ticks(max(max(s) for s in series if s) or 1.0)
    peak = ticks[-1] or 1.0
    x = lambda m: left + (width - left - right) * m / months  # noqa: E731
    y = lambda v: top + (height - top - bottom) * (1 - v / peak)  # noqa: E731
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
             f'viewBox="0 0 {width} {height}" font-family="DejaVu Sans" font-size="9">']
    for v in ticks:
        parts.append(f'<line x1="{left}" y1="{y(v):.1f}" x2="{width - right}" y2="{y(v):.1f}" stroke="#e3e6ee"/>'
                     f'<text x="{left - 5}" y="{y(v) + 3:.1f}" text-anchor="end" fill="#333">'
                     f'{escape(tick_label(v, peak))}</text>')
    step = 12 if months >= 24 else 6 if months >= 12 else 3 if months >= 6 else 1
    for m in range(0, months + 1, step):
        parts.append(f'<text x="{x(m):.1f}" y="{height - bottom + 12}" text-anchor="middle" fill="#333">{m}</text>')
    parts.append(f'<line x1="{left}" y1="{height - bottom}" x2="{width - right}" y2="{height - bottom}" stroke="#888"/>')
    vat = _("with VAT") if include_vat else _("net of VAT")
    parts.append(f'<text x="{(left + width - right) / 2:.0f}" y="{height - 4}" text-anchor="middle" fill="#333">'
                 f'{escape(_("month"))} · {escape(currency)}, {escape(vat)}</text>')
    ends = []
    for i, s in enumerate(series):
        if not s:
            continue
        color, dash = PALETTE[i % len(PALETTE)], DASHES[i % len(DASHES)]
        points = " ".join(f"{x(m):.1f},{y(v):.1f}" for m, v in enumerate(s))
        dashing = f' stroke-dasharray="{dash}"' if dash else ""
        parts.append(f'<polyline fill="none" stroke="{color}" stroke-width="{2.2 if i == 0 else 1.5}"{dashing} '
                     f'points="{points}"/>')
        ends.append([y(s[-1]) + 3, x(len(s) - 1) + 4, color, i + 1])
    ends.sort()
    for a, b in zip(ends, ends[1:], strict=False):  # close line ends: the numbers one under another
        b[0] = max(b[0], a[0] + 9)
    for ly, lx, color, rank in ends:
        parts.append(f'<text x="{lx:.1f}" y="{ly:.1f}" fill="{color}" font-weight="bold">{rank}</text>')
    parts.append("</svg>")
    return mark_safe("".join(parts))  # noqa: S308 - every text in it is escaped above


def uncertainty_svg(options: list[dict], mc: dict, currency: str, *, include_vat: bool = False, width: int = 900,
                    row_px: int = 22) -> str:
    """P10-P90 of each option's total as a bar with a P50 tick, on the basis of the totals (gross
    with VAT, else net; the axis says which), numbered as the page-1 table's rows, each with its
    three figures written out."""
    from costs.labels import mc_range

    rows = [(i, mc_range(mc[o["id"]], gross=include_vat)) for i, o in enumerate(options, start=1)
            if mc.get(o.get("id"))]
    rows = [(i, m) for i, m in rows if m]
    basis = rows[0][1]["basis_label"] if rows else ""
    rows = [(i, [_dec(m.get(k)) for k in ("p10", "p50", "p90")]) for i, m in rows]
    rows = [(i, v) for i, v in rows if None not in v]
    if not rows:
        return ""
    left, right, top, axis = 24, 330, 6, 26
    ticks = nice_ticks(float(max(v[2] for _i, v in rows)) or 1.0)
    peak = ticks[-1] or 1.0
    x = lambda v: left + (width - left - right) * float(v) / peak  # noqa: E731
    height = top + row_px * len(rows) + axis
    base = top + row_px * len(rows)
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
             f'viewBox="0 0 {width} {height}" font-family="DejaVu Sans" font-size="8">',
             f'<line x1="{left}" y1="{base}" x2="{width - right}" y2="{base}" stroke="#888"/>']
    for v in ticks:
        parts.append(f'<text x="{x(v):.1f}" y="{base + 11}" text-anchor="middle">{escape(tick_label(v, peak))}</text>')
    parts.append(f'<text x="{(left + width - right) / 2:.0f}" y="{height - 3}" text-anchor="middle">'
                 f'{escape(currency)}, {escape(str(basis))}</text>')
    for row, (i, (p10, p50, p90)) in enumerate(rows):
        color = PALETTE[(i - 1) % len(PALETTE)]
        cy = top + row_px * row + row_px / 2
        parts.append(f'<text x="{left - 6}" y="{cy + 3:.1f}" text-anchor="end" fill="{color}">{i}</text>'
                     f'<rect x="{x(p10):.1f}" y="{cy - 5:.1f}" width="{max(x(p90) - x(p10), 1):.1f}" height="10" '
                     f'fill="{color}" fill-opacity="0.35"/>'
                     f'<line x1="{x(p50):.1f}" y1="{cy - 7:.1f}" x2="{x(p50):.1f}" y2="{cy + 7:.1f}" stroke="{color}" '
                     f'stroke-width="2"/>')
        figures = f"P10 {num(p10)} · P50 {num(p50)} · P90 {num(p90)}"
        parts.append(f'<text x="{width - right + 8}" y="{cy + 3:.1f}">{escape(figures)}</text>')
    parts.append("</svg>")
    return mark_safe("".join(parts))  # noqa: S308 - every text in it is escaped above
