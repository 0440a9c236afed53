"""Enums as shared components of the OpenAPI document (issue 23 part 5).

The engine schemas (planner/api/input_schema.py, the checked bodies) and the query filters write
their enums inline, and a nullable one as `enum: [..., null]` with `nullable: true`. Client
generators make a class per inline enum, three for a nullable one (openapi-python-client 0.29:
96 duplicate classes). Here every enum of the document becomes one component per set of values
(`RuntimeEnum`, `PrecisionEnum`, ...), referenced where it is used; a nullable use is
`{"nullable": true, "allOf": [{"$ref": ...}]}`, the form generators turn into `Enum | None`.

What a value may be does not change: the component holds the same type, values and constraints
(null left out), and the use keeps its `nullable`, description and example. The document is
rewritten into new objects: the schemas the views validate bodies with are never touched.
"""

from __future__ import annotations

import json
import re

REF = "#/components/schemas/"
# keywords that describe a use, not the set of values
USE_KEYWORDS = ("description", "nullable", "example", "default", "title")
# names read better than the field's own for these sets (first use wins otherwise)
PREFERRED = {"options": "OptionKind", "kinds": "OptionKind", "data_residency": "Country",
             "weights": "Precision", "compute": "Precision", "kv_cache": "Precision"}


def _camel(name: str) -> str:
    return "".join(part[:1].upper() + part[1:] for part in re.split(r"[^0-9A-Za-z]+", name) if part)


def _member_names(values: list) -> list[str] | None:
    """Member names for a generator's enum class when two values would get the same one
    (`tensorrt-llm` and `tensorrt_llm` are both TENSORRT_LLM): the second gets a suffix."""
    if not all(isinstance(v, str) for v in values):
        return None
    names, seen, clash = [], set(), False
    for value in values:
        name = re.sub(r"[^0-9A-Za-z]+", "_", value).strip("_").upper() or "VALUE"
        if not name[0].isalpha():
            name = f"VALUE_{name}"
        base, n = name, 2
        while name in seen:
            name, n, clash = f"{base}_{n}", n + 1, True
        seen.add(name)
        names.append(name)
    return names if clash else None


def _is_enum(node: dict) -> bool:
    values = node.get("enum")
    if not isinstance(values, list) or node.get("type") not in ("string", "integer"):
        return False
    present = [v for v in values if v is not None]
    nullable = node.get("nullable") or len(present) < len(values)
    # a one-value enum is a constant (a `kind`): left inline unless nullable (null in the enum is
    # what makes generators duplicate it)
    return bool(present) and (len(present) >= 2 or bool(nullable))


class _Enums:
    def __init__(self, components: dict):
        self.components = components
        self.by_key: dict[str, str] = {}
        for name, schema in components.items():  # drf-spectacular's own enum components are reused
            if isinstance(schema, dict) and "enum" in schema and "properties" not in schema:
                self.by_key.setdefault(self._key(schema), name)

    @staticmethod
    def _definition(node: dict) -> dict:
        out = {k: v for k, v in node.items() if k not in USE_KEYWORDS}
        out["enum"] = [v for v in node["enum"] if v is not None]
        names = _member_names(out["enum"])
        if names:
            out["x-enum-varnames"] = names
        return out

    def _key(self, node: dict) -> str:
        return json.dumps(self._definition(node), sort_keys=True, default=str)

    def _name(self, field: str, owner: str) -> str:
        base = PREFERRED.get(field, _camel(field))
        qualified = _camel(owner).removesuffix("Model")  # ClassicTrainingPresetModel.preset: ClassicTrainingPreset
        if not qualified.endswith(_camel(field)):
            qualified += _camel(field)
        for candidate in (f"{base}Enum", f"{qualified}Enum"):
            if candidate not in self.components:
                return candidate
        n = 2
        while f"{_camel(owner)}{_camel(field)}Enum{n}" in self.components:
            n += 1
        return f"{_camel(owner)}{_camel(field)}Enum{n}"

    def use(self, node: dict, field: str, owner: str) -> dict:
        key = self._key(node)
        name = self.by_key.get(key)
        if name is None:
            name = self._name(field, owner)
            self.components[name] = self._definition(node)
            self.by_key[key] = name
        nullable = bool(node.get("nullable")) or None in node["enum"]
        extra = {k: node[k] for k in USE_KEYWORDS if k in node and k != "nullable"}
        if not nullable and not extra:
            return {"$ref": REF + name}
        out: dict = {"allOf": [{"$ref": REF + name}], **extra}
        if nullable:
            out["nullable"] = True
        return out

    def walk(self, node, field: str, owner: str):
        if isinstance(node, list):
            return [self.walk(item, field, owner) for item in node]
        if not isinstance(node, dict):
            return node
        if field and _is_enum(node):
            return self.use(node, field, owner)
        out = {}
        for key, value in node.items():
            if key == "properties" and isinstance(value, dict):
                out[key] = {name: self.walk(sub, name, owner) for name, sub in value.items()}
            elif key in ("items", "oneOf", "anyOf", "allOf", "additionalProperties"):
                out[key] = self.walk(value, field, owner)
            else:  # `not` (what may not be given), examples, enums of constants: as they are
                out[key] = value
        return out


def share_enums(result: dict) -> None:
    """Rewrites `result` (the whole document) so that every enum is a component."""
    components = result.setdefault("components", {}).setdefault("schemas", {})
    enums = _Enums(components)
    for name in list(components):
        schema = components[name]
        if isinstance(schema, dict) and "enum" not in schema:
            components[name] = enums.walk(schema, "", name)
    for path, operations in result.get("paths", {}).items():
        for method, operation in operations.items():
            if not isinstance(operation, dict):
                continue
            owner = operation.get("operationId") or f"{method}{path}"
            params = operation.get("parameters")
            if params:
                operation["parameters"] = [
                    {**p, "schema": enums.walk({"properties": {p["name"]: p["schema"]}}, "", owner)["properties"][p["name"]]}
                    if isinstance(p, dict) and "schema" in p and "name" in p else p
                    for p in params
                ]
