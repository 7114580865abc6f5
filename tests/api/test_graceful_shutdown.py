"""Graceful shutdown: a real `canfield serve` (two workers) SIGTERMed under load loses no
acknowledged move, answers no 5xx, refuses new connections, ends open streams with a
`shutdown` message and exits 0; a request still running when the drain times out gets a 503
problem; and a draining process is not ready and says so to streams."""

from __future__ import annotations

import json
import os
import random
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import pytest

from service.http.app import create_app
from tests.live import NO_RATE_LIMITS, Ledger, audit, die_with_pytest, free_port

from .conftest import Player, running_server, server_settings
from .race_support import create_race

PROJECT_ROOT = Path(__file__).resolve().parents[2]
CLIENTS = 6
GAMES = 3
STOP_SECONDS = 15.0  # SIGTERM to exit, with a request held open for about a second of it


@dataclass
class Outcomes:
    """What the movers were told: every status, how each client's last attempt failed."""

    ledger: Ledger = field(default_factory=Ledger)
    statuses: list[int] = field(default_factory=list)
    endings: dict[str, str] = field(default_factory=dict)
    games: set[str] = field(default_factory=set)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def status(self, code: int) -> None:
        with self.lock:
            self.statuses.append(code)


class Served:
    """`canfield serve` in a subprocess, against ``database_url``."""

    def __init__(self, database_url: str, log: Path, **settings: str) -> None:
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.log = log
        env = {**os.environ, **NO_RATE_LIMITS, "DATABASE_URL": database_url, "PORT": str(self.port), "WORKERS": "2",
               "LOG_FORMAT": "text", **settings}
        with open(log, "wb") as out:
            self.process = subprocess.Popen(
                [sys.executable, "-m", "service.cli", "serve"], cwd=PROJECT_ROOT, env=env, stdout=out,
                stderr=subprocess.STDOUT,
                preexec_fn=die_with_pytest if sys.platform == "linux" else None,  # noqa: PLW1509
                start_new_session=True,  # its own process group: the cleanup reaches its workers
            )

    def wait_until_ready(self, timeout: float = 60.0) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            assert self.process.poll() is None, self.log.read_text(errors="replace")
            try:
                if httpx.get(self.url + "/readyz", timeout=2).status_code == 200:
                    return
            except httpx.TransportError:
                pass
            time.sleep(0.1)
        pytest.fail(f"canfield serve was not ready in {timeout}s:\n{self.log.read_text(errors='replace')}")

    def kill(self) -> None:
        if self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGKILL)
            self.process.wait()


@pytest.fixture
def served(clean_database: str, tmp_path: Path) -> Iterator[Served]:
    server = Served(clean_database, tmp_path / "serve.log")
    try:
        server.wait_until_ready()
        yield server
    finally:
        server.kill()


def mover(base_url: str, token: str, name: str, seed: int, outcomes: Outcomes, games: list[str]) -> None:
    """Random legal moves (an undo now and then) on shared games until the server refuses the
    connection; a game that ends is replaced by a new one."""
    rng = random.Random(seed)
    refused = 0
    with httpx.Client(base_url=base_url, timeout=20, headers={"Authorization": f"Bearer {token}"}) as http:
        while refused < 3:
            game_id = games[seed % len(games)]
            try:
                legal = http.get(f"/games/{game_id}/legal-moves")
                outcomes.status(legal.status_code)
                options = [m for m in legal.json().get("moves", []) if m["type"] != "resign"]
                move = {"type": "undo"} if rng.random() < 0.1 or not options else rng.choice(options)
                response = http.post(f"/games/{game_id}/moves", json=move)
            except httpx.ConnectError:
                refused += 1
                outcomes.endings[name] = "refused"
                time.sleep(0.05)
                continue
            except httpx.TransportError as error:  # a keep-alive connection closed as a request left
                outcomes.endings[name] = type(error).__name__
                continue
            outcomes.status(response.status_code)
            if response.status_code == 200:
                outcomes.ledger.record(name, game_id, response.json())
            elif response.status_code == 409:  # the game ended: deal another
                created = http.post("/games", json={"ruleset": "classic", "deal": {"seed": rng.randrange(10**6)}})
                outcomes.status(created.status_code)
                games[seed % len(games)] = created.json()["id"]
                with outcomes.lock:
                    outcomes.games.add(created.json()["id"])


