"""Limits answered 429 before any work: requests per recipient (``rate_limit``)
and, with ``web.failed_auth`` (failed authentications per client address), the two as the
sharing listener applies them (``sharing_limits``). Uses ``sources``; ``http``
and the admin listener use it."""
