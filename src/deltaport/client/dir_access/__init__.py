"""Directory access (dir mode): the Delta log read from storage with the server's vended
credentials, scanned like a local table. Uses ``base``, ``remote``, ``files``, ``delta``."""
