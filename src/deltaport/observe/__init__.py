"""Audit records and metrics (Prometheus), used by the sharing and the admin listeners alike;
knows no HTTP framework. Uses ``catalog`` and below. (Its modules land with issue 33.)"""
