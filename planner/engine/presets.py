"""Model presets: real architectures with a source each, from data/model_presets.csv.

The CSV is derived from the project's sourced table (../shared/data/model_architectures.csv)
by data/derive_presets.py, which keeps every source column and adds sizing columns that the
shared table holds only in its notes (see data/README.md).
"""

from __future__ import annotations

import csv
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from catalog.domain.messages import Msg

from .architecture import ModelArch, count_params

PRESETS_CSV = Path(__file__).with_name("data") / "model_presets.csv"

# Published totals may be rounded ("70B") or include parts the decoder arithmetic leaves out
# (Gemma 3's vision encoder); beyond this relative gap the arithmetic is not used silently.
PUBLISHED_TOLERANCE = 0.03


@dataclass(frozen=True, kw_only=True)
class Preset:
    id: str
    name: str
    family: str
    model_type: str
    total_params: int
    active_params: int | None
    source_title: str
    source_where: str
    verified: str
    notes: str
    hf_id: str
    row: dict


def _int(v: str) -> int | None:
    return int(float(v)) if v not in ("", None) else None


def _bool(v: str) -> bool:
    return v.strip().lower() == "true"


@cache
def _load() -> dict[str, Preset]:
    out: dict[str, Preset] = {}
    with PRESETS_CSV.open(encoding="utf-8", newline="") as f:
        for r in csv.DictReader(f):
            out[r["id"]] = Preset(
                id=r["id"],
                name=r["name"],
                family=r["family"],
                model_type=r["model_type"],
                total_params=_int(r["total_params"]),
                active_params=_int(r["active_params"]),
                source_title=r["source_title"],
                source_where=r["source_where"],
                verified=r["verified"],
                notes=r["notes"],
                hf_id=r.get("hf_id", ""),
                row=dict(r),
            )
    return out


def list_presets(*, model_type: str | None = None) -> list[dict]:
    """id / name / family / params (and type, source) of every preset, for forms and the API."""
    return [
        {
            "id": p.id,
            "name": p.name,
            "family": p.family,
            "model_type": p.model_type,
            "params": p.total_params,
            "active_params": p.active_params,
            "source": p.source_title,
            "verified": p.verified,
            "hf_id": p.hf_id or None,
            # the published checkpoint's own weight format: what serving defaults to (None: 16-bit)
            "checkpoint_weights": p.row.get("checkpoint_weights") or None,
        }
        for p in _load().values()
        if model_type is None or p.model_type == model_type
    ]


def preset_ids() -> list[str]:
    return list(_load())


@cache
def _by_hf_id() -> dict[str, str]:
    return {p.hf_id.lower(): p.id for p in _load().values() if p.hf_id}


def resolve_preset_id(name: str) -> str | None:
    """The preset id for a preset id or a catalog model's Hugging Face id (case-insensitive), else None."""
    if not isinstance(name, str):
        return None
    name = name.strip()
    if name in _load():
        return name
    return _by_hf_id().get(name.lower())


def hf_id_aliases() -> dict[str, str]:
    """Hugging Face id -> preset id, for every preset that has one (as spelled on Hugging Face)."""
    return {p.hf_id: p.id for p in _load().values() if p.hf_id}


def get_preset(preset_id: str) -> Preset | None:
    return _load().get(preset_id)


