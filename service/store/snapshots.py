"""When a game's snapshot is written, and the events a stored game folds in after it.

Snapshots (``game_snapshots``, one per game) are written every ``SNAPSHOT_EVERY`` versions, not
every move: a game's state is its snapshot with the few events after it folded in
(``GameRow.tail``, ``domain.codec.restore``). A move that rewrote its 1.1 KB snapshot in the
``games`` row cost PostgreSQL about 1.7 KB of WAL; now most moves write the small row and the
event (docs/performance.md). The statements that write them are service.store.event_store's.
"""

from __future__ import annotations

from domain.events import MoveUndone

from .game_records import NewEvent

SNAPSHOT_EVERY = 16
"""A game's snapshot is written by the move that reaches or passes a multiple of this many versions, so a
stored game is its snapshot and fewer than this many events after it (folded on load, about 4 us
an event here: at most about 60 us on a load, which a cached game skips), while a snapshot's
1.1 KB is written once in 16 moves instead of every move (docs/performance.md)."""

UNDONE = MoveUndone.__name__  # its stored type (domain.event_type)


def snapshot_due(expected_version: int, events: list[NewEvent]) -> bool:
    """Whether a move from ``expected_version`` writing ``events`` writes its game's snapshot: when
    it crosses a multiple of ``SNAPSHOT_EVERY``, and always for an undo (an undo may have refilled
    the undo window from the log, which folding a tail cannot repeat: ``domain.codec.restore``)."""
    if events[-1].version // SNAPSHOT_EVERY > expected_version // SNAPSHOT_EVERY:
        return True
    return any(event.type == UNDONE for event in events)


TAIL = (
    "(SELECT coalesce(json_agg(json_build_array(e.type, e.data) ORDER BY e.version), '[]'::json)"
    " FROM events e WHERE e.game_id = g.id AND e.version > s.version)"
)
"""The events after a game's snapshot as ``[[type, data], ...]``, for a query over ``games g``
and ``game_snapshots s`` (in the same statement, so of the same moment as the snapshot)."""
