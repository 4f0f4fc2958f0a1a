"""The temporary table credentials route's service: which directories of which tables may
be read in ``dir`` mode, credentials for them from a per-directory cache, and a log line
per credential handed out (recipient, table, location, expiry: never the secret)."""

from __future__ import annotations

import logging
from dataclasses import dataclass
from datetime import timedelta

import msgspec

from deltaport.catalog.model import Recipient, SharedTable
from deltaport.protocol.credentials import (
    DIR,
    URL,
    AwsTempCredentials,
    AzureUserDelegationSas,
    TemporaryCredentials,
    TemporaryCredentialsRequest,
    TemporaryCredentialsResponse,
)
from deltaport.protocol.echo import echo
from deltaport.protocol.errors import (
    InternalError,
    InvalidParameterError,
    UnsupportedAccessModeError,
)
from deltaport.protocol.names import name_key
from deltaport.server.access import location_settings
from deltaport.server.config import ServerConfig
from deltaport.server.params import json_body
from deltaport.storage import InvalidLocationError, Location, parse_location
from deltaport.storage.credentials import (
    CredentialCache,
    CredentialError,
    StorageHints,
    make_vendor,
    storage_hints,
)
from deltaport.storage.credentials.cache import Clock, utc_now

log = logging.getLogger(__name__)

_decoder = msgspec.json.Decoder(TemporaryCredentialsRequest)


@dataclass(frozen=True)
class _Directory:
    shown: str
    """The location as list-tables and metadata show it, echoed in the answer."""
    location: Location
    cache: CredentialCache
    hints: StorageHints


def _match_key(location: Location) -> tuple[str, str, str]:
    return location.kind, location.bucket, location.key.strip("/")


def decode_request(body: bytes) -> TemporaryCredentialsRequest:
    return json_body(body, _decoder, TemporaryCredentialsRequest())


def require_mode(table: SharedTable, mode: str) -> None:
    """Refuses a request needing ``mode`` on a table not offered in it."""
    if table.access.offers(mode):
        return
    name = f"{table.share}.{table.schema}.{table.name}"
    if mode == URL:
        raise UnsupportedAccessModeError(
            f"table {name} is shared for directory access only: ask for temporary table "
            "credentials and read its Delta log, /query and /changes are not served"
        )
    raise UnsupportedAccessModeError(
        f"table {name} is shared for url access only: read it with /query, no temporary "
        "table credentials are vended for it"
    )


class CredentialService:
    def __init__(self, config: ServerConfig, clock: Clock = utc_now) -> None:
        self._tables: dict[str, dict[tuple[str, str, str], _Directory]] = {}
        for share in config.shares:
            for schema in share.schemas:
                for table in schema.tables:
                    if DIR not in table.access_modes:
                        continue
                    key = name_key(f"{share.name}.{schema.name}.{table.name}")
                    directories: dict[tuple[str, str, str], _Directory] = {}
                    for text in [table.location, *table.auxiliary_locations]:
                        location = parse_location(text)
                        options, settings = location_settings(config, table, text)
                        # handed out again while at least half the configured life is left
                        cache = CredentialCache(
                            make_vendor(location, options, settings),
                            timedelta(seconds=settings.duration_seconds / 2),
                            clock,
                        )
                        shown = text.rstrip("/")
                        hints = storage_hints(location, options, settings)
                        directories[_match_key(location)] = _Directory(
                            shown, location, cache, hints
                        )
                    self._tables[key] = directories

    def vend(
        self, table: SharedTable, recipient: Recipient, request: TemporaryCredentialsRequest
    ) -> TemporaryCredentialsResponse:
        require_mode(table, DIR)
        directories = self._tables[table.key]
        name = f"{table.share}.{table.schema}.{table.name}"
        if request.location is None:
            directory = next(iter(directories.values()))
        else:
            try:
                wanted = _match_key(parse_location(request.location))
            except InvalidLocationError:
                wanted = None
            found = directories.get(wanted) if wanted else None
            if found is None:
                raise InvalidParameterError(
                    f"location {echo(request.location)} is neither the location of table {name} "
                    "nor one of its auxiliaryLocations"
                )
            directory = found
        try:
            issued = directory.cache.get(directory.location)
        except CredentialError as exc:
            log.error(
                "temporary credentials for table %s at %s failed: %s", name, directory.shown, exc
            )
            raise InternalError(
                f"temporary credentials for table {name} could not be issued"
            ) from None
        vended = issued.vended
        log.info(
            "vended %s credentials to recipient %s for table %s at %s, expiring %s (%s)",
            vended.cloud,
            recipient.name,
            name,
            directory.shown,
            vended.expires_at.isoformat(),
            "new" if issued.fresh else "cached",
        )
        secret = vended.secret
        credentials = TemporaryCredentials(
            location=directory.shown,
            expirationTime=int(vended.expires_at.timestamp() * 1000),
            awsTempCredentials=secret if isinstance(secret, AwsTempCredentials) else None,
            azureUserDelegationSas=secret if isinstance(secret, AzureUserDelegationSas) else None,
            gcpOauthToken=None
            if isinstance(secret, AwsTempCredentials | AzureUserDelegationSas)
            else secret,
            endpoint=directory.hints.endpoint,
            region=directory.hints.region,
        )
        return TemporaryCredentialsResponse(credentials)
