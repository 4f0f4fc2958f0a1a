"""The catalog commands against a running server (``--server URL``): the same operations
as :class:`~deltaport.catalog.sql_store.SqlCatalog`, made through the server's admin API
with an admin token, for a provider who cannot reach the database itself."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime, timedelta
from typing import Any
from urllib.parse import quote, urlencode

import httpx

from deltaport.catalog.recipient_access import ActivationLink
from deltaport.catalog.rows import (
    KEEP,
    NO_DETAILS,
    CatalogConflictError,
    CatalogContents,
    CatalogError,
    CatalogNotFoundError,
    Details,
    IssuedToken,
    Keep,
    RecipientRow,
    SchemaRow,
    ShareRow,
    TableRow,
    TokenRow,
)


class RemoteCatalog:
    def __init__(self, server: str, admin_token: str) -> None:
        self._http = httpx.Client(
            base_url=server.rstrip("/"),
            headers={"Authorization": f"Bearer {admin_token}"},
            timeout=120,
        )

    def contents(self) -> CatalogContents:
        body = self._call("GET", "/api/catalog")
        tokens: dict[str, TokenRow] = {}
        recipients: dict[str, RecipientRow] = {}
        for r in body["recipients"]:
            key = r["name"].casefold()
            shares = tuple(s.casefold() for s in r["shares"])
            lifetime = r.get("tokenLifetimeSeconds")
            recipients[key] = RecipientRow(
                r["name"],
                r["properties"],
                shares,
                r.get("endpoint"),
                None if lifetime is None else timedelta(seconds=lifetime),
            )
            for i, t in enumerate(r["tokens"]):
                tokens[f"{key}#{i}"] = TokenRow(key, t["expiresAt"], t["revokedAt"])
        return CatalogContents(
            body["generation"],
            tuple(
                ShareRow(
                    s["name"],
                    s["id"],
                    s["comment"],
                    s.get("displayName"),
                    tuple((s.get("properties") or {}).items()),
                )
                for s in body["shares"]
            ),
            tuple(_table(t) for t in body["tables"]),
            recipients,
            tokens,
        )

    def create_share(
        self, name: str, comment: str | None = None, details: Details = NO_DETAILS
    ) -> None:
        body = {
            "name": name,
            "comment": comment,
            "displayName": details.display_name,
            "properties": dict(details.properties),
        }
        self._call("POST", "/api/shares", body)

    def drop_share(self, name: str) -> None:
        self._call("DELETE", f"/api/shares/{_q(name)}")

    def grant(self, share: str, recipient: str) -> None:
        self._call("POST", f"/api/shares/{_q(share)}/grants", {"recipient": recipient})

    def revoke_grant(self, share: str, recipient: str) -> None:
        self._call("DELETE", f"/api/shares/{_q(share)}/grants/{_q(recipient)}")

    def add_table(
        self,
        full_name: str,
        location: str,
        *,
        history_shared: bool,
        start_version: int,
        partition_filter: str | None,
        access_modes: Sequence[str],
        auxiliary_locations: Sequence[str],
        comment: str | None = None,
        details: Details = NO_DETAILS,
    ) -> str:
        """Add a table; the server checks the location, the filter and the access modes
        (with its storage configuration)."""
        body = {
            "comment": comment,
            "displayName": details.display_name,
            "properties": dict(details.properties),
            "name": full_name,
            "location": location,
            "historyShared": history_shared,
            "startVersion": start_version,
            "partitionFilter": partition_filter,
            "accessModes": list(access_modes),
            "auxiliaryLocations": list(auxiliary_locations),
        }
        return str(self._call("POST", "/api/tables", body)["message"])

    def set_schema_details(
        self,
        share: str,
        schema: str,
        *,
        display_name: str | Keep | None = KEEP,
        comment: str | Keep | None = KEEP,
        properties: Mapping[str, str] | Keep = KEEP,
    ) -> SchemaRow:
        """As :meth:`SqlCatalog.set_schema_details` (``PATCH /api/shares/{share}/schemas/
        {schema}``, with the members given)."""
        given = {"displayName": display_name, "comment": comment, "properties": properties}
        body = {k: dict(v) if isinstance(v, Mapping) else v for k, v in given.items()}
        path = f"/api/shares/{_q(share)}/schemas/{_q(schema)}"
        answer = self._call("PATCH", path, {k: v for k, v in body.items() if v is not KEEP})
        return SchemaRow(
            answer["comment"], answer["displayName"], tuple(answer["properties"].items())
        )

    def remove_table(self, share: str, schema: str, name: str) -> None:
        self._call("DELETE", f"/api/tables/{_q(f'{share}.{schema}.{name}')}")

    def create_recipient(
        self,
        name: str,
        properties: Mapping[str, str] | None = None,
        expires_in: timedelta | None = None,
        endpoint: str | None = None,
        *,
        ip_access_list: Sequence[str] = (),
        max_ip_entries: int = 0,
        authentication_type: str = "TOKEN",
    ) -> IssuedToken:
        """As :meth:`SqlCatalog.create_recipient`; without ``endpoint``, the profile points
        where the server says recipients reach it (``max_ip_entries`` is the server's)."""
        body: dict[str, Any] = {
            "name": name,
            "properties": dict(properties or {}),
            "expiresInSeconds": _seconds(expires_in),
            "ipAccessList": list(ip_access_list),
            "authenticationType": authentication_type,
        }
        if endpoint is not None:
            body["endpoint"] = endpoint
        return self._issued(self._call("POST", "/api/recipients", body))

    def create_recipient_with_link(
        self,
        name: str,
        properties: Mapping[str, str] | None = None,
        expires_in: timedelta | None = None,
        *,
        endpoint: str | None = None,
        ip_access_list: Sequence[str] = (),
        authentication_type: str = "TOKEN",
    ) -> ActivationLink:
        """As :meth:`SqlCatalog.create_recipient_with_link`; the server's link lifetime
        (``activationLinkLifetimeSeconds``) and IP list bound apply, and its sharing URL
        unless ``endpoint`` is given."""
        body: dict[str, Any] = {
            "name": name,
            "properties": dict(properties or {}),
            "expiresInSeconds": _seconds(expires_in),
            "ipAccessList": list(ip_access_list),
            "activation": True,
        }
        if endpoint is not None:
            body["endpoint"] = endpoint
        answer = self._call("POST", "/api/recipients", body)
        link = answer["activation"]
        return ActivationLink(answer["recipient"], link["token"], link["expiresAt"], link["url"])

    def set_ip_access_list(
        self, name: str, entries: Sequence[str], max_entries: int = 0
    ) -> tuple[str, ...]:
        """As :meth:`SqlCatalog.set_ip_access_list` (the server's maximum applies)."""
        path = f"/api/recipients/{_q(name)}/ip-access-list"
        answer = self._call("PUT", path, {"ipAccessList": list(entries)})
        return tuple(answer["ipAccessList"])

    def rotate(
        self,
        name: str,
        old_valid_for: timedelta,
        expires_in: timedelta | Keep | None = KEEP,
        *,
        endpoint: str | None = None,
        default_endpoint: str | None = None,
    ) -> IssuedToken:
        """As :meth:`SqlCatalog.rotate`; the server's own sharing URL is the default
        endpoint (``default_endpoint`` is not used)."""
        body: dict[str, Any] = {"graceSeconds": int(old_valid_for.total_seconds())}
        if not isinstance(expires_in, Keep):
            body["expiresInSeconds"] = _seconds(expires_in)
        if endpoint is not None:
            body["endpoint"] = endpoint
        return self._issued(self._call("POST", f"/api/recipients/{_q(name)}/rotate", body))

    def revoke(self, name: str) -> None:
        self._call("POST", f"/api/recipients/{_q(name)}/revoke")

    def audit_page(self, params: Mapping[str, str]) -> Any:
        """A page of the server's audit log (``GET /api/audit``), as it answered."""
        return self._call("GET", "/api/audit?" + urlencode(params))

    def _issued(self, answer: dict[str, Any]) -> IssuedToken:
        profile = answer["profile"]
        expires = profile.get("expirationTime")
        expires_at = None
        if expires:
            stamp = datetime.fromisoformat(expires.replace("Z", "+00:00"))
            expires_at = int(stamp.timestamp() * 1000)
        if "clientId" in profile:
            return IssuedToken(
                answer["recipient"],
                profile["clientSecret"],
                expires_at,
                profile["endpoint"],
                profile["clientId"],
            )
        return IssuedToken(
            answer["recipient"], profile["bearerToken"], expires_at, profile["endpoint"]
        )

    def _call(self, method: str, path: str, body: object = None) -> Any:
        try:
            response = self._http.request(method, path, json=body)
        except httpx.HTTPError as exc:
            raise CatalogError(f"the server cannot be reached: {exc}") from None
        if response.status_code >= 400:
            try:
                message = str(response.json().get("message", response.text))
            except ValueError:
                message = response.text[:200]
            if response.status_code == 404:
                raise CatalogNotFoundError(message)
            if response.status_code == 409:
                raise CatalogConflictError(message)
            raise CatalogError(f"the server refused ({response.status_code}): {message}")
        return response.json() if response.content else {}


def _table(t: Mapping[str, Any]) -> TableRow:
    share, schema, name = t["name"].split(".")
    return TableRow(
        share,
        schema,
        name,
        t["location"],
        t["id"],
        t["historyShared"],
        t["startVersion"],
        t["partitionFilter"],
        tuple(t["accessModes"]),
        tuple(t["auxiliaryLocations"]),
        t.get("comment"),
        t.get("displayName"),
        tuple((t.get("properties") or {}).items()),
    )


def _q(name: str) -> str:
    return quote(name, safe="")


def _seconds(value: timedelta | None) -> int | None:
    return None if value is None else int(value.total_seconds())
