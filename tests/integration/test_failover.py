"""The failover drill (marked ``failover``): an embedded primary and its synchronous standby, the
service on the multi-host URL (``target_session_attrs=read-write``), clients moving with
Idempotency-Keys and a stream per game; the primary's postmaster SIGKILLed and the standby
promoted. Nothing acknowledged is lost or doubled, every stream resumes with ``Last-Event-ID`` and
misses no version, the server process is never restarted, and moves work again: ``/readyz``
answers 200 and a move is acknowledged within a few seconds of the promotion. The same drill,
with figures for asynchronous and synchronous replication: ``python -m bench failover``
(docs/reliability.md). The drill itself is tests/failover_drill.py. Every other form of the
multi-host connection string reaches the promoted primary too."""

from __future__ import annotations

import contextlib
import threading
import time
import uuid
from dataclasses import dataclass
from pathlib import Path

import httpx
import psycopg
import pytest

from tests.failover_drill import connection_strings, primary_and_standby, run_drill, wait_ready
from tests.live import ServerProcess

RECOVERY_LIMIT = 30.0  # seconds from the kill to an acknowledged move: generous, for a loaded 2-core machine
BACK_LIMIT = 5.0
"""Seconds from the end of the promotion to ``/readyz`` 200 (the pool and the stream listener on
the promoted primary) and to an acknowledged move: about 1 s (docs/reliability.md), bounded
generously for a loaded 2-core machine."""


@pytest.mark.failover
@pytest.mark.slow
def test_losing_the_primary_loses_no_acknowledged_move_and_no_streamed_event(tmp_path: Path) -> None:
    result = run_drill(tmp_path, synchronous=True, clients=3, enders=2, before_seconds=2.0, after_seconds=1.5,
                       recovery_limit=RECOVERY_LIMIT, env={"STREAM_KEEPALIVE_SECONDS": "1"})
    context = f"{result}\n--- server log:\n{result.server_log}"
    assert result.moves_before > 0, context
    assert result.recovery_seconds is not None, f"no move acknowledged {RECOVERY_LIMIT:g} s after the kill\n{context}"
    assert result.moves_after > 0
    ready, moved = result.ready_after_promotion_seconds, result.move_after_promotion_seconds
    assert ready is not None, f"/readyz not 200 {RECOVERY_LIMIT:g} s after the promotion\n{context}"
    assert ready <= BACK_LIMIT, f"/readyz 200 {ready:.2f} s after the promotion\n{context}"
    assert moved is not None, context
    assert moved <= BACK_LIMIT, f"a move acknowledged {moved:.2f} s after the promotion\n{context}"
    assert result.lost == [], context
    assert result.duplicated == [], context
    assert result.gaps == [], context
    assert result.refused == {}, context  # nothing a correct client could not retry
    assert result.stream_problems == [], context
    assert result.streams_never_resumed == 0, context  # each dropped at the kill, resumed with Last-Event-ID
    assert not result.server_restarted, context
    # account streams: games resigned (acknowledged) before and after the kill, each gameEnded
    # stored once, every account stream resumed with Last-Event-ID and got ids 1..n once, in order
    assert result.game_ends > result.game_ends_after > 0, context
    assert result.account_events_lost == [], context
    assert result.account_events_doubled == [], context
    assert result.account_stream_problems == [], context
    assert result.account_events_streamed == result.game_ends, context  # each a gameEnded, each once
    assert result.accounts_never_resumed == 0, context


@pytest.mark.failover
@pytest.mark.slow
def test_the_audit_finds_the_moves_an_asynchronous_standby_never_received(tmp_path: Path) -> None:
    """Asynchronous replication, the standby's stream cut 1 s before the primary dies: the moves
    and the game ends the primary acknowledged meanwhile are not in the promoted database, and the
    drill says so (the audits above are not blind); the service still comes back on the promoted
    standby. The ender resigns every third move, so the second holds several resignations."""
    result = run_drill(tmp_path, synchronous=False, clients=2, enders=1, end_every=3, before_seconds=1.0,
                       after_seconds=1.0, recovery_limit=RECOVERY_LIMIT, cut_standby_seconds=1.0,
                       env={"STREAM_KEEPALIVE_SECONDS": "1"})
    context = f"{result}\n--- server log:\n{result.server_log}"
    assert result.lost, context
    assert result.account_events_lost, context
    assert result.recovery_seconds is not None, context
    assert result.moves_after > 0, context
    assert not result.server_restarted, context