def read_stream(url: str, messages: list[str], opened: threading.Event) -> None:
    """Every SSE message of a stream (blank-line separated), until the server ends it."""
    with httpx.Client(timeout=30) as http, http.stream("GET", url) as response:
        assert response.status_code == 200
        block: list[str] = []
        for line in response.iter_lines():
            if line:
                block.append(line)
                continue
            if block:
                messages.append("\n".join(block))
                opened.set()
            block = []


def held_move(base_url: str, token: str, game_id: str) -> socket.socket:
    """A move whose body is half sent: a request in flight until the rest follows."""
    body = json.dumps({"type": "draw"}).encode()
    head = (
        f"POST /games/{game_id}/moves HTTP/1.1\r\nHost: {base_url.removeprefix('http://')}\r\n"
        f"Authorization: Bearer {token}\r\nContent-Type: application/json\r\nContent-Length: {len(body)}\r\n\r\n"
    ).encode()
    port = int(base_url.rsplit(":", 1)[1])
    held = socket.create_connection(("127.0.0.1", port), timeout=20)
    held.sendall(head + body[:5])
    return held


def refused(port: int) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=2):
            return False
    except ConnectionRefusedError:
        return True


def read_reply(held: socket.socket) -> bytes:
    reply = b""
    while chunk := held.recv(65536):
        reply += chunk
    return reply


def test_sigterm_under_load_finishes_what_started_and_loses_nothing(served: Served, clean_database: str) -> None:
    with httpx.Client(base_url=served.url, timeout=20) as setup:
        player = Player(setup, "Drain")
        games = [player.new_game(ruleset="classic", deal={"seed": 500 + i})["id"] for i in range(GAMES)]
        slow_game = player.new_game(ruleset="classic", deal={"seed": 999})["id"]
    outcomes = Outcomes(games=set(games) | {slow_game})
    streams: list[list[str]] = [[], []]
    readers = []
    for messages, game_id in zip(streams, games, strict=False):
        opened = threading.Event()
        reader = threading.Thread(target=read_stream, args=(f"{served.url}/games/{game_id}/stream", messages, opened))
        reader.start()
        assert opened.wait(10), "a stream sent nothing"
        readers.append(reader)
    held = held_move(served.url, player.token, slow_game)
    movers = [
        threading.Thread(target=mover, args=(served.url, player.token, f"c{i}", i, outcomes, games))
        for i in range(CLIENTS)
    ]
    for thread in movers:
        thread.start()
    deadline = time.monotonic() + 20
    while outcomes.ledger.moves() < 40 and time.monotonic() < deadline:
        time.sleep(0.02)
    acknowledged_before = outcomes.ledger.moves()
    assert acknowledged_before >= 40, "the load did not start"

    stopped_at = time.monotonic()
    served.process.send_signal(signal.SIGTERM)
    while not refused(served.port):
        assert time.monotonic() - stopped_at < 5, "new connections were still taken 5 s after SIGTERM"
        time.sleep(0.02)
    assert served.process.poll() is None, "the server exited with a request still in flight"
    held.sendall(json.dumps({"type": "draw"}).encode()[5:])  # the in-flight move completes after the stop
    reply = read_reply(held)
    held.close()
    for thread in [*movers, *readers]:
        thread.join(timeout=STOP_SECONDS)
    assert served.process.wait(timeout=STOP_SECONDS) == 0, served.log.read_text(errors="replace")
    assert time.monotonic() - stopped_at < STOP_SECONDS

    assert reply.startswith(b"HTTP/1.1 200 "), reply[:300]
    assert b"\r\nconnection: close\r\n" in reply.lower()
    assert [code for code in outcomes.statuses if code >= 500] == []
    assert outcomes.ledger.moves() > acknowledged_before  # moves kept coming until the stop
    assert set(outcomes.endings.values()) <= {"refused", "RemoteProtocolError", "ReadError"}
    assert list(outcomes.endings.values()).count("refused") == CLIENTS, outcomes.endings  # each ended refused
    for messages in streams:
        assert messages[-1].startswith("event: shutdown\nretry: 1000\ndata: "), messages[-1]
    result = audit(clean_database, outcomes.ledger, sorted(outcomes.games - {slow_game}), exact=True)
    assert result["problems"] == []
    assert result["lost"] == 0
    held_log = audit(clean_database, Ledger(), [slow_game], exact=False)
    assert held_log["problems"] == []
    assert held_log["stored_events_after_deal"] == 1  # the held move, answered 200, is in the log


