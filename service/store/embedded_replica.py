"""A streaming replica of the embedded PostgreSQL (service.store.embedded_db), and making a primary
wait for it.

A streaming replica (`start_replica`, for the tests and benches of DATABASE_READ_URL): on first
use `pg_basebackup -R -X stream` copies a running server (its defaults allow it: `wal_level=replica`,
`max_wal_senders=10`, and initdb's `local replication all trust` line in `pg_hba.conf`) into
`<data_dir>/pg`, writing `standby.signal` and `primary_conninfo`; then `pg_ctl start` runs it as a
hot standby on a socket directory of its own. It is started here, not through the package, which
waits for a postmaster status of `ready` that a standby never reports (`standby`).

A failover (for the failover drill, tests/integration/test_failover.py and `python -m bench failover`):
`start_replica(..., name="s1")` starts the standby with `cluster_name=s1`, the application_name its WAL
receiver reports to the primary, so `require_synchronous(primary.admin_url, "s1")` (ALTER SYSTEM
`synchronous_standby_names`, then a reload) makes every commit on the primary wait until that standby
has flushed it. `EmbeddedDatabase.kill()` SIGKILLs the postmaster (a crash: no shutdown checkpoint, no
goodbye to clients); `EmbeddedDatabase.promote()` (`pg_ctl promote -w`) ends recovery on a standby and
makes it a primary on a new timeline.

The server's own handle (``EmbeddedDatabase``: ``stop``, ``kill``, ``promote``), attaching and
starting a primary stay in service.store.embedded_db; this module is the standby's side of it.
"""

from __future__ import annotations

import logging
import os
import subprocess
import time
from pathlib import Path
from typing import Any

import psycopg
from psycopg import sql

from .embedded_db import (
    APP_DATABASE,
    PORT,
    SYSTEM_USER,
    EmbeddedDatabase,
    EmbeddedDatabaseError,
    admin_url_of,
    ensure_system_user,
    log_tail,
    read_pid_file,
    with_database,
)
from .embedded_runtime import file_lock, postgres_library, socket_base_dir

__all__ = ["require_synchronous", "start_replica"]

log = logging.getLogger(__name__)


def start_replica(
    primary_url: str, data_dir: Path, *, database: str | None = APP_DATABASE, name: str | None = None
) -> EmbeddedDatabase:
    """Start a streaming replica of the server at `primary_url` (a libpq URL of a role that may
    replicate) in `data_dir / "pg"`: copied with pg_basebackup on first use, then started as a hot
    standby. `database` names the database of `url` (None: `postgres`); nothing is created on a
    standby. `name` is its `cluster_name`, the application_name the primary sees it as (what
    `synchronous_standby_names` lists: see `require_synchronous`). `stop()` stops it; calling this
    again on the same `data_dir` starts it again."""
    data_dir = Path(data_dir).expanduser().resolve()
    data_dir.mkdir(parents=True, exist_ok=True)
    pgdata = data_dir / "pg"
    library = postgres_library()
    ensure_system_user(library)
    system_user = SYSTEM_USER if os.geteuid() == 0 else None
    with file_lock(data_dir / "pg.lock"):
        if not (pgdata / "PG_VERSION").exists():
            _base_backup(library, primary_url, pgdata, system_user)
        socket_dir = library.utils.find_suitable_socket_dir(pgdata, socket_base_dir())
        if system_user is not None and socket_dir != pgdata:
            library.utils.ensure_prefix_permissions(socket_dir)
            socket_dir.chmod(0o777)
        try:
            named = ["-o", f"-c cluster_name={name}"] if name else []
            library.pg_ctl(["-w", "-t", "60", "-o", '-h ""', "-o", f"-k {socket_dir}", *named, "-l",
                            str(pgdata / "log"), "start"], pgdata=pgdata, user=system_user, timeout=70)
        except (subprocess.CalledProcessError, subprocess.TimeoutExpired) as exc:
            raise EmbeddedDatabaseError(
                f"could not start the replica in {pgdata}: {exc}\n{log_tail(pgdata / 'log')}"
            ) from exc
        info = read_pid_file(pgdata)
    admin_url = admin_url_of(socket_dir, info.port if info else PORT)
    return EmbeddedDatabase(
        url=admin_url if database is None else with_database(admin_url, database),
        admin_url=admin_url,
        data_dir=data_dir,
        pgdata=pgdata,
        socket_dir=socket_dir,
        pid=info.pid if info else 0,
        started_here=True,
        _system_user=system_user,
    )


def _base_backup(library: Any, primary_url: str, pgdata: Path, system_user: str | None) -> None:
    """Copy the primary into `pgdata` (made empty, 0700, owned by the server's user) as a standby."""
    pgdata.mkdir(mode=0o700)
    if system_user is not None:
        import pwd

        owner = pwd.getpwnam(system_user)
        os.chown(pgdata, owner.pw_uid, owner.pw_gid)
        library.utils.ensure_prefix_permissions(pgdata)
    started = time.perf_counter()
    try:
        library.pg_basebackup(["-D", str(pgdata), "-R", "-X", "stream", "-c", "fast", "-d", primary_url],
                              user=system_user, timeout=300)
    except (subprocess.CalledProcessError, subprocess.TimeoutExpired) as exc:
        raise EmbeddedDatabaseError(f"pg_basebackup from {primary_url} failed: {exc}") from exc
    # the primary's log, handles and socket lock (its socket may live in its data directory)
    for copied in [pgdata / "log", pgdata / ".handle_pids.json", *pgdata.glob(".s.PGSQL.*")]:
        copied.unlink(missing_ok=True)
    log.info("copied the primary into %s in %.2fs", pgdata, time.perf_counter() - started)


def require_synchronous(primary_admin_url: str, standby_names: str) -> None:
    """Make every commit on the primary wait for the standbys `standby_names` names (the value of
    `synchronous_standby_names`: `s1`, or `ANY 1 (s1, s2)`; empty: asynchronous again) to flush
    it, with the default `synchronous_commit = on`. Takes effect at once (a reload, no restart)."""
    with psycopg.connect(primary_admin_url, autocommit=True) as conn:
        conn.execute(sql.SQL("ALTER SYSTEM SET synchronous_standby_names = {}").format(sql.Literal(standby_names)))
        conn.execute("SELECT pg_reload_conf()")
