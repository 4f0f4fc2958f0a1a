"""The catalog commands of ``deltaport``: shares, tables, recipients and grants in the
catalog database, and importing a YAML configuration into it.

The database is ``--catalog URL``, else ``DELTAPORT_CATALOG``, else the ``catalog:`` of
``--config``, else the embedded default, ``sqlite:///deltaport-data/catalog.db``. With
``--server URL`` (a running server's admin listener) and an admin token
(``--admin-token-file``, ``DELTAPORT_ADMIN_TOKEN_FILE``, ``DELTAPORT_ADMIN_TOKEN`` or
``--admin-token``), the commands go through its admin API.
"""

from __future__ import annotations

import argparse
import os
from collections.abc import Callable
from datetime import timedelta
from typing import TYPE_CHECKING

from deltaport.cli.profile_addresses import explicit_endpoint, fallback_endpoint, iceberg_endpoint

if TYPE_CHECKING:
    from deltaport.catalog.access import SettingsFor
    from deltaport.catalog.provider.service import ProviderService
    from deltaport.catalog.provider.settings import ProviderSettings
    from deltaport.catalog.remote import RemoteCatalog
    from deltaport.catalog.sql_store import SqlCatalog
    from deltaport.config.model import ServerConfig

DEFAULT_CATALOG = "sqlite:///deltaport-data/catalog.db"
Handler = Callable[[argparse.Namespace], str]


def resolve_catalog(url: str | None, config_path: str | None) -> str:
    if url:
        return url
    if os.environ.get("DELTAPORT_CATALOG"):
        return os.environ["DELTAPORT_CATALOG"]
    if config_path:
        from deltaport.config.loading import load_config

        configured = load_config(config_path).catalog
        if configured:
            return configured
    return DEFAULT_CATALOG


def create_default_catalog() -> None:
    """The embedded default catalog, created on the first ``deltaport serve`` without
    --config or --catalog (the only start that creates a catalog; see ``catalog init``)."""
    from deltaport.catalog.sql_store import SqlCatalog

    SqlCatalog(DEFAULT_CATALOG).database.close()