def arch_from_fields(*, name: str, fields: dict, preset_id: str = "", source: str = "") -> ModelArch:
    """Build a ModelArch from validated architecture fields; counts parameters when it can.

    `fields` uses ModelArch names plus optional `params` / `active_params` (given totals).
    """
    given_total = fields.pop("params", None)
    given_active = fields.pop("active_params", None)
    probe = ModelArch(name=name, params=0, active_params=0, preset_id=preset_id, source=source, **fields)
    computable = (
        probe.model_type in ("decoder", "encoder")
        and all(
            getattr(probe, k) is not None
            for k in ("layers", "hidden_size", "attention_heads", "head_dim", "ffn_hidden_size", "vocab_size")
        )
        and (probe.kv_heads is not None or probe.is_mla or probe.model_type == "encoder")
    )
    if computable:
        total, active = count_params(probe)
        explain = Msg("counted exactly from the architecture")
        if given_total and abs(total - given_total) > PUBLISHED_TOLERANCE * given_total:
            # e.g. Gemma 3's published total includes its vision encoder: keep the published one.
            explain = (
                Msg("published/given total {given_total:,} used; the architecture arithmetic gives {total:,} (differs by more than {published_tolerance:.0%})", given_total=given_total, total=total, published_tolerance=PUBLISHED_TOLERANCE)
            )
            active = round(active * given_total / total)
            total = given_total
        elif given_total and total != given_total:
            explain += Msg(" (published figure: {given_total:,})", given_total=given_total)
    else:
        total = given_total or 0
        active = given_active or total
        explain = Msg("as given (the architecture is not complete enough to count)")
    return ModelArch(
        name=name,
        params=total,
        active_params=active,
        params_explain=explain,
        preset_id=preset_id,
        source=source,
        **fields,
    )


def preset_arch(preset_id: str) -> ModelArch:
    p = _load()[preset_id]
    r = p.row
    model_type = r["model_type"]
    fields: dict = {"model_type": model_type, "params": p.total_params, "active_params": p.active_params}
    if model_type in ("decoder", "encoder"):
        fields.update(
            layers=_int(r["layers"]),
            hidden_size=_int(r["hidden_size"]),
            attention_heads=_int(r["attention_heads"]),
            kv_heads=_int(r["kv_heads"]),
            head_dim=_int(r["head_dim"]),
            ffn_hidden_size=_int(r["ffn_hidden_size"]),
            gated_ffn=_bool(r["gated_ffn"]),
            vocab_size=_int(r["vocab_size"]),
            tied_embeddings=_bool(r["tied_embeddings"]),
            max_position_embeddings=_int(r["max_position_embeddings"]),
            attention_bias=_bool(r["attention_bias"]),
            qk_norm=_bool(r["qk_norm"]),
            norms_per_layer=_int(r["norms_per_layer"]) or 2,
            experts=_int(r["experts"]) or 0,
            experts_per_token=_int(r["experts_per_token"]) or 0,
            shared_experts=_int(r["shared_experts"]) or 0,
            moe_ffn_hidden_size=_int(r["moe_ffn_hidden_size"]),
            dense_layers=_int(r["dense_layers"]) or 0,
            kv_lora_rank=_int(r["kv_lora_rank"]),
            q_lora_rank=_int(r["q_lora_rank"]),
            qk_rope_head_dim=_int(r["qk_rope_head_dim"]),
            v_head_dim=_int(r["v_head_dim"]),
            sliding_window=_int(r["sliding_window"]),
            local_layers=_int(r["local_layers"]) or 0,
            embedding_dim=_int(r["embedding_dim"]),
            linear_attention_layers=_int(r.get("linear_attention_layers", "")) or 0,
            linear_state_values_per_layer=_int(r.get("linear_state_values_per_layer", "")) or 0,
            mtp_layers=_int(r.get("mtp_layers", "")) or 0,
            compress_ratios=tuple(int(x) for x in (r.get("compress_ratios") or "").split()),
            index_topk=_int(r.get("index_topk", "")) or 0,
            index_heads=_int(r.get("index_heads", "")) or 0,
            index_head_dim=_int(r.get("index_head_dim", "")) or 0,
            o_lora_rank=_int(r.get("o_lora_rank", "")),
            o_groups=_int(r.get("o_groups", "")) or 0,
            hc_mult=_int(r.get("hc_mult", "")) or 0,
            checkpoint_weights=r.get("checkpoint_weights", ""),
            checkpoint_weights_source=r.get("checkpoint_weights_source", ""),
        )
    else:
        fs = r["flops_per_sample"]
        fields["flops_per_sample"] = float(fs) if fs else None
    source = Msg("{source_title} ({source_where}); verified: {verified}", source_title=p.source_title, source_where=p.source_where, verified=p.verified)
    return arch_from_fields(name=p.name, fields=fields, preset_id=p.id, source=source)
