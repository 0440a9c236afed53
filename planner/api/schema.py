"""OpenAPI extras: request examples for the main WorkloadSpec kinds, and the shared error
responses added to every API operation (the shape of planner.api.errors)."""

from drf_spectacular.extensions import OpenApiAuthenticationExtension
from drf_spectacular.utils import OpenApiExample

from .schema_enums import share_enums

# One realistic spec per main kind; tests check each one passes parse_workload_spec.
SPEC_EXAMPLES = {
    "inference": {
        "kind": "inference", "name": "Support chat assistant",
        "model": {"preset": "llama-3.1-8b"},
        "serving": {"input_tokens": 1024, "output_tokens": 256, "concurrency": 32,
                    "requests_per_second": 4, "ttft_p95_ms": 1000, "runtime": "vllm"},
    },
    "finetuning": {
        "kind": "finetuning", "name": "QLoRA on support tickets",
        "model": {"preset": "llama-3.1-70b"},
        "training": {"method": "qlora", "tokens": 200_000_000, "sequence_length": 4096, "epochs": 2,
                     "optimizer": "paged_adamw_8bit", "double_quant": True},
    },
    "pretraining": {
        "kind": "pretraining", "name": "Small model from scratch",
        "model": {"preset": "llama-3.2-1b"},
        "training": {"tokens": 100_000_000_000, "sequence_length": 4096, "deadline_hours": 720,
                     "optimizer": "adamw", "optimizer_states": "fp32", "master_weights": "fp32", "goodput": 0.9},
    },
    "rag": {
        "kind": "rag", "name": "Document search with answers",
        "model": {"preset": "qwen2.5-7b"},
        "rag": {"documents": 1_000_000, "tokens_per_document": 800, "queries_per_second": 2},
        "serving": {"input_tokens": 3000, "output_tokens": 300, "requests_per_second": 2},
    },
    "rag_external_generator": {
        "kind": "rag", "name": "Document search, answers from a model API",
        "rag": {"documents": 200_000, "tokens_per_document": 1200, "generator": "external_api"},
        "serving": {"input_tokens": 4000, "output_tokens": 300, "requests_per_second": 1,
                    "model_api": "OpenAI/gpt-4o-mini"},
    },
    "classic_training": {
        "kind": "classic_training", "name": "ResNet-50 on ImageNet",
        "model": {"preset": "resnet-50"},
        "training": {"dataset_samples": 1_281_167, "epochs": 90},
    },
    "external_api": {
        "kind": "external_api", "name": "Agent on an external model API",
        "rag": {"documents": 100_000, "generator": "external_api"},
        "serving": {"input_tokens": 2000, "output_tokens": 400, "requests_per_second": 1,
                    "requests_per_day": 6000},
    },
}

TITLES = {
    "inference": "LLM serving", "finetuning": "QLoRA fine-tuning", "pretraining": "Pre-training",
    "rag": "RAG", "rag_external_generator": "RAG with answers from a model API", "classic_training": "Vision training", "external_api": "External model API (no GPU)",
}


def _examples(wrap):
    return [OpenApiExample(TITLES[kind], value=wrap(kind, spec), request_only=True)
            for kind, spec in SPEC_EXAMPLES.items()]


WORKLOAD_EXAMPLES = _examples(lambda kind, spec: {"team": 1, "name": spec["name"], "spec": spec})
PLAN_EXAMPLES = _examples(lambda kind, spec: {"team": 1, "spec": spec, "costs": {}}) + [
    OpenApiExample("From a saved workload", value={"workload": 1, "name": "Q3 budget"}, request_only=True),
]
ESTIMATE_EXAMPLES = _examples(lambda kind, spec: {"spec": spec})

PROBLEM_SCHEMA = {
    "type": "object",
    "required": ["type", "title", "status", "errors"],
    "properties": {
        "type": {"type": "string", "example": "urn:gpu-planner:error:validation"},
        "title": {"type": "string", "example": "Invalid input"},
        "status": {"type": "integer", "example": 400},
        "errors": {
            "type": "array",
            "items": {
                "type": "object",
                "required": ["field", "message"],
                "properties": {
                    "field": {"type": "string", "nullable": True, "example": "spec.model.architecture.layers",
                              "description": "Dotted path into the request; null for the request as a whole."},
                    "message": {"type": "string"},
                },
            },
        },
    },
}

