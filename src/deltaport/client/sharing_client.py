"""``SharingClient``: shares, schemas and tables a profile can see, and table handles."""

from __future__ import annotations

import os
from collections.abc import Iterator, Mapping
from datetime import timedelta
from typing import Any

import httpx

from deltaport.client.access import AccessMode, check_mode
from deltaport.client.base.errors import SharingError
from deltaport.client.base.models import ScanPlan, Schema, Share, Table, TableAccess, described
from deltaport.client.dir_access.directory import RenewalSettings
from deltaport.client.files.scan import DEFAULT_CONCURRENCY
from deltaport.client.remote.planning import refresh_plan
from deltaport.client.remote.rest import RestClient, new_http_client, path_segment
from deltaport.client.remote.retry import RetryPolicy
from deltaport.client.table import AccessSettings, TableHandle
from deltaport.protocol.credentials import URL
from deltaport.protocol.profile import (
    BearerTokenProfile,
    OAuthClientCredentialsProfile,
    Profile,
    load_profile,
)

ProfileSource = str | os.PathLike[str] | BearerTokenProfile | OAuthClientCredentialsProfile


def as_profile(profile: ProfileSource) -> Profile:
    if isinstance(profile, BearerTokenProfile | OAuthClientCredentialsProfile):
        return profile
    return load_profile(profile)


class SharingClient:
    """A recipient's view of one sharing server (as described by a profile file).

    ``access_mode``: ``url`` reads through ``/query`` and ``/changes``; ``dir`` reads
    tables with vended temporary credentials (an error where a table does not offer it);
    ``auto`` reads in ``dir`` mode where offered, else ``url``. Default: the profile's
    ``accessMode``, else ``url``.
    ``storage_options`` are the obstore options directory mode needs besides the
    credentials (S3 endpoint and region, ...); ``renew_margin``: credentials with less
    life left are asked for again before the next storage call."""

    def __init__(
        self,
        profile: ProfileSource,
        *,
        http: httpx.Client | None = None,
        retry: RetryPolicy | None = None,
        concurrency: int = DEFAULT_CONCURRENCY,
        access_mode: AccessMode | None = None,
        storage_options: Mapping[str, str] | None = None,
        renew_margin: timedelta | None = None,
    ) -> None:
        self.profile = as_profile(profile)
        self.concurrency = concurrency
        renewal = RenewalSettings(renew_margin) if renew_margin is not None else RenewalSettings()
        mode = check_mode(access_mode or self.profile.access_mode or URL)
        self.access = AccessSettings(mode, dict(storage_options or {}), renewal)
        self.rest = RestClient(
            self.profile, http or new_http_client(max_connections=concurrency + 4), retry
        )

    def close(self) -> None:
        self.rest.close()

    def __enter__(self) -> SharingClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _pages(self, path: str) -> Iterator[dict[str, Any]]:
        token: str | None = None
        while True:
            items, token = self.rest.list_page(path, None, token)
            yield from items
            if token is None:
                return

    def list_shares(self) -> list[Share]:
        return [Share(i["name"], i.get("id"), **described(i)) for i in self._pages("/shares")]

    def get_share(self, name: str) -> Share:
        """One share (Get Share); a share this token may not read is a 404."""
        body = self.rest.get_json(f"/shares/{path_segment(name)}")
        item = body.get("share") if isinstance(body, dict) else None
        if not isinstance(item, dict):
            raise SharingError("Get Share answered without a share object")
        return Share(item["name"], item.get("id"), **described(item))

    def list_schemas(self, share: Share | str) -> list[Schema]:
        name = share.name if isinstance(share, Share) else share
        path = f"/shares/{path_segment(name)}/schemas"
        return [Schema(i["name"], i.get("share", name), **described(i)) for i in self._pages(path)]

    def list_tables(self, schema: Schema) -> list[Table]:
        path = f"/shares/{path_segment(schema.share)}/schemas/{path_segment(schema.name)}/tables"
        return [_table(i, schema.share, schema.name) for i in self._pages(path)]

    def list_all_tables(self, share: Share | str | None = None) -> list[Table]:
        """Every table of ``share`` (default: of all shares), through ``all-tables`` or,
        on servers without it, schema by schema."""
        shares = [share] if share is not None else list(self.list_shares())
        out: list[Table] = []
        for item in shares:
            name = item.name if isinstance(item, Share) else item
            try:
                out.extend(
                    _table(i, name, "")
                    for i in self._pages(f"/shares/{path_segment(name)}/all-tables")
                )
            except SharingError as exc:
                if exc.status != 404:
                    raise
                for schema in self.list_schemas(name):
                    out.extend(self.list_tables(schema))
        return out

    def table(self, name: str | Table) -> TableHandle:
        """A handle on ``share.schema.table``."""
        if isinstance(name, str):
            parts = name.split(".")
            if len(parts) != 3 or not all(parts):
                raise ValueError(f"a table name is share.schema.table, got {name!r}")
            name = Table(parts[2], parts[0], parts[1])
        return TableHandle(self.rest, name, concurrency=self.concurrency, access=self.access)

    def refresh_plan(self, plan: ScanPlan) -> ScanPlan:
        """``plan`` with fresh URLs for the same files (same version)."""
        return refresh_plan(self.rest, plan)


def _table(item: dict[str, Any], share: str, schema: str) -> Table:
    return Table(
        item["name"],
        item.get("share", share),
        item.get("schema", schema),
        TableAccess.from_json(item),
        **described(item),
    )
