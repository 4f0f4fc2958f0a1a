"""The catalog changes the admin API and the console both make, with the server's settings
applied (storage credentials, where profiles point, how long activation links last, how
long IP access lists may be): one place, so that a change made in the browser is the
change the API makes. Raises the catalog's own errors (:class:`CatalogError` and its
kinds); the callers turn them into an HTTP answer or a form's message."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import timedelta

from deltaport.catalog.commands import add_table, profile_document, split_table_name
from deltaport.catalog.recipient_access import ActivationLink
from deltaport.catalog.rows import KEEP, IssuedToken, Keep
from deltaport.catalog.sql_store import SqlCatalog
from deltaport.catalog.tokens import TOKEN
from deltaport.config.model import ServerConfig
from deltaport.protocol.credentials import URL
from deltaport.protocol.names import name_key


class CatalogService:
    def __init__(self, store: SqlCatalog, config: ServerConfig, sharing_url: str) -> None:
        self.store = store
        self._config = config
        self.sharing_url = sharing_url

    def add_table(
        self,
        full_name: str,
        location: str,
        *,
        history_shared: bool = False,
        start_version: int = 0,
        partition_filter: str | None = None,
        access_modes: Sequence[str] = (URL,),
        auxiliary_locations: Sequence[str] = (),
    ) -> str:
        """Share the table at ``location`` as ``full_name`` after checking it (reading it
        with the server's storage settings); returns what was done, in words."""
        options, _ = self._config.location_settings(location)
        return add_table(
            self.store,
            full_name,
            location,
            history_shared=history_shared,
            start_version=start_version,
            partition_filter=partition_filter,
            access_modes=access_modes,
            auxiliary_locations=auxiliary_locations,
            storage_options=options,
            settings_for=self._config.location_settings,
        )

    def remove_table(self, full_name: str) -> None:
        self.store.remove_table(*split_table_name(full_name))

    def drop_schema(self, share: str, schema: str) -> int:
        """Remove every table of ``share.schema`` in one transaction (a schema exists while
        it holds tables); returns how many there were."""
        tables = [
            t
            for t in self.store.contents().tables
            if name_key(t.share) == name_key(share) and name_key(t.schema) == name_key(schema)
        ]
        with self.store.batch():
            for t in tables:
                self.store.remove_table(t.share, t.schema, t.name)
        return len(tables)

    def create_recipient(
        self,
        name: str,
        properties: Mapping[str, str],
        lifetime: timedelta | None,
        *,
        endpoint: str | None = None,
        ip_access_list: Sequence[str] = (),
        authentication_type: str = TOKEN,
        activation: bool = False,
    ) -> IssuedToken | ActivationLink:
        """A recipient and its first credential, or (``activation``) its activation link."""
        if activation:
            return self.store.create_recipient_with_link(
                name,
                properties,
                lifetime,
                endpoint=endpoint or self.sharing_url,
                link_lifetime=timedelta(seconds=self._config.activation_link_lifetime_seconds),
                ip_access_list=ip_access_list,
                authentication_type=authentication_type,
                max_ip_entries=self._config.max_ip_access_list_entries,
            )
        return self.store.create_recipient(
            name,
            properties,
            lifetime,
            endpoint or self.sharing_url,
            ip_access_list=ip_access_list,
            authentication_type=authentication_type,
            max_ip_entries=self._config.max_ip_access_list_entries,
        )

    def set_ip_access_list(self, name: str, entries: Sequence[str]) -> tuple[str, ...]:
        return self.store.set_ip_access_list(name, entries, self._config.max_ip_access_list_entries)

    def rotate(
        self,
        name: str,
        grace: timedelta,
        lifetime: timedelta | Keep | None = KEEP,
        endpoint: str | None = None,
    ) -> IssuedToken:
        return self.store.rotate(
            name, grace, lifetime, endpoint=endpoint, default_endpoint=self.sharing_url
        )

    def profile(self, issued: IssuedToken) -> dict[str, object]:
        """The profile of a credential just issued (the only time its secret is known)."""
        return profile_document(issued, issued.endpoint or self.sharing_url)
