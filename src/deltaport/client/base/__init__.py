"""The client's own types and errors (profiles' tables, files, versions; ``SharingClientError``
and its kinds), used by every room of the client. Uses ``delta.model`` only."""
