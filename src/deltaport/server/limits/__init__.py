"""Limits answered 429 before any work: failed authentications per client address
(``failed_auth``, used by both listeners), requests per recipient (``rate_limit``), and the
two as the sharing listener applies them (``sharing_limits``). Uses ``sources``; ``http``
and the admin listener use it."""
