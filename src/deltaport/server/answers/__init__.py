"""Answer encoding: NDJSON lines of metadata, files and changes, their chunking, the end-of-
stream action, and stopping work for a client that left. Uses ``protocol`` and ``storage``."""
