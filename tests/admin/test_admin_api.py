"""The admin API over HTTP: admin tokens only, the diff equal to the CLI's answer, and
nothing of the admin listener on the sharing listener."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import httpx
import msgspec
import pytest

from admin_support import ADMIN_TOKEN, HASHED_ADMIN_TOKEN, AdminServer
from deltaport.admin.openapi.document import Diff, admin_openapi
from sharing_server import TOKEN, RunningServer

DELTAPORT = str(Path(sys.executable).parent / "deltaport")


def cli(*args: str) -> str:
    done = subprocess.run(
        [DELTAPORT, "diff", *args], capture_output=True, text=True, check=True, timeout=120
    )
    return done.stdout


def without_run_time(answer: dict[str, Any]) -> dict[str, Any]:
    return {**answer, "metrics": {**answer["metrics"], "run_time_ms": None}}


@pytest.mark.parametrize("token", [None, TOKEN, "not-an-admin-token-123456"])
def test_the_api_refuses_all_but_admin_tokens(admin_server: AdminServer, token: str | None) -> None:
    with admin_server.api(token) as api:
        response = api.get("/api/diff", params={"left": "a", "right": "b"})
    assert response.status_code == 401
    assert response.json()["errorCode"] == "UNAUTHENTICATED"


@pytest.mark.parametrize("token", [ADMIN_TOKEN, HASHED_ADMIN_TOKEN])
def test_admin_tokens_open_the_api(admin_server: AdminServer, token: str) -> None:
    with admin_server.api(token) as api:
        response = api.get(
            "/api/diff", params={"left": "lake.branches.left", "right": "lake.branches.right"}
        )
    assert response.status_code == 200
    assert response.json()["table_diff_type"] == "changed"


def test_over_long_headers_are_refused_before_the_api(admin_server: AdminServer) -> None:
    with admin_server.api() as api:
        response = api.get(
            "/api/diff", params={"left": "a", "right": "b"}, headers={"X-Filler": "f" * 20_000}
        )
    assert response.status_code == 431
    assert response.json()["errorCode"] == "REQUEST_HEADER_TOO_LARGE"


def test_the_commit_diff_equals_the_cli(
    admin_server: AdminServer, admin_tables: dict[str, Path]
) -> None:
    left, right = str(admin_tables["left"]), str(admin_tables["right"])
    expected = json.loads(cli(left, right, "--json"))
    with admin_server.api() as api:
        by_name = api.get(
            "/api/diff", params={"left": "lake.branches.left", "right": "lake.branches.right"}
        ).json()
        by_location = api.get("/api/diff", params={"left": left, "right": right}).json()
    assert without_run_time(by_location) == without_run_time(expected)
    assert without_run_time(by_name) == without_run_time(expected)
    assert [e["id"] for e in expected["results"]] == ["3", "2"]
    assert set(expected["results"][0]) == {
        "id",
        "timestamp",
        "operation",
        "operation_type",
        "operation_content",
    }


def test_the_commit_diff_pages_as_the_cli(
    admin_server: AdminServer, admin_tables: dict[str, Path]
) -> None:
    left, right = str(admin_tables["left"]), str(admin_tables["right"])
    first = json.loads(cli(left, right, "--json", "--limit", "1"))
    second = json.loads(
        cli(left, right, "--json", "--limit", "1", "--page-token", first["next_page_token"])
    )
    with admin_server.api() as api:
        page = api.get("/api/diff", params={"left": left, "right": right, "limit": 1}).json()
        token = page["next_page_token"]
        page2 = api.get(
            "/api/diff", params={"left": left, "right": right, "limit": 1, "page_token": token}
        ).json()
    assert without_run_time(page) == without_run_time(first)
    assert without_run_time(page2) == without_run_time(second)


def test_the_row_diff_equals_the_cli(
    admin_server: AdminServer, admin_tables: dict[str, Path]
) -> None:
    left, right = str(admin_tables["left"]), str(admin_tables["right"])
    lines = [
        json.loads(line)
        for line in cli(left, right, "--rows", "--key", "id", "--json").splitlines()
    ]
    with admin_server.api() as api:
        answer = api.get(
            "/api/diff",
            params={"left": "lake.branches.left", "right": "lake.branches.right"}
            | {"rows": "true", "key": "id"},
        ).json()
    assert answer["summary"] == lines[0]
    assert answer["changes"] == lines[1:]
    assert {c["change"] for c in answer["changes"]} == {"inserted", "deleted", "updated"}
    assert answer["next_page_token"] is None


def test_one_table_at_two_versions(admin_server: AdminServer) -> None:
    params = {"left": "lake.main.parted", "right": "lake.main.parted"}
    with admin_server.api() as api:
        commits = api.get("/api/diff", params=params | {"left_version": 0, "right_version": 2})
        rows = api.get(
            "/api/diff",
            params=params | {"left_version": 0, "right_version": 2, "rows": "true", "key": "id"},
        )
    assert [e["id"] for e in commits.json()["results"]] == ["2", "1"]
    assert rows.json()["summary"]["inserted"] == 10


@pytest.mark.parametrize(
    ("params", "status", "code"),
    [
        ({"left": "lake.branches.left"}, 400, "INVALID_PARAMETER_VALUE"),
        ({"left": "/no/such/a", "right": "/no/such/b"}, 404, "RESOURCE_DOES_NOT_EXIST"),
        (
            {"left": "lake.branches.left", "right": "lake.branches.right", "limit": "x"},
            400,
            "INVALID_PARAMETER_VALUE",
        ),
        (
            {"left": "lake.branches.left", "right": "lake.branches.right", "page_token": "zz"},
            400,
            "INVALID_PARAMETER_VALUE",
        ),
    ],
)
def test_errors_are_json_with_status_and_code(
    admin_server: AdminServer, params: dict[str, str], status: int, code: str
) -> None:
    with admin_server.api() as api:
        response = api.get("/api/diff", params=params)
    assert response.status_code == status, response.text
    assert response.json()["errorCode"] == code


def test_every_kind_of_diff_answer_is_what_the_document_declares(
    admin_server: AdminServer,
) -> None:
    tables = {"left": "lake.branches.left", "right": "lake.branches.right"}
    one_table = {"left": "lake.main.parted", "right": "lake.main.parted"}
    versions = {"left_version": 0, "right_version": 2}
    with admin_server.api() as api:
        answers = [
            api.get("/api/diff", params=tables | {"limit": 1}),
            api.get("/api/diff", params=one_table | versions),
            api.get("/api/diff", params=tables | {"rows": "true", "key": "id"}),
        ]
    for answer in answers:
        assert answer.status_code == 200, answer.text
        diff = msgspec.convert(answer.json(), Diff)  # unknown members refused
        assert set(answer.json()) <= set(Diff.__struct_fields__)
        assert diff.results is not None or diff.changes is not None
    try:
        msgspec.convert(answers[0].json() | {"extra": 1}, Diff)
    except msgspec.ValidationError as error:
        assert "extra" in str(error)
    else:
        raise AssertionError("a member the document does not declare was accepted")


def test_the_openapi_document_lists_the_routes(admin_server: AdminServer) -> None:
    document = httpx.get(admin_server.admin + "/api/openapi.json").json()
    assert document == admin_openapi()
    assert {"/api/diff", "/api/openapi.json", "/api/catalog", "/api/recipients"} <= set(
        document["paths"]
    )
    names = {p["name"] for p in document["paths"]["/api/diff"]["get"]["parameters"]}
    assert {"left", "right", "rows", "key", "page_token", "left_version"} <= names


@pytest.mark.parametrize("path", ["/api/diff", "/api/openapi.json", "/console/login", "/"])
@pytest.mark.parametrize("token", [ADMIN_TOKEN, TOKEN])
def test_nothing_of_it_on_the_sharing_listener(
    admin_server: AdminServer, path: str, token: str
) -> None:
    response = httpx.get(
        admin_server.sharing.base + path, headers={"Authorization": f"Bearer {token}"}
    )
    assert response.status_code == 404
    assert "errorCode" in response.json()


def test_no_admin_listener_unless_configured(server: RunningServer) -> None:
    log = server.log()
    assert "admin listener" not in log
    assert log.count("Uvicorn running on") == 1
    response = httpx.get(server.base + "/api/diff", headers={"Authorization": f"Bearer {TOKEN}"})
    assert response.status_code == 404
