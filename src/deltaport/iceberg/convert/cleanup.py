"""Which Iceberg files of one table are still needed, and which may be removed.

The files a table's versions share are found from the top down: the metadata files the
catalog serves now, the manifest lists their snapshots name, the manifests those lists name
(data manifests are shared between versions) and the Puffin files the delete manifests name.
Every file younger than the grace is a root as well, whatever names it: another process
sharing the directory may have just written it for a version it serves, and a reader that
loaded a metadata file a moment ago can still open everything it names. What the server
wrote and nothing needed names is removed once it is older than the grace."""

from __future__ import annotations

import io
import json
import os
import re
import threading
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path

import fastavro

from deltaport.iceberg.convert.files import MetadataFiles, name_in
from deltaport.storage import ObjectNotFoundError

WRITTEN = re.compile(
    r"metadata/[^/]+\.metadata\.json|(snap|data|deletes)-[^/]+\.avro|dv-[^/]+\.puffin"
    r"|[^/]+\.partial"
)
"""The names of the files the server writes (a ``.partial`` file is one a writer that
stopped left behind); nothing else in the folder is ever removed."""


@dataclass(frozen=True)
class Removal:
    """What a sweep of one table's files found: the files to remove (their names under the
    folder)."""

    names: list[str]


class References:
    """What each metadata file, manifest list and delete manifest names, read once (a file
    never changes under its name, which is a digest of its content)."""

    def __init__(self) -> None:
        self._named: dict[str, frozenset[str]] = {}
        self._lock = threading.Lock()

    def needed(self, files: MetadataFiles, roots: Iterable[str]) -> set[str]:
        """``roots`` and everything they name, and what that names, down to the leaves."""
        needed: set[str] = set()
        pending = list(roots)
        while pending:
            name = pending.pop()
            if name in needed:
                continue
            needed.add(name)
            pending.extend(self.named_by(files, name))
        return needed

    def named_by(self, files: MetadataFiles, name: str) -> frozenset[str]:
        with self._lock:
            found = self._named.get(name)
        if found is not None:
            return found
        if not _names_others(name):
            return frozenset()
        try:
            data = files.read(name)
        except ObjectNotFoundError:
            return frozenset()  # removed by another process: it names nothing any more
        found = frozenset(_named_in(name, data))
        with self._lock:
            self._named[name] = found
        return found


def plan_removal(
    files: MetadataFiles, served: Iterable[str], cutoff_ms: int, references: References
) -> Removal:
    """The server's files under ``files`` that neither ``served`` (metadata file names) nor
    a file modified after ``cutoff_ms`` needs, and that are not newer than it themselves."""
    listed = {o.name: o for o in files.listing() if WRITTEN.fullmatch(o.name)}
    young = [name for name, o in listed.items() if o.last_modified_ms > cutoff_ms]
    needed = references.needed(files, [*served, *young])
    return Removal(sorted(name for name in listed if name not in needed))


def _names_others(name: str) -> bool:
    return name.endswith(".metadata.json") or name.startswith(("snap-", "deletes-"))


def _named_in(name: str, data: bytes) -> list[str]:
    """The names of the files a metadata file, manifest list or delete manifest names."""
    if name.endswith(".metadata.json"):
        document = json.loads(data)
        return [name_in(s["manifest-list"]) for s in document.get("snapshots", [])]
    records = fastavro.reader(io.BytesIO(data))
    if name.startswith("snap-"):
        return [name_in(r["manifest_path"]) for r in records]  # type: ignore[call-overload,index]
    return [name_in(r["data_file"]["file_path"]) for r in records]  # type: ignore[call-overload,index]


def rewrite_lines(path: Path, keep: Callable[[str], bool]) -> None:
    """Rewrite a JSON-lines file with only the lines ``keep`` keeps, whole or not at all."""
    if not path.exists():
        return
    lines = [line for line in path.read_text().splitlines() if line.strip() and keep(line)]
    partial = path.with_name(f"{path.name}.{os.getpid()}.{threading.get_ident()}.rewrite")
    partial.write_text("".join(line + "\n" for line in lines))
    os.replace(partial, path)
