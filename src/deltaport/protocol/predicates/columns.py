"""The columns a predicate can skip files by: Delta type and physical name of each."""

from __future__ import annotations

from functools import lru_cache

from deltaport.protocol.schema import DecimalType, PrimitiveType, StructType, parse_schema


@lru_cache(maxsize=256)
def skipping_columns(schema_string: str) -> tuple[dict[str, str], dict[str, str]]:
    """Delta type and physical name of every column reachable through structs, by dotted
    logical name; empty when the schema cannot be parsed (then nothing is skipped)."""
    try:
        schema = parse_schema(schema_string)
    except ValueError:
        return {}, {}
    types: dict[str, str] = {}
    physical: dict[str, str] = {}

    def walk(struct: StructType, logical: str, physical_prefix: str) -> None:
        for f in struct.fields:
            name = f"{logical}{f.name}"
            physical_name = f"{physical_prefix}{f.physical_name}"
            if isinstance(f.type, StructType):
                walk(f.type, name + ".", physical_name + ".")
            elif isinstance(f.type, PrimitiveType | DecimalType):
                types[name] = f.type.name
                physical[name] = physical_name

    walk(schema, "", "")
    return types, physical
