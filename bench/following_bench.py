"""Following accounts: ``python -m bench following`` (on request; docs/streams-and-webhooks.md).

Against one server process (``service.http.asgi:app``) on a fresh database, three figures:

1. **Account streams.** ``FOLLOW_STREAMS`` accounts (default 1,000) each hold one open
   ``GET /players/me/stream`` (NDJSON, one client address: ``STREAMS_PER_ADDRESS`` raised to fit);
   ``FOLLOW_ROUNDS`` rounds (default 10), each one event for every account (the outbox rows and
   notifications ``append_all`` writes, in one statement) and a wait until every stream has it:
   every event wakes its stream, which reads it from the table. Events per second delivered.
2. **Moves write no outbox row.** ``FOLLOW_MOVES`` moves (default 50: draws and undos) that do not end their game,
   then a resignation, over HTTP: the ``account_events`` rows each wrote.
3. **Webhooks with a slow receiver.** ``FOLLOW_HOOKS`` accounts (default 200) each with one hook
   to a loopback receiver that answers every delivery after ``FOLLOW_RECEIVER_MS`` (default 100 ms);
   ``FOLLOW_HOOK_EVENTS`` events per account (default 5); the time until the receiver has had
   (and verified, with the Standard Webhooks library) every one: deliveries per second, for each
   ``WEBHOOK_CONCURRENCY`` of ``FOLLOW_CONCURRENCY`` (default 8,32).
"""

from __future__ import annotations

import asyncio
import os
import sys
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

from .harness.env import HOST, PROJECT_ROOT, quick

STREAMS = int(os.environ.get("FOLLOW_STREAMS", quick("1000", "50")))
ROUNDS = int(os.environ.get("FOLLOW_ROUNDS", quick("10", "2")))
MOVES = int(os.environ.get("FOLLOW_MOVES", quick("50", "10")))
HOOKS = int(os.environ.get("FOLLOW_HOOKS", quick("200", "10")))
HOOK_EVENTS = int(os.environ.get("FOLLOW_HOOK_EVENTS", quick("5", "2")))
RECEIVER_MS = float(os.environ.get("FOLLOW_RECEIVER_MS", "100"))
CONCURRENCY = [int(c) for c in os.environ.get("FOLLOW_CONCURRENCY", quick("8,32", "8")).split(",")]
BATCH = 100
WAIT = 300.0


def main() -> None:
    sys.path.insert(0, str(PROJECT_ROOT))
    from .harness.database import bench_database

    with tempfile.TemporaryDirectory(prefix="canfield-following-bench-") as work, \
            bench_database(Path(work)) as db:
        streams, moves = _with_server(db.url, Path(work), {"WEBHOOK_CONCURRENCY": "0"}, _streams_and_moves)
        hooks = {c: _with_server(db.url, Path(work), _hook_env(c), _hooks) for c in CONCURRENCY}
    print(f"following: one server process, {db.description}")
    print(f"  account streams: {STREAMS} open, {ROUNDS} rounds of one event each ({STREAMS * ROUNDS} in all): "
          f"{streams['rate']:,.0f} events/s delivered ({streams['elapsed']:.2f} s, of which writing "
          f"{streams['write']:.2f} s)")
    print(f"  outbox rows: {moves['moves']} moves that do not end the game wrote {moves['by_moves']}; "
          f"the resignation that ended it wrote {moves['by_end']}")
    print(f"  webhooks: {HOOKS} hooks, {HOOK_EVENTS} events each, the receiver answering after {RECEIVER_MS:g} ms")
    print("  WEBHOOK_CONCURRENCY | deliveries/s | all delivered after | signatures verified")
    for concurrency, figure in hooks.items():
        print(f"  {concurrency:19d} | {figure['rate']:12,.1f} | {figure['elapsed']:17.2f} s | {figure['verified']}")


def _hook_env(concurrency: int) -> dict[str, str]:
    return {"WEBHOOK_CONCURRENCY": str(concurrency), "WEBHOOKS_ALLOW_PRIVATE": "1", "WEBHOOK_POLL_SECONDS": "0.05",
            "WEBHOOK_TIMEOUT_SECONDS": "30"}


