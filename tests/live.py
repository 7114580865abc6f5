"""Helpers for tests that drive real servers under load and then audit what PostgreSQL holds.

* `ServerProcess`: `uvicorn service.http.asgi:app` in a subprocess (optionally several workers), which
  a test may SIGKILL; it dies with pytest.
* `Ledger`: what clients were told (every acknowledged move's events, per client, in order).
* `audit`: the stored log against the ledger: versions contiguous from 1, the games row's version
  equal to the last event's (no half-written move), the snapshot equal to a replay of the events up
  to its version and less than ``SNAPSHOT_EVERY`` behind, the state it restores equal to a replay
  of them all,
  every acknowledged event at its version with its type and data, each client's acknowledgements
  in increasing versions, no version acknowledged twice and, when every request was answered
  (`exact`), nothing in the log that nobody was told about.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import threading
import time
import uuid
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import httpx
import psycopg

from domain import GameState, redact, replay
from domain.codec import event_from_data, restore, snapshot_to_state
from service.http.server import uvicorn_arguments
from service.store.snapshots import SNAPSHOT_EVERY

if TYPE_CHECKING:
    from tests.previous_release import Release

PROJECT_ROOT = Path(__file__).resolve().parents[1]

NO_RATE_LIMITS = {
    "RATE_LIMIT_WRITES_PER_SECOND": "0",
    "RATE_LIMIT_READS_PER_SECOND": "0",
    "SOLVER_HINTS_PER_MINUTE": "0",
    "SOLVER_HINTS_PER_MINUTE_PER_ADDRESS": "0",
}


def free_port() -> int:
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def die_with_pytest() -> None:
    """In the child: SIGKILL if pytest dies (Linux), so a killed session leaves no server behind."""
    try:
        import ctypes

        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        pass


class ServerProcess:
    """`uvicorn service.http.asgi:app` in a subprocess on a free port against ``database_url``; the
    code of ``release`` (tests/previous_release.py) if given, else this checkout's."""

    def __init__(self, database_url: str, log: Path, *, workers: int = 1, env: dict[str, str] | None = None,
                 port: int | None = None, release: Release | None = None) -> None:
        self.port = port or free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.log = log
        environment = {**os.environ, "DATABASE_URL": database_url, **NO_RATE_LIMITS, **(env or {})}
        python, cwd, arguments = sys.executable, PROJECT_ROOT, uvicorn_arguments()
        if release is not None:  # another release's code, in its own folder and virtualenv
            python, cwd, arguments = str(release.python), release.tree, release.uvicorn_arguments
            environment = {**release.env(), "DATABASE_URL": database_url, **NO_RATE_LIMITS, **(env or {})}
        command = [python, "-m", "uvicorn", "service.http.asgi:app", "--host", "127.0.0.1", "--port",
                   str(self.port), "--log-level", "warning", "--no-access-log", *arguments]
        if workers > 1:
            command += ["--workers", str(workers)]
        with open(log, "ab") as out:
            self.process = subprocess.Popen(
                command, cwd=cwd, env=environment, stdout=out, stderr=subprocess.STDOUT,

                preexec_fn=die_with_pytest if sys.platform == "linux" else None,  # noqa: PLW1509
                start_new_session=True,  # its own process group: kill() reaches uvicorn's workers too
            )

    def wait_until_up(self, timeout: float = 30.0) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"the server exited:\n{self.log_text()}")
            try:
                if httpx.get(self.url + "/health", timeout=2).status_code == 200:
                    return
            except httpx.TransportError:
                pass
            time.sleep(0.05)
        raise RuntimeError(f"{self.url} did not come up:\n{self.log_text()}")

    def log_text(self) -> str:
        return self.log.read_text(errors="replace")[-4000:]

    def kill(self) -> None:
        """SIGKILL the server (and its workers): no shutdown of any kind."""
        if self.process.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.process.pid, signal.SIGKILL)
            self.process.wait()

    def stop(self) -> None:
        """SIGTERM (graceful), SIGKILL if it does not stop in 15 s."""
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=15)
            except subprocess.TimeoutExpired:
                self.kill()


# ---------------------------------------------------------------- what clients were told


@dataclass
class Ledger:
    """Acknowledged moves: per client, the events of each 200 reply in the order they came."""

    acked: dict[str, list[tuple[str, list[dict[str, Any]], bool]]] = field(default_factory=lambda: defaultdict(list))
    lock: threading.Lock = field(default_factory=threading.Lock)

    def record(self, client: str, game_id: str, body: dict[str, Any]) -> None:
        over = body["game"]["status"] != "playing"
        with self.lock:
            self.acked[client].append((game_id, body["events"], over))

    def moves(self) -> int:
        return sum(len(replies) for replies in self.acked.values())

    def games(self) -> set[str]:
        return {game for replies in self.acked.values() for game, _, _ in replies}


