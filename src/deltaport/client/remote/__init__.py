"""Talking to a sharing server: HTTP with authentication (bearer and OAuth) and retries,
query planning and paging, response parsing, temporary credentials. Uses ``base``."""
