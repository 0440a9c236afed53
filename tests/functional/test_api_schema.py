"""The OpenAPI contract: valid OpenAPI 3, local Swagger UI / ReDoc, examples that validate."""

import pytest
from django.test import Client
from drf_spectacular.generators import SchemaGenerator
from drf_spectacular.validation import validate_schema

from planner.api.schema import SPEC_EXAMPLES
from planner.engine.spec import KINDS, parse_workload_spec


@pytest.fixture(scope="module")
def schema(django_db_setup, django_db_blocker):
    with django_db_blocker.unblock():  # catalog ids become enums (none in this empty test database)
        return SchemaGenerator().get_schema(request=None, public=True)


def test_schema_validates_as_openapi_3(schema):
    validate_schema(schema)  # raises on an invalid document
    assert schema["openapi"].startswith("3.")


def test_schema_covers_the_planner_api(schema):
    for path in ("/api/v1/plans/", "/api/v1/plans/{plan_id}/versions/{number}/", "/api/v1/estimate/",
                 "/api/v1/plans/{plan_id}/recompute/", "/api/v1/tokens/", "/api/v1/workloads/{id}/"):
        assert path in schema["paths"] or path.replace("{id}", "{pk}") in schema["paths"], path


def test_every_api_operation_documents_the_error_shape(schema):
    op = schema["paths"]["/api/v1/estimate/"]["post"]
    for code in ("400", "401", "413", "429"):
        assert op["responses"][code]["content"]["application/json"]["schema"] == {
            "$ref": "#/components/schemas/Problem"}


def test_plan_create_has_examples_for_each_kind(schema):
    body = schema["paths"]["/api/v1/plans/"]["post"]["requestBody"]["content"]["application/json"]
    kinds = {ex["value"]["spec"]["kind"] for ex in body["examples"].values() if "spec" in ex["value"]}
    assert kinds == {spec["kind"] for spec in SPEC_EXAMPLES.values()} == set(KINDS)


@pytest.mark.parametrize("key", sorted(SPEC_EXAMPLES))
def test_spec_example_is_a_valid_workload_spec(key):
    spec = parse_workload_spec(SPEC_EXAMPLES[key])
    assert key in (spec.kind, f"{spec.kind}_external_generator")


@pytest.mark.django_db
def test_schema_endpoint_serves_json():
    response = Client().get("/api/v1/schema/", HTTP_ACCEPT="application/vnd.oai.openapi+json")
    assert response.status_code == 200
    assert "/api/v1/plans/" in response.json()["paths"]


@pytest.mark.django_db
@pytest.mark.parametrize("url", ["/api/v1/docs/", "/api/v1/redoc/"])
def test_docs_pages_use_local_static_files(url):
    html = Client().get(url).content.decode()
    assert "drf_spectacular_sidecar" in html
    assert "cdn.jsdelivr" not in html and "unpkg.com" not in html


@pytest.mark.django_db
@pytest.mark.parametrize("url", ["/api/v1/docs/", "/api/v1/redoc/"])
def test_docs_pages_have_no_inline_scripts(url):
    # The Content-Security-Policy allows scripts only from our own files.
    import re

    html = Client().get(url).content.decode()
    assert not re.findall(r"<script(?![^>]*\bsrc=)[^>]*>", html)


def test_spec_and_costs_bodies_reference_the_engine_schemas(schema):
    components = schema["components"]["schemas"]
    for name in ("WorkloadInRequest", "PlanFromSpecRequest", "EstimateInRequest"):
        spec = components[name]["properties"]["spec"]
        assert spec["allOf"] == [{"$ref": "#/components/schemas/WorkloadSpec"}]
    assert components["EstimateInRequest"]["properties"]["costs"]["allOf"] == [
        {"$ref": "#/components/schemas/CostOptions"}]
    # one complete alternative per kind, two for rag (self-hosted or external generator), each
    # with an example request
    names = {ref["$ref"].rsplit("/", 1)[-1] for ref in components["WorkloadSpec"]["oneOf"]}
    assert names == {f"WorkloadSpec_{key}" for key in SPEC_EXAMPLES}
    assert "anyOf" not in components["WorkloadSpec_rag"]


def test_exports_document_their_media_types_and_formats(schema):
    for path in ("/api/v1/plans/{plan_id}/versions/{number}/export/{fmt}/",
                 "/api/v1/shared/{token}/versions/{number}/export/{fmt}/"):
        op = schema["paths"][path]["get"]
        content = op["responses"]["200"]["content"]
        # binary types first: a generator taking the first media type reads bytes (issue 23 part 5)
        assert list(content) == [
            "application/pdf", "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet", "text/csv"]
        assert all(media["schema"] == {"type": "string", "format": "binary"} for media in content.values())
        [fmt] = [p for p in op["parameters"] if p["name"] == "fmt"]
        fmt_schema = schema["components"]["schemas"][fmt["schema"]["$ref"].rsplit("/", 1)[-1]]
        assert sorted(fmt_schema["enum"]) == ["csv", "pdf", "xlsx"]


