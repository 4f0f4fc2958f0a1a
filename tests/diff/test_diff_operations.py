from __future__ import annotations

import pytest

from deltaport.diff.base.model import OperationType
from deltaport.diff.history.operations import operation_content, operation_type


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("CREATE TABLE", OperationType.CREATE),
        ("CREATE OR REPLACE TABLE", OperationType.CREATE),
        ("CREATE OR REPLACE TABLE AS SELECT", OperationType.CREATE),
        ("create  table as select", OperationType.CREATE),
        ("WRITE", OperationType.UPDATE),
        ("MERGE", OperationType.UPDATE),
        ("OPTIMIZE", OperationType.UPDATE),
        ("SET TBLPROPERTIES", OperationType.UPDATE),
        ("DELETE", OperationType.DELETE),
        ("TRUNCATE", OperationType.DELETE),
        ("SOME FUTURE OPERATION", OperationType.UNKNOWN),
        ("", OperationType.UNKNOWN),
    ],
)
def test_operation_type(name: str, expected: OperationType) -> None:
    assert operation_type(name) is expected


def test_operation_content_keeps_parameters_and_metrics() -> None:
    info = {
        "operation": "WRITE",
        "operationParameters": {"mode": "Append"},
        "operationMetrics": {"numFiles": "1"},
        "engineInfo": "x",
    }
    assert operation_content(info) == {
        "operation_parameters": {"mode": "Append"},
        "operation_metrics": {"numFiles": "1"},
    }
    assert operation_content({}) == {"operation_parameters": {}, "operation_metrics": {}}
