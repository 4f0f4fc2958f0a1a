"""Temporary credentials scoped to one table directory, for directory (``dir``) access.

One module per cloud builds the narrowest credential the cloud offers (an STS session
policy, a directory SAS, a downscoped token) and :class:`CredentialCache` keeps bursts from
reaching the cloud. :func:`vendor_problem` says at configuration time why a location cannot
be offered (:func:`local_problem` the part that needs no configuration); :func:`make_vendor`
builds the vendor for it.
"""

from __future__ import annotations

import importlib.util
from collections.abc import Callable, Mapping

from deltaport.storage.credentials.azure import AzureVendor
from deltaport.storage.credentials.azure import recipient_endpoint as azure_endpoint
from deltaport.storage.credentials.cache import CredentialCache, Issued
from deltaport.storage.credentials.gcs import GcsVendor
from deltaport.storage.credentials.s3 import S3Vendor, policy_text, recipient_endpoint
from deltaport.storage.credentials.settings import (
    MAX_DURATION_SECONDS,
    MIN_DURATION_SECONDS,
    CredentialError,
    CredentialSettings,
    PolicyTooLargeError,
    StorageHints,
    Vended,
)
from deltaport.storage.uri import Location

__all__ = [
    "CredentialCache",
    "CredentialError",
    "CredentialSettings",
    "Issued",
    "PolicyTooLargeError",
    "StorageHints",
    "Vended",
    "local_problem",
    "make_vendor",
    "storage_hints",
    "vendor_problem",
]

_EXTRA = "install deltaport[credentials]"


def local_problem(location: Location) -> str | None:
    """Why ``location`` can never be offered in ``dir`` mode, whatever the configuration."""
    if location.kind == "local":
        return (
            "'dir' cannot be offered for a table on local disk: recipients read a directory "
            "with cloud credentials, and local disk has none (offer 'url')"
        )
    return None


def vendor_problem(
    location: Location, options: Mapping[str, str], settings: CredentialSettings
) -> str | None:
    """Why credentials for ``location`` cannot be vended with this configuration, or None."""
    problem = local_problem(location)
    if problem:
        return problem
    if not MIN_DURATION_SECONDS <= settings.duration_seconds <= MAX_DURATION_SECONDS:
        return (
            f"credentials durationSeconds must be between {MIN_DURATION_SECONDS} and "
            f"{MAX_DURATION_SECONDS}, got {settings.duration_seconds}"
        )
    if location.kind == "s3":
        if importlib.util.find_spec("botocore") is None:
            return f"'dir' on S3 needs botocore to call STS: {_EXTRA}"
        if not settings.aws_role_arn:
            return "'dir' on S3 needs credentials.awsRoleArn in the matching storage entry"
        try:
            policy_text(location, settings, options)
        except PolicyTooLargeError as exc:
            return str(exc)
        return None
    if location.kind == "gcs":
        if importlib.util.find_spec("google.auth") is None:
            return f"'dir' on GCS needs google-auth for downscoped tokens: {_EXTRA}"
        return None
    if not location.key.strip("/"):
        return (
            "'dir' on Azure needs the table in a directory below the container root (a SAS "
            "for the whole container is never vended)"
        )
    try:
        AzureVendor(settings, options, location.account)
    except CredentialError as exc:
        return f"'dir' on Azure: {exc}"
    return None


def make_vendor(
    location: Location, options: Mapping[str, str], settings: CredentialSettings
) -> Callable[[Location], Vended]:
    """The function vending credentials for directories like ``location`` (checked first
    with :func:`vendor_problem`)."""
    if location.kind == "s3":
        return S3Vendor(settings, options).vend
    if location.kind == "gcs":
        return GcsVendor(options).vend
    if location.kind == "azure":
        return AzureVendor(settings, options, location.account).vend
    raise CredentialError(f"no credentials for {location.kind} locations")


def storage_hints(
    location: Location, options: Mapping[str, str], settings: CredentialSettings
) -> StorageHints:
    """The endpoint and region recipients are told with credentials for ``location``: for
    S3 and for Azure when the store is not the cloud's own (an emulator, a private
    endpoint); GCS locations name their bucket, and its endpoint is Google's."""
    if location.kind == "s3":
        return recipient_endpoint(settings, options)
    if location.kind == "azure":
        return azure_endpoint(settings, options)
    return StorageHints()
