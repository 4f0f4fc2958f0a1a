"""The catalog's answers are declared whole by the structs of ``deltaport.iceberg.model``:
each answer of a real server decodes into its struct and encodes back to the same JSON (a
field the structs did not declare would be lost on the way), and the catalog's JSON Schema
(what the OpenAPI document will be generated from) accepts it."""

from __future__ import annotations

import httpx
import msgspec
import pytest

from deltaport.iceberg.model.catalog import (
    CatalogConfig,
    GetNamespaceResponse,
    IcebergErrorResponse,
    ListNamespacesResponse,
    ListTablesResponse,
    LoadCredentialsResponse,
    LoadTableResult,
)
from sharing_server import TOKEN

_NAMESPACE = "/v1/shares/Sales/namespaces/d"
ANSWERS: list[tuple[str, type[msgspec.Struct]]] = [
    ("/v1/config?warehouse=Sales", CatalogConfig),
    ("/v1/shares/Sales/namespaces", ListNamespacesResponse),
    ("/v1/shares/Sales/namespaces?pageSize=1", ListNamespacesResponse),
    (_NAMESPACE, GetNamespaceResponse),
    (_NAMESPACE + "/tables", ListTablesResponse),
    (_NAMESPACE + "/tables/basic/credentials", LoadCredentialsResponse),
    (_NAMESPACE + "/tables/variant", IcebergErrorResponse),
    (_NAMESPACE + "/tables/missing", IcebergErrorResponse),
    ("/v1/config", IcebergErrorResponse),
] + [
    (f"{_NAMESPACE}/tables/{name}{query}", LoadTableResult)
    for name in ("ranges", "basic", "dv", "cm")
    for query in ("", "?snapshots=refs")
]


@pytest.mark.parametrize(("path", "struct"), ANSWERS, ids=[p for p, _ in ANSWERS])
def test_an_answer_is_its_struct_whole(
    catalog_uri: str, path: str, struct: type[msgspec.Struct]
) -> None:
    answer = httpx.get(catalog_uri + path, headers={"Authorization": f"Bearer {TOKEN}"})
    decoded = msgspec.json.decode(answer.content, type=struct)
    assert msgspec.json.encode(decoded) == answer.content
    if struct is IcebergErrorResponse:
        assert isinstance(decoded, IcebergErrorResponse)
        assert decoded.error.code == answer.status_code >= 400
    else:
        assert answer.status_code == 200


def test_the_structs_have_a_json_schema() -> None:
    (schema,), components = msgspec.json.schema_components([LoadTableResult])
    assert schema == {"$ref": "#/$defs/LoadTableResult"}
    metadata = components["TableMetadata"]
    assert "next-row-id" in metadata["properties"]
    assert "next-row-id" not in metadata["required"]
    assert {"format-version", "schemas", "snapshots", "refs"} <= set(metadata["required"])
    primitive, nested = components["NestedField"]["properties"]["type"]["anyOf"]
    assert primitive == {"type": "string"}
    assert nested["discriminator"]["propertyName"] == "type"
    assert set(nested["discriminator"]["mapping"]) == {"struct", "list", "map"}