def _common(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--catalog", help=f"catalog database URL (default {DEFAULT_CATALOG})")
    parser.add_argument("--config", help="server configuration (its catalog: and endpoint)")
    parser.add_argument(
        "--server", help="a running server's admin listener, e.g. http://127.0.0.1:8081"
    )
    parser.add_argument(
        "--admin-token",
        help="its admin token (visible to every user in the process list: prefer "
        "--admin-token-file or $DELTAPORT_ADMIN_TOKEN)",
    )
    parser.add_argument(
        "--admin-token-file",
        help="a file holding the admin token (default: $DELTAPORT_ADMIN_TOKEN_FILE)",
    )


def add_catalog_commands(
    commands: argparse._SubParsersAction,  # type: ignore[type-arg]
    table_actions: argparse._SubParsersAction,  # type: ignore[type-arg]
) -> None:
    """Add ``catalog``, ``share`` and ``recipient``, and ``table add|remove``."""
    catalog = commands.add_parser("catalog", help="the catalog database")
    catalog_cmds = catalog.add_subparsers(dest="catalog_command", required=True, metavar="ACTION")
    imported = catalog_cmds.add_parser("import", help="copy a YAML configuration's shares in")
    imported.add_argument("yaml", help="server configuration (YAML) to import")
    _common(imported)
    imported.set_defaults(handler=_run(_import))
    init = catalog_cmds.add_parser("init", help="create the catalog database")
    _common(init)
    init.set_defaults(handler=_run(_init))

    share = commands.add_parser("share", help="shares and grants in the catalog")
    share_cmds = share.add_subparsers(dest="share_command", required=True, metavar="ACTION")
    create = share_cmds.add_parser("create", help="create a share")
    create.add_argument("name")
    add_details_options(create)
    listed = share_cmds.add_parser("list", help="shares, their tables and grants")
    drop = share_cmds.add_parser("drop", help="drop a share (its tables and grants too)")
    drop.add_argument("name")
    grant = share_cmds.add_parser("grant", help="let a recipient read a share")
    revoke = share_cmds.add_parser("revoke", help="stop a recipient reading a share")
    for p in (grant, revoke):
        p.add_argument("share")
        p.add_argument("--to", required=True, metavar="RECIPIENT", dest="recipient")
    for p, fn in (
        (create, _share_create),
        (listed, _share_list),
        (drop, _share_drop),
        (grant, _share_grant),
        (revoke, _share_revoke),
    ):
        _common(p)
        p.set_defaults(handler=_run(fn))

    add = table_actions.add_parser("add", help="share a table (catalog)")
    add.add_argument("name", help="SHARE.SCHEMA.TABLE")
    add.add_argument("location", help="table location (path or s3://, az://, gs:// URI)")
    add.add_argument("--history", action="store_true", help="share its history (time travel, CDF)")
    add.add_argument("--start-version", type=int, default=0)
    add.add_argument(
        "--partition-filter",
        help="only these partitions, e.g. \"country = CURRENT_RECIPIENT('country')\"",
    )
    add.add_argument(
        "--access-modes",
        default="url",
        metavar="MODES",
        help="url, dir or url,dir (default url); dir needs --history",
    )
    add.add_argument(
        "--auxiliary-location",
        action="append",
        default=[],
        metavar="LOCATION",
        dest="auxiliary_locations",
        help="another location of the table's files (dir credentials for it too)",
    )
    add_details_options(add)
    remove = table_actions.add_parser("remove", help="stop sharing a table (catalog)")
    remove.add_argument("name", help="SHARE.SCHEMA.TABLE")
    for p, fn in ((add, _table_add), (remove, _table_remove)):
        _common(p)
        p.set_defaults(handler=_run(fn))

    recipient = commands.add_parser("recipient", help="recipients and their tokens")
    recipient_cmds = recipient.add_subparsers(
        dest="recipient_command", required=True, metavar="ACTION"
    )
    new = recipient_cmds.add_parser("create", help="a recipient and its profile file")
    new.add_argument("name")
    new.add_argument("--property", action="append", default=[], metavar="KEY=VALUE")
    ip_help = "let requests come only from here (repeat it; default: anywhere)"
    new.add_argument("--ip", action="append", default=[], metavar="CIDR", help=ip_help)
    new.add_argument("--oauth", action="store_true", help="a client id and secret, not a token")
    new.add_argument("--activation", action="store_true", help="print a single-use link instead")
    rotate = recipient_cmds.add_parser("rotate", help="a new token; the old one ends later")
    rotate.add_argument("name")
    rotate.add_argument("--grace", default="1h", help="how long the old token stays valid")
    rotate.add_argument("--now", action="store_true", help="end the old token at once")
    new.add_argument("--expires", help="token lifetime, e.g. 90d, or never (the default)")
    rotate.add_argument(
        "--expires",
        help="the new token's lifetime, e.g. 90d, or never (default: the recipient's)",
    )
    new.add_argument("--endpoint", help="the server's sharing URL for the profile")
    rotate.add_argument(
        "--endpoint", help="the server's sharing URL (default: where its last profile pointed)"
    )
    for p in (new, rotate):
        p.add_argument("-o", "--output", help="write the profile file here")
    ended = recipient_cmds.add_parser("revoke", help="end every token of a recipient now")
    ended.add_argument("name")
    people = recipient_cmds.add_parser("list", help="recipients, grants and token expiries")
    network = recipient_cmds.add_parser(
        "set-ip", help="replace a recipient's IP access list (no --ip: anywhere)"
    )
    network.add_argument("name")
    network.add_argument("--ip", action="append", default=[], metavar="CIDR", help=ip_help)
    for p, fn in (
        (new, _recipient_create),
        (rotate, _recipient_rotate),
        (ended, _recipient_revoke),
        (people, _recipient_list),
        (network, _recipient_set_ip),
    ):
        _common(p)
        p.set_defaults(handler=_run(fn))


def _run(fn: Handler) -> Callable[[argparse.Namespace], int]:
    def handler(args: argparse.Namespace) -> int:
        from deltaport.text.terminal import say

        say(fn(args))
        return 0

    return handler


def _store(args: argparse.Namespace, create: bool = False) -> SqlCatalog | RemoteCatalog:
    """The catalog the command works on (the database, or a server's admin API with
    ``--server``: both a :class:`~deltaport.catalog.interface.Catalog`, which the commands
    take); a missing SQLite file is created only with ``create`` (``catalog init``)."""
    from deltaport.catalog.remote import RemoteCatalog
    from deltaport.catalog.rows import CatalogError
    from deltaport.catalog.sql_store import SqlCatalog

    if args.server:
        token = _admin_token(args)
        if not token:
            raise CatalogError(
                "--server needs an admin token: --admin-token-file, DELTAPORT_ADMIN_TOKEN_FILE, "
                "DELTAPORT_ADMIN_TOKEN or --admin-token"
            )
        return RemoteCatalog(args.server, token)
    return SqlCatalog(resolve_catalog(args.catalog, args.config), create=create)


def _admin_token(args: argparse.Namespace) -> str | None:
    """The admin token: --admin-token, else the file of --admin-token-file or
    DELTAPORT_ADMIN_TOKEN_FILE (first line), else DELTAPORT_ADMIN_TOKEN."""
    from pathlib import Path

    from deltaport.catalog.rows import CatalogError

    if args.admin_token:
        return str(args.admin_token)
    path = args.admin_token_file or os.environ.get("DELTAPORT_ADMIN_TOKEN_FILE")
    if path:
        try:
            lines = Path(path).read_text(encoding="utf-8").splitlines()
        except OSError as exc:
            raise CatalogError(f"cannot read the admin token file {path}: {exc.strerror}") from None
        return lines[0].strip() if lines else None
    return os.environ.get("DELTAPORT_ADMIN_TOKEN")


def _local(args: argparse.Namespace, create: bool = False) -> SqlCatalog:
    from deltaport.catalog.rows import CatalogError
    from deltaport.catalog.sql_store import SqlCatalog

    store = _store(args, create)
    if not isinstance(store, SqlCatalog):
        raise CatalogError("this command works on the catalog database itself, not --server")
    return store


def _service(args: argparse.Namespace, settings: ProviderSettings | None = None) -> ProviderService:
    """The provider service over the command's catalog, applying ``settings`` (what the
    command takes from ``--config``) to the database; through ``--server`` the server
    applies its own and reads the tables it is given."""
    from deltaport.catalog.provider.service import ProviderService
    from deltaport.catalog.provider.settings import ProviderSettings
    from deltaport.catalog.remote import RemoteCatalog

    store = _store(args)
    if isinstance(store, RemoteCatalog):
        return ProviderService(store, ProviderSettings(reads_tables=False))
    return ProviderService(store, settings or ProviderSettings(), store.batch)


def add_details_options(parser: argparse.ArgumentParser) -> None:
    """The command-line options of what recipients see of a share or table."""
    parser.add_argument("--comment")
    parser.add_argument("--display-name", help="the name recipients' tools show")
    parser.add_argument(
        "--property", action="append", default=[], metavar="KEY=VALUE", help="(repeatable)"
    )


def _share_create(args: argparse.Namespace) -> str:
    from deltaport.cli.catalog_text import details_from_args

    _service(args).create_share(args.name, args.comment, details_from_args(args))
    return f"created share {args.name}"


def _share_list(args: argparse.Namespace) -> str:
    from deltaport.cli.catalog_text import list_shares

    return list_shares(_service(args).contents())


def _share_drop(args: argparse.Namespace) -> str:
    _service(args).drop_share(args.name)
    return f"dropped share {args.name}"


def _share_grant(args: argparse.Namespace) -> str:
    _service(args).grant(args.share, args.recipient)
    return f"granted share {args.share} to {args.recipient}"


def _share_revoke(args: argparse.Namespace) -> str:
    _service(args).revoke_grant(args.share, args.recipient)
    return f"revoked share {args.share} from {args.recipient}"


def _table_add(args: argparse.Namespace) -> str:
    from deltaport.catalog.provider.settings import ProviderSettings
    from deltaport.catalog.provider.tables import added_text
    from deltaport.catalog.rows import TableSpec
    from deltaport.cli.catalog_text import details_from_args
    from deltaport.storage.uri import absolute_location

    spec = TableSpec(
        absolute_location(args.location),
        history_shared=args.history,
        start_version=args.start_version,
        partition_filter=args.partition_filter,
        access_modes=tuple(m.strip() for m in args.access_modes.split(",") if m.strip()),
        auxiliary_locations=tuple(args.auxiliary_locations),
        comment=args.comment,
        details=details_from_args(args),
    )
    settings = ProviderSettings(location_settings=_server_storage(args.config))
    return added_text(_service(args, settings).add_table(args.name, spec))


def _table_remove(args: argparse.Namespace) -> str:
    from deltaport.catalog.provider.tables import split_table_name

    _service(args).remove_table(*split_table_name(args.name))
    return f"removed table {args.name}"


def _recipient_create(args: argparse.Namespace) -> str:
    """Everything that can fail is checked before the recipient is written: the arguments,
    the configuration, the endpoint (by the store) and the profile path."""
    from deltaport.catalog.provider.profiles import profile_document
    from deltaport.catalog.rows import CatalogError, RecipientSpec
    from deltaport.catalog.store_checks import expiry_text
    from deltaport.cli.catalog_text import ProfileOutput, parse_properties

    spec = RecipientSpec(
        parse_properties(args.property),
        _lifetime(args.expires),
        # through --server, the server says where recipients reach it
        explicit_endpoint(args),
        ip_access_list=args.ip,
        authentication_type="OAUTH_CLIENT_CREDENTIALS" if args.oauth else "TOKEN",
    )
    fallback = fallback_endpoint(args)
    service = _service(args, _recipient_settings(args, fallback))
    if args.activation:
        if args.output:
            raise CatalogError(
                "--activation prints a link; it takes no -o (the link's first "
                "download is the profile)"
            )
        link = service.create_recipient_with_link(args.name, spec)
        return (
            f"{link.url}\n(the activation link of {link.recipient}: its first download is the "
            f"profile; it cannot be used again, and expires {expiry_text(link.expires_at)})"
        )
    with ProfileOutput(args.output) as profile:
        issued = service.create_recipient(args.name, spec)
        endpoint = issued.endpoint or fallback
        return profile.write(
            issued, profile_document(issued, endpoint, iceberg_endpoint(args, endpoint))
        )


def _recipient_settings(args: argparse.Namespace, sharing_url: str) -> ProviderSettings:
    """Where a new recipient's profiles point, how long its link lasts and how long its IP
    access list may be, as ``--config`` (else the defaults) says."""
    from deltaport.catalog.provider.settings import ProviderSettings

    config = _configured(args)
    return ProviderSettings(
        sharing_url,
        link_lifetime=timedelta(seconds=config.activation_link_lifetime_seconds),
        max_ip_entries=config.max_ip_access_list_entries,
    )


def _recipient_rotate(args: argparse.Namespace) -> str:
    """As :func:`_recipient_create`: nothing changes unless the profile can be made."""
    from deltaport.catalog.provider.profiles import profile_document
    from deltaport.catalog.provider.settings import ProviderSettings
    from deltaport.catalog.rows import KEEP, RotationSpec
    from deltaport.cli.catalog_text import ProfileOutput, duration

    grace = timedelta(0) if args.now else duration(args.grace)
    lifetime = KEEP if args.expires is None else _lifetime(args.expires)
    fallback = fallback_endpoint(args)
    service = _service(args, ProviderSettings(fallback))
    with ProfileOutput(args.output) as profile:
        issued = service.rotate(args.name, RotationSpec(grace, lifetime, explicit_endpoint(args)))
        endpoint = issued.endpoint or fallback
        return profile.write(
            issued, profile_document(issued, endpoint, iceberg_endpoint(args, endpoint))
        )


def _recipient_revoke(args: argparse.Namespace) -> str:
    _service(args).revoke(args.name)
    return f"revoked every token of {args.name}"


def _recipient_set_ip(args: argparse.Namespace) -> str:
    from deltaport.catalog.provider.settings import ProviderSettings

    settings = ProviderSettings(max_ip_entries=_configured(args).max_ip_access_list_entries)
    stored = _service(args, settings).set_ip_access_list(args.name, args.ip)
    where = ", ".join(stored) if stored else "anywhere"
    return f"requests of {args.name} may come from {where}"


def _configured(args: argparse.Namespace) -> ServerConfig:
    """The configuration of ``--config``, else the defaults (for the bounds and lifetimes
    the commands apply; a server given with ``--server`` applies its own)."""
    from deltaport.config.loading import load_config
    from deltaport.config.model import ServerConfig

    return load_config(args.config) if args.config else ServerConfig()


def _recipient_list(args: argparse.Namespace) -> str:
    from deltaport.cli.catalog_text import list_recipients

    return list_recipients(_service(args).contents())


def _init(args: argparse.Namespace) -> str:
    from deltaport.catalog.database.connection import sqlite_path
    from deltaport.catalog.rows import CatalogError

    url = resolve_catalog(args.catalog, args.config)
    if url.startswith("sqlite:") and sqlite_path(url).exists():
        raise CatalogError(f"{sqlite_path(url)} exists already")
    _local(args, create=True)
    return f"created the catalog database {_shown(url)}"


def _shown(url: str) -> str:
    """``url`` without a password."""
    from urllib.parse import urlsplit

    parts = urlsplit(url)
    if parts.password is None:
        return url
    return url.replace(f":{parts.password}@", ":***@", 1)


def _import(args: argparse.Namespace) -> str:
    from deltaport.catalog.provider.service import ProviderService
    from deltaport.catalog.provider.settings import ProviderSettings
    from deltaport.config.catalog_import import import_shares
    from deltaport.config.loading import load_config
    from deltaport.text.wording import count

    config = load_config(args.yaml)
    store = _local(args)
    service = ProviderService(store, ProviderSettings(reads_tables=False))
    with store.batch():
        import_shares(service, config)
        lines = [f"imported {count(len(config.shares), 'share')} from {args.yaml}"]
        token = config.authorization.bearer_token if config.authorization else None
        if token:
            store.import_recipient("default", token, [s.name for s in config.shares])
            lines.append("its bearer token is now recipient 'default', granted every share")
    return "\n".join(lines)


def _lifetime(text: str | None) -> timedelta | None:
    """``--expires``: a duration, or ``never`` (also when not given)."""
    from deltaport.cli.catalog_text import duration

    if text is None or text.strip().lower() == "never":
        return None
    return duration(text)


def _server_storage(config_path: str | None) -> SettingsFor | None:
    """From ``--config`` (the server's configuration): the storage options and credential
    settings of each location a table has; without it, no options, and credential settings
    are left to the server to check."""
    if not config_path:
        return None
    from deltaport.config.loading import load_config

    return load_config(config_path).location_settings
