"""A view run for one binding: its sources handed to an engine under the relation names
its bound SQL uses."""

from __future__ import annotations

from collections.abc import Mapping

import pyarrow as pa

from deltaport.protocol.names import name_key
from deltaport.views.binding import Binding, bound_sql
from deltaport.views.definition import ViewDefinition
from deltaport.views.engine import ArrowSource, Engine


def run_view(
    engine: Engine,
    definition: ViewDefinition,
    binding: Binding,
    sources: Mapping[str, ArrowSource],
) -> pa.RecordBatchReader:
    """The view's rows for ``binding`` over ``sources`` (by `share.schema.table`, one entry
    per source of the view). For a row-local view, ``sources`` may be one file's rows."""
    by_key = {name_key(name): source for name, source in sources.items()}
    if set(by_key) != set(definition.sources):
        raise ValueError(
            f"the view reads {', '.join(definition.sources)}; given {', '.join(sorted(by_key))}"
        )
    relations = definition.relations
    sql = bound_sql(definition, binding, dialect=engine.dialect)
    return engine.run(sql, {relations[name]: source for name, source in by_key.items()})
