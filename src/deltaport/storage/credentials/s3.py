"""S3: STS AssumeRole with an inline session policy narrowed to one table directory.

The session policy can only narrow what the assumed role may do: it allows ``GetObject``
on the objects under the prefix, ``ListBucket`` only with an ``s3:prefix`` of the prefix
itself or below it, and, when configured, ``kms:Decrypt`` only when S3 asks on the caller's
behalf. IAM reads ``*``, ``?`` and ``${...}`` in resources and conditions as wildcards and
variables while S3 keys may contain them literally, so they are escaped. botocore is an
optional dependency (``deltaport[credentials]``): only servers offering ``dir`` on S3 need it.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from datetime import UTC
from typing import Any

from deltaport.protocol.credentials import AwsTempCredentials
from deltaport.storage.credentials.settings import (
    CredentialError,
    CredentialSettings,
    PolicyTooLargeError,
    StorageHints,
    Vended,
)
from deltaport.storage.uri import Location

MAX_POLICY_CHARS = 2048
"""STS refuses inline session policies longer than this (in plain text, whitespace aside)."""

DEFAULT_REGION = "us-east-1"


def escape_iam(text: str) -> str:
    """``text`` matched literally by IAM (``$`` first: the other escapes contain one)."""
    return text.replace("$", "${$}").replace("*", "${*}").replace("?", "${?}")


def session_policy(bucket: str, prefix: str, region: str, kms_key: str | None) -> dict[str, Any]:
    """The session policy for reading the directory ``prefix`` of ``bucket``."""
    prefix = escape_iam(prefix.strip("/"))
    objects = f"arn:aws:s3:::{bucket}/{prefix}/*" if prefix else f"arn:aws:s3:::{bucket}/*"
    listing: dict[str, Any] = {
        "Sid": "ListTableDirectory",
        "Effect": "Allow",
        "Action": "s3:ListBucket",
        "Resource": f"arn:aws:s3:::{bucket}",
    }
    if prefix:
        listing["Condition"] = {"StringLike": {"s3:prefix": [prefix, f"{prefix}/*"]}}
    statements: list[dict[str, Any]] = [
        {
            "Sid": "ReadTableObjects",
            "Effect": "Allow",
            "Action": "s3:GetObject",
            "Resource": objects,
        },
        listing,
    ]
    if kms_key:
        statements.append(
            {
                "Sid": "DecryptThroughS3",
                "Effect": "Allow",
                "Action": "kms:Decrypt",
                "Resource": kms_key,
                "Condition": {"StringEquals": {"kms:ViaService": f"s3.{region}.amazonaws.com"}},
            }
        )
    return {"Version": "2012-10-17", "Statement": statements}


def policy_text(
    location: Location, settings: CredentialSettings, options: Mapping[str, str]
) -> str:
    """The compact policy JSON for ``location``; :class:`PolicyTooLargeError` when STS
    would refuse it."""
    policy = session_policy(
        location.bucket, location.key, _region(settings, options), settings.aws_kms_key
    )
    text = json.dumps(policy, separators=(",", ":"))
    if len(text) > MAX_POLICY_CHARS:
        raise PolicyTooLargeError(
            f"the S3 session policy for {location.uri} has {len(text)} characters, more than "
            f"the {MAX_POLICY_CHARS} STS accepts (the table path is too long); it is not "
            "widened: use a shorter table path"
        )
    return text


def _region(settings: CredentialSettings, options: Mapping[str, str]) -> str:
    return settings.aws_region or options.get("aws_region") or DEFAULT_REGION


def recipient_endpoint(settings: CredentialSettings, options: Mapping[str, str]) -> StorageHints:
    """The endpoint (an S3-compatible store's; AWS's own is left for clients to know) and
    the region recipients read the bucket with."""
    endpoint = settings.aws_recipient_endpoint or options.get("aws_endpoint")
    return StorageHints(endpoint or None, _region(settings, options))


def session_name(location: Location) -> str:
    """A stable AssumeRole session name per directory (shows in CloudTrail)."""
    return "deltaport-" + hashlib.sha256(location.uri.encode()).hexdigest()[:32]


class S3Vendor:
    """Assumes the configured role once per call of :meth:`vend` (the cache in front of
    it keeps bursts from reaching STS)."""

    def __init__(self, settings: CredentialSettings, options: Mapping[str, str]) -> None:
        if not settings.aws_role_arn:
            raise CredentialError("awsRoleArn is not set")
        self._settings = settings
        self._options = dict(options)
        self._client: Any = None

    def _sts(self) -> Any:
        if self._client is None:
            import botocore.session

            opts = self._options
            self._client = botocore.session.get_session().create_client(
                "sts",
                region_name=_region(self._settings, opts),
                endpoint_url=self._settings.aws_sts_endpoint or opts.get("aws_endpoint"),
                aws_access_key_id=opts.get("aws_access_key_id"),
                aws_secret_access_key=opts.get("aws_secret_access_key"),
                aws_session_token=opts.get("aws_session_token") or opts.get("aws_token"),
            )
        return self._client

    def vend(self, location: Location) -> Vended:
        from botocore.exceptions import BotoCoreError, ClientError

        settings = self._settings
        request: dict[str, Any] = {
            "RoleArn": settings.aws_role_arn,
            "RoleSessionName": session_name(location),
            "Policy": policy_text(location, settings, self._options),
            "DurationSeconds": settings.duration_seconds,
        }
        if settings.aws_external_id:
            request["ExternalId"] = settings.aws_external_id
        try:
            answer = self._sts().assume_role(**request)
        except ClientError as exc:
            code = exc.response.get("Error", {}).get("Code", "unknown")
            if code == "PackedPolicyTooLarge":
                raise PolicyTooLargeError(
                    f"STS found the session policy for {location.uri} too large"
                ) from None
            raise CredentialError(f"STS AssumeRole failed ({code})") from None
        except BotoCoreError as exc:
            raise CredentialError(f"STS AssumeRole failed ({type(exc).__name__})") from None
        creds = answer["Credentials"]
        return Vended(
            AwsTempCredentials(
                creds["AccessKeyId"], creds["SecretAccessKey"], creds["SessionToken"]
            ),
            creds["Expiration"].astimezone(UTC),
        )