ERROR_DESCRIPTIONS = {
    "400": "Invalid input (field paths in `errors`)",
    "401": "Missing, invalid, expired or revoked credentials",
    "403": "Your role in this team is read-only",
    "404": "Not found (also: another team's object; `errors[].field` names a body or query field "
           "whose id points at nothing of yours)",
    "405": "Method not allowed",
    "406": "Not acceptable",
    "409": "Conflict (e.g. a recompute is already pending)",
    "413": "Request body too large",
    "415": "Unsupported media type (send application/json)",
    "429": "Too many requests (see Retry-After)",
}
# Errors that cannot happen on a read without a body or parameters are still possible on any
# operation (auth, throttling, unknown ids), so every API operation documents all of them.

# A request line beyond the HTTP server's limit (gunicorn: 4094 bytes) is refused by the server
# itself, before the API sees it: its own small HTML page, not the Problem shape.
URI_TOO_LONG = {
    "description": "URI too long: the request line exceeds the HTTP server's limit (gunicorn's default "
                   "4094 bytes); answered by the server before the API, as an HTML page",
    "content": {"text/html": {"schema": {"type": "string"}}},
}


# Integer parameters the code refuses below 1 (ids, version numbers, pages, team/workload
# filters); ids in paths have at most 18 digits (config.apps: the `int` path converter).
POSITIVE_QUERY_INTS = {"team", "workload", "page", "page_size", "from", "to"}
MAX_PATH_INT = 10**18 - 1


def _bound_integer_parameters(operation: dict) -> None:
    for param in operation.get("parameters", []):
        schema = param.get("schema", {})
        if schema.get("type") != "integer":
            continue
        if param["in"] == "path":
            schema.setdefault("minimum", 1)
            schema.setdefault("maximum", MAX_PATH_INT)
        elif param["in"] == "query" and param["name"] in POSITIVE_QUERY_INTS:
            schema.setdefault("minimum", 1)
            schema.setdefault("maximum", 200 if param["name"] == "page_size" else 2**63 - 1)


# Request bodies whose `spec` / `costs` the engines validate: the JSON Schemas of
# planner/api/input_schema.py replace drf-spectacular's free-form objects.
SPEC_BODIES = ("WorkloadInRequest", "WorkloadUpdateInRequest", "PatchedWorkloadUpdateInRequest",
               "PlanCreateInRequest", "EstimateInRequest")


def _model_api_enum(components: dict) -> None:
    """serving.model_api takes only the model APIs the catalog prices (the server refuses others), so
    the document lists them, as the calibration schema lists accelerator ids."""
    from .body_schema import catalog_enum
    from .services import priced_model_apis

    enum = catalog_enum(lambda: [key for key, _label in priced_model_apis()])
    for name, component in components.items():
        model_api = ((component.get("properties") or {}).get("serving") or {}).get("properties", {}).get("model_api")
        if name.startswith("WorkloadSpec_") and model_api:
            one, many = model_api["oneOf"]
            one.update(enum)
            many["items"] = {**many["items"], **enum}


# The sections of a WorkloadSpec, as components shared by the kinds that take the same section.
SECTIONS = {"precision": "PrecisionSpec", "data": "DataSpec", "hardware": "HardwareSpec", "serving": "ServingSpec",
            "training": "TrainingSpec", "rag": "RagSpec"}


# (section, first kind taking it) -> name, where a section differs between kinds
SECTION_NAMES = {("hardware", "pretraining"): "HardwareSpec", ("hardware", "inference"): "ServingHardwareSpec",
                 ("rag", "rag"): "RagSpec", ("rag", "rag_external_generator"): "ExternalGeneratorRagSpec",
                 ("training", "classic_training"): "ClassicTrainingSpec"}


def _camel(name: str) -> str:
    return "".join(part.capitalize() for part in name.split("_"))


def _shared_sections(components: dict) -> None:
    """Each section of the WorkloadSpec variants becomes a component (`ServingSpec`, `PrecisionSpec`,
    ...), one per distinct schema: generators then make one class per section instead of one per
    kind. A section that differs between kinds is named after the first kind taking it
    (`PretrainingTrainingSpec`, `FinetuningTrainingSpec`) or as SECTION_NAMES says
    (`ServingHardwareSpec`: with the serving layouts)."""
    import json

    from .input_schema import WORKLOAD_SPEC_VARIANTS

    groups: dict[str, dict[str, list[str]]] = {}  # section -> definition -> variants
    for variant in WORKLOAD_SPEC_VARIANTS:
        for section in SECTIONS:
            node = components[variant]["properties"].get(section)
            if isinstance(node, dict) and node.get("type") == "object":
                definition = {k: v for k, v in node.items() if k not in ("nullable", "description")}
                groups.setdefault(section, {}).setdefault(json.dumps(definition, sort_keys=True), []).append(variant)
    for section, by_definition in groups.items():
        for variants in by_definition.values():
            kind = variants[0].removeprefix("WorkloadSpec_")
            name = SECTIONS[section] if len(by_definition) == 1 else SECTION_NAMES.get(
                (section, kind), f"{_camel(kind)}{SECTIONS[section]}")
            for variant in variants:
                props = components[variant]["properties"]
                node = props[section]
                components[name] = {k: v for k, v in node.items() if k not in ("nullable", "description")}
                use = {k: node[k] for k in ("nullable", "description") if k in node}
                props[section] = {"allOf": [{"$ref": f"#/components/schemas/{name}"}], **use} if use else {
                    "$ref": f"#/components/schemas/{name}"}


