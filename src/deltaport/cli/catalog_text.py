"""The catalog commands' text: durations and properties read from the command line, the
listings of shares and recipients, and the profile file a new credential is written to.
The argument parsing is in :mod:`deltaport.cli.catalog`; what the commands do is the
provider service's (:mod:`deltaport.catalog.provider.service`)."""

from __future__ import annotations

import argparse
import json
import os
import time
from collections.abc import Iterable, Mapping
from datetime import timedelta
from pathlib import Path
from types import TracebackType

from deltaport.catalog.limits import parse_duration
from deltaport.catalog.rows import CatalogContents, CatalogError, Details, IssuedToken, TokenRow
from deltaport.catalog.store_checks import expiry_text
from deltaport.catalog.tokens import OAUTH
from deltaport.protocol.credentials import URL
from deltaport.protocol.names import name_key
from deltaport.text.wording import count


def duration(text: str) -> timedelta:
    """A duration given on the command line (``90d``, ``12h``, ...)."""
    try:
        return parse_duration(text)
    except ValueError as exc:
        raise CatalogError(str(exc)) from None


def list_shares(contents: CatalogContents) -> str:
    lines = []
    for share in contents.shares:
        tables = [t for t in contents.tables if name_key(t.share) == name_key(share.name)]
        granted = sorted(
            r.name for r in contents.recipients.values() if name_key(share.name) in r.shares
        )
        lines.append(
            f"{share.name}  ({count(len(tables), 'table')}; "
            f"granted to {', '.join(granted) or 'nobody'})"
        )
        for t in tables:
            extra = []
            if t.history_shared:
                extra.append("history")
            if t.access_modes != (URL,):
                extra.append(f"access: {', '.join(t.access_modes)}")
            if t.auxiliary_locations:
                extra.append(f"auxiliary: {', '.join(t.auxiliary_locations)}")
            if t.partition_filter:
                extra.append(f"filter: {t.partition_filter}")
            note = f"  [{'; '.join(extra)}]" if extra else ""
            lines.append(f"  {t.share}.{t.schema}.{t.name} -> {t.location}{note}")
    return "\n".join(lines) or "no shares"


def list_recipients(contents: CatalogContents) -> str:
    shares = {name_key(s.name): s.name for s in contents.shares}
    now = int(time.time() * 1000)
    lines = []
    for key, recipient in sorted(contents.recipients.items()):
        tokens = [t for t in contents.tokens.values() if t.recipient_key == key]
        tokens += [c.token for c in contents.clients.values() if c.token.recipient_key == key]
        parts = [
            f"shares {', '.join(shares[s] for s in recipient.shares)}"
            if recipient.shares
            else "no shares",
            _tokens_text([t for t in tokens if _valid(t, now)]),
            "new tokens do not expire"
            if recipient.token_lifetime is None
            else f"new tokens last {_duration_text(recipient.token_lifetime)}",
        ]
        if recipient.authentication_type == OAUTH:
            parts.append("OAuth client credentials")
        if recipient.ip_access_list:
            parts.append(f"from {', '.join(recipient.ip_access_list)}")
        if recipient.properties:
            props = ", ".join(f"{k}={v}" for k, v in sorted(recipient.properties.items()))
            parts.append(f"properties {props}")
        lines.append(f"{recipient.name}: {'; '.join(parts)}")
    return "\n".join(lines) or "no recipients"


def _valid(token: TokenRow, now: int) -> bool:
    return token.revoked_at is None and (token.expires_at is None or token.expires_at > now)


def _tokens_text(valid: list[TokenRow]) -> str:
    """ "1 token, expires ...", "2 tokens: one expires ..., one does not expire"."""
    if not valid:
        return "no valid token"
    ends = sorted(valid, key=lambda t: (t.expires_at is None, t.expires_at or 0))
    said = [_expiry_phrase(t.expires_at) for t in ends]
    if len(said) == 1:
        return f"1 token, {said[0]}"
    return f"{len(said)} tokens: " + ", ".join(f"one {s}" for s in said)


def _expiry_phrase(expires_at: int | None) -> str:
    return "does not expire" if expires_at is None else f"expires {expiry_text(expires_at)}"


def _duration_text(lifetime: timedelta) -> str:
    seconds = int(lifetime.total_seconds())
    for unit, size in (("day", 86400), ("hour", 3600), ("minute", 60)):
        if seconds % size == 0:
            return count(seconds // size, unit)
    return count(seconds, "second")


class ProfileOutput:
    """Where the profile of a token about to be made goes: a file (``output``, readable by
    its owner only) or, without one, the text to print.

    The file is created on entering, before the catalog changes, so that a path that
    cannot be written (taken, a missing directory, no permission) stops the command before
    a token exists; it is removed again when the change fails. A token is never shown
    again, so should the file then fail to take the profile, the profile is printed.
    """

    def __init__(self, output: str | None) -> None:
        self._path = None if output is None else Path(output)
        self._fd: int | None = None

    def __enter__(self) -> ProfileOutput:
        if self._path is not None:
            try:
                self._fd = os.open(self._path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
            except FileExistsError:
                raise CatalogError(
                    f"{self._path} exists already; the profile is never overwritten"
                ) from None
            except OSError as exc:
                raise CatalogError(
                    f"cannot write the profile to {self._path}: {exc.strerror}"
                ) from None
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        exc: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None
            if kind is not None and self._path is not None:
                self._path.unlink(missing_ok=True)

    def write(self, issued: IssuedToken, document: Mapping[str, object]) -> str:
        """Write ``document``, the profile of ``issued``; returns what to tell the provider."""
        secret = "client secret" if issued.client_id else "token"
        text = json.dumps(document, indent=2) + "\n"
        if self._fd is None or self._path is None:
            return text + f"(keep this profile: its {secret} cannot be shown again)"
        try:
            with os.fdopen(self._fd, "w", encoding="utf-8", closefd=False) as fh:
                fh.write(text)
                fh.flush()
                os.fsync(fh.fileno())
        except OSError as exc:
            return (
                f"the profile could not be written to {self._path} ({exc.strerror}); "
                f"keep it from here, its {secret} cannot be shown again:\n{text}"
            )
        ends = _expiry_phrase(issued.expires_at)
        credential = "client" if issued.client_id else "token"
        return f"wrote the profile of {issued.recipient} to {self._path} (the {credential} {ends})"


def parse_properties(items: Iterable[str]) -> dict[str, str]:
    """``KEY=VALUE`` command-line arguments as properties."""
    properties = {}
    for item in items:
        key, sep, value = item.partition("=")
        if not sep or not key:
            raise CatalogError(f"--property expects KEY=VALUE, got {item!r}")
        properties[key] = value
    return properties


def details_from_args(args: argparse.Namespace) -> Details:
    return Details.of(args.display_name, parse_properties(args.property))
