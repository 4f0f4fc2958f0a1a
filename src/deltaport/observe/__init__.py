"""Audit records and metrics (Prometheus), used by the sharing and the admin listeners alike;
knows no HTTP framework. Uses ``catalog`` and below. ``metrics``: the Prometheus registry
and instruments; ``health``: whether the process is ready for requests."""
