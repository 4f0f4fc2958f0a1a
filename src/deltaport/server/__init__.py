"""The sharing listener: the Delta Sharing protocol over HTTP, in rooms.

- ``http/``: routes that translate HTTP to service calls, the audit hook, warm-up;
- ``sources/``: who the recipient is and what it may see (YAML or the live catalog);
- ``tables/``: the table service: request -> version -> selected files, changes, credentials;
- ``paging/``: page and refresh tokens, query ids, listing pages, snapshot pages;
- ``answers/``: NDJSON lines and their encoding, end of stream, disconnects;
- ``files/``: the file plane: local file URLs, signing, batches, zero-copy sends;
- ``openapi/``: the OpenAPI document served at ``/openapi.json``.

Arrows run down that list's reverse: ``http`` may use every room, ``answers`` and ``files``
none above them. The server uses ``web`` (the plumbing it shares with the admin
listener), ``config``, ``catalog`` and below; never ``admin``, ``console`` or ``listeners``
(which start it). ``create_app(config)`` builds the ASGI app.
"""

from deltaport.config.loading import load_config
from deltaport.config.model import ConfigError, ServerConfig
from deltaport.server.http.app import create_app

__all__ = ["ConfigError", "ServerConfig", "create_app", "load_config"]
