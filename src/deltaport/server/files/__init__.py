"""The file plane: local file URLs and their endpoint, URL signing in batches, file batches,
zero-copy sends. Uses ``answers`` (JSON escaping) and ``storage``."""
