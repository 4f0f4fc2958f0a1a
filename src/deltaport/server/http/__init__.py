"""The HTTP surface of the sharing listener: routes that only translate HTTP to service calls
(``app``), body limits, hot-route ordering, logs, TLS files, warm-up. May use every other room."""
