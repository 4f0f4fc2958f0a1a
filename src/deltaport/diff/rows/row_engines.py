"""Row diff engines by name: ``arrow`` is built in; others plug in through the
``deltaport.row_engines`` entry-point group (deltaport's own Spark engine registers there,
so that nothing in [`deltaport.diff`][deltaport.diff] imports pyspark)::

    [project.entry-points."deltaport.row_engines"]
    spark = "deltaport.spark.rows.row_diff:SparkRowEngine"

An engine is a class with a ``name`` and ``compare(job: RowDiffJob) -> EngineResult``,
constructed without arguments.
"""

from __future__ import annotations

from importlib.metadata import entry_points
from typing import ClassVar, Protocol

from deltaport.diff.base.errors import DiffError
from deltaport.diff.rows.arrow_engine import ArrowRowEngine, EngineResult, RowDiffJob

ROW_ENGINE_GROUP = "deltaport.row_engines"


class RowEngine(Protocol):
    name: ClassVar[str]

    def compare(self, job: RowDiffJob) -> EngineResult: ...


def row_engine(name: str) -> RowEngine:
    """The engine registered as ``name``."""
    if name == ArrowRowEngine.name:
        return ArrowRowEngine()
    for ep in entry_points(group=ROW_ENGINE_GROUP):
        if ep.name == name:
            try:
                engine: RowEngine = ep.load()()
            except ImportError as exc:
                raise DiffError(
                    f"the {name} row diff engine cannot load: {exc} (for spark: "
                    "pip install deltaport[spark])"
                ) from exc
            return engine
    known = sorted({ArrowRowEngine.name, *(ep.name for ep in entry_points(group=ROW_ENGINE_GROUP))})
    raise DiffError(f"no row diff engine {name!r} (registered: {', '.join(known)})")
