"""Classify Delta operation names (``commitInfo.operation``) as create / update / delete.

Names are those written by Spark (Delta Lake) and delta-rs. Anything else, including
operations of future writers or commits without commitInfo, is ``unknown``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from deltaport.diff.base.model import OperationType

_CREATE = frozenset(
    {
        "CREATE TABLE",
        "CREATE TABLE AS SELECT",
        "CREATE OR REPLACE TABLE",
        "CREATE OR REPLACE TABLE AS SELECT",
        "REPLACE TABLE",
        "REPLACE TABLE AS SELECT",
        "CONVERT",
        "CLONE",
        "SHALLOW CLONE",
    }
)
_DELETE = frozenset({"DELETE", "TRUNCATE"})
_UPDATE = frozenset(
    {
        "WRITE",
        "INSERT",
        "COPY INTO",
        "STREAMING UPDATE",
        "UPDATE",
        "MERGE",
        "OPTIMIZE",
        "REORG",
        "RESTORE",
        "FSCK",
        "FILESYSTEM CHECK",
        "VACUUM START",
        "VACUUM END",
        "SET TBLPROPERTIES",
        "UNSET TBLPROPERTIES",
        "ADD COLUMNS",
        "ADD COLUMN",
        "CHANGE COLUMN",
        "CHANGE COLUMNS",
        "RENAME COLUMN",
        "DROP COLUMNS",
        "REPLACE COLUMNS",
        "ADD CONSTRAINT",
        "DROP CONSTRAINT",
        "ADD FEATURE",
        "DROP FEATURE",
        "UPGRADE PROTOCOL",
        "UPDATE SCHEMA",
        "UPDATE FIELD METADATA",
        "UPDATE TABLE METADATA",
        "CLUSTER BY",
        "COMPUTE STATS",
        "MANUAL UPDATE",
        "ROW TRACKING BACKFILL",
        "ROW TRACKING UNBACKFILL",
    }
)


def operation_type(operation: str) -> OperationType:
    name = " ".join(operation.upper().split())
    if name in _CREATE:
        return OperationType.CREATE
    if name in _DELETE:
        return OperationType.DELETE
    if name in _UPDATE:
        return OperationType.UPDATE
    return OperationType.UNKNOWN


def operation_content(commit_info: Mapping[str, Any]) -> dict[str, Any]:
    """The parts of a commitInfo the diff shows for an operation."""
    return {
        "operation_parameters": dict(commit_info.get("operationParameters") or {}),
        "operation_metrics": dict(commit_info.get("operationMetrics") or {}),
    }
