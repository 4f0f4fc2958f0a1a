"""Shared views (issue 46): a view's SQL parsed and checked, bound to one recipient's
properties, and run by an engine over Arrow sources.

Knows no catalog, no server and no recipient: a table's schema comes through a callback,
a recipient's properties as a plain mapping. Uses only `read/`, `delta/`, `storage/` and
`protocol/` below it.
"""

from deltaport.views.binding import Binding, bind, bound_sql
from deltaport.views.definition import Shape, ViewDefinition, define_view
from deltaport.views.duckdb_engine import DuckDBEngine
from deltaport.views.engine import Engine
from deltaport.views.errors import Refusal, ViewDefinitionError
from deltaport.views.running import run_view

__all__ = [
    "Binding",
    "DuckDBEngine",
    "Engine",
    "Refusal",
    "Shape",
    "ViewDefinition",
    "ViewDefinitionError",
    "bind",
    "bound_sql",
    "define_view",
    "run_view",
]
