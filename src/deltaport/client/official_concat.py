"""Frames concatenated as pandas 2 concatenates them, whatever pandas is installed.

The official ``delta-sharing`` client (1.4.2, which needs pandas < 3) joins its per-file
frames with ``pd.concat``. pandas 2 leaves a column that is all missing in a frame out
when it chooses the column's dtype, so a null partition value (``NaT``) or a column the
file lacks (``None``) does not widen the result; pandas 3 counts every frame. The frames
are aligned on pandas 2's choice before pandas itself concatenates them.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import pandas as pd


def concat_as_pandas_2(frames: Sequence[pd.DataFrame]) -> pd.DataFrame:
    """``frames`` (the same columns, in order) one after the other, with the dtypes
    pandas 2's ``pd.concat`` would give them."""
    import pandas as pd

    aligned = [frame.copy(deep=False) for frame in frames]
    for column in frames[0].columns:
        dtypes = [frame[column].dtype for frame in frames]
        if all(dtype == dtypes[0] for dtype in dtypes):
            continue
        missing = [_all_missing(frame[column]) for frame in frames]
        present = [d for d, gone in zip(dtypes, missing, strict=True) if not gone] or dtypes
        target = _common_dtype(present)
        if target.kind in "biu":
            continue  # no missing value of its own: pandas 2 counts every frame, as 3 does
        for frame, gone in zip(aligned, missing, strict=True):
            if gone and frame[column].dtype != target:
                frame[column] = pd.Series(index=frame.index, dtype=target)
    return pd.concat(aligned, axis=0, ignore_index=True)


def _all_missing(series: pd.Series[Any]) -> bool:
    return series.dtype.kind in "fcmMO" and bool(series.isna().all())


def _common_dtype(dtypes: Sequence[Any]) -> Any:
    """The dtype pandas gives a column concatenated from ``dtypes``."""
    import pandas as pd

    return pd.concat([pd.Series([], dtype=dtype) for dtype in dtypes]).dtype
