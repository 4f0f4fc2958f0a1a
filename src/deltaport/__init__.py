"""deltaport: Delta Sharing server, client, Spark connector and table differ."""

__version__ = "0.1.0"
