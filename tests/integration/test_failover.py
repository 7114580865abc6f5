"""The failover drill (marked ``failover``): an embedded primary and its synchronous standby, the
service on the multi-host URL (``target_session_attrs=read-write``), clients moving with
Idempotency-Keys and a stream per game; the primary's postmaster SIGKILLed and the standby
promoted. Nothing acknowledged is lost or doubled, every stream resumes with ``Last-Event-ID`` and
misses no version, the server process is never restarted, and moves work again: ``/readyz``
answers 200 and a move is acknowledged within a few seconds of the promotion. The same drill,
with figures for asynchronous and synchronous replication: ``python -m bench failover``
(docs/reliability.md). The drill itself is tests/failover_drill.py."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.failover_drill import run_drill

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
