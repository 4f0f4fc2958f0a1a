"""``to_spark()`` of a snapshot or change scan: the same read as a Spark DataFrame, through
the ``deltaSharing`` data source (the profile handed over as options, as the official
client's ``to_spark`` does). Needs pyspark; the session is the active one, else a new
local one."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from deltaport.protocol.profile import BearerTokenProfile, Profile

if TYPE_CHECKING:
    from pyspark.sql import DataFrame


@dataclass(frozen=True)
class SparkLoad:
    profile: Profile
    table: str
    """``share.schema.table``."""
    options: Mapping[str, str] = field(default_factory=dict)
    """Reading options of the data source (``versionAsOf``, ``readChangeFeed``, ...)."""
    limit: int | None = None
    columns: Sequence[str] | None = None
    predicate: str | None = None

    def load(self) -> DataFrame:
        if self.predicate is not None:
            raise ValueError(
                "to_spark does not take jsonPredicateHints: filter the DataFrame instead "
                "(the data source pushes filters down with option jsonPredicateHints=true)"
            )
        from pyspark.sql import SparkSession

        spark = SparkSession.getActiveSession() or SparkSession.builder.getOrCreate()
        reader = spark.read.format("deltaSharing").options(
            **profile_options(self.profile), **self.options
        )
        frame = reader.load(self.table)
        if self.columns is not None:
            frame = frame.select(*self.columns)
        return frame.limit(self.limit) if self.limit is not None else frame


def profile_options(profile: Profile) -> dict[str, str]:
    """The profile as the data source's inline options (``endpoint``, ``bearerToken``, ...)."""
    options = {
        "endpoint": profile.endpoint,
        "shareCredentialsVersion": str(profile.share_credentials_version),
    }
    if isinstance(profile, BearerTokenProfile):
        options["bearerToken"] = profile.bearer_token
        if profile.expiration_time is not None:
            options["expirationTime"] = profile.expiration_time.isoformat()
        return options
    options.update(
        tokenEndpoint=profile.token_endpoint,
        clientId=profile.client_id,
        clientSecret=profile.client_secret,
    )
    if profile.scope is not None:
        options["scope"] = profile.scope
    return options
