"""The PostgreSQL database for tests (shared by tests/integration and tests/api).

The server, chosen on first use (fixtures are lazy: tests/unit never starts one):

1. TEST_DATABASE_URL, if set: a URL of an existing server, as a role that may CREATE DATABASE
   (the database in the URL is only used to connect; it is not touched);
2. else a testcontainers `postgres:16-alpine`, if a Docker engine answers within 2 seconds;
3. else the embedded PostgreSQL (service.store.embedded_db) in a pytest temp dir, stopped and
   deleted at the end of the session. Servers left running by a killed session are stopped.

Fixtures:

* `database_url` (session): a fresh database `canfield_test_<hex>` on that server, migrated with
  Alembic; its libpq URL. Dropped at the end of the session.
* `clean_database` (function): empties every table (except alembic_version) before the test, then
  returns the same URL. Request it from every test that touches the database.
"""

from __future__ import annotations

import os
import secrets
import shutil
import signal
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import psycopg
import pytest
from psycopg import sql

TEST_DB_PREFIX = "canfield_test_"
DOCKER_IMAGE = "postgres:16-alpine"
EMBEDDED_DIR_PREFIX = "embedded-pg"  # pytest temp dirs named embedded-pg<N>
OWNER_FILE = "owner.pid"  # in that dir: the pid of the pytest session that started the server

_source: list[str] = []  # what the session used, for the terminal summary
_OWN_BASETEMP = pytest.StashKey[str]()


def pytest_configure(config: pytest.Config) -> None:
    """Each session gets a temp root of its own (unless --basetemp names one). Under the shared
    /tmp/pytest-of-<user>, every new pytest session resets that folder to mode 0700, which cuts
    an embedded PostgreSQL (run as its own system user when we are root) off from its data
    directory in a session still running: "pg_control: Permission denied"."""
    if config.option.basetemp is None:
        config.option.basetemp = tempfile.mkdtemp(prefix="canfield-pytest-")
        config.stash[_OWN_BASETEMP] = config.option.basetemp


def pytest_unconfigure(config: pytest.Config) -> None:
    own = config.stash.get(_OWN_BASETEMP, None)
    if own is not None:
        shutil.rmtree(own, ignore_errors=True)


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    if _source:
        terminalreporter.write_line("test database: " + "; ".join(_source))


# --- the server ----------------------------------------------------------------------


def _docker_answers() -> bool:
    try:
        import docker  # type: ignore[import-untyped, unused-ignore]

        client = docker.from_env(timeout=2)
        try:
            return bool(client.ping())
        finally:
            client.close()
    except Exception:  # no SDK, no socket, no daemon, no permission: no Docker
        return False


def _stop_abandoned_servers(root: Path) -> None:
    """Stop embedded servers that earlier (killed) sessions left running under `root`.

    A server is abandoned when its data dir is one of ours (<root>/**/embedded-pg<N>/pg) and the
    session that started it (<N>/owner.pid) is gone, or the directory itself was deleted.
    """
    import psutil  # type: ignore[import-untyped, unused-ignore]

    for process in psutil.process_iter(["name", "cmdline"]):
        try:
            cmdline = process.info["cmdline"] or []
            if process.info["name"] != "postgres" or "-D" not in cmdline:
                continue
            pgdata = Path(cmdline[cmdline.index("-D") + 1])
            if not (pgdata.name == "pg" and pgdata.parent.name.startswith(EMBEDDED_DIR_PREFIX)):
                continue
            if root not in pgdata.parents:
                continue
            try:
                owner = int((pgdata.parent / OWNER_FILE).read_text().strip())
            except (OSError, ValueError):
                owner = 0
            if owner and psutil.pid_exists(owner) and owner != os.getpid():
                continue  # another live session's server
            process.send_signal(signal.SIGINT)  # fast shutdown
        except (psutil.Error, IndexError, OSError):
            continue


