"""The backup drill: `canfield backup` while a client makes moves on a running server, `canfield
restore` into a fresh database, and there every game replays from its events to the view its
stored snapshot shows (and a server on it serves), every projection equals a rebuild from the
events, and every game's log is a prefix of the live one (a consistent snapshot). Then the
refusals: a database that is not empty, a file that is not a backup, a folder that does not exist."""

from __future__ import annotations

import os
import random
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import httpx
import msgspec
import psycopg

from domain import replay
from domain.codec import event_from_data
from service.games.views import view_of
from service.http.versions import NEWEST
from service.stats.rebuild import rebuild_projections
from service.store.game_records import GameRow
from tests.integration.test_projections import projection_rows
from tests.live import GameLog, ServerProcess, log_problems, stored

from .test_snapshot_migration import scratch_url  # noqa: F401 (a fixture: an empty database of its own)

PROJECT_ROOT = Path(__file__).resolve().parents[2]
CANFIELD = [sys.executable, "-m", "service.cli"]


def canfield(*args: str, database_url: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "DATABASE_URL": database_url}
    return subprocess.run([*CANFIELD, *args], cwd=PROJECT_ROOT, env=env, capture_output=True, text=True,
                          timeout=300, check=False)


class Mover:
    """One client making random legal moves across a player's games, resigning one now and then
    and dealing another (so the projections change during the backup too), until stopped."""

    def __init__(self, base_url: str, token: str, games: list[str]) -> None:
        self.http = httpx.Client(base_url=base_url, timeout=20, headers={"Authorization": f"Bearer {token}"})
        self.games = games
        self.acknowledged = 0
        self.failures: list[str] = []
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self.run)

    def run(self) -> None:
        rng = random.Random(5)
        while not self.stop.is_set():
            slot = rng.randrange(len(self.games))
            game_id = self.games[slot]
            options = self.http.get(f"/games/{game_id}/legal-moves").json()["moves"]
            move = {"type": "resign"} if rng.random() < 0.03 else rng.choice(options)
            response = self.http.post(f"/games/{game_id}/moves", json=move)
            if response.status_code == 200:
                self.acknowledged += 1
                if response.json()["game"]["status"] != "playing":
                    deal = {"pool": rng.randint(1, 20)} if rng.random() < 0.5 else {"seed": rng.randrange(10**6)}
                    created = self.http.post("/games", json={"ruleset": rng.choice(RULESETS), "deal": deal})
                    self.games[slot] = created.json()["id"]
            elif response.status_code >= 500:
                self.failures.append(f"{response.status_code} {response.text[:200]}")

    def wait_for(self, count: int, timeout: float = 30.0) -> None:
        deadline = time.monotonic() + timeout
        while self.acknowledged < count:
            assert time.monotonic() < deadline, f"only {self.acknowledged} moves in {timeout}s"
            time.sleep(0.02)


RULESETS = ("classic", "draw-one", "open-runs")


def all_logs(url: str) -> dict[str, GameLog]:
    with psycopg.connect(url) as conn:
        ids = [row[0] for row in conn.execute("SELECT id::text FROM games").fetchall()]
    return stored(url, ids)


def stored_views(url: str, logs: dict[str, GameLog]) -> dict[str, tuple[Any, Any]]:
    """Each game's view from its snapshot and the events after it, beside the view from replaying
    all of its events; and the games row's figures beside those of the replayed view."""
    with psycopg.connect(url) as conn:
        rows = conn.execute(
            "SELECT g.id, g.player_id, p.name, p.bot, g.deal, g.started_at, g.finished_at, g.status, g.move_count, "
            "g.undo_count FROM games g JOIN players p ON p.id = g.player_id"
        ).fetchall()
    views = {}
    for game_id, player_id, name, bot, deal, started, finished, status, moves, undos in rows:
        log = logs[str(game_id)]
        game = GameRow(game_id, player_id, deal, len(log.events), {}, started, finished, [], name, bot)
        replayed = replay(event_from_data(kind, data) for _, kind, data in log.events)
        from_snapshot = view_of(game, log.state(), False)
        from_events = view_of(game, replayed, False)
        views[str(game_id)] = (
            (from_snapshot, (status, moves, undos)),
            (from_events, (from_events.status, from_events.move_count, from_events.undo_count)),
        )
    return views


