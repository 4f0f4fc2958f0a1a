"""GCS: a token downscoped by a Credential Access Boundary to one table directory.

The boundary keeps ``roles/storage.objectViewer`` on the bucket only where a condition
holds: the object's name starts with the directory (reads) or the listing's prefix does
(``storage.googleapis.com/objectListPrefix``, lists). The directory is written into CEL
string literals, escaped, so a quote or backslash in a path cannot change the expression.
The token lives as long as Google's token exchange decides (at most the source token's
remaining life, an hour at most). google-auth is an optional dependency
(``deltaport[credentials]``).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from datetime import UTC
from typing import Any

from deltaport.protocol.credentials import GcpOauthToken
from deltaport.storage.credentials.settings import CredentialError, Vended
from deltaport.storage.uri import Location

SCOPES = ["https://www.googleapis.com/auth/cloud-platform"]
_SERVICE_ACCOUNT_FILE_KEYS = (
    "google_service_account",
    "google_service_account_path",
    "service_account",
    "service_account_path",
    "google_application_credentials",
)
_SERVICE_ACCOUNT_KEY_KEYS = ("google_service_account_key", "service_account_key")
_CEL_ESCAPES = {
    "\\": "\\\\",
    '"': '\\"',
    "\a": "\\a",
    "\b": "\\b",
    "\f": "\\f",
    "\n": "\\n",
    "\r": "\\r",
    "\t": "\\t",
    "\v": "\\v",
}


def cel_string(text: str) -> str:
    """``text`` as a double-quoted CEL string literal."""
    return '"' + "".join(_CEL_ESCAPES.get(c, c) for c in text) + '"'


def access_boundary(bucket: str, prefix: str) -> dict[str, Any]:
    """The Credential Access Boundary for reading the directory ``prefix`` of ``bucket``."""
    directory = prefix.strip("/") + "/" if prefix.strip("/") else ""
    objects = f"projects/_/buckets/{bucket}/objects/{directory}"
    expression = (
        f"resource.name.startsWith({cel_string(objects)}) || "
        "api.getAttribute('storage.googleapis.com/objectListPrefix', '')"
        f".startsWith({cel_string(directory)})"
    )
    rule = {
        "availablePermissions": ["inRole:roles/storage.objectViewer"],
        "availableResource": f"//storage.googleapis.com/projects/_/buckets/{bucket}",
        "availabilityCondition": {"title": "table directory", "expression": expression},
    }
    return {"accessBoundary": {"accessBoundaryRules": [rule]}}


class GcsVendor:
    """Exchanges the provider's token for a downscoped one per call of :meth:`vend`."""

    def __init__(self, options: Mapping[str, str]) -> None:
        self._options = dict(options)
        self._source: Any = None

    def _source_credentials(self) -> Any:
        if self._source is None:
            import google.auth
            from google.oauth2 import service_account

            opts = self._options
            path = next((opts[k] for k in _SERVICE_ACCOUNT_FILE_KEYS if opts.get(k)), None)
            info = next((opts[k] for k in _SERVICE_ACCOUNT_KEY_KEYS if opts.get(k)), None)
            if info:
                self._source = service_account.Credentials.from_service_account_info(
                    json.loads(info), scopes=SCOPES
                )
            elif path:
                self._source = service_account.Credentials.from_service_account_file(
                    path, scopes=SCOPES
                )
            else:
                self._source, _ = google.auth.default(scopes=SCOPES)
        return self._source

    def vend(self, location: Location) -> Vended:
        from google.auth import downscoped
        from google.auth.exceptions import GoogleAuthError
        from google.auth.transport.requests import Request

        try:
            token = downscoped.Credentials(
                source_credentials=self._source_credentials(),
                credential_access_boundary=google_boundary(location.bucket, location.key),
            )
            token.refresh(Request())
        except (GoogleAuthError, OSError, ValueError) as exc:
            raise CredentialError(f"the GCS token exchange failed ({type(exc).__name__})") from None
        if not token.token or token.expiry is None:
            raise CredentialError("the GCS token exchange answered without a token")
        return Vended(GcpOauthToken(str(token.token)), token.expiry.replace(tzinfo=UTC))


def google_boundary(bucket: str, prefix: str) -> Any:
    """:func:`access_boundary` as google-auth's ``CredentialAccessBoundary``."""
    from google.auth import downscoped

    rules = access_boundary(bucket, prefix)["accessBoundary"]["accessBoundaryRules"]
    return downscoped.CredentialAccessBoundary(
        rules=[
            downscoped.AccessBoundaryRule(
                available_resource=rule["availableResource"],
                available_permissions=rule["availablePermissions"],
                availability_condition=downscoped.AvailabilityCondition(
                    expression=rule["availabilityCondition"]["expression"],
                    title=rule["availabilityCondition"]["title"],
                ),
            )
            for rule in rules
        ]
    )