def _with_server(url: str, work: Path, env: dict[str, str], scenario: Any) -> Any:
    from .harness.processes import start_server, stop_server, wait_healthy

    extra = {"STREAMS_PER_ADDRESS": str(STREAMS + 10), "STREAM_KEEPALIVE_SECONDS": "15", **env}
    server = start_server(f"following-{len(env)}", "service.http.asgi:app", url, work, extra, pin=False)
    try:
        wait_healthy(server)
        return asyncio.run(scenario(url, server.port))
    finally:
        stop_server(server)


async def _players(port: int, count: int) -> list[tuple[uuid.UUID, str]]:
    from .harness.client import call

    made = []
    for n in range(count):
        status, body = await call(port, "POST", "/players", {"name": f"Bot {n}"})
        assert status == 201, body
        made.append((uuid.UUID(body["id"]), body["token"]))
    return made


# ---------------------------------------------------------------- 1 and 2: streams, moves


async def _streams_and_moves(url: str, port: int) -> tuple[dict[str, float], dict[str, int]]:
    return await _streams(url, port), await _moves(url, port)


class _Follower:
    """One open NDJSON account stream, counting the event lines it receives."""

    def __init__(self) -> None:
        self.count = 0
        self.done = asyncio.Event()
        self.task: asyncio.Task[None] | None = None

    async def open(self, port: int, token: str, expect: int) -> None:
        reader, writer = await asyncio.open_connection(HOST, port)
        writer.write((f"GET /players/me/stream HTTP/1.1\r\nHost: {HOST}:{port}\r\nAuthorization: Bearer {token}\r\n"
                      "Accept: application/x-ndjson\r\n\r\n").encode())
        head = await reader.readuntil(b"\r\n\r\n")
        assert head.startswith(b"HTTP/1.1 200"), head[:200]
        self.task = asyncio.create_task(self._read(reader, writer, expect))

    async def _read(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter, expect: int) -> None:
        carry = b""
        try:
            while self.count < expect:
                chunk = await reader.read(65536)
                if not chunk:
                    return
                data = carry + chunk
                self.count += data.count(b"}\n")  # an event line's end (keep-alives are empty lines)
                carry = data[-1:]
            self.done.set()
        finally:
            writer.close()


_ROUND = """
WITH bumped AS (UPDATE players SET event_seq = event_seq + 1 WHERE id = ANY(%s) RETURNING id, event_seq),
     written AS (INSERT INTO account_events (player_id, seq, type, data)
                 SELECT id, event_seq, 'analysisDone', '{"bench": true}' FROM bumped RETURNING player_id, seq)
SELECT count(pg_notify('canfield_account_events', player_id::text || ':' || seq)) FROM written
"""
"""One event for every account in one statement: the rows and notifications ``outbox.append_all``
writes, without its round trip per account, so the figure is the streams' side."""


async def _streams(url: str, port: int) -> dict[str, float]:
    import psycopg

    players = await _players(port, STREAMS)
    followers = [_Follower() for _ in players]
    for follower, (_, token) in zip(followers, players, strict=True):
        await follower.open(port, token, ROUNDS)
    await asyncio.sleep(1.0)  # every stream past its first read
    ids = [player for player, _ in players]
    started = time.perf_counter()
    written = 0.0
    async with await psycopg.AsyncConnection.connect(url, autocommit=True) as conn:
        for round_number in range(1, ROUNDS + 1):  # the next round once every stream has had this one
            writing = time.perf_counter()
            await conn.execute(_ROUND, (ids,))
            written += time.perf_counter() - writing
            deadline = time.perf_counter() + WAIT
            while sum(min(f.count, round_number) for f in followers) < STREAMS * round_number:
                assert time.perf_counter() < deadline, "the streams did not receive every event"
                await asyncio.sleep(0.005)
    elapsed = time.perf_counter() - started
    return {"rate": STREAMS * ROUNDS / elapsed, "write": written, "elapsed": elapsed}


