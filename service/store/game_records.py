"""The records the event store reads and writes: a stored game (``GameRow``), a row of a player's
games list, what a move loads, a stored event and a new one, the figures a games list shows, a
game to create (``NewGame``) and one game's move to write (``Append``, with the reply an
Idempotency-Key stores, ``IdempotentReply``).

They live apart from service.store.event_store's statements so that the move use case, the race
store and the analysis jobs name the shapes they exchange without the SQL that fills them.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, NamedTuple

from .players import TokenRow

LogRow = tuple[int, str, dict[str, Any], datetime]
"""One event of a game's stored log: version, type, data, recorded time (``event_store.LOG_QUERY``)."""


@dataclass(frozen=True, slots=True)
class GameRow:
    """A stored game: its state is ``snapshot`` with ``tail`` folded in, at ``version``
    (``domain.codec.restore(row.snapshot, row.tail, row.version)``)."""

    id: uuid.UUID
    player_id: uuid.UUID
    deal: dict[str, Any]
    version: int
    snapshot: dict[str, Any]  # the game's state at some version <= ``version``
    started_at: datetime
    finished_at: datetime | None
    tail: list[tuple[str, dict[str, Any]]] = field(default_factory=list)  # the events after it, (type, data)
    player_name: str = ""  # the player's name now (a deleted player's: the deleted name)
    player_bot: bool = False


@dataclass(frozen=True, slots=True)
class GameSummaryRow:
    id: uuid.UUID
    ruleset_id: str
    ruleset_version: int
    deal: dict[str, Any]
    status: str
    version: int
    move_count: int
    undo_count: int
    assisted: bool
    started_at: datetime
    finished_at: datetime | None


@dataclass(frozen=True, slots=True)
class Loaded:
    game: GameRow | None
    caller: TokenRow | None  # the bearer token, if it is live
    stored_request: bytes | None  # the idempotency key's request hash, if the key was used
    stored_response: dict[str, Any] | None


@dataclass(frozen=True, slots=True)
class StoredEvent:
    version: int
    type: str
    data: dict[str, Any]
    recorded_at: datetime


class NewEvent(NamedTuple):  # a named tuple: cheap to make (service.games.moves.Game)
    version: int
    type: str
    data: dict[str, Any]


class Figures(NamedTuple):
    """What the games list shows of a state, kept as columns of its row (``GameState``'s fields)."""

    status: str
    move_count: int
    undo_count: int
    assisted: bool


class IdempotentReply(NamedTuple):
    """A move's Idempotency-Key, the hash of the move it came with and the reply stored under it."""

    key: str
    request_hash: bytes
    response: dict[str, Any]


class Append(NamedTuple):
    """One game's move to write: its events, the state's figures and, when one is due
    (``snapshot_due``; a move written alone always has one), its new snapshot; written only if the
    game is still at ``expected_version`` and ``token_id`` (the token the move came with, if any)
    is still live. The move that ends the game sets ``finished_at``; a move with an
    Idempotency-Key carries its ``reply``. A move with either is written alone, never in a batch
    (``append_many`` writes neither)."""

    game_id: uuid.UUID
    expected_version: int
    events: list[NewEvent]
    figures: Figures
    snapshot: dict[str, Any] | None
    now: datetime
    token_id: uuid.UUID | None = None
    finished_at: datetime | None = None
    reply: IdempotentReply | None = None


class NewGame(NamedTuple):
    """A game to create: its row (player, ruleset id and version, deal source, status; the games
    list's figures come from ``snapshot``), its snapshot and its first events, at ``now``."""

    game_id: uuid.UUID
    player_id: uuid.UUID
    ruleset: tuple[str, int]
    deal: dict[str, Any]
    status: str
    snapshot: dict[str, Any]
    events: list[NewEvent]
    now: datetime
