"""The sharing listener's routes that only a server on a catalog database serves: the OAuth
token endpoint (under the sharing endpoint, in the sharing document) and the activation
routes (at Unity Catalog's public paths, in the listener's root document)."""

from __future__ import annotations

from deltaport.catalog.recipient_access import ACTIVATION_INFO_PATH, ACTIVATION_PATH
from deltaport.catalog.tokens import TOKEN_ENDPOINT_PATH
from deltaport.protocol.openapi import Answer, Content, Header, Operation, RequestBody
from deltaport.protocol.profile import TokenAnswer, TokenError, TokenRequest
from deltaport.server.openapi.parameters import JSON, path_limited, path_name

FORM = "application/x-www-form-urlencoded"

_TOKEN_ERROR = Content(JSON, TokenError)

OAUTH_TOKEN = Operation(
    "post",
    TOKEN_ENDPOINT_PATH,
    "oauthToken",
    "An access token for an OAuth recipient (RFC 6749 4.4, client credentials by HTTP "
    "Basic or in the body)",
    (
        Answer(200, "{access_token, token_type, expires_in}", Content(JSON, TokenAnswer)),
        Answer(400, "invalid_request or unsupported_grant_type", _TOKEN_ERROR),
        Answer(401, "invalid_client", _TOKEN_ERROR),
        Answer(403, "Outside the recipient's IP access list", _TOKEN_ERROR),
        Answer(
            429,
            "Too many failed client authentications from this address (TOO_MANY_REQUESTS); "
            "retry after the Retry-After seconds",
            _TOKEN_ERROR,
            (Header("Retry-After", int),),
        ),
        Answer(
            503,
            "The catalog database cannot be read (temporarily_unavailable); retry later",
            _TOKEN_ERROR,
        ),
    ),
    body=RequestBody(Content(FORM, TokenRequest), required=True),
    security=[{"client": []}],
)
"""Under the sharing endpoint."""

_LINK = (path_name("link", "The activation link's secret part."),)
_LINK_ANSWERS = (
    Answer(403, "Outside the recipient's IP access list"),
    Answer(404, "Unknown, used or expired link"),
)

RETRIEVE_ACTIVATION = path_limited(
    Operation(
        "get",
        f"{ACTIVATION_PATH}/{{link}}",
        "retrieveActivationProfile",
        "The recipient's profile, once (its first credential is made then)",
        (Answer(200, "The profile"), *_LINK_ANSWERS),
        _LINK,
        security=[],
    )
)
ACTIVATION_INFO = path_limited(
    Operation(
        "get",
        f"{ACTIVATION_INFO_PATH}/{{link}}",
        "getActivationInfo",
        "Whether the link can still be used (it is not used up)",
        (Answer(200, "{}"), *_LINK_ANSWERS),
        _LINK,
        security=[],
    )
)
ACTIVATION_OPERATIONS = (RETRIEVE_ACTIVATION, ACTIVATION_INFO)
"""From the listener's root."""
