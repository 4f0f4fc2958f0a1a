"""The temporary table credentials route's service: which directories of which tables may
be read in ``dir`` mode, credentials for them from a per-directory cache, and a log line
per credential handed out (recipient, table, location, expiry: never the secret)."""

from __future__ import annotations

import logging
import threading
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import timedelta
from typing import TypeVar

import msgspec

from deltaport.catalog.model import Recipient, SharedTable
from deltaport.config.model import ServerConfig
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
from deltaport.protocol.params import json_body
from deltaport.storage import InvalidLocationError, Location, parse_location
from deltaport.storage.credentials import (
    CredentialCache,
    CredentialError,
    CredentialSettings,
    StorageHints,
    make_vendor,
    storage_hints,
    vendor_problem,
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


_MatchKey = tuple[str, str, str]
T = TypeVar("T")


def _match_key(location: Location) -> _MatchKey:
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
    """The directories of ``dir`` tables and their credential caches.

    A YAML table's are built at start (the configuration checked their settings, and the
    table's own ``storageOptions`` apply to them). A catalog table's are found when asked
    for, since tables come and go while the server runs, and kept per location: a catalog
    table has no options of its own, so its location alone says which settings apply."""

    def __init__(self, config: ServerConfig, clock: Clock = utc_now) -> None:
        self._config = config
        self._clock = clock
        self._tables: dict[str, dict[_MatchKey, _Directory]] = {}
        for share in config.shares:
            for schema in share.schemas:
                for table in schema.tables:
                    if DIR not in table.access_modes:
                        continue
                    key = name_key(f"{share.name}.{schema.name}.{table.name}")
                    directories: dict[_MatchKey, _Directory] = {}
                    for text in [table.location, *table.auxiliary_locations]:
                        location = parse_location(text)
                        options, settings = config.location_settings(text, table.storage_options)
                        directory = self._directory(text.rstrip("/"), location, options, settings)
                        directories[_match_key(location)] = directory
                    self._tables[key] = directories
        self._by_location: dict[str, _Directory] = {}
        self._guard = threading.Lock()

    def vend(
        self, table: SharedTable, recipient: Recipient, request: TemporaryCredentialsRequest
    ) -> TemporaryCredentialsResponse:
        require_mode(table, DIR)
        name = f"{table.share}.{table.schema}.{table.name}"
        configured = self._tables.get(table.key)
        if configured is not None:
            directory = _pick(configured, name, request.location)
        else:
            shown = (table.access.location, *table.access.auxiliary_locations)
            found = {_match_key(parse_location(text)): text for text in shown if text}
            directory = self._catalog_directory(name, _pick(found, name, request.location))
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

    def _catalog_directory(self, name: str, shown: str) -> _Directory:
        """The directory of a catalog table's location, built on first use; refused when
        the server's ``storage`` configuration cannot vend credentials for it. Kept by the
        location as written, since ``storage`` prefixes match it as written."""
        with self._guard:
            directory = self._by_location.get(shown)
            if directory is not None:
                return directory
            location = parse_location(shown)
            options, settings = self._config.location_settings(shown)
            problem = vendor_problem(location, options, settings)
            if problem:
                log.error(
                    "temporary credentials for table %s at %s cannot be vended: %s",
                    name,
                    shown,
                    problem,
                )
                raise UnsupportedAccessModeError(
                    f"temporary credentials are not configured on this server for location "
                    f"{shown} of table {name}: ask the provider"
                )
            directory = self._directory(shown, location, options, settings)
            self._by_location[shown] = directory
            return directory

    def _directory(
        self,
        shown: str,
        location: Location,
        options: dict[str, str],
        settings: CredentialSettings,
    ) -> _Directory:
        # handed out again while at least half the configured life is left
        cache = CredentialCache(
            make_vendor(location, options, settings),
            timedelta(seconds=settings.duration_seconds / 2),
            self._clock,
        )
        return _Directory(shown, location, cache, storage_hints(location, options, settings))


def _pick(directories: Mapping[_MatchKey, T], name: str, asked: str | None) -> T:
    """The table's root (``asked`` None) or the location ``asked`` names."""
    if asked is None:
        return next(iter(directories.values()))
    try:
        wanted: _MatchKey | None = _match_key(parse_location(asked))
    except InvalidLocationError:
        wanted = None
    found = directories.get(wanted) if wanted else None
    if found is None:
        raise InvalidParameterError(
            f"location {echo(asked)} is neither the location of table {name} "
            "nor one of its auxiliaryLocations"
        )
    return found