async def _moves(url: str, port: int) -> dict[str, int]:
    import psycopg

    from .harness.client import call

    ((player, token),) = await _players(port, 1)
    status, game = await call(port, "POST", "/games", {"ruleset": "draw-one", "deal": {"seed": 11}}, token)
    assert status == 201, game

    def rows() -> int:
        with psycopg.connect(url) as conn:
            found = conn.execute("SELECT count(*) FROM account_events WHERE player_id = %s", (player,)).fetchone()
        return int(found[0]) if found else -1

    before = rows()
    for n in range(MOVES):
        status, body = await call(port, "POST", f"/games/{game['id']}/moves",
                                  {"type": "draw"} if n % 2 == 0 else {"type": "undo"}, token)
        assert status == 200, body
    after_moves = rows()
    status, body = await call(port, "POST", f"/games/{game['id']}/moves", {"type": "resign"}, token)
    assert status == 200, body
    return {"moves": MOVES, "by_moves": after_moves - before, "by_end": rows() - after_moves}


# ---------------------------------------------------------------- 3: webhooks, a slow receiver


class _Receiver:
    """A loopback HTTP/1.1 receiver that answers every POST after ``RECEIVER_MS`` and verifies it."""

    def __init__(self, secrets: dict[str, str]) -> None:
        self.secrets = secrets  # by account id (hex), to verify each delivery with its hook's secret
        self.received: set[str] = set()
        self.verified = 0
        self.done = asyncio.Event()
        self.expect = 0
        self.writers: set[asyncio.StreamWriter] = set()

    async def serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.writers.add(writer)
        try:
            while True:
                head = await reader.readuntil(b"\r\n\r\n")
                headers = dict(line.split(": ", 1) for line in head.decode().split("\r\n")[1:] if ": " in line)
                headers = {k.lower(): v for k, v in headers.items()}
                body = await reader.readexactly(int(headers.get("content-length", "0")))
                await asyncio.sleep(RECEIVER_MS / 1000)
                self._check(headers, body)
                writer.write(b"HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n")
                await writer.drain()
        except (asyncio.IncompleteReadError, ConnectionError):
            writer.close()
        finally:
            self.writers.discard(writer)

    def _check(self, headers: dict[str, str], body: bytes) -> None:
        from standardwebhooks.webhooks import Webhook

        message = headers["webhook-id"]
        Webhook(self.secrets[message.split("_")[1]]).verify(body, headers)  # raises if it does not verify
        self.verified += 1
        self.received.add(message)
        if len(self.received) >= self.expect:
            self.done.set()


async def _hooks(url: str, port: int) -> dict[str, float]:
    import psycopg

    from service.store import outbox

    from .harness.client import call

    players = await _players(port, HOOKS)
    secrets: dict[str, str] = {}
    receiver = _Receiver(secrets)
    receiver.expect = HOOKS * HOOK_EVENTS
    server = await asyncio.start_server(receiver.serve, HOST, 0)
    target = f"http://{HOST}:{server.sockets[0].getsockname()[1]}/hook"
    for player, token in players:
        status, hook = await call(port, "POST", "/players/me/webhooks", {"url": target, "events": ["analysisDone"]},
                                  token)
        assert status == 201, hook
        secrets[player.hex] = hook["secret"]
    started = time.perf_counter()
    async with await psycopg.AsyncConnection.connect(url, autocommit=True) as conn, conn.transaction():
        await outbox.append_all(conn, [outbox.AccountEvent(player, outbox.ANALYSIS_DONE, {"n": n})
                                       for player, _ in players for n in range(HOOK_EVENTS)])
    await asyncio.wait_for(receiver.done.wait(), WAIT)
    elapsed = time.perf_counter() - started
    server.close()
    for writer in list(receiver.writers):
        writer.close()
    await asyncio.sleep(0.1)
    return {"rate": HOOKS * HOOK_EVENTS / elapsed, "elapsed": elapsed, "verified": receiver.verified}
