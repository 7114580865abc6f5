"""Faults under load, against real processes: the database stops in the middle of a load and comes
back; a server process is killed (SIGKILL) with moves in flight.

Each test has its own embedded PostgreSQL (in a temp dir, so it can be stopped without disturbing
the rest of the suite) and real `uvicorn service.http.asgi:app` subprocesses. Clients are threads that
play their own game the way a careful client does: every move either carries an Idempotency-Key
or an If-Match, and a 503 or a broken connection is retried until it gets an answer, so every
move ends acknowledged exactly once. The stored log is then audited (tests/live.py): every
acknowledged move is there at its version, nothing else is, versions are contiguous, the games
row's version is its last event's (no half-written move) and the snapshot equals the replay.
"""

from __future__ import annotations

import os
import random
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from itertools import pairwise
from pathlib import Path
from typing import Any

import httpx
import pytest

from service.store import embedded_db
from service.store.migrations import migrate
from tests.live import Ledger, ServerProcess, audit
from tests.support import assert_problem

CLIENTS = 4
POOL_TIMEOUT_MS = 1000  # a request waits this long for a connection before its 503
RECOVERY_LIMIT = 5.0  # seconds from the database being back to the first acknowledged move


@dataclass
class Database:
    data_dir: Path
    db: embedded_db.EmbeddedDatabase

    @property
    def url(self) -> str:
        return self.db.url

    def stop(self) -> float:
        started = time.monotonic()
        self.db.stop()
        return time.monotonic() - started

    def start(self) -> float:
        started = time.monotonic()
        db = embedded_db.start(self.data_dir)
        assert db.url == self.db.url, "the restarted server listens where the service connects"
        self.db = db
        return time.monotonic() - started


@pytest.fixture(scope="module")
def database(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Database]:
    # named like tests/conftest.py's embedded servers, so a killed session's server is stopped later
    data_dir = tmp_path_factory.mktemp("embedded-pg-faults")
    (data_dir / "owner.pid").write_text(f"{os.getpid()}\n")
    db = embedded_db.start(data_dir)
    migrate(db.url)
    handle = Database(data_dir, db)
    try:
        yield handle
    finally:
        handle.db.stop()


class Client(threading.Thread):
    """Plays its own game: draw while the stock has cards (now and then an undo), else recycle.

    Half the moves carry an Idempotency-Key (a retry resends the same key), half an If-Match of
    the version the client knows (a retry that gets 412 means the first try was applied: its
    events are read back and acknowledged then). Retries go on until an answer comes."""

    def __init__(self, base_url: str, name: str, ledger: Ledger, seed: int) -> None:
        super().__init__(daemon=True, name=name)
        self.base_url = base_url
        self.ledger = ledger
        self.seed = seed
        self.rng = random.Random(seed)
        self.stop_event = threading.Event()
        self.statuses: dict[int, int] = {}
        self.unavailable: list[httpx.Response] = []
        self.unexpected: list[str] = []
        self.transport_errors = 0
        self.acked_at: list[float] = []

    def setup(self) -> None:
        with httpx.Client(base_url=self.base_url, timeout=30) as http:
            player = http.post("/players", json={"name": self.name}).json()
            self.token = player["token"]
            self.game = http.post(
                "/games", json={"ruleset": "classic", "deal": {"seed": self.seed}},
                headers={"Authorization": f"Bearer {self.token}"},
            ).json()
        self.game_id = self.game["id"]

    def next_move(self) -> dict[str, Any]:
        if self.game["table"]["stock"]["count"] == 0:
            return {"type": "recycle"}
        if self.game["version"] > 1 and self.rng.random() < 0.15:
            return {"type": "undo"}
        return {"type": "draw"}

    def run(self) -> None:
        with httpx.Client(base_url=self.base_url, timeout=httpx.Timeout(10, connect=2),
                          headers={"Authorization": f"Bearer {self.token}"}) as http:
            number = 0
            while not self.stop_event.is_set():
                number += 1
                if not self.play(http, number):
                    return

    def play(self, http: httpx.Client, number: int) -> bool:
        move = self.next_move()
        version = self.game["version"]
        keyed = number % 2 == 0
        headers = {"Idempotency-Key": f"{self.name}-{number}"} if keyed else {"If-Match": f'"{version}"'}
        tries = 0
        while True:
            tries += 1
            if tries > 2000:
                self.unexpected.append(f"{self.name}: gave up on move {number}")
                return False
            try:
                response = http.post(f"/games/{self.game_id}/moves", json=move, headers=headers)
            except httpx.TransportError:
                self.transport_errors += 1
                time.sleep(0.05)
                continue
            self.statuses[response.status_code] = self.statuses.get(response.status_code, 0) + 1
            if response.status_code == 200:
                self.acknowledge(response.json())
                return True
            if response.status_code == 503:
                self.unavailable.append(response)
                time.sleep(0.05)  # Retry-After says 1 s; a test need not wait that long
                continue
            if response.status_code == 412 and not keyed and tries > 1:
                return self.read_back(http, version)
            self.unexpected.append(f"{self.name}: {response.status_code} {response.text[:300]}")
            return False

    def read_back(self, http: httpx.Client, version: int) -> bool:
        """An earlier try of this conditional move was applied but its reply was lost: the client
        is the game's only writer, so the events after ``version`` are its move's."""
        while True:
            try:
                game = http.get(f"/games/{self.game_id}")
                events = http.get(f"/games/{self.game_id}/events", params={"after": version})
            except httpx.TransportError:
                time.sleep(0.05)
                continue
            if game.status_code == 200 and events.status_code == 200:
                break
            time.sleep(0.05)
        self.acknowledge({"game": game.json(), "events": events.json()["events"]})
        return True

    def acknowledge(self, body: dict[str, Any]) -> None:
        self.acked_at.append(time.monotonic())
        self.ledger.record(self.name, self.game_id, body)
        self.game = body["game"]


