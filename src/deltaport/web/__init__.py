"""ASGI plumbing both listeners use, below them and knowing neither: body and header
limits (``body_limit``, ``header_limit``), HSTS (``hsts``), request metrics
(``request_metrics``), the liveness and readiness routes (``health``), the
failed-authentication limit (``failed_auth``), client addresses behind trusted proxies
(``client_address``) and the log formatter that escapes request text (``logs``)."""
