"""The request bodies of the catalog routes (:mod:`deltaport.admin.catalog_api` decodes
them), with the bounds the provider service checks in their JSON Schemas only (the service
answers them with its own messages)."""

from __future__ import annotations

from typing import Annotated, Any

import msgspec

from deltaport.catalog.limits import (
    MAX_AUXILIARY_LOCATIONS,
    MAX_DURATION_SECONDS,
    MAX_PROPERTIES,
    MAX_PROPERTY_VALUE_LENGTH,
    MAX_TEXT_LENGTH,
    MAX_VERSION,
)
from deltaport.catalog.rows import KEEP, MAX_DISPLAY_NAME_LENGTH, Details, SchemaDetails, TableSpec
from deltaport.catalog.tokens import AUTHENTICATION_TYPES, TOKEN
from deltaport.protocol.credentials import ACCESS_MODES, URL


def _doc(**schema: Any) -> msgspec.Meta:
    """``schema`` in the JSON Schema only: the decoder does not check it."""
    return msgspec.Meta(extra_json_schema=schema)


Text = Annotated[str, _doc(maxLength=MAX_TEXT_LENGTH)]
DisplayName = Annotated[str, _doc(maxLength=MAX_DISPLAY_NAME_LENGTH)]
Properties = Annotated[
    dict[str, Annotated[str, _doc(maxLength=MAX_PROPERTY_VALUE_LENGTH)]],
    _doc(maxProperties=MAX_PROPERTIES),
]
Lifetime = Annotated[int, _doc(minimum=1, maximum=MAX_DURATION_SECONDS)]
IpAccessList = Annotated[
    list[str],
    _doc(description="IPv4 and IPv6 addresses and CIDR ranges; at most maxIpAccessListEntries"),
]
AccessModes = Annotated[
    list[Annotated[str, _doc(enum=list(ACCESS_MODES))]],
    _doc(
        description="Default [url]; dir needs historyShared, no startVersion, no "
        "partitionFilter, a cloud location and credentials settings in the server's storage "
        "configuration."
    ),
]


class NewShare(msgspec.Struct, forbid_unknown_fields=True):
    name: str
    comment: Text | None = None
    displayName: DisplayName | None = None
    properties: Properties = msgspec.field(default_factory=dict)


class SchemaChange(msgspec.Struct, forbid_unknown_fields=True):
    """What changes of a schema: a member absent stays, null removes it."""

    displayName: DisplayName | msgspec.UnsetType | None = msgspec.UNSET
    comment: Text | msgspec.UnsetType | None = msgspec.UNSET
    properties: Properties | msgspec.UnsetType | None = msgspec.UNSET

    @property
    def given(self) -> SchemaDetails:
        return SchemaDetails(
            KEEP if self.displayName is msgspec.UNSET else self.displayName,
            KEEP if self.comment is msgspec.UNSET else self.comment,
            KEEP if self.properties is msgspec.UNSET else self.properties or {},
        )


class NewGrant(msgspec.Struct, forbid_unknown_fields=True):
    recipient: str


class NewTable(msgspec.Struct, forbid_unknown_fields=True):
    name: str
    location: Text
    historyShared: bool = False
    startVersion: Annotated[int, _doc(minimum=0, maximum=MAX_VERSION)] = 0
    partitionFilter: Text | None = None
    accessModes: AccessModes = msgspec.field(default_factory=lambda: [URL])
    auxiliaryLocations: Annotated[list[Text], _doc(maxItems=MAX_AUXILIARY_LOCATIONS)] = (
        msgspec.field(default_factory=list)
    )
    comment: Text | None = None
    displayName: DisplayName | None = None
    properties: Properties = msgspec.field(default_factory=dict)

    @property
    def spec(self) -> TableSpec:
        return TableSpec(
            self.location,
            self.historyShared,
            self.startVersion,
            self.partitionFilter,
            tuple(self.accessModes),
            tuple(self.auxiliaryLocations),
            self.comment,
            Details.of(self.displayName, self.properties),
        )


class NewRecipient(msgspec.Struct, forbid_unknown_fields=True):
    name: str
    properties: Properties = msgspec.field(default_factory=dict)
    expiresInSeconds: Lifetime | None = None
    endpoint: str | None = None
    ipAccessList: IpAccessList = msgspec.field(default_factory=list)
    activation: bool = False
    """Answer a single-use activation link instead of the profile."""
    authenticationType: Annotated[str, _doc(enum=list(AUTHENTICATION_TYPES))] = TOKEN
    """``TOKEN`` or ``OAUTH_CLIENT_CREDENTIALS``."""


class IpAccessListChange(msgspec.Struct, forbid_unknown_fields=True):
    ipAccessList: IpAccessList


class Rotation(msgspec.Struct, forbid_unknown_fields=True):
    graceSeconds: Annotated[int, _doc(minimum=0, maximum=MAX_DURATION_SECONDS)] = 3600
    expiresInSeconds: Lifetime | msgspec.UnsetType | None = msgspec.UNSET
    """Absent: the recipient's token lifetime; null: no expiry."""
    endpoint: str | None = None
