"""The sharing listener's limits before any work: failed bearer tokens per client address
(:class:`FailedAuthLimit`, as on the admin listener) and requests per recipient
(:class:`RecipientRateLimits`), both answered 429 ``TOO_MANY_REQUESTS`` with ``Retry-After``."""

from __future__ import annotations

import math

from starlette.requests import Request

from deltaport.catalog.model import Recipient
from deltaport.config.model import RateConfig, RateLimitsConfig
from deltaport.protocol.errors import UnauthenticatedError
from deltaport.server.limits.rate_limit import Rate, RecipientRateLimits
from deltaport.server.sources.catalog_source import CatalogSource
from deltaport.web.failed_auth import FailedAuthLimit, client_address


class SharingLimits:
    def __init__(self, config: RateLimitsConfig) -> None:
        self.failed_auth = FailedAuthLimit(
            config.failed_auth_limit, config.failed_auth_window_seconds, listener="sharing"
        )
        self.rates = recipient_rate_limits(config)

    def authenticate(self, source: CatalogSource, request: Request) -> Recipient:
        """The recipient ``request``'s bearer token names, once both limits admit it."""
        address = client_address(request.client)
        self.failed_auth.check(address)
        try:
            recipient = source.authenticate(request.headers.get("authorization"))
        except UnauthenticatedError:
            self.failed_auth.failed(address, "sharing bearer token")
            raise
        self.rates.admit(recipient.name)
        return recipient


def recipient_rate_limits(config: RateLimitsConfig) -> RecipientRateLimits:
    """The limits ``config`` (``rateLimits``) sets."""
    default = None
    if config.requests_per_second is not None:
        default = _rate(RateConfig(config.requests_per_second, config.burst))
    overrides = {name: _rate(rate) for name, rate in config.recipients.items()}
    return RecipientRateLimits(default, overrides)


def _rate(config: RateConfig) -> Rate:
    burst = config.burst if config.burst is not None else math.ceil(config.requests_per_second)
    return Rate(config.requests_per_second, max(1, burst))
