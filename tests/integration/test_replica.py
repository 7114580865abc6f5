"""DATABASE_READ_URL on a real streaming replica: a second embedded cluster copied from the test
server with pg_basebackup and started as a hot standby (one for this module).

Reads that tolerate a replica run on it (seen in the replica's own pg_stat_activity), a client
reads its own writes with nothing stale (also while the replica's replay is paused: then its reads
go to the primary), a replica too far behind or down sends reads to the primary, never a 5xx, and
/readyz reports the replica but stays ready without it."""

from __future__ import annotations

import shutil
import time
from collections.abc import Iterator
from typing import Any
from urllib.parse import urlsplit

import httpx
import psycopg
import pytest
from litestar import Litestar

from service.http.app import create_app
from service.settings import Settings
from service.store import embedded_replica
from tests.api.conftest import Player, running_server, server_settings
from tests.support import assert_problem


@pytest.fixture(scope="module")
def replica(postgres_server_url: str, database_url: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    data_dir = tmp_path_factory.mktemp("replica")
    name = urlsplit(database_url).path.lstrip("/")
    db = embedded_replica.start_replica(postgres_server_url, data_dir, database=name)
    handle = {"db": db, "dir": data_dir, "primary": postgres_server_url, "name": name}
    try:
        yield handle
    finally:
        handle["db"].stop()
        shutil.rmtree(data_dir, ignore_errors=True)


@pytest.fixture(scope="module")
def settings(database_url: str, replica: Any) -> Settings:
    return server_settings(database_url, database_read_url=replica["db"].url, replica_max_lag_seconds=60.0)


@pytest.fixture(scope="module")
def app(settings: Settings) -> Litestar:
    return create_app(settings)


@pytest.fixture(scope="module")
def base_url(settings: Settings, app: Litestar) -> Iterator[str]:
    with running_server(settings, app=app) as url:
        yield url


@pytest.fixture
def http(base_url: str, clean_database: str) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=base_url, timeout=10) as client:
        yield client


def reads(app: Litestar) -> Any:
    return app.state.services.store.reads.reads


def replica_ran(replica: Any, fragment: str) -> bool:
    """Whether a backend of the replica last ran a query containing ``fragment``."""
    with psycopg.connect(replica["db"].admin_url, autocommit=True) as conn:
        row = conn.execute(
            "SELECT count(*) FROM pg_stat_activity WHERE datname = %s AND query LIKE %s AND pid <> pg_backend_pid()",
            (replica["name"], f"%{fragment}%"),
        ).fetchone()
    return bool(row and row[0])


def test_reads_see_their_own_writes_and_run_on_the_replica(http: httpx.Client, app: Litestar, replica: Any) -> None:
    ann = Player(http, "Ann")
    before = reads(app)["replica"]
    for seed in range(12):  # a write, then at once a read of it through the replica path
        created = http.post("/games", json={"ruleset": "classic", "deal": {"seed": seed}}, headers=ann.auth)
        assert created.status_code == 201
        position = created.headers["Read-After"]
        listed = http.get(f"/players/{ann.id}/games", params={"limit": 50}, headers={"Read-After": position})
        assert listed.status_code == 200
        assert listed.json()["games"][0]["id"] == created.json()["id"]  # newest first: nothing stale
        assert len(listed.json()["games"]) == seed + 1
    assert replica_ran(replica, "FROM games g WHERE g.player_id")  # the list's query, in the replica's own view
    resigned = ann.move(created.json()["id"], {"type": "resign"})
    after = {"Read-After": resigned.headers["Read-After"]}
    stats = http.get(f"/players/{ann.id}/stats", headers=after).json()
    assert {r["ruleset"]: r["played"] for r in stats["rulesets"]}["classic"] == 1
    assert replica_ran(replica, "LEFT JOIN player_stats")
    assert http.get(f"/games/{created.json()['id']}", headers=after).json()["status"] == "resigned"
    assert replica_ran(replica, "JOIN game_snapshots s ON s.game_id = g.id WHERE g.id")  # an ended game's view
    assert reads(app)["replica"] - before >= 3  # the rest waited past REPLICA_WAIT_MS: the primary answered


