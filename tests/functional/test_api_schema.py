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
    for name in ("WorkloadInRequest", "PlanCreateInRequest", "EstimateInRequest"):
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
        assert set(op["responses"]["200"]["content"]) == {
            "text/csv", "application/pdf", "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet"}
        [fmt] = [p for p in op["parameters"] if p["name"] == "fmt"]
        assert sorted(fmt["schema"]["enum"]) == ["csv", "pdf", "xlsx"]


@pytest.mark.django_db
def test_decimal_filters_are_bounded_to_their_column(schema, client):
    [param] = [p for p in schema["paths"]["/api/v1/accelerators/"]["get"]["parameters"]
               if p["name"] == "min_memory_gib"]
    assert param["schema"]["maximum"] == 999999.99  # memory_gib: max_digits 8, decimal_places 2
    from django.contrib.auth import get_user_model

    client.force_login(get_user_model().objects.create_user("reader"))
    assert client.get("/api/v1/accelerators/", {"min_memory_gib": "999999.99"}).status_code == 200
    assert client.get("/api/v1/accelerators/", {"min_memory_gib": "1000000"}).status_code == 400
