"""A binding: the values of the keys a view uses, for one recipient. Recipients whose
values are equal share one binding, so one materialization (1,000 recipients in 5
regions make 5). A property the recipient lacks is NULL: `region = current_recipient(
'region')` then matches no row, never every row."""

from __future__ import annotations

import dataclasses
import hashlib
import json
from collections.abc import Mapping

from deltaport.views.definition import ViewDefinition
from deltaport.views.rewrite import engine_sql


@dataclasses.dataclass(frozen=True)
class Binding:
    values: tuple[tuple[str, str | None], ...]  # (key, value), by key

    def value(self, key: str) -> str | None:
        return dict(self.values).get(key)

    @property
    def digest(self) -> str:
        """A stable name for this binding (the same across processes and releases): the
        SHA-256 of its canonical JSON. It names a materialization, never a recipient."""
        text = json.dumps([list(pair) for pair in self.values], ensure_ascii=False)
        return hashlib.sha256(text.encode("utf-8")).hexdigest()


def bind(definition: ViewDefinition, properties: Mapping[str, str]) -> Binding:
    """``properties`` (one recipient's) reduced to the keys ``definition`` uses."""
    return Binding(tuple((key, properties.get(key)) for key in sorted(definition.recipient_keys)))


def bound_sql(definition: ViewDefinition, binding: Binding, dialect: str = "duckdb") -> str:
    """The view's SQL in ``dialect``, ``binding``'s values in place of `current_recipient`
    (literals in the syntax tree) and its sources renamed to `definition.relations`."""
    return engine_sql(definition.tree, definition.relations, dict(binding.values), dialect)
