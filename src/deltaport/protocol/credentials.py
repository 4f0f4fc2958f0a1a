"""Directory access: access modes and the temporary table credentials answer.

A table offers ``url`` access (``/query`` signs each file), ``dir`` access (the
``temporary-table-credentials`` route vends short-lived read-only credentials scoped to the
table's directory, and the recipient reads the Delta log itself), or both. Shapes and field
names follow the protocol, which follows Unity Catalog OSS's ``TemporaryCredentials``.
"""

from __future__ import annotations

from typing import Annotated

import msgspec

URL = "url"
DIR = "dir"
ACCESS_MODES = (URL, DIR)


class TemporaryCredentialsRequest(msgspec.Struct, omit_defaults=True):
    """Body of ``POST .../temporary-table-credentials``: which of the table's locations
    (its root, the default, or an auxiliary location). Unknown fields are ignored."""

    location: (
        Annotated[
            str,
            msgspec.Meta(
                description="The table's location (default) or one of its auxiliaryLocations."
            ),
        ]
        | None
    ) = None


class AwsTempCredentials(msgspec.Struct):
    accessKeyId: str
    secretAccessKey: str
    sessionToken: str


class AzureUserDelegationSas(msgspec.Struct):
    """A SAS token (query string without ``?``); despite the protocol's name it may be a
    service SAS signed with the account key: recipients use both the same way."""

    sasToken: str


class GcpOauthToken(msgspec.Struct):
    oauthToken: str


class TemporaryCredentials(msgspec.Struct, omit_defaults=True):
    """Exactly one of awsTempCredentials, azureUserDelegationSas, gcpOauthToken is set;
    read-only, limited to ``location``.

    ``endpoint`` and ``region`` are deltaport's additions (clients that do not know them
    ignore them): the S3 endpoint to read with, sent only for S3-compatible stores (MinIO,
    an emulator) where the recipient could not guess it, and the bucket's region."""

    location: str
    expirationTime: Annotated[int, msgspec.Meta(extra_json_schema={"format": "int64"})]
    awsTempCredentials: AwsTempCredentials | None = None
    azureUserDelegationSas: AzureUserDelegationSas | None = None
    gcpOauthToken: GcpOauthToken | None = None
    endpoint: (
        Annotated[
            str,
            msgspec.Meta(
                description="deltaport: the S3-compatible endpoint to read with (absent for "
                "AWS itself)."
            ),
        ]
        | None
    ) = None
    region: (
        Annotated[str, msgspec.Meta(description="deltaport: the S3 bucket's region.")] | None
    ) = None


class TemporaryCredentialsResponse(msgspec.Struct):
    credentials: TemporaryCredentials