def test_plan_create_is_two_complete_alternatives(schema):
    components = schema["components"]["schemas"]
    assert components["PlanCreateInRequest"]["oneOf"] == [
        {"$ref": "#/components/schemas/PlanFromSpecRequest"}, {"$ref": "#/components/schemas/PlanFromWorkloadRequest"}]
    assert "properties" not in components["PlanCreateInRequest"]
    spec, workload = components["PlanFromSpecRequest"], components["PlanFromWorkloadRequest"]
    assert spec["required"] == ["team", "spec"] and set(spec["properties"]) == {"team", "spec", "name", "costs"}
    assert workload["required"] == ["workload"] and set(workload["properties"]) == {"workload", "name", "costs"}


def test_results_are_typed_components(schema):
    components = schema["components"]["schemas"]
    ref = lambda name: {"$ref": f"#/components/schemas/{name}"}  # noqa: E731
    assert components["VersionOut"]["properties"]["result"]["allOf"] == [ref("PlanResult")]
    assert components["PlanResult"]["properties"] == {
        "decision": ref("PlanDecision"), "sizing": ref("SizingResult"), "costs": ref("CostResult")}
    estimate = components["EstimateOut"]["properties"]
    assert estimate["decision"] == ref("PlanDecision") and estimate["sizing"] == ref("SizingResult")
    assert estimate["costs"]["allOf"] == [ref("CostResult")]
    assert components["PlanOut"]["properties"]["costs"]["allOf"] == [ref("CostOptions")]


def _inline_enums(node, path=""):
    """Enums still written inline (other than one-value constants such as a spec's `kind`)."""
    if isinstance(node, list):
        for i, item in enumerate(node):
            yield from _inline_enums(item, f"{path}/{i}")
    elif isinstance(node, dict):
        values = node.get("enum")
        if isinstance(values, list) and (len(values) > 1 or None in values or node.get("nullable")):
            yield path
        for key, value in node.items():
            if key != "not":
                yield from _inline_enums(value, f"{path}/{key}")


def test_enums_are_shared_components(schema):
    components = schema["components"]["schemas"]
    inline = [p for name, c in components.items() if "enum" not in c for p in _inline_enums(c, name)]
    inline += list(_inline_enums(schema["paths"], "paths"))
    assert inline == []
    runtime = components["ServingSpec"]["properties"]["runtime"]
    assert runtime == {"allOf": [{"$ref": "#/components/schemas/RuntimeEnum"}], "nullable": True}
    assert None not in components["RuntimeEnum"]["enum"]
    # one component per set of values: the three precisions share one
    precision = components["PrecisionSpec"]["properties"]
    assert {p["allOf"][0]["$ref"] for p in precision.values()} == {"#/components/schemas/PrecisionEnum"}


def test_spec_sections_and_model_choices_are_shared_components(schema):
    components = schema["components"]["schemas"]
    ref = lambda name: {"$ref": f"#/components/schemas/{name}"}  # noqa: E731
    for kind in ("inference", "rag"):
        props = components[f"WorkloadSpec_{kind}"]["properties"]
        assert props["serving"] == {"allOf": [ref("ServingSpec")], "nullable": True}
        assert props["hardware"] == {"allOf": [ref("ServingHardwareSpec")], "nullable": True}
        assert props["model"]["oneOf"] == [ref("PresetModel"), ref("ArchitectureModel"), ref("HfConfigModel")]
    assert components["WorkloadSpec_pretraining"]["properties"]["hardware"] == {
        "allOf": [ref("HardwareSpec")], "nullable": True}
    assert "tensor_parallel" in components["ServingHardwareSpec"]["properties"]
    assert "tensor_parallel" not in components["HardwareSpec"]["properties"]
    assert components["WorkloadSpec_classic_training"]["properties"]["training"] == ref("ClassicTrainingSpec")


@pytest.mark.django_db
def test_decimal_filters_are_bounded_to_their_column(schema, client):
    [param] = [p for p in schema["paths"]["/api/v1/accelerators/"]["get"]["parameters"]
               if p["name"] == "min_memory_gib"]
    assert param["schema"]["maximum"] == 999999.99  # memory_gib: max_digits 8, decimal_places 2
    from django.contrib.auth import get_user_model

    client.force_login(get_user_model().objects.create_user("reader"))
    assert client.get("/api/v1/accelerators/", {"min_memory_gib": "999999.99"}).status_code == 200
    assert client.get("/api/v1/accelerators/", {"min_memory_gib": "1000000"}).status_code == 400
