"""The sharing listener's route tables (operations, their parameters, bodies and answers),
from which both its routes and its OpenAPI documents are made; the generator itself is
:mod:`deltaport.protocol.openapi`. Uses ``protocol``, the page limits of ``server.paging`` and
the media type of ``server.answers``."""
