"""A view's output for one binding and one source version, written as a Delta table the
server keeps: Parquet data files first, then one log commit written only if absent, so
a materialization is visible whole or not at all.

A row-local view maps each source file to one output file per binding (named from the
source path, its deletion vector and the binding's digest), so a new source version
costs only the files it added; a whole view is recomputed. Statistics come from the
output, never from the source. Uses `delta/`, `read/` and `storage/` below `views/`.
"""

from deltaport.views.materialize.cleanup import remove_unreferenced
from deltaport.views.materialize.log import CommitConflictError
from deltaport.views.materialize.refresh import Materialized, materialize, table_location

__all__ = [
    "CommitConflictError",
    "Materialized",
    "materialize",
    "remove_unreferenced",
    "table_location",
]
