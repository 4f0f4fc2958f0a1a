"""The console's activity pages, read from the audit log in the catalog database
(:mod:`deltaport.observe.audit_store`) and the catalog's counts and expiries: the overview
(the landing page) and the audit log page with its CSV and JSON lines exports.

Uses ``observe``, ``catalog`` and ``admin`` below; never the console package above it (the
console hands its page renderer in). Nothing here decides who may see what.
"""