@dataclass
class GameLog:
    version: int  # the games row's
    events: list[tuple[int, str, dict[str, Any]]]  # (version, type, data) by version
    snapshot: dict[str, Any]
    snapshot_version: int  # its game_snapshots row's

    def state(self) -> GameState:
        """The game's state as the service restores it: the snapshot and the events after it."""
        tail = [(kind, data) for version, kind, data in self.events if version > self.snapshot_version]
        return restore(self.snapshot, tail, self.version)


def stored(url: str, game_ids: list[str]) -> dict[str, GameLog]:
    with psycopg.connect(url, autocommit=True) as conn:
        games = conn.execute(
            "SELECT g.id::text, g.version, s.snapshot, s.version FROM games g JOIN game_snapshots s ON s.game_id = g.id"
            " WHERE g.id = ANY(%s::uuid[])",
            (game_ids,),
        ).fetchall()
        rows = conn.execute(
            "SELECT game_id::text, version, type, data FROM events WHERE game_id = ANY(%s::uuid[]) "
            "ORDER BY game_id, version",
            (game_ids,),
        ).fetchall()
    events: dict[str, list[tuple[int, str, dict[str, Any]]]] = defaultdict(list)
    for game_id, version, kind, data in rows:
        events[game_id].append((version, kind, data))
    return {game_id: GameLog(version, events[game_id], snapshot, at) for game_id, version, snapshot, at in games}


def log_problems(game_id: str, log: GameLog) -> list[str]:
    """What is wrong with one stored game (nothing, when all is well): versions contiguous from 1,
    the row at the last event's version, the snapshot equal to the replay up to its version and
    less than ``SNAPSHOT_EVERY`` behind, the state it restores equal to the replay of them all."""
    problems: list[str] = []
    versions = [v for v, _, _ in log.events]
    if versions != list(range(1, len(versions) + 1)):
        problems.append(f"{game_id}: event versions are not 1..n: {versions[:5]}...{versions[-5:]}")
    if log.version != len(versions):
        problems.append(
            f"{game_id}: the games row is at version {log.version} but {len(versions)} events are stored"
        )
    replayed = replay(event_from_data(kind, data) for _, kind, data in log.events)
    if log.snapshot["version"] != log.snapshot_version or snapshot_to_state(log.snapshot) != replay(
        event_from_data(kind, data) for version, kind, data in log.events if version <= log.snapshot_version
    ):
        problems.append(f"{game_id}: the snapshot differs from the replay of its events up to its version")
    if not log.version - SNAPSHOT_EVERY < log.snapshot_version <= log.version:
        problems.append(f"{game_id}: the snapshot is at version {log.snapshot_version}, the game at {log.version}")
    try:
        restored = log.state()
    except ValueError as error:
        problems.append(f"{game_id}: its snapshot and the events after it do not restore: {error}")
    else:
        if restored != replayed:
            problems.append(f"{game_id}: the restored state differs from the replay of its events")
    return problems


def audit(url: str, ledger: Ledger, game_ids: list[str], *, exact: bool = True) -> dict[str, Any]:
    """Problems found (an empty ``problems`` list when all is well) and counts."""
    logs = stored(url, game_ids)
    problems: list[str] = []
    for game_id in game_ids:
        log = logs.get(game_id)
        if log is None:
            problems.append(f"{game_id}: no games row, or no game_snapshots row for it")
            continue
        problems += log_problems(game_id, log)
    told: dict[tuple[str, int], str] = {}
    lost = 0
    for client, replies in ledger.acked.items():
        last: dict[str, int] = {}
        for game_id, events, over in replies:
            log = logs.get(game_id)
            for event in events:
                version = event["version"]
                if version <= last.get(game_id, 0):
                    problems.append(f"{client}: acknowledged version {version} of {game_id} after {last[game_id]}")
                last[game_id] = version
                key = (game_id, version)
                if key in told:
                    problems.append(f"{game_id}: version {version} acknowledged to {told[key]} and to {client}")
                told[key] = client
                if log is None or not 1 <= version <= len(log.events):
                    problems.append(f"{game_id}: acknowledged version {version} ({event['type']}) is not in the log")
                    lost += 1
                    continue
                _, kind, data = log.events[version - 1]
                shown = data if over else redact(kind, data)
                if kind != event["type"] or shown != event["data"]:
                    lost += 1
                    problems.append(
                        f"{game_id}: version {version} is {kind} in the log, {event['type']} when acknowledged"
                    )
    stored_moves = sum(len(log.events) - 1 for log in logs.values())
    if exact:
        for game_id, log in logs.items():
            untold = [v for v, _, _ in log.events[1:] if (game_id, v) not in told]
            if untold:
                problems.append(f"{game_id}: versions {untold[:10]} are in the log but were never acknowledged")
    return {
        "problems": problems,
        "games": len(logs),
        "acknowledged_events": len(told),
        "stored_events_after_deal": stored_moves,
        "lost": lost,  # acknowledged events missing from the log, or stored differently
    }


def new_uuid() -> str:
    return str(uuid.uuid4())