def test_a_request_still_running_when_the_drain_times_out_is_answered_503(
    clean_database: str, tmp_path: Path
) -> None:
    server = Served(clean_database, tmp_path / "serve.log", WORKERS="1", SHUTDOWN_TIMEOUT_SECONDS="1")
    try:
        server.wait_until_ready()
        with httpx.Client(base_url=server.url, timeout=20) as setup:
            player = Player(setup, "Slow")
            game = player.new_game(ruleset="classic", deal={"seed": 3})["id"]
        held = held_move(server.url, player.token, game)  # the rest of its body never comes
        time.sleep(0.3)
        stopped_at = time.monotonic()
        server.process.send_signal(signal.SIGTERM)
        reply = read_reply(held)
        held.close()
        assert server.process.wait(timeout=STOP_SECONDS) == 0, server.log.read_text(errors="replace")
    finally:
        server.kill()
    assert 1.0 <= time.monotonic() - stopped_at < STOP_SECONDS
    head, _, body = reply.partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 503 "), reply[:300]
    assert b"content-type: application/problem+json" in head.lower()
    assert b"retry-after: 1" in head.lower()
    problem = json.loads(body)
    assert problem["code"] == "unavailable"
    assert problem["detail"] == "the server is shutting down and stopped this request; send it again"
    assert problem["instance"].startswith("urn:canfield:request:")
    assert audit(clean_database, Ledger(), [game], exact=True)["stored_events_after_deal"] == 0  # not applied


def next_message(lines: Iterator[str]) -> str:
    block: list[str] = []
    for line in lines:
        if not line:
            if block:
                return "\n".join(block)
            continue
        block.append(line)
    return "\n".join(block)


def test_a_draining_process_is_not_ready_and_ends_its_streams_with_a_shutdown_message(clean_database: str) -> None:
    settings = server_settings(clean_database)
    app = create_app(settings)
    with running_server(settings, app=app) as url, httpx.Client(base_url=url, timeout=10) as client:
        deadline = time.monotonic() + 10
        while client.get("/readyz").status_code != 200:
            assert time.monotonic() < deadline, "never ready"
            time.sleep(0.05)
        ann = Player(client, "Ann")
        game = ann.new_game(ruleset="classic", deal={"seed": 7})["id"]
        race = create_race(ann, ruleset="classic", deal={"seed": 31}, maxEntrants=2)["id"]
        with client.stream("GET", f"/games/{game}/stream") as game_stream, \
                client.stream("GET", f"/races/{race}/stream") as race_stream, \
                client.stream("GET", "/watch", params={"games": game}) as watch:
            game_lines, race_lines, watch_lines = game_stream.iter_lines(), race_stream.iter_lines(), watch.iter_lines()
            assert next_message(game_lines).startswith("event: view\nid: 1\n")
            assert next_message(race_lines).startswith("event: race\n")
            assert next_message(watch_lines).startswith("event: watching\n")
            assert next_message(watch_lines).startswith(f"event: view\nid: {game}:1\n")
            hub: Any = app.state.services.streams
            hub.loop.call_soon_threadsafe(hub.close_all)  # what SIGTERM does first
            for lines in (game_lines, race_lines, watch_lines):
                last = next_message(lines)
                assert last.startswith("event: shutdown\nretry: 1000\ndata: "), last
                assert "id:" not in last  # the client's Last-Event-ID stays its last message's
                assert json.loads(last.split("data: ", 1)[1])["detail"].startswith("this server is shutting down")
                assert list(lines) == []  # then the stream ends
        ready = client.get("/readyz")
        assert ready.status_code == 503
        assert "shutting down" in ready.json()["detail"]
        assert client.get("/livez").status_code == 200
        assert ann.move(game, {"type": "draw"}).status_code == 200  # requests still in flight are served
