"""The sharing server's REST API: listings, table version and metadata, queries and
change-data requests; NDJSON answers are returned as raw lines with their headers."""

from __future__ import annotations

import functools
import os
import ssl
from collections.abc import Mapping
from dataclasses import dataclass
from importlib.metadata import version
from typing import Any
from urllib.parse import quote

import httpx
import msgspec

from deltaport.client.base.errors import SharingError
from deltaport.client.base.models import Table
from deltaport.client.remote.auth import Credentials, credentials_for
from deltaport.client.remote.retry import RetryPolicy, call_with_retries, check_retryable
from deltaport.protocol.profile import Profile

USER_AGENT = f"deltaport/{version('deltaport')}"
VERSION_HEADER = "delta-table-version"
CAPABILITIES_HEADER = "delta-sharing-capabilities"


@dataclass(frozen=True)
class LinesResponse:
    """An NDJSON answer, read to its end."""

    headers: httpx.Headers
    lines: list[bytes]


def new_http_client(max_connections: int = 32, timeout: float = 120.0) -> httpx.Client:
    """A pooled HTTP client for sharing servers and pre-signed file URLs."""
    limits = httpx.Limits(
        max_connections=max_connections, max_keepalive_connections=max_connections
    )
    return httpx.Client(
        verify=_tls_context(os.environ.get("SSL_CERT_FILE"), os.environ.get("SSL_CERT_DIR")),
        limits=limits,
        timeout=httpx.Timeout(timeout, connect=30.0),
        headers={"User-Agent": USER_AGENT},
        follow_redirects=True,
    )


@functools.cache
def _tls_context(cert_file: str | None, cert_dir: str | None) -> ssl.SSLContext:
    """httpx's default TLS context, made once per process for each value of the trust
    store variables httpx reads (the arguments): loading the CA bundle takes about
    0.4 s, which every short-lived client (a Spark task's) paid."""
    return httpx.create_ssl_context()


def path_segment(name: str) -> str:
    return quote(name, safe="")


def table_path(table: Table) -> str:
    return (
        f"/shares/{path_segment(table.share)}/schemas/{path_segment(table.schema)}"
        f"/tables/{path_segment(table.name)}"
    )


class RestClient:
    """Authenticated, retrying calls to one sharing server."""

    def __init__(
        self,
        profile: Profile,
        http: httpx.Client | None = None,
        retry: RetryPolicy | None = None,
    ) -> None:
        self.profile = profile
        self.http = http or new_http_client()
        self.retry = retry or RetryPolicy()
        self._credentials: Credentials = credentials_for(profile, self.http, self.retry)

    def close(self) -> None:
        self.http.close()

    # -- raw requests -------------------------------------------------------------------
    def _send(
        self,
        method: str,
        path: str,
        *,
        params: Mapping[str, Any] | None = None,
        json: Mapping[str, Any] | None = None,
        headers: Mapping[str, str] | None = None,
    ) -> httpx.Response:
        url = self.profile.endpoint + path
        refused_once = False

        def send(request_headers: Mapping[str, str]) -> httpx.Response:
            response = self.http.request(
                method, url, params=params, json=json, headers=request_headers
            )
            response.read()
            return response

        def attempt() -> httpx.Response:
            nonlocal refused_once
            request_headers = {"Authorization": self._credentials.authorization()}
            request_headers.update(headers or {})
            response = send(request_headers)
            if response.status_code == 401 and not refused_once:
                refused_once = True
                self._credentials.invalidate()
                authorization = self._credentials.authorization()
                response = send({**request_headers, "Authorization": authorization})
            return check_retryable(response)

        response = call_with_retries(attempt, self.retry, f"{method} {path}")
        if response.status_code >= 400:
            raise SharingError.from_response(response)
        return response

    def post_json(self, path: str, body: Mapping[str, Any]) -> bytes:
        """POST a JSON body; the answer's bytes."""
        return self._send("POST", path, json=body).content

    def get_json(self, path: str, params: Mapping[str, Any] | None = None) -> Any:
        response = self._send("GET", path, params=_clean(params))
        try:
            return msgspec.json.decode(response.content)
        except msgspec.DecodeError as exc:
            raise SharingError(f"GET {path}: the answer is not JSON: {exc}") from None

    def lines(
        self,
        method: str,
        path: str,
        *,
        params: Mapping[str, Any] | None = None,
        json: Mapping[str, Any] | None = None,
        headers: Mapping[str, str] | None = None,
    ) -> LinesResponse:
        """Send a request answered with NDJSON; a stream cut short is retried whole."""
        response = self._send(method, path, params=_clean(params), json=json, headers=headers)
        lines = [line for line in response.content.splitlines() if line.strip()]
        return LinesResponse(response.headers, lines)

    # -- endpoints ---------------------------------------------------------------------
    def list_page(
        self, path: str, max_results: int | None, page_token: str | None
    ) -> tuple[list[dict[str, Any]], str | None]:
        body = self.get_json(path, {"maxResults": max_results, "pageToken": page_token})
        if not isinstance(body, dict):
            raise SharingError(f"GET {path}: expected a JSON object, got {type(body).__name__}")
        return list(body.get("items") or []), body.get("nextPageToken") or None

    def table_version(self, table: Table, starting_timestamp: str | None = None) -> int:
        response = self._send(
            "GET",
            table_path(table) + "/version",
            params=_clean({"startingTimestamp": starting_timestamp}),
        )
        return version_header(response.headers)


def version_header(headers: httpx.Headers) -> int:
    value = headers.get(VERSION_HEADER)
    if value is None:
        raise SharingError(f"the server's answer lacks the {VERSION_HEADER} header")
    try:
        return int(value)
    except ValueError:
        raise SharingError(f"invalid {VERSION_HEADER} header {value!r}") from None


def _clean(params: Mapping[str, Any] | None) -> dict[str, Any] | None:
    if params is None:
        return None
    out: dict[str, Any] = {}
    for key, value in params.items():
        if value is None:
            continue
        out[key] = str(value).lower() if isinstance(value, bool) else value
    return out