def start_clients(base_url: str, ledger: Ledger, seed: int) -> list[Client]:
    clients = [Client(base_url, f"c{seed + i}", ledger, seed + i) for i in range(CLIENTS)]
    for client in clients:
        client.setup()
    for client in clients:
        client.start()
    return clients


def stop_clients(clients: list[Client]) -> None:
    for client in clients:
        client.stop_event.set()
    for client in clients:
        client.join(timeout=60)
        assert not client.is_alive(), f"{client.name} did not finish its last move"


def wait_for_moves(clients: list[Client], count: int, timeout: float = 20.0) -> None:
    deadline = time.monotonic() + timeout
    target = [len(c.acked_at) + count for c in clients]
    while any(len(c.acked_at) < t for c, t in zip(clients, target, strict=True)):
        assert time.monotonic() < deadline, "the load stalled"
        time.sleep(0.02)


def first_ack_after(clients: list[Client], moment: float, timeout: float = 60.0) -> float:
    deadline = time.monotonic() + timeout
    while True:
        after = [t for c in clients for t in c.acked_at if t >= moment]
        if after:
            return min(after) - moment
        assert time.monotonic() < deadline, "no move was acknowledged after the database came back"
        time.sleep(0.01)


def assert_unavailable_problem(response: httpx.Response) -> None:
    assert_problem(response, 503, "unavailable")
    assert int(response.headers["retry-after"]) >= 1


def test_the_database_stops_mid_load_and_comes_back(database: Database, tmp_path: Path) -> None:
    server = ServerProcess(database.url, tmp_path / "server.log", env={"DB_POOL_TIMEOUT_MS": str(POOL_TIMEOUT_MS)})
    ledger = Ledger()
    clients: list[Client] = []
    try:
        server.wait_until_up()
        clients = start_clients(server.url, ledger, seed=1)
        wait_for_moves(clients, 20)

        stop_seconds = database.stop()
        # While it is down: moves (new ones too) and /health are 503 problems with Retry-After.
        some = clients[0]
        with httpx.Client(base_url=server.url, timeout=30) as probe:
            health = probe.get("/health")
            assert_unavailable_problem(health)
            move = probe.post(f"/games/{some.game_id}/moves", json={"type": "draw"},
                              headers={"Authorization": f"Bearer {some.token}", "Idempotency-Key": "probe"})
            assert_unavailable_problem(move)
            assert_unavailable_problem(probe.get(f"/games/{some.game_id}"))
        deadline = time.monotonic() + 30  # no fixed wait: until the clients have met the outage
        while (down_503s := sum(len(c.unavailable) for c in clients)) == 0:
            assert time.monotonic() < deadline, "the clients saw the outage"
            time.sleep(0.02)
        for client in clients:
            for response in client.unavailable:
                assert_unavailable_problem(response)

        start_seconds = database.start()
        back = time.monotonic()
        recovery = first_ack_after(clients, back)
        with httpx.Client(base_url=server.url, timeout=30) as probe:
            assert probe.get("/health").status_code == 200
        wait_for_moves(clients, 20)  # and the load goes on, on the same server process
    finally:
        stop_clients(clients)
        server.stop()
    print(f"\ndatabase stop {stop_seconds:.2f} s, start {start_seconds:.2f} s; first acknowledged move "
          f"{recovery:.2f} s after the database was back; 503s during the outage: {down_503s}")
    assert recovery < RECOVERY_LIMIT
    assert [u for c in clients for u in c.unexpected] == []
    assert all(set(c.statuses) <= {200, 412, 503} for c in clients), [c.statuses for c in clients]
    result = audit(database.url, ledger, [c.game_id for c in clients], exact=True)
    assert result["problems"] == []
    assert result["lost"] == 0


