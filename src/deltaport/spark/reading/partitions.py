"""Splitting the files of a scan into Spark input partitions.

Each partition carries a copy of the scan plan narrowed to its own files (so a task can
read them, and ask the server for fresh URLs, without the rest of the plan)."""

from __future__ import annotations

import dataclasses
import heapq
from collections.abc import Sequence

from pyspark.sql.datasource import InputPartition

from deltaport.client import RemoteFile, ScanPlan


class FilesPartition(InputPartition):
    """The files one Spark task reads."""

    def __init__(self, plan: ScanPlan) -> None:
        super().__init__(len(plan.files))
        self.plan = plan

    def __repr__(self) -> str:
        return f"FilesPartition({len(self.plan.files)} files, {self.size} bytes)"

    @property
    def size(self) -> int:
        return sum(f.size for f in self.plan.files)


def split_files(plan: ScanPlan, target_bytes: int, min_partitions: int) -> list[FilesPartition]:
    """Partitions of about ``target_bytes`` each, at least ``min_partitions`` of them when
    there are enough files (one file each when ``target_bytes`` is 0)."""
    return [
        FilesPartition(dataclasses.replace(plan, files=tuple(group)))
        for group in balanced_bins(plan.files, target_bytes, min_partitions)
    ]


def balanced_bins(
    files: Sequence[RemoteFile], target_bytes: int, min_partitions: int
) -> list[list[RemoteFile]]:
    """Files dealt into bins of similar byte sizes, largest file first into the lightest
    bin; each bin keeps its files in their original order."""
    groups = balanced_indexes([f.size for f in files], target_bytes, min_partitions)
    return [[files[i] for i in group] for group in groups]


def balanced_indexes(
    sizes: Sequence[int], target_bytes: int, min_partitions: int
) -> list[list[int]]:
    """``balanced_bins`` over file sizes: the indexes of each bin, in order."""
    if not sizes:
        return []
    if target_bytes <= 0:
        return [[i] for i in range(len(sizes))]
    total = sum(sizes)
    count = max(-(-total // target_bytes), min(min_partitions, len(sizes)), 1)
    count = min(count, len(sizes))
    members: list[list[int]] = [[] for _ in range(count)]
    heap = [(0, b) for b in range(count)]
    for i in sorted(range(len(sizes)), key=lambda i: sizes[i], reverse=True):
        load, lightest = heapq.heappop(heap)
        members[lightest].append(i)
        heapq.heappush(heap, (load + sizes[i], lightest))
    return [sorted(group) for group in members if group]
