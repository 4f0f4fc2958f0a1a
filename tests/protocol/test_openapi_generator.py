"""The OpenAPI generator: a route table and the structs it names -> one document, the
schemas msgspec's, renamed where the API publishes another name."""

from __future__ import annotations

from typing import Annotated

import msgspec
import pytest

from deltaport.protocol.openapi import (
    Answer,
    Api,
    Content,
    Header,
    Operation,
    Parameter,
    RequestBody,
    openapi_document,
)


class Pet(msgspec.Struct):
    """A pet.

    Indented docstring lines lose their indentation."""

    name: Annotated[str, msgspec.Meta(max_length=10)]
    owner: Owner | None = None


class Owner(msgspec.Struct):
    name: str


class Error(msgspec.Struct):
    code: str


NAME = Parameter("name", "path", Annotated[str, msgspec.Meta(max_length=767)], required=True)
GET_PET = Operation(
    "get",
    "/pets/{name}",
    "getPet",
    "A pet",
    (
        Answer(200, "The pet", Content("application/json", Pet), (Header("X-Version", int),)),
        Answer(404, "No such pet", Content("application/json", Error)),
    ),
    (NAME, Parameter("limit", "query", int, "At most this many.")),
)
ADD_PET = Operation(
    "post",
    "/pets",
    "addPet",
    "Adds a pet",
    (Answer(204, "Added"),),
    body=RequestBody(Content("application/json", Pet), required=True),
    security=[],
)
API = Api(
    title="pets",
    security=[{"bearer": []}],
    security_schemes={"bearer": {"type": "http", "scheme": "bearer"}},
    schema_names={Pet: "Animal"},
)


def test_a_document_is_generated_from_the_route_table_and_its_structs() -> None:
    document = openapi_document(API, "/api", [GET_PET, ADD_PET])
    assert document["openapi"] == "3.1.0"
    assert document["servers"] == [{"url": "/api"}]
    assert document["security"] == [{"bearer": []}]
    assert {(m, p) for p, item in document["paths"].items() for m in item} == {
        ("get", "/pets/{name}"),
        ("post", "/pets"),
    }
    get = document["paths"]["/pets/{name}"]["get"]
    assert "security" not in get  # the document's own
    assert get["parameters"] == [
        {
            "name": "name",
            "in": "path",
            "required": True,
            "schema": {"type": "string", "maxLength": 767},
        },
        {
            "name": "limit",
            "in": "query",
            "required": False,
            "description": "At most this many.",
            "schema": {"type": "integer"},
        },
    ]
    ok = get["responses"]["200"]
    assert ok["content"] == {
        "application/json": {"schema": {"$ref": "#/components/schemas/Animal"}}
    }
    assert ok["headers"] == {"X-Version": {"schema": {"type": "integer"}}}
    post = document["paths"]["/pets"]["post"]
    assert post["security"] == []
    assert post["requestBody"]["required"] is True
    schemas = document["components"]["schemas"]
    assert set(schemas) == {"Animal", "Owner", "Error"}
    animal = schemas["Animal"]
    assert animal["title"] == "Animal"
    assert animal["description"] == "A pet.\n\nIndented docstring lines lose their indentation."
    assert animal["required"] == ["name"]
    assert animal["properties"]["name"] == {"type": "string", "maxLength": 10}
    assert {"$ref": "#/components/schemas/Owner"} in animal["properties"]["owner"]["anyOf"]
    assert document["components"]["securitySchemes"] == {
        "bearer": {"type": "http", "scheme": "bearer"}
    }


def test_each_schema_is_the_one_msgspec_gives_its_struct() -> None:
    document = openapi_document(Api("pets"), "/", [GET_PET])
    _, components = msgspec.json.schema_components(
        [Pet], ref_template="#/components/schemas/{name}"
    )
    assert document["components"]["schemas"]["Owner"] == components["Owner"]
    assert document["components"]["schemas"]["Pet"]["properties"] == components["Pet"]["properties"]


def test_a_path_parameter_without_its_declaration_is_refused() -> None:
    undeclared = Operation("get", "/pets/{name}/toys/{toy}", "toys", "Toys", (), (NAME,))
    with pytest.raises(ValueError, match="path parameters"):
        openapi_document(API, "/", [undeclared])
    declared_only = Operation("get", "/pets", "pets", "Pets", (), (NAME,))
    with pytest.raises(ValueError, match="path parameters"):
        openapi_document(API, "/", [declared_only])


def test_a_route_declared_twice_is_refused() -> None:
    with pytest.raises(ValueError, match="declared twice"):
        openapi_document(API, "/", [GET_PET, GET_PET])


def test_two_components_of_one_name_are_refused() -> None:
    with pytest.raises(ValueError, match="one name"):
        openapi_document(Api("pets", schema_names={Pet: "Owner"}), "/", [GET_PET])


def test_a_document_without_schemas_has_no_components() -> None:
    probe = Operation("get", "/livez", "livez", "Liveness", (Answer(200, "ok"),))
    document = openapi_document(Api("probes", description="Open."), "/", [probe])
    assert "components" not in document
    assert document["info"] == {"title": "probes", "version": "1", "description": "Open."}
    assert document["security"] == []