def test_a_backup_taken_under_load_restores_to_a_database_that_replays_and_rebuilds_the_same(
    clean_database: str, scratch_url: str, tmp_path: Path  # noqa: F811
) -> None:
    server = ServerProcess(clean_database, tmp_path / "server.log")
    try:
        server.wait_until_up()
        with httpx.Client(base_url=server.url, timeout=20) as setup:
            player = setup.post("/players", json={"name": "Drill"}).json()
            auth = {"Authorization": f"Bearer {player['token']}"}
            games = [
                setup.post("/games", json={"ruleset": ruleset, "deal": deal}, headers=auth).json()["id"]
                for ruleset, deal in (("classic", {"seed": 1}), ("draw-one", {"pool": 2}), ("open-runs", {"seed": 3}))
            ]
        mover = Mover(server.url, player["token"], games)
        mover.thread.start()
        try:
            mover.wait_for(30)
            backed_up = canfield("backup", str(tmp_path / "drill.dump"), database_url=clean_database)
            after_backup = mover.acknowledged
            mover.wait_for(after_backup + 20)  # moves went on after the snapshot
        finally:
            mover.stop.set()
            mover.thread.join(timeout=30)
            mover.http.close()
        assert backed_up.returncode == 0, backed_up.stderr
        assert "backed up" in backed_up.stderr
        assert mover.failures == []
    finally:
        server.stop()

    restored = canfield("restore", str(tmp_path / "drill.dump"), database_url=scratch_url)
    assert restored.returncode == 0, restored.stderr
    assert "restored" in restored.stderr

    logs = all_logs(scratch_url)
    live = all_logs(clean_database)
    assert len(logs) >= len(games)
    problems = [problem for game_id, log in logs.items() for problem in log_problems(game_id, log)]
    assert problems == []
    for game_id, log in logs.items():  # a consistent snapshot: each game's log as it stood at one instant
        assert log.events == live[game_id].events[: len(log.events)]
    assert sum(len(log.events) for log in logs.values()) < sum(len(log.events) for log in live.values())
    for game_id, (snapshot_side, events_side) in stored_views(scratch_url, logs).items():
        assert snapshot_side == events_side, game_id

    projections = projection_rows(scratch_url)
    assert any(projections.values()), "no game had ended: the projections were not put to the test"
    rebuild_projections(scratch_url)
    assert projection_rows(scratch_url) == projections

    served = ServerProcess(scratch_url, tmp_path / "restored.log")  # and a server on it serves the same
    try:
        served.wait_until_up()
        with httpx.Client(base_url=served.url, timeout=20) as client:
            for game_id, ((snapshot_view, _), _) in stored_views(scratch_url, logs).items():
                shown = client.get(f"/games/{game_id}", headers={"Api-Version": NEWEST.name})  # the code's shapes
                assert shown.status_code == 200
                assert shown.json() == msgspec.json.decode(msgspec.json.encode(snapshot_view))
    finally:
        served.stop()


def test_restore_refuses_a_database_that_is_not_empty_and_changes_nothing(
    clean_database: str, scratch_url: str, tmp_path: Path  # noqa: F811
) -> None:
    with psycopg.connect(clean_database, autocommit=True) as conn:
        conn.execute("INSERT INTO players (id, name) VALUES (gen_random_uuid(), 'Kept')")
    dump = tmp_path / "one.dump"
    assert canfield("backup", str(dump), database_url=clean_database).returncode == 0
    first = canfield("restore", str(dump), database_url=scratch_url)
    assert first.returncode == 0, first.stderr

    again = canfield("restore", str(dump), database_url=scratch_url)
    assert again.returncode == 1
    assert "the database is not empty" in again.stderr
    assert "--clean" in again.stderr
    assert "Traceback" not in again.stderr
    with psycopg.connect(scratch_url) as conn:
        assert conn.execute("SELECT name FROM players").fetchall() == [("Kept",)]

    with psycopg.connect(scratch_url, autocommit=True) as conn:
        conn.execute("UPDATE players SET name = 'Changed'")
    cleaned = canfield("restore", "--clean", str(dump), database_url=scratch_url)
    assert cleaned.returncode == 0, cleaned.stderr
    with psycopg.connect(scratch_url) as conn:
        assert conn.execute("SELECT name FROM players").fetchall() == [("Kept",)]


def test_restore_and_backup_fail_clearly_on_a_bad_file_or_folder(
    scratch_url: str, tmp_path: Path  # noqa: F811
) -> None:
    not_a_backup = tmp_path / "notes.txt"
    not_a_backup.write_text("hello\n")
    refused = canfield("restore", str(not_a_backup), database_url=scratch_url)
    assert refused.returncode == 1
    assert "is not a backup made by `canfield backup`" in refused.stderr
    missing = canfield("restore", str(tmp_path / "nothing.dump"), database_url=scratch_url)
    assert missing.returncode == 1
    assert "does not exist" in missing.stderr
    nowhere = canfield("backup", str(tmp_path / "no" / "such" / "x.dump"), database_url=scratch_url)
    assert nowhere.returncode == 1
    assert "the folder" in nowhere.stderr
    assert "does not exist" in nowhere.stderr
    for result in (refused, missing, nowhere):
        assert "Traceback" not in result.stderr
    with psycopg.connect(scratch_url) as conn:
        assert conn.execute(
            "SELECT count(*) FROM pg_tables WHERE schemaname NOT IN ('pg_catalog', 'information_schema')"
        ).fetchone() == (0,)
