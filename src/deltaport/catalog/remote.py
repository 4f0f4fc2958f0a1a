"""The catalog commands against a running server (``--server URL``): the
:class:`~deltaport.catalog.interface.Catalog` operations made through the server's admin API
(and, for what it has no route for, its Unity Catalog-shaped API) with an admin token, for
a provider who cannot reach the database itself.

The server applies its own settings: the bounds of IP access lists, how long activation
links last. Two operations have no route that can carry them and are refused before
anything changes: changing a shared table, and a rotation answered with a link; so is a
recipient's comment or end given when it is created.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime, timedelta
from typing import Any
from urllib.parse import quote, urlencode

import httpx

from deltaport.catalog.recipient_access import (
    DEFAULT_LINK_LIFETIME,
    DEFAULT_MAX_ENTRIES,
    ActivationLink,
)
from deltaport.catalog.rows import (
    KEEP,
    NEW,
    NO_DETAILS,
    CatalogConflictError,
    CatalogContents,
    CatalogError,
    CatalogNotFoundError,
    ClientRow,
    Details,
    IssuedToken,
    Keep,
    RecipientChange,
    RecipientRow,
    RecipientSpec,
    RotationSpec,
    SchemaDetails,
    SchemaRow,
    ShareRow,
    TableRow,
    TableSpec,
    TokenRow,
)
from deltaport.catalog.tokens import TOKEN

UNITY = "/api/2.1/unity-catalog"


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
        clients: dict[str, ClientRow] = {}
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
                ip_access_list=tuple(r.get("ipAccessList", ())),
                authentication_type=r.get("authenticationType", TOKEN),
            )
            for i, t in enumerate(r["tokens"]):
                tokens[f"{key}#{i}"] = TokenRow(key, t["expiresAt"], t["revokedAt"])
            for c in r.get("oauthClients", ()):
                # the secret's hash stays on the server
                clients[c["clientId"]] = ClientRow(
                    "", TokenRow(key, c["expiresAt"], c["revokedAt"])
                )
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
            clients,
        )

    def create_share(
        self, name: str, comment: str | None = None, details: Details = NO_DETAILS
    ) -> ShareRow:
        body = {
            "name": name,
            "comment": comment,
            "displayName": details.display_name,
            "properties": dict(details.properties),
        }
        answer = self._call("POST", "/api/shares", body)
        return ShareRow(answer["name"], answer["id"], comment, *details.fields)

    def set_share_comment(self, name: str, comment: str | None) -> None:
        self._call("PATCH", f"{UNITY}/shares/{_q(name)}", {"comment": comment})

    def drop_share(self, name: str) -> None:
        self._call("DELETE", f"/api/shares/{_q(name)}")

    def grant(self, share: str, recipient: str) -> None:
        self._call("POST", f"/api/shares/{_q(share)}/grants", {"recipient": recipient})

    def revoke_grant(self, share: str, recipient: str) -> None:
        self._call("DELETE", f"/api/shares/{_q(share)}/grants/{_q(recipient)}")

    def add_table(self, share: str, schema: str, name: str, spec: TableSpec) -> TableRow:
        """Add a table; the server checks the location, the filter and the access modes
        (with its storage configuration)."""
        full_name = f"{share}.{schema}.{name}"
        body = {
            "comment": spec.comment,
            "displayName": spec.details.display_name,
            "properties": dict(spec.details.properties),
            "name": full_name,
            "location": spec.location,
            "historyShared": spec.history_shared,
            "startVersion": spec.start_version,
            "partitionFilter": spec.partition_filter,
            "accessModes": list(spec.access_modes),
            "auxiliaryLocations": list(spec.auxiliary_locations),
        }
        self._call("POST", "/api/tables", body)
        for t in self._call("GET", "/api/catalog")["tables"]:
            if t["name"].casefold() == full_name.casefold():
                return _table(t)
        raise CatalogNotFoundError(f"no table {full_name}")  # removed again meanwhile

    def update_table(self, share: str, schema: str, name: str, spec: TableSpec) -> None:
        raise CatalogError(
            f"table {share}.{schema}.{name}: a shared table is changed on the server's "
            "catalog database, not through --server"
        )

    def set_schema_details(self, share: str, schema: str, given: SchemaDetails) -> SchemaRow:
        """As :meth:`SqlCatalog.set_schema_details` (``PATCH /api/shares/{share}/schemas/
        {schema}``, with the members given)."""
        members = {
            "displayName": given.display_name,
            "comment": given.comment,
            "properties": given.properties,
        }
        body = {k: dict(v) if isinstance(v, Mapping) else v for k, v in members.items()}
        path = f"/api/shares/{_q(share)}/schemas/{_q(schema)}"
        answer = self._call("PATCH", path, {k: v for k, v in body.items() if v is not KEEP})
        return SchemaRow(
            answer["comment"], answer["displayName"], tuple(answer["properties"].items())
        )

    def remove_table(self, share: str, schema: str, name: str) -> None:
        self._call("DELETE", f"/api/tables/{_q(f'{share}.{schema}.{name}')}")

    def create_recipient(
        self, name: str, spec: RecipientSpec = NEW, *, max_ip_entries: int = DEFAULT_MAX_ENTRIES
    ) -> IssuedToken:
        """As :meth:`SqlCatalog.create_recipient`; without an endpoint, the profile points
        where the server says recipients reach it (``max_ip_entries`` is the server's)."""
        body = _recipient_body(name, spec)
        return self._issued(self._call("POST", "/api/recipients", body))

    def create_recipient_with_link(
        self,
        name: str,
        spec: RecipientSpec = NEW,
        *,
        link_lifetime: timedelta = DEFAULT_LINK_LIFETIME,
        max_ip_entries: int = DEFAULT_MAX_ENTRIES,
    ) -> ActivationLink:
        """As :meth:`SqlCatalog.create_recipient_with_link`; the server's link lifetime
        (``activationLinkLifetimeSeconds``) and IP list bound apply, and its sharing URL
        unless the spec gives an endpoint."""
        body = _recipient_body(name, spec) | {"activation": True}
        answer = self._call("POST", "/api/recipients", body)
        link = answer["activation"]
        return ActivationLink(answer["recipient"], link["token"], link["expiresAt"], link["url"])

    def update_recipient(
        self, name: str, change: RecipientChange, *, max_ip_entries: int = DEFAULT_MAX_ENTRIES
    ) -> None:
        """As :meth:`SqlCatalog.update_recipient` (the server's IP list bound applies)."""
        body: dict[str, Any] = {}
        if not isinstance(change.properties, Keep):
            body["properties_kvpairs"] = {"properties": dict(change.properties)}
        if not isinstance(change.comment, Keep):
            body["comment"] = change.comment
        if not isinstance(change.ip_access_list, Keep):
            body["ip_access_list"] = {"allowed_ip_addresses": list(change.ip_access_list)}
        self._call("PATCH", f"{UNITY}/recipients/{_q(name)}", body)

    def drop_recipient(self, name: str) -> None:
        self._call("DELETE", f"{UNITY}/recipients/{_q(name)}")

    def set_ip_access_list(
        self, name: str, entries: Sequence[str], max_entries: int = DEFAULT_MAX_ENTRIES
    ) -> tuple[str, ...]:
        """As :meth:`SqlCatalog.set_ip_access_list` (the server's maximum applies)."""
        path = f"/api/recipients/{_q(name)}/ip-access-list"
        answer = self._call("PUT", path, {"ipAccessList": list(entries)})
        return tuple(answer["ipAccessList"])

    def rotate(
        self, name: str, rotation: RotationSpec, *, default_endpoint: str | None = None
    ) -> IssuedToken:
        """As :meth:`SqlCatalog.rotate`; the server's own sharing URL is the default
        endpoint (``default_endpoint`` is not used)."""
        body: dict[str, Any] = {"graceSeconds": int(rotation.old_valid_for.total_seconds())}
        if not isinstance(rotation.expires_in, Keep):
            body["expiresInSeconds"] = _seconds(rotation.expires_in)
        if rotation.endpoint is not None:
            body["endpoint"] = rotation.endpoint
        return self._issued(self._call("POST", f"/api/recipients/{_q(name)}/rotate", body))

    def rotate_with_link(
        self,
        name: str,
        old_valid_for: timedelta,
        *,
        default_endpoint: str | None = None,
        link_lifetime: timedelta = DEFAULT_LINK_LIFETIME,
    ) -> ActivationLink:
        raise CatalogError(
            f"recipient {name!r}: a rotation answered with an activation link is made on "
            "the server's catalog database, not through --server"
        )

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


def _recipient_body(name: str, spec: RecipientSpec) -> dict[str, Any]:
    """The admin API's body of a new recipient; what it cannot carry (a comment, an end) is
    refused before anything changes."""
    _refuse_given(comment=spec.comment, expires_at=spec.expires_at)
    body: dict[str, Any] = {
        "name": name,
        "properties": dict(spec.properties),
        "expiresInSeconds": _seconds(spec.token_lifetime),
        "ipAccessList": list(spec.ip_access_list),
        "authenticationType": spec.authentication_type,
    }
    if spec.endpoint is not None:
        body["endpoint"] = spec.endpoint
    return body


def _refuse_given(**given: object) -> None:
    """Refuse, before anything changes, what the admin API cannot set on a new recipient."""
    for field, value in given.items():
        if value is not None:
            raise CatalogError(
                f"a new recipient's {field.replace('_', ' ')} is set on the server's catalog "
                "database, not through --server"
            )


def _q(name: str) -> str:
    return quote(name, safe="")


def _seconds(value: timedelta | None) -> int | None:
    return None if value is None else int(value.total_seconds())
