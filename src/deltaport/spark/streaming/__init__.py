"""Structured Streaming: offsets, the versions read per micro-batch (from the server or, in dir
mode, from the Delta log), the stream reader. Uses ``base`` and ``reading``."""