def _shared_model_branches(components: dict) -> None:
    """The three ways to give a model (preset, architecture, hf_config) as components
    (`PresetModel`, `ArchitectureModel`, `HfConfigModel`), shared by the kinds with the same
    choices; another kind's set is prefixed with its kind (`ClassicTrainingPresetModel`)."""
    import json

    from .input_schema import WORKLOAD_SPEC_VARIANTS

    names: dict[str, str] = {}  # definition -> component name
    for variant in WORKLOAD_SPEC_VARIANTS:
        model = components[variant]["properties"].get("model") or {}
        kind = variant.removeprefix("WorkloadSpec_")
        branches = []
        for branch in model.get("oneOf", []):
            required = branch.get("required") or []
            if branch.get("type") != "object" or len(required) != 1:
                branches.append(branch)
                continue
            key = json.dumps(branch, sort_keys=True)
            if key not in names:
                base = f"{_camel(required[0])}Model"
                names[key] = base if base not in components else f"{_camel(kind)}{base}"
                components[names[key]] = branch
            branches.append({"$ref": f"#/components/schemas/{names[key]}"})
        if branches:
            model["oneOf"] = branches


def _vat_country_enum(components: dict) -> None:
    """costs.country takes only the countries whose VAT rate the catalog holds (the server refuses
    others: the costing needs the rate)."""
    from .body_schema import catalog_enum
    from .services import vat_countries

    country = (components.get("CostOptions") or {}).get("properties", {}).get("country")
    if country is not None:
        country.update(catalog_enum(vat_countries))


def _input_schemas(components: dict) -> None:
    from .input_schema import input_components

    components.update(input_components())
    _model_api_enum(components)
    _vat_country_enum(components)
    _shared_sections(components)
    _shared_model_branches(components)
    for name in SPEC_BODIES:
        props = components.get(name, {}).get("properties", {})
        for field, ref in (("spec", "WorkloadSpec"), ("costs", "CostOptions")):
            if field in props:
                description = props[field].get("description", "")
                props[field] = {"allOf": [{"$ref": f"#/components/schemas/{ref}"}], "description": description}


def checked_bodies() -> dict:
    """operationId -> (component name, JSON Schema) for bodies the views check against the
    published schema itself (planner.api.body_schema)."""
    from catalog.api.quote_schema import quote_body_schema

    from .calibration_schema import run_body_schema, upload_body_schema

    return {
        "supplier_quotes_create": ("SupplierQuoteIn", quote_body_schema()),
        "calibration_runs_create": ("MeasuredRunIn", run_body_schema()),
        "calibration_runs_upload": ("MeasuredRunFileIn", upload_body_schema()),
    }


def _checked_bodies(result: dict, components: dict) -> None:
    bodies = checked_bodies()
    for operations in result.get("paths", {}).values():
        for operation in operations.values():
            if not isinstance(operation, dict) or operation.get("operationId") not in bodies:
                continue
            name, schema = bodies[operation["operationId"]]
            components[name] = schema
            content = operation.setdefault("requestBody", {}).setdefault("content", {})
            media = content.setdefault("application/json", {})
            media["schema"] = {"$ref": f"#/components/schemas/{name}"}


def _require_body_with_required_fields(operation: dict, components: dict) -> None:
    """A body whose schema has required fields (or a oneOf of them) cannot be left out: the
    views answer a missing body like an empty object, with a 400 naming those fields."""
    for media in (operation.get("requestBody") or {}).get("content", {}).values():
        ref = (media.get("schema") or {}).get("$ref", "")
        schema = components.get(ref.rsplit("/", 1)[-1], {}) if ref else media.get("schema") or {}
        if schema.get("required") or schema.get("oneOf"):
            operation["requestBody"]["required"] = True
            return


