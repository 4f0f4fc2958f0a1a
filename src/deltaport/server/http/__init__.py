"""The HTTP surface of the sharing listener: routes that only translate HTTP to service calls
(``app``), the audit hook, hot-route ordering, asynchronous queries, warm-up. May use every
other room."""