def test_a_server_killed_mid_move_leaves_no_half_written_move(database: Database, tmp_path: Path) -> None:
    server = ServerProcess(database.url, tmp_path / "first.log")
    ledger = Ledger()
    clients: list[Client] = []
    replacement: ServerProcess | None = None
    try:
        server.wait_until_up()
        clients = start_clients(server.url, ledger, seed=101)
        wait_for_moves(clients, 30)
        server.kill()  # SIGKILL with moves in flight: no shutdown, no rollback by the server
        killed = time.monotonic()
        games = [c.game_id for c in clients]
        # Before anyone retries: what the database holds is whole (acknowledged moves are there;
        # a move whose reply was lost may be there too, but whole or not at all).
        snapshot_audit = audit(database.url, ledger, games, exact=False)
        assert snapshot_audit["problems"] == []

        replacement = ServerProcess(database.url, tmp_path / "second.log", port=server.port)  # where the clients retry
        replacement.wait_until_up()
        recovery = first_ack_after(clients, killed)
        wait_for_moves(clients, 20)
    finally:
        stop_clients(clients)
        server.kill()
        if replacement is not None:
            replacement.stop()
    print(f"\nfirst acknowledged move {recovery:.2f} s after the kill (a new server process started meanwhile); "
          f"transport errors seen by clients: {sum(c.transport_errors for c in clients)}")
    assert [u for c in clients for u in c.unexpected] == []
    result = audit(database.url, ledger, games, exact=True)  # every retried move landed exactly once
    assert result["problems"] == []
    assert result["lost"] == 0


def test_after_a_quiet_database_restart_the_first_moves_succeed(database: Database, tmp_path: Path) -> None:
    """No request during the outage to discover that the pool's idle connections died with it: the
    stream listener's broken connection makes the pool test and replace them, so the first
    moves after the restart (once /readyz answers 200 again) do not each draw a dead connection
    and fail."""
    server = ServerProcess(database.url, tmp_path / "server.log", env={"DB_POOL_TIMEOUT_MS": str(POOL_TIMEOUT_MS)})
    ledger = Ledger()
    try:
        server.wait_until_up()
        clients = start_clients(server.url, ledger, seed=201)
        wait_for_moves(clients, 10)  # four clients at once: the pool holds several connections now
        stop_clients(clients)
        database.stop()
        time.sleep(0.5)
        database.start()
        statuses = []
        with httpx.Client(base_url=server.url, timeout=30) as http:
            # as a load balancer would: moves once the server says it is ready (its stream
            # listener connected again, which has the pool test its idle connections)
            deadline = time.monotonic() + 30
            while http.get("/readyz").status_code != 200:
                assert time.monotonic() < deadline, "the server never became ready again"
                time.sleep(0.05)
            for number, client in enumerate(clients * 3):
                move = client.next_move()
                response = http.post(f"/games/{client.game_id}/moves", json=move, headers={
                    "Authorization": f"Bearer {client.token}", "Idempotency-Key": f"after-{number}"})
                statuses.append(response.status_code)
                if response.status_code == 200:
                    client.acknowledge(response.json())
    finally:
        server.stop()
    assert statuses == [200] * len(statuses), statuses
    result = audit(database.url, ledger, [c.game_id for c in clients], exact=True)
    assert result["problems"] == []


async def test_the_pool_retries_a_lost_database_about_every_second() -> None:
    """psycopg_pool alone backs off 1, 2, 4, 8 ... s between attempts (after a minute's outage the
    next could be half a minute away); service.store.connections.open_pool keeps them about a second apart."""
    import asyncio

    import psycopg

    from service.store.connections import PoolOptions, open_pool

    attempts: list[float] = []

    class Counting(psycopg.AsyncConnection):  # type: ignore[type-arg]
        @classmethod
        async def connect(cls, *args: Any, **kwargs: Any) -> Any:  # type: ignore[override]
            attempts.append(time.monotonic())
            return await super().connect(*args, **kwargs)

    nowhere = "postgresql://postgres@/none?host=/nonexistent-canfield-socket-dir"
    pool = open_pool(nowhere, PoolOptions(1, 2, 1000, timeout=0.2))
    pool.connection_class = Counting
    await pool.open(wait=False)
    try:
        await asyncio.sleep(4.5)
    finally:
        await pool.close()
    gaps = [b - a for a, b in pairwise(attempts)]
    assert len(attempts) >= 4, gaps
    assert max(gaps) < 1.5, gaps
