"""The OpenAPI document of the sharing API, served at ``/openapi.json`` and kept true by the
tests (schemathesis can fuzz it). Uses ``protocol`` only."""