@pytest.fixture(scope="session")
def postgres_server_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A libpq URL to connect to the test server as a role that may create databases."""
    started = time.perf_counter()
    url = os.environ.get("TEST_DATABASE_URL")
    if url:
        from service.store.connections import libpq_url

        _source.append("TEST_DATABASE_URL")
        yield libpq_url(url)
        return

    if _docker_answers():
        try:
            from testcontainers.community.postgres import PostgresContainer
        except ImportError:
            from testcontainers.postgres import PostgresContainer

        with PostgresContainer(DOCKER_IMAGE, driver=None) as container:
            _source.append(f"testcontainers {DOCKER_IMAGE} (ready in {time.perf_counter() - started:.1f}s)")
            yield container.get_connection_url()
        return

    from service.store import embedded_db

    _stop_abandoned_servers(tmp_path_factory.getbasetemp().parent)
    data_dir = tmp_path_factory.mktemp(EMBEDDED_DIR_PREFIX)
    (data_dir / OWNER_FILE).write_text(f"{os.getpid()}\n")
    db = embedded_db.start(data_dir, database=None)
    _source.append(f"embedded PostgreSQL in {db.pgdata} (ready in {time.perf_counter() - started:.1f}s)")
    try:
        yield db.admin_url
    finally:
        db.stop()
        shutil.rmtree(db.pgdata, ignore_errors=True)


# --- the database ------------------------------------------------------------------------


def _with_database(url: str, name: str) -> str:
    from service.store.embedded_db import with_database

    return with_database(url, name)


def _drop_leftover_test_databases(conn: psycopg.Connection) -> None:
    """Drop canfield_test_* databases of earlier sessions (those still in use are skipped)."""
    rows = conn.execute(
        "SELECT datname FROM pg_database WHERE datname LIKE %s", [TEST_DB_PREFIX.replace("_", r"\_") + "%"]
    ).fetchall()
    for (name,) in rows:
        try:
            conn.execute(sql.SQL("DROP DATABASE {}").format(sql.Identifier(name)))
        except psycopg.errors.ObjectInUse:
            pass  # a live session holds it (each session keeps a connection open to its own)
        except psycopg.Error:
            pass


@pytest.fixture(scope="session")
def database_url(postgres_server_url: str) -> Iterator[str]:
    """A fresh database for this session, with the migrations applied; its libpq URL."""
    with psycopg.connect(postgres_server_url, autocommit=True) as admin:
        _drop_leftover_test_databases(admin)
    with fresh_database(postgres_server_url) as url:
        yield url


@contextmanager
def fresh_database(postgres_server_url: str) -> Iterator[str]:
    """A new database on the test server with the migrations applied (its libpq URL), dropped after."""
    from service.store.migrations import migrate

    name = f"{TEST_DB_PREFIX}{secrets.token_hex(6)}"
    with psycopg.connect(postgres_server_url, autocommit=True) as admin:
        admin.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))
    url = _with_database(postgres_server_url, name)
    # Held open for the session: marks the database as in use for other sessions' cleanup.
    lease = psycopg.connect(url, autocommit=True, application_name="canfield-tests-lease")
    try:
        migrate(url)
        yield url
    finally:
        lease.close()
        with psycopg.connect(postgres_server_url, autocommit=True) as admin:
            for _ in range(5):
                admin.execute(
                    "SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
                    "WHERE datname = %s AND pid <> pg_backend_pid()",
                    [name],
                )
                try:
                    admin.execute(sql.SQL("DROP DATABASE IF EXISTS {}").format(sql.Identifier(name)))
                    break
                except psycopg.errors.ObjectInUse:
                    time.sleep(0.2)  # a connection arrived between terminate and drop


@pytest.fixture(scope="session")
def _tables_to_clean(database_url: str) -> list[str]:
    with psycopg.connect(database_url) as conn:
        rows = conn.execute(
            "SELECT format('%I.%I', schemaname, tablename) FROM pg_tables"
            " WHERE schemaname = current_schema() AND tablename <> 'alembic_version' ORDER BY tablename"
        ).fetchall()
    return [row[0] for row in rows]


@pytest.fixture
def clean_database(database_url: str, _tables_to_clean: list[str]) -> str:
    """The session database, emptied (TRUNCATE ... RESTART IDENTITY CASCADE) before this test.

    Only the tables holding rows are truncated (one query asks which): a TRUNCATE makes new files
    for every table and index it names, about 40 ms for all of them against a few for the handful
    a test fills, and the suite empties the database several hundred times. A table that only
    refers to an emptied one is emptied by CASCADE; an empty one whose identity moved on keeps its
    counter, which no test reads."""
    if _tables_to_clean:
        with psycopg.connect(database_url, autocommit=True) as conn:
            conn.execute("SET lock_timeout = '10s'")  # fail, not hang, if something holds a table
            holding = " UNION ALL ".join(
                f"SELECT {index} WHERE EXISTS (SELECT FROM {table})" for index, table in enumerate(_tables_to_clean)
            )
            filled = [_tables_to_clean[row[0]] for row in conn.execute(holding).fetchall()]
            if filled:
                conn.execute(f"TRUNCATE {', '.join(filled)} RESTART IDENTITY CASCADE")
    return database_url
