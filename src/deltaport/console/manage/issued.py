"""A credential just issued, for the page that shows it once: the profile as text and as
a download (a ``data:`` link, so that nothing of it is kept on the server to be fetched
again), or the activation link."""

from __future__ import annotations

import base64
import json
from dataclasses import dataclass

from deltaport.catalog.provider.service import ProviderService
from deltaport.catalog.recipient_access import ActivationLink
from deltaport.catalog.rows import IssuedToken


@dataclass(frozen=True)
class Issued:
    recipient: str
    profile_text: str | None = None
    download: str | None = None
    """The profile as a ``data:`` URL."""
    activation_url: str | None = None
    expires_at: int | None = None


def issued(service: ProviderService, made: IssuedToken | ActivationLink) -> Issued:
    if isinstance(made, ActivationLink):
        return Issued(made.recipient, activation_url=made.url, expires_at=made.expires_at)
    text = json.dumps(service.profile(made), indent=2) + "\n"
    encoded = base64.b64encode(text.encode()).decode()
    return Issued(
        made.recipient,
        profile_text=text,
        download=f"data:application/json;base64,{encoded}",
        expires_at=made.expires_at,
    )
