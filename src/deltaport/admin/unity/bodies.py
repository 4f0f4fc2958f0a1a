"""The request bodies of the provider API, with Unity Catalog's field names.

Fields Unity Catalog has and deltaport does not support are declared, so that a request
naming one is refused with a 400 that names it (:func:`refuse_set`) rather than with a
generic "unknown field"; any other field is refused by the decoder, also by name."""

from __future__ import annotations

from typing import Annotated, Any

import msgspec
from starlette.requests import Request

from deltaport.protocol.errors import InvalidParameterError, MalformedRequestError

UNSET = msgspec.UNSET
Unset = msgspec.UnsetType
Refused = Annotated[
    Any,
    msgspec.Meta(description="Unity Catalog's, not supported: refused with a 400 naming it."),
]


class PartitionValue(msgspec.Struct, forbid_unknown_fields=True):
    name: str
    op: str = "EQUAL"
    value: str | None = None
    recipient_property_key: str | None = None


class Partition(msgspec.Struct, forbid_unknown_fields=True):
    values: list[PartitionValue] = msgspec.field(default_factory=list)


class DataObject(msgspec.Struct, forbid_unknown_fields=True):
    name: str
    data_object_type: str = "TABLE"
    shared_as: str | None = None
    history_data_sharing_status: str | None = None
    start_version: int | None = None
    partitions: list[Partition] | None = None
    comment: str | None = None
    # Unity Catalog's, not supported (refused by name)
    cdf_enabled: Refused = UNSET
    content: Refused = UNSET
    string_shared_as: Refused = UNSET
    added_at: Refused = UNSET
    added_by: Refused = UNSET
    status: Refused = UNSET


class ObjectUpdate(msgspec.Struct, forbid_unknown_fields=True):
    action: str
    data_object: DataObject


class CreateShare(msgspec.Struct, forbid_unknown_fields=True):
    name: str
    comment: str | None = None
    storage_root: Refused = UNSET


class UpdateShare(msgspec.Struct, forbid_unknown_fields=True):
    comment: str | Unset | None = UNSET
    updates: list[ObjectUpdate] = msgspec.field(default_factory=list)
    new_name: Refused = UNSET
    owner: Refused = UNSET
    storage_root: Refused = UNSET


class PermissionsChange(msgspec.Struct, forbid_unknown_fields=True):
    principal: str | None = None
    add: list[str] = msgspec.field(default_factory=list)
    remove: list[str] = msgspec.field(default_factory=list)
    principal_id: Refused = UNSET


class UpdatePermissions(msgspec.Struct, forbid_unknown_fields=True):
    changes: list[PermissionsChange] = msgspec.field(default_factory=list)
    omit_permissions_list: bool = False


class KeyValue(msgspec.Struct, forbid_unknown_fields=True):
    key: str
    value: str


class Properties(msgspec.Struct, forbid_unknown_fields=True):
    properties: dict[str, str] | list[KeyValue] = msgspec.field(default_factory=dict)
    """A map, or (as the legacy Databricks CLI sends them) a list of ``{"key", "value"}``."""

    def as_dict(self) -> dict[str, str]:
        if isinstance(self.properties, dict):
            return self.properties
        found: dict[str, str] = {}
        for pair in self.properties:
            if pair.key in found:
                raise InvalidParameterError(
                    f"properties_kvpairs.properties: {pair.key[:100]!r} is given twice"
                )
            found[pair.key] = pair.value
        return found


class IpAccessList(msgspec.Struct, forbid_unknown_fields=True):
    """The Databricks SDK's ``IpAccessList`` (which leaves out an empty list: ``{}``)."""

    allowed_ip_addresses: list[str] = msgspec.field(default_factory=list)


class CreateRecipient(msgspec.Struct, forbid_unknown_fields=True):
    name: str
    authentication_type: str | None = None
    comment: str | None = None
    properties_kvpairs: Properties | None = None
    expiration_time: int | None = None
    ip_access_list: IpAccessList | None = None
    id: Refused = UNSET
    owner: Refused = UNSET
    sharing_code: Refused = UNSET
    data_recipient_global_metastore_id: Refused = UNSET


class UpdateRecipient(msgspec.Struct, forbid_unknown_fields=True):
    comment: str | Unset | None = UNSET
    properties_kvpairs: Properties | None = None
    ip_access_list: IpAccessList | Unset = UNSET
    """Replaces the list; ``{}`` empties it (requests from anywhere)."""
    expiration_time: Refused = UNSET
    id: Refused = UNSET
    new_name: Refused = UNSET
    owner: Refused = UNSET


class RotateToken(msgspec.Struct, forbid_unknown_fields=True):
    existing_token_expire_in_seconds: int
    name: str | None = None
    """The recipient again (the legacy Databricks CLI sends it): the path's, or refused."""


async def body(request: Request, kind: type[Any]) -> Any:
    """The JSON body as ``kind``; a 400 that names the field that is wrong."""
    raw = await request.body()
    try:
        return msgspec.json.decode(raw or b"{}", type=kind)
    except msgspec.ValidationError as exc:
        raise InvalidParameterError(f"invalid request body: {exc}") from None
    except msgspec.DecodeError as exc:
        raise MalformedRequestError(f"the request body is not JSON: {exc}") from None
    except RecursionError:  # skipping an unknown field recurses into it
        raise MalformedRequestError("the request body is nested too deeply") from None


def refuse_set(value: msgspec.Struct, where: str, fields: tuple[str, ...], why: str) -> None:
    """A 400 naming the first of ``fields`` that ``value`` has set."""
    for field in fields:
        if getattr(value, field) is not UNSET:
            raise InvalidParameterError(f"{where}{field}: {why}")