@dataclass
class Recovery:
    """One service process after the promotion: seconds from its end to the move acknowledged and
    to ``/readyz`` 200 (None: not within ``RECOVERY_LIMIT``), and a reply it could not retry."""

    move: float | None = None
    ready: float | None = None
    refused: str | None = None


def _move_after_promotion(server: ServerProcess, token: str, game: str, key: str, since: float,
                          found: Recovery) -> None:
    """Draw on ``game`` with Idempotency-Key ``key``, sent again after a 5xx or a dropped connection
    until acknowledged; then ask ``/readyz`` until it is 200."""
    with httpx.Client(base_url=server.url, timeout=httpx.Timeout(10.0, connect=2.0)) as http:
        while time.monotonic() < since + RECOVERY_LIMIT:
            with contextlib.suppress(httpx.TransportError):
                reply = http.post(f"/games/{game}/moves", json={"type": "draw"},
                                  headers={"Authorization": f"Bearer {token}", "Idempotency-Key": key})
                if reply.status_code == 200:
                    found.move = time.monotonic() - since
                    break
                if reply.status_code < 500:
                    found.refused = f"{reply.status_code} {reply.text}"
                    return
            time.sleep(0.05)
    found.ready = wait_ready(server.url, since, RECOVERY_LIMIT)


def _player_and_game(server: ServerProcess) -> tuple[str, str]:
    """A player and a game of theirs on ``server``, with one move acknowledged."""
    with httpx.Client(base_url=server.url, timeout=10.0) as http:
        token = http.post("/players", json={"name": "Operator"}).json()["token"]
        auth = {"Authorization": f"Bearer {token}"}
        game = http.post("/games", json={"ruleset": "classic", "deal": {"seed": 5}}, headers=auth).json()["id"]
        assert http.post(f"/games/{game}/moves", json={"type": "draw"}, headers=auth).status_code == 200
    return token, game


@pytest.mark.failover
@pytest.mark.slow
def test_every_form_of_the_multi_host_url_reaches_the_promoted_primary(tmp_path: Path) -> None:
    """One primary and its synchronous standby, a service process on each form of
    ``connection_strings`` (the drill above runs on ``failover_url``), each making a move on the
    primary; the primary killed and the standby promoted: each process, never restarted, makes a
    move on the promoted primary and is ready again, within ``BACK_LIMIT`` of the promotion."""
    with primary_and_standby(tmp_path, synchronous=True) as (primary, standby):
        forms = connection_strings(primary, standby)
        servers = {form: ServerProcess(url, tmp_path / f"server-{number}.log")
                   for number, (form, url) in enumerate(forms.items())}
        try:
            for server in servers.values():
                server.wait_until_up()
            games = {form: _player_and_game(server) for form, server in servers.items()}
            keys = {form: str(uuid.uuid4()) for form in forms}
            found = {form: Recovery() for form in forms}
            primary.kill()
            standby.promote()
            promoted_at = time.monotonic()
            movers = [threading.Thread(target=_move_after_promotion,
                                       args=(servers[form], *games[form], keys[form], promoted_at, found[form]))
                      for form in forms]
            for mover in movers:
                mover.start()
            for mover in movers:
                mover.join(timeout=2 * RECOVERY_LIMIT)
            logs = "\n".join(f"--- {form}:\n{server.log_text()}" for form, server in servers.items())
            restarted = [form for form, server in servers.items() if server.process.poll() is not None]
        finally:
            for server in servers.values():
                server.stop()
        with psycopg.connect(standby.url, autocommit=True) as conn:
            stored = {key for (key,) in conn.execute("SELECT key FROM idempotency_keys WHERE key = ANY(%s)",
                                                     [list(keys.values())])}
    context = f"seconds after the promotion: {found}\n{logs}"
    assert restarted == [], context
    for form in forms:
        moved, ready = found[form].move, found[form].ready
        assert found[form].refused is None, f"{form}: a move refused\n{context}"
        assert moved is not None, f"{form}: no move acknowledged\n{context}"
        assert keys[form] in stored, f"{form}: the acknowledged move is not on the promoted primary\n{context}"
        assert moved <= BACK_LIMIT, f"{form}: the move came late\n{context}"
        assert ready is not None, f"{form}: /readyz never 200\n{context}"
        assert ready <= BACK_LIMIT, f"{form}: /readyz 200 late\n{context}"
