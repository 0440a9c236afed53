"""JSON Schemas of the measured-run bodies, built from planner.calibration.formats' own tables.

POST /calibration/runs/ takes one run as typed JSON: numbers as JSON numbers, the model as a
preset id and the accelerator as a catalog id (a benchmark file may name them loosely; the
upload resolves those names). POST /calibration/runs/upload/ takes a file's text. The views
check bodies against these schemas (planner.api.body_schema); what one field says about
another, or about the chip (a TPOT below one read of the weights, more than 100% MFU), is the
parser's 400 after that (docs/API.md, "Rules the schema cannot state").
"""

from __future__ import annotations

from planner.api.body_schema import catalog_enum
from planner.calibration.formats import (
    CHECKPOINTING,
    COMMON_NUMBERS,
    ENGINE_VERSION_MAX,
    MAX_FILE_BYTES,
    PARSERS,
    RUNTIME_ALIASES,
    SERVING_LOAD_FIELDS,
    SERVING_NUMBERS,
    TRAINING_NUMBERS,
    TRAINING_SPEED_FIELDS,
    NumberField,
)
from planner.calibration.models import RunKind
from planner.engine.precision import PRECISIONS, peak_tflops
from planner.engine.presets import list_presets, preset_arch

TEAM = {"type": "integer", "minimum": 1, "maximum": 2**63 - 1}


def _number(f: NumberField) -> dict:
    if f.integer:
        return {"type": "integer", "minimum": 1, "maximum": f.high}
    return {"type": "number", "minimum": 0, "exclusiveMinimum": True, "maximum": f.high}


def _accelerator_ids(resolver=None) -> dict:
    """The enum of catalog accelerators with at least one known peak throughput: a run on a chip
    with none cannot be scored (which precision the chip has a peak for is the parser's rule)."""
    from planner.calibration.fit import compute_precision
    from planner.calibration.services import catalog_resolver

    return catalog_enum(lambda: sorted(acc.id for acc in (resolver or catalog_resolver()).accelerators
                                       if any(peak_tflops(acc, compute_precision(p))[0] for p in PRECISIONS)))


def _run_schema(kind: str, accelerators: dict) -> dict:
    serving = kind == RunKind.SERVING
    models = [p["id"] for p in list_presets() if not serving or preset_arch(p["id"]).has_kv_cache]
    numbers = {**COMMON_NUMBERS, **(SERVING_NUMBERS if serving else TRAINING_NUMBERS)}
    props = {
        "model": {"type": "string", "enum": models, "description": "A preset id (GET /api/v1/presets/)."},
        "accelerator": {"type": "string", "minLength": 1, "description": "A catalog id.", **accelerators},
        **{name: _number(f) for name, f in numbers.items()},
        "precision": {"type": "string", "enum": list(PRECISIONS)},
        "measured_on": {"type": "string", "format": "date", "description": "Not in the future, not before 2015."},
    }
    if serving:
        props["engine"] = {"type": "string", "enum": sorted(RUNTIME_ALIASES)}
        props["engine_version"] = {"type": "string", "maxLength": ENGINE_VERSION_MAX}
        required = ["model", "accelerator", "precision", "engine"]
        alternatives = SERVING_LOAD_FIELDS
    else:
        props["activation_checkpointing"] = {"type": "string", "enum": list(CHECKPOINTING)}
        required = ["model", "accelerator"]
        alternatives = TRAINING_SPEED_FIELDS
    required += [name for name, f in numbers.items() if f.required]
    return {
        "type": "object", "additionalProperties": False, "properties": props, "required": required,
        "anyOf": [{"required": [name]} for name in alternatives],
    }


def envelope_schema() -> dict:
    """{team, kind, run}: the run's own fields are checked by run_schema(kind)."""
    return {
        "type": "object", "additionalProperties": False, "required": ["team", "kind", "run"],
        "properties": {"team": TEAM, "kind": {"type": "string", "enum": list(RunKind.values)},
                       "run": {"type": "object"}},
    }


def run_schema(kind: str, resolver=None) -> dict:
    """`resolver`: the catalog the run will be recorded against (one read per request)."""
    return _run_schema(kind, _accelerator_ids(resolver))


def run_body_schema() -> dict:
    """The published body of POST /calibration/runs/: envelope_schema with the run per kind."""
    accelerators = _accelerator_ids()
    variants = []
    for kind in RunKind.values:
        variants.append({
            "type": "object", "additionalProperties": False, "required": ["team", "kind", "run"],
            "properties": {"team": TEAM, "kind": {"type": "string", "enum": [kind]},
                           "run": _run_schema(kind, accelerators)},
        })
    return {"oneOf": variants}


def upload_body_schema() -> dict:
    return {
        "type": "object", "additionalProperties": False, "required": ["team", "content"],
        "properties": {
            "team": TEAM,
            "content": {"type": "string", "minLength": 1, "maxLength": MAX_FILE_BYTES,
                        "description": "The text of a vLLM/SGLang result or a serving/training CSV."},
            "format": {"type": "string", "enum": ["auto", *PARSERS], "default": "auto"},
            "filename": {"type": "string", "maxLength": 255, "default": ""},
            "context": {"type": "object", "description": "What the file does not say: model, accelerator, "
                                                         "count, tensor_parallel, precision, engine, "
                                                         "engine_version, measured_on."},
        },
    }
