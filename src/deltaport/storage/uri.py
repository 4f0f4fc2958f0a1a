"""Table location URIs: normalising the spellings users and Delta logs use.

A location is one of: a plain local path, ``file://`` / ``file:`` URIs, ``s3://`` /
``s3a://`` / ``s3n://``, ``az://container/path``, ``abfs[s]://container@account.dfs...``,
``wasb[s]://container@account.blob...``, ``gs://`` / ``gcs://``. Everything is normalised to
a URI with a scheme obstore understands, without a trailing slash.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from urllib.parse import unquote, urlsplit

_S3_SCHEMES = {"s3", "s3a", "s3n"}
_AZURE_SCHEMES = {"az", "azure", "abfs", "abfss", "wasb", "wasbs", "adl"}
_GCS_SCHEMES = {"gs", "gcs"}


@dataclass(frozen=True)
class Location:
    """A normalised storage location.

    ``kind`` is ``local``, ``s3``, ``azure`` or ``gcs``. ``uri`` is the canonical URI
    (``file:///abs/path``, ``s3://bucket/key``, ``az://container/key`` or ``gs://bucket/key``);
    ``bucket`` and ``key`` split it (``bucket`` is empty for local paths, ``key`` is the
    absolute path for them); ``account`` is the Azure storage account when the URI named it.
    """

    kind: str
    uri: str
    bucket: str
    key: str
    account: str | None = None

    def child(self, relative: str) -> Location:
        """The location of ``relative`` (already URL-decoded) below this one."""
        relative = relative.lstrip("/")
        key = f"{self.key.rstrip('/')}/{relative}" if self.key else relative
        if self.kind == "local":
            return Location("local", "file://" + key, "", key)
        scheme = {"s3": "s3", "azure": "az", "gcs": "gs"}[self.kind]
        return Location(
            self.kind, f"{scheme}://{self.bucket}/{key}", self.bucket, key, self.account
        )


class InvalidLocationError(ValueError):
    """A location string that names no storage deltaport knows."""


def is_relative_path(location: str) -> bool:
    """Whether ``location`` is a local path that depends on the working directory (a
    server refuses those: its working directory is nobody's business)."""
    text = location.strip()
    scheme = urlsplit(text).scheme
    if scheme or not text:
        return False
    return not os.path.isabs(os.path.expanduser(text))


def absolute_location(location: str) -> str:
    """``location`` with a relative local path made absolute against the working
    directory (for commands a person types); URIs and absolute paths unchanged."""
    return os.path.abspath(location.strip()) if is_relative_path(location) else location


def parse_location(location: str) -> Location:
    """Parse a user-given table location (path or URI) into a :class:`Location`."""
    text = location.strip()
    if not text:
        raise InvalidLocationError("empty table location")
    parts = urlsplit(text)
    scheme = parts.scheme.lower()
    if scheme in ("", "file") or (len(scheme) == 1 and os.name == "nt"):
        path = unquote(parts.path) if scheme == "file" else text
        if scheme == "file" and parts.netloc not in ("", "localhost"):
            raise InvalidLocationError(f"file URI with a host is not supported: {location}")
        path = os.path.abspath(os.path.expanduser(path)).rstrip("/") or "/"
        return Location("local", "file://" + path, "", path)
    # object keys may hold '?' and '#' (urlsplit would cut them off as query and fragment)
    key = unquote(text.partition("://")[2].partition("/")[2]).strip("/")
    if scheme in _S3_SCHEMES:
        if not parts.netloc:
            raise InvalidLocationError(f"S3 URI without a bucket: {location}")
        return Location("s3", f"s3://{parts.netloc}/{key}".rstrip("/"), parts.netloc, key)
    if scheme in _AZURE_SCHEMES:
        container, _, host = parts.netloc.partition("@")
        account = host.split(".", 1)[0] if host else None
        if not container:
            raise InvalidLocationError(f"Azure URI without a container: {location}")
        return Location("azure", f"az://{container}/{key}".rstrip("/"), container, key, account)
    if scheme in _GCS_SCHEMES:
        if not parts.netloc:
            raise InvalidLocationError(f"GCS URI without a bucket: {location}")
        return Location("gcs", f"gs://{parts.netloc}/{key}".rstrip("/"), parts.netloc, key)
    raise InvalidLocationError(f"unsupported storage scheme {scheme!r} in {location}")


def resolve_log_path(root: Location, path: str) -> Location:
    """Resolve a file path as written in a Delta log against the table root.

    Relative paths in the log are URL-encoded (RFC 2396) and are decoded here; absolute
    paths are full URIs (``file:/...``, ``s3://...``) and are parsed as locations.
    """
    parts = urlsplit(path)
    if parts.scheme and len(parts.scheme) > 1:
        if parts.scheme.lower() == "file":
            decoded = unquote(parts.path)
            return Location("local", "file://" + decoded, "", decoded)
        return parse_location(path)
    return root.child(unquote(path))
