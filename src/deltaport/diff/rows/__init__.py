"""The row diff by key: rows inserted, deleted and updated, reading only the files that differ
since the common version; the engine interface and its Arrow engine. Uses ``base`` and below."""