def _plan_create_alternatives(components: dict) -> None:
    """A plan is made from a team and an inline spec, or from an existing workload (never both):
    what PlanCreateIn.validate accepts, as two complete alternatives, so client generators keep
    the body typed (`PlanFromSpecRequest | PlanFromWorkloadRequest`) instead of falling back to
    `Any` on properties mixed with constraint-only branches. The spec alternative comes first (the
    one with the most fields: tests walk the first alternative's strings)."""
    body = components.get("PlanCreateInRequest")
    if not body or "properties" not in body:
        return
    props = body["properties"]
    shared = {k: v for k, v in props.items() if k in ("name", "costs")}
    components["PlanFromSpecRequest"] = {
        "type": "object", "required": ["team", "spec"],
        "properties": {"team": props["team"], "spec": props["spec"], **shared},
        "not": {"required": ["workload"]},
        "description": "A plan of an inline WorkloadSpec, saved as a workload of `team`.",
    }
    components["PlanFromWorkloadRequest"] = {
        "type": "object", "required": ["workload"],
        "properties": {"workload": props["workload"], **shared},
        "not": {"anyOf": [{"required": ["team"]}, {"required": ["spec"]}]},
        "description": "A plan of an existing workload (`team` and `spec` are not allowed with it).",
    }
    components["PlanCreateInRequest"] = {
        "oneOf": [{"$ref": "#/components/schemas/PlanFromSpecRequest"},
                  {"$ref": "#/components/schemas/PlanFromWorkloadRequest"}],
        "description": body.get("description", ""),
    }


def _typed_outputs(components: dict) -> None:
    """A version's result, an estimate's sections and a plan's cost options as the typed
    components of planner/api/output_schema.py (they were free-form objects)."""
    from .output_schema import OUTPUT_FIELDS, output_components

    components.update(output_components())
    for name, fields in OUTPUT_FIELDS.items():
        schema = components.get(name)
        if not schema:
            continue
        for field, typed in fields.items():
            schema.setdefault("properties", {})[field] = dict(typed)
            if field not in schema.setdefault("required", []):
                schema["required"].append(field)


BINARY_FIRST = ("application/pdf", "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet")


def _binary_exports(operation: dict) -> None:
    """An export answers a file (`format: binary`) of the media type of its `fmt`: the binary types
    first, so a generator that takes the first media type reads bytes, never decodes a PDF as text."""
    ok = (operation.get("responses") or {}).get("200") or {}
    content = ok.get("content") or {}
    if not any(t in content for t in BINARY_FIRST):
        return
    ok["content"] = {t: {"schema": {"type": "string", "format": "binary"}}
                     for t in (*BINARY_FIRST, *[t for t in content if t not in BINARY_FIRST])}
    ok["description"] = "The file in the format `fmt` names: PDF, XLSX or CSV (bytes)."


def add_error_responses(result, generator, request, public):
    """drf-spectacular post-processing hook: the Problem schema on every /api/ operation,
    and integer parameters bounded as the code bounds them."""
    components = result.setdefault("components", {}).setdefault("schemas", {})
    components["Problem"] = PROBLEM_SCHEMA
    _input_schemas(components)
    _checked_bodies(result, components)
    _plan_create_alternatives(components)
    _typed_outputs(components)
    ref = {"$ref": "#/components/schemas/Problem"}
    for path, operations in result.get("paths", {}).items():
        if not path.startswith("/api/"):
            continue
        for method, operation in operations.items():
            if method not in ("get", "post", "put", "patch", "delete"):
                continue
            _bound_integer_parameters(operation)
            _require_body_with_required_fields(operation, components)
            responses = operation.setdefault("responses", {})
            for code, description in ERROR_DESCRIPTIONS.items():
                responses.setdefault(code, {
                    "description": description,
                    "content": {"application/json": {"schema": ref}},
                })
            if operation.get("parameters"):  # only a URL with parameters can grow that long
                responses.setdefault("414", URI_TOO_LONG)
            _binary_exports(operation)
    share_enums(result)
    return result


class ApiTokenScheme(OpenApiAuthenticationExtension):
    """Documents `Authorization: Token <key>` (Bearer works too) as the API's security scheme."""

    target_class = "planner.api.auth.ApiTokenAuthentication"
    name = "apiToken"

    def get_security_definition(self, auto_schema):
        return {
            "type": "apiKey", "in": "header", "name": "Authorization",
            "description": "`Token <key>` or `Bearer <key>`; create keys at /api/v1/tokens/.",
        }