def test_a_replica_that_has_not_replayed_the_write_is_not_read(
    http: httpx.Client, app: Litestar, replica: Any
) -> None:
    ann = Player(http, "Ann")
    made = http.post("/games", json={"ruleset": "classic", "deal": {"seed": 1}}, headers=ann.auth)
    first = made.json()
    assert _listed(http, ann, {"Read-After": made.headers["Read-After"]}) == [first["id"]]
    _wait_for(lambda: _listed(http, ann, {}) == [first["id"]], "the replica to replay the first game")
    with psycopg.connect(replica["db"].admin_url, autocommit=True) as standby:
        standby.execute("SELECT pg_wal_replay_pause()")
        try:
            created = http.post("/games", json={"ruleset": "classic", "deal": {"seed": 2}}, headers=ann.auth)
            behind = reads(app)["behind"]
            fresh = _listed(http, ann, {"Read-After": created.headers["Read-After"]})
            assert fresh == [created.json()["id"], first["id"]]  # the primary answered: nothing stale
            assert reads(app)["behind"] == behind + 1
            assert _listed(http, ann, ann.auth) == fresh  # the token's own last write, kept in this process
            assert _listed(http, ann, {}) == [first["id"]]  # anyone else: the replica, a little behind
        finally:
            standby.execute("SELECT pg_wal_replay_resume()")


def test_a_malformed_read_after_is_refused(http: httpx.Client) -> None:
    ann = Player(http, "Ann")
    refused = http.get(f"/players/{ann.id}/games", headers={"Read-After": "yesterday"})
    assert_problem(refused, 400, "invalid_request")
    assert "Read-After" in refused.json()["detail"]


def test_readiness_reports_the_replica_and_reads_survive_it_going_down(
    http: httpx.Client, app: Litestar, replica: Any
) -> None:
    ann = Player(http, "Ann")
    game = ann.new_game(ruleset="classic", deal={"seed": 4})
    _wait_for(lambda: http.get("/readyz").json().get("replica") == "up", "the replica to be up")
    replica["db"].stop()
    try:
        for _ in range(3):  # the first meets the pool's dead connections: run again on the primary
            listed = http.get(f"/players/{ann.id}/games")
            assert listed.status_code == 200, listed.text
            assert [g["id"] for g in listed.json()["games"]] == [game["id"]]
        ready = http.get("/readyz")
        assert (ready.status_code, ready.json()["replica"]) == (200, "down")
        assert reads(app)["primary"] > 0
    finally:
        replica["db"] = embedded_replica.start_replica(replica["primary"], replica["dir"], database=replica["name"])
    _wait_for(lambda: http.get("/readyz").json().get("replica") == "up", "the replica to be back")


def test_a_replica_far_behind_sends_every_read_to_the_primary(
    database_url: str, replica: Any, clean_database: str
) -> None:
    settings = server_settings(database_url, database_read_url=replica["db"].url, replica_max_lag_seconds=0.5)
    with running_server(settings) as url, httpx.Client(base_url=url, timeout=10) as client:
        ann = Player(client, "Ann")
        with psycopg.connect(replica["db"].admin_url, autocommit=True) as standby:
            standby.execute("SELECT pg_wal_replay_pause()")
            try:
                game = ann.new_game(ruleset="classic", deal={"seed": 9})
                _wait_for(lambda: client.get("/readyz").json().get("replica") == "behind", "the replica to lag")
                assert client.get("/readyz").status_code == 200
                # an anonymous read may be as old as the lag bound (0.5 s) allows, never older: with
                # replay paused the replica never has the game, so seeing it is the primary's answer
                listed = lambda: [g["id"] for g in client.get(f"/players/{ann.id}/games").json()["games"]]  # noqa: E731
                _wait_for(lambda: listed() == [game["id"]], "the primary to answer the list", seconds=3.0)
            finally:
                standby.execute("SELECT pg_wal_replay_resume()")


def _listed(http: httpx.Client, player: Player, headers: dict[str, str]) -> list[str]:
    response = http.get(f"/players/{player.id}/games", headers=headers)
    assert response.status_code == 200, response.text
    return [g["id"] for g in response.json()["games"]]


def _wait_for(check: Any, what: str, seconds: float = 15.0) -> None:
    deadline = time.monotonic() + seconds
    while not check():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.1)

