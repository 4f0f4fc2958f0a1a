"""A schema's comment through the provider API in Unity Catalog's shape: an ``UPDATE`` of a
``SCHEMA`` data object sets it (a schema exists through its tables, so it is never added or
removed on its own), answers list it, and recipients see it in the schema listing."""

from __future__ import annotations

import time
from pathlib import Path

import httpx

from admin_support import CatalogAdminServer

UC = "/api/2.1/unity-catalog"
SHARE = f"{UC}/shares/schema_notes"


def _schema(comment: str | None, action: str = "UPDATE", **extra: object) -> dict[str, object]:
    obj: dict[str, object] = {"name": "eu", "data_object_type": "SCHEMA", **extra}
    if comment is not None:
        obj["comment"] = comment
    return {"action": action, "data_object": obj}


def _refused(api: httpx.Client, update: dict[str, object], *words: str) -> None:
    answer = api.patch(SHARE, json={"updates": [update]})
    assert answer.status_code == 400, answer.text
    assert answer.json()["error_code"] == "INVALID_PARAMETER_VALUE"
    for word in words:
        assert word in answer.json()["message"], answer.text


def test_an_update_of_a_schema_object_sets_its_comment(
    catalog_admin_server: CatalogAdminServer, admin_tables: dict[str, Path]
) -> None:
    catalog = catalog_admin_server.catalog
    with catalog_admin_server.running.api() as api:
        assert api.post(f"{UC}/shares", json={"name": "schema_notes"}).status_code == 200
        try:
            table = {
                "action": "ADD",
                "data_object": {"name": str(admin_tables["parted"]), "shared_as": "eu.t"},
            }
            # a schema added in the same update (through its table) takes its comment
            answer = api.patch(SHARE, json={"updates": [table, _schema("EU orders")]})
            assert answer.status_code == 200, answer.text
            schemas = [o for o in answer.json()["objects"] if o["data_object_type"] == "SCHEMA"]
            expected = {
                "name": "eu",
                "data_object_type": "SCHEMA",
                "comment": "EU orders",
                "status": "ACTIVE",
            }
            assert schemas == [expected]
            assert expected in api.get(SHARE).json()["objects"]
            (share,) = [s for s in catalog.contents().shares if s.name == "schema_notes"]
            assert share.schema("EU").comment == "EU orders"
            token = catalog.create_recipient("schema-notes-reader").token
            catalog.grant("schema_notes", "schema-notes-reader")
            with catalog_admin_server.running.sharing.client(token) as recipient:
                deadline = time.monotonic() + 30
                while True:  # the sharing listener follows the catalog within its poll
                    listed = recipient.get("/shares/schema_notes/schemas")
                    if listed.status_code == 200 or time.monotonic() > deadline:
                        break
                    time.sleep(0.1)
                (item,) = listed.json()["items"]
                assert (item["name"], item.get("comment")) == ("eu", "EU orders")
            # no comment given: it stays
            assert api.patch(SHARE, json={"updates": [_schema(None)]}).status_code == 200
            assert expected in api.get(SHARE).json()["objects"]

            _refused(api, _schema("x", "ADD"), "updates[0].action", "TABLE objects")
            _refused(api, _schema("x", "REMOVE"), "updates[0].action")
            _refused(api, _schema("x", shared_as="eu.t"), "data_object.shared_as")
            _refused(api, _schema("x", status="ACTIVE"), "data_object.status")
            missing = api.patch(
                SHARE,
                json={
                    "updates": [
                        {
                            **_schema("x"),
                            "data_object": {
                                "name": "nowhere",
                                "data_object_type": "SCHEMA",
                                "comment": "x",
                            },
                        }
                    ]
                },
            )
            assert missing.status_code == 404, missing.text
            assert expected in api.get(SHARE).json()["objects"]  # nothing changed
        finally:
            api.delete(SHARE)
            if "schema-notes-reader" in catalog.contents().recipients:
                catalog.drop_recipient("schema-notes-reader")
