"""The OAuth token endpoint, activation links and IP access lists of the sharing listener. Uses
``sources`` and ``catalog``; ``http`` mounts it."""
