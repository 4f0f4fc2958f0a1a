"""Run a check as an unprivileged user when the tests run as root (as CI runs them): root
reads and writes files whatever their permissions, so a test of a permission fault run as
root proves nothing.

The check runs in a forked child that drops to ``nobody`` (uid and gid 65534, no
supplementary groups) before it starts: the interpreter and the modules already imported
are the parent's, so neither the interpreter's directory (often under root's home) nor the
virtual environment need be readable by that user. What the check touches must be."""

from __future__ import annotations

import os
import sys
from collections.abc import Callable

NOBODY = 65534


def as_nobody(check: Callable[[], int]) -> tuple[int, str]:
    """``check()``'s return value and what it wrote to standard error, run as ``nobody``
    when this process is root (as the process itself otherwise)."""
    read_end, write_end = os.pipe()
    child = os.fork()
    if child == 0:  # pragma: no cover - the child
        status = 70
        try:
            os.close(read_end)
            os.dup2(write_end, 2)
            sys.stderr = open(2, "w", closefd=False)  # noqa: SIM115 - not pytest's capture
            if os.geteuid() == 0:
                os.setgroups([])
                os.setgid(NOBODY)
                os.setuid(NOBODY)
            status = check()
        except BaseException as error:  # reported to the parent, then exit
            print(f"check failed in the child: {error!r}", file=sys.stderr)
        finally:
            sys.stderr.flush()
            os._exit(status)
    os.close(write_end)
    with os.fdopen(read_end, "rb") as pipe:
        stderr = pipe.read().decode(errors="replace")
    _, status = os.waitpid(child, 0)
    return os.waitstatus_to_exitcode(status), stderr
