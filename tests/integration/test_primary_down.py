"""No primary: the service fails fast and says so (service.store.connections.PrimaryPool).

With the database stopped, a move is a 503 with Retry-After well before the pool's 5 s timeout and
/readyz is a 503 with its reason, and once the database is back moves go on and /readyz is 200
again (the pool and the stream listener reconnected) within seconds, without a restart. A
primary behind the timeline the service has written on (an old primary back after a failover) is
refused; so is a standby given as the primary, by `canfield migrate` in one line and by /readyz.
Bounds are generous (this machine is shared); bench/ has the real figures."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import httpx
import psycopg
import pytest

from service.http.app import create_app
from service.store import embedded_db, embedded_replica
from service.store.connections import PrimaryPool
from service.store.migrations import migrate
from tests.api.conftest import running_server, server_settings
from tests.live import ServerProcess
from tests.support import assert_problem

PROJECT_ROOT = Path(__file__).resolve().parents[2]
FAST = 5.0  # seconds: a 503 while no primary answers comes well within this (the pool's own timeout is 5 s)
BACK = 30.0  # seconds: how long a test waits for the service to work again, without a restart
AGAIN = 5.0
"""Seconds from the database answering again to an acknowledged move and to /readyz 200: the
service takes about 1 s (the pool's reconnect and the listener's attempts, each about a second
apart at most); generous for a shared machine, short of a listener backing off 5 s."""


def _env(**overrides: str) -> dict[str, str]:
    env = {key: value for key, value in os.environ.items()
           if key not in ("DATABASE_URL", "DATABASE_READ_URL", "HOST", "PORT", "WORKERS", "CANFIELD_DATA_DIR")}
    env.update(overrides)
    return env


def _player_and_game(http: httpx.Client) -> tuple[str, str]:
    token = http.post("/players", json={"name": "fencer"}).json()["token"]
    game = http.post("/games", json={"ruleset": "classic", "deal": {"seed": 7}},
                     headers={"Authorization": f"Bearer {token}"}).json()
    return token, game["id"]


def _move(http: httpx.Client, token: str, game: str, key: str) -> tuple[httpx.Response, float]:
    started = time.monotonic()
    response = http.post(f"/games/{game}/moves", json={"type": "draw"},
                         headers={"Authorization": f"Bearer {token}", "Idempotency-Key": key})
    return response, time.monotonic() - started


def _until(check: Any, what: str, seconds: float = BACK) -> Any:
    deadline = time.monotonic() + seconds
    while True:
        found = check()
        if found:
            return found
        assert time.monotonic() < deadline, what
        time.sleep(0.05)


@pytest.fixture(scope="module")
def own_database(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    """An embedded PostgreSQL of this module's own, so it can be stopped (named like the suite's)."""
    data_dir = tmp_path_factory.mktemp("embedded-pg-primary-down")
    (data_dir / "owner.pid").write_text(f"{os.getpid()}\n")
    db = embedded_db.start(data_dir)
    migrate(db.url)
    handle = {"db": db, "dir": data_dir}
    try:
        yield handle
    finally:
        handle["db"].stop()


def test_with_the_database_stopped_moves_and_readyz_are_503_at_once_and_it_comes_back(
    own_database: dict[str, Any], tmp_path: Path
) -> None:
    # the pool's own timeout stays the default 5 s: a 503 sooner than that is the fail-fast path
    server = ServerProcess(own_database["db"].url, tmp_path / "server.log")
    try:
        server.wait_until_up()
        with httpx.Client(base_url=server.url, timeout=30) as http:
            token, game = _player_and_game(http)
            assert _move(http, token, game, "before")[0].status_code == 200

            own_database["db"].stop()
            for number in range(4):
                response, seconds = _move(http, token, game, f"down-{number}")
                assert_problem(response, 503, "unavailable")
                assert response.headers["retry-after"] == "1"
                assert seconds < FAST, f"a move took {seconds:.1f} s to be refused"
            started = time.monotonic()
            ready = http.get("/readyz")
            assert time.monotonic() - started < FAST
            assert_problem(ready, 503, "unavailable")
            assert "the database is not answering" in ready.json()["detail"]

            own_database["db"] = embedded_db.start(own_database["dir"])
            back_at = time.monotonic()
            _until(lambda: _move(http, token, game, "after")[0].status_code == 200,
                   "moves work again once the database is back")
            moved = time.monotonic() - back_at
            _until(lambda: http.get("/readyz").status_code == 200, "ready again once the database is back")
            ready = time.monotonic() - back_at
            assert moved < AGAIN, f"a move was acknowledged {moved:.1f} s after the database was back"
            assert ready < AGAIN, f"/readyz was 200 {ready:.1f} s after the database was back"
    finally:
        server.kill()


def test_a_primary_behind_the_timeline_written_on_is_refused(clean_database: str) -> None:
    settings = server_settings(clean_database)
    app = create_app(settings)
    name = urlsplit(clean_database).path.lstrip("/")
    with running_server(settings, app=app) as url, httpx.Client(base_url=url, timeout=30) as http:
        token, game = _player_and_game(http)
        assert _move(http, token, game, "first")[0].status_code == 200
        pool = app.state.services.store.pool
        assert isinstance(pool, PrimaryPool)
        primary = pool.primary
        real = primary.timeline
        assert real >= 1, "the timeline is read when a connection is made"

        # As if this process had written on a later timeline (a failover it followed) and the
        # database now answering were the old primary: every connection it makes from now on is refused.
        primary.timeline = real + 1
        with psycopg.connect(clean_database, autocommit=True) as admin:
            admin.execute("SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
                          "WHERE datname = %s AND pid <> pg_backend_pid()", [name])

        def refused() -> httpx.Response | None:
            response = _move(http, token, game, "fenced")[0]
            return response if "timeline" in response.text else None

        response = _until(refused, "a move is refused for the timeline")
        assert_problem(response, 503, "unavailable")
        assert response.headers["retry-after"] == "1"
        assert f"behind timeline {real + 1}" in response.json()["detail"]
        started = time.monotonic()
        ready = http.get("/readyz")
        assert time.monotonic() - started < FAST
        assert_problem(ready, 503, "unavailable")
        assert f"on timeline {real}, behind timeline {real + 1}" in ready.json()["detail"]

        primary.timeline = real  # the promoted primary answers again: its connections are taken
        _until(lambda: http.get("/readyz").status_code == 200, "ready again on the right timeline")
        assert _move(http, token, game, "again")[0].status_code == 200


@pytest.fixture(scope="module")
def standby(postgres_server_url: str, database_url: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    data_dir = tmp_path_factory.mktemp("standby-as-primary")
    db = embedded_replica.start_replica(postgres_server_url, data_dir, database=urlsplit(database_url).path.lstrip("/"))
    try:
        yield db
    finally:
        db.stop()
        shutil.rmtree(data_dir, ignore_errors=True)


def test_a_standby_given_as_the_primary_is_one_line_from_migrate(standby: Any) -> None:
    done = subprocess.run([sys.executable, "-m", "service.cli", "migrate"], check=False, cwd=PROJECT_ROOT,
                          env=_env(DATABASE_URL=standby.url), capture_output=True, text=True, timeout=120)
    assert done.returncode != 0
    assert "Traceback" not in done.stderr
    assert "read-only standby" in done.stderr
    assert "target_session_attrs=read-write" in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1, done.stderr


def test_a_standby_given_as_the_primary_is_not_ready_and_refuses_writes(standby: Any) -> None:
    with running_server(server_settings(standby.url)) as url, httpx.Client(base_url=url, timeout=30) as http:
        started = time.monotonic()
        ready = http.get("/readyz")
        assert time.monotonic() - started < FAST
        assert_problem(ready, 503, "unavailable")
        assert "read-only standby" in ready.json()["detail"]
        response = _until(lambda: (r := http.post("/players", json={"name": "x"})).status_code == 503 and r,
                          "a write is refused")
        assert_problem(response, 503, "unavailable")
        assert "read-only standby" in response.json()["detail"]


def test_an_unreachable_host_is_one_line_from_migrate() -> None:
    # a TEST-NET-1 address (RFC 5737): nothing answers there, or the network says it is unreachable
    url = "postgresql://canfield@192.0.2.1:5432/canfield"
    started = time.monotonic()
    done = subprocess.run([sys.executable, "-m", "service.cli", "migrate"], check=False, cwd=PROJECT_ROOT,
                          env=_env(DATABASE_URL=url, DB_CONNECT_TIMEOUT_SECONDS="2"), capture_output=True,
                          text=True, timeout=120)
    assert done.returncode != 0
    assert "Traceback" not in done.stderr
    assert "cannot migrate" in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1, done.stderr
    assert time.monotonic() - started < 60, "connect_timeout bounds the attempt"
