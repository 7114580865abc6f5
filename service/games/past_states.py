"""Past states of a game (``GET /games/{id}/states/{v}``) from its checkpoints.

A state at version ``v`` is the fold of the game's events 1..v; events are never changed, so it
never changes either. Every ``CHECKPOINT_EVERY`` (500) versions the state and its whole undo stack
are stored once (``game_checkpoints``, ``domain.codec.checkpoint_of``): a past state folds the
events after the nearest checkpoint at or below ``v`` (fewer than 500) with ``rules.replay_from``,
which gives exactly what a replay from the deal gives, an undo reaching below the state's undo
window included (it refills the window from the stored stack, as a replay does from the events).

Checkpoints are written by the move that reaches a multiple of ``CHECKPOINT_EVERY`` (in the
background, after the move has been answered: ``Checkpoints.after_move``), and any read that folds
past a multiple without one stores it then (games older than the table, a process that stopped
before its background write).
"""

from __future__ import annotations

import asyncio
import logging
import uuid
from typing import Any

from domain import GameState
from domain.codec import checkpoint_of, event_from_data, from_checkpoint
from domain.rules import replay_from

from ..store.checkpoints import CHECKPOINT_EVERY
from ..store.event_store import EventStore

log = logging.getLogger("canfield")


def fold(
    start: tuple[GameState, list[str]] | None, tail: list[tuple[str, Any]], every: int = CHECKPOINT_EVERY
) -> tuple[GameState, list[tuple[int, dict[str, Any]]]]:
    """The state after ``tail`` (the events after ``start``, a checkpoint's state and undo stack, or
    from the deal: None), and the checkpoints at the multiples of ``every`` it passed, to store."""
    state, stack = (None, []) if start is None else start
    made: list[tuple[int, dict[str, Any]]] = []
    version = 0 if state is None else state.version
    done = 0
    while done < len(tail):
        boundary = (version // every + 1) * every  # the next multiple of ``every``
        chunk = tail[done : done + boundary - version]
        state, stack = replay_from(state, stack, (event_from_data(kind, data) for kind, data in chunk))
        done += len(chunk)
        version = state.version
        if version == boundary:
            made.append((version, checkpoint_of(state, stack)))
    if state is None:
        raise ValueError("no events to fold")
    return state, made


class Checkpoints:
    """A game's past states from its checkpoints, and the checkpoints' writes."""

    def __init__(self, store: EventStore, every: int = CHECKPOINT_EVERY) -> None:
        self.store = store
        self.every = every
        self._writing: set[asyncio.Task[None]] = set()

    async def state_at(self, game_id: uuid.UUID, version: int) -> GameState:
        """The game's state after ``version`` events (a version it has reached), folded from its
        nearest checkpoint at or below; checkpoints it passes without one are stored."""
        taken_at, checkpoint, tail = await self.store.from_checkpoint(game_id, version)
        start = None if checkpoint is None else from_checkpoint(checkpoint)
        if start is not None and start[0].version != taken_at:
            raise ValueError(f"game {game_id}: the checkpoint at {taken_at} holds the state at {start[0].version}")
        state, made = fold(start, tail, self.every)
        if state.version != version:
            raise ValueError(f"game {game_id}: the events lead to version {state.version}, not {version}")
        await self.store.add_checkpoints(game_id, made)
        return state

    def after_move(self, game_id: uuid.UUID, version: int, appended: int) -> None:
        """A move took the game from ``version - appended`` to ``version``: if it reached or passed a
        multiple of ``every``, store that checkpoint in the background (a failure is only logged: the
        first read that needs it stores it)."""
        if version // self.every == (version - appended) // self.every:
            return
        task = asyncio.get_running_loop().create_task(self._write(game_id, version // self.every * self.every))
        self._writing.add(task)
        task.add_done_callback(self._writing.discard)

    async def _write(self, game_id: uuid.UUID, version: int) -> None:
        try:
            await self.state_at(game_id, version)
        except Exception as error:
            log.warning("game %s: no checkpoint at version %d yet (%r); the first read of a past state will make it",
                        game_id, version, error)
