"""An in-memory event store with the EventStore methods a move uses: the move use case
(service.games.moves) runs on it in milliseconds, without PostgreSQL. It keeps the same promises:
an append is conditional on the version it was decided on, and an idempotency key stores the
first reply once. A unit of work's statements and account events are kept (``committed``), not run."""

from __future__ import annotations

import asyncio
import uuid
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from domain import GameState, deal, event_data, event_type, initial_state, shuffled_deck
from domain.codec import restore, state_to_snapshot
from domain.rulesets import get_ruleset
from service.players.tokens import ALL_SCOPES
from service.store.event_store import ConcurrencyConflict, IdempotencyRace
from service.store.game_records import Append, GameRow, Loaded, NewEvent, StoredEvent
from service.store.players import TokenRow, token_hash
from service.store.unit_of_work import UnitOfWork

T0 = datetime(2026, 12, 1, tzinfo=UTC)


@dataclass
class FakeStore:
    players: dict[bytes, TokenRow] = field(default_factory=dict)  # token hash -> the token
    games: dict[uuid.UUID, GameRow] = field(default_factory=dict)
    events: dict[uuid.UUID, list[NewEvent]] = field(default_factory=dict)
    keys: dict[tuple[uuid.UUID, str], tuple[bytes, dict[str, Any]]] = field(default_factory=dict)
    calls: list[str] = field(default_factory=list)  # what was asked of the store, in order
    revoked: set[uuid.UUID] = field(default_factory=set)  # token ids revoked (their moves are not written)
    before_append: list[Any] = field(default_factory=list)  # callbacks run at the next append (a rival's move)
    committed: list[UnitOfWork] = field(default_factory=list)  # the units of work written, in order
    pool: Any = None  # the stats' reads before a daily entry's end would use it: no test here makes one

    def add_player(self, token: str, scopes: tuple[str, ...] = ALL_SCOPES) -> uuid.UUID:
        player = uuid.uuid4()
        self.players[token_hash(token)] = TokenRow(uuid.uuid4(), player, "first token", scopes, T0, None)
        return player

    def add_game(self, player: uuid.UUID, seed: int, ruleset: str = "classic") -> uuid.UUID:
        dealt = deal(get_ruleset(ruleset), shuffled_deck(seed), {"source": "seed", "seed": seed})
        state = initial_state(dealt)
        game_id = uuid.uuid4()
        self.games[game_id] = GameRow(
            game_id, player, {"source": "seed", "seed": seed}, 1, state_to_snapshot(state), T0, None
        )
        self.events[game_id] = [NewEvent(1, event_type(dealt), event_data(dealt))]
        return game_id

    def state(self, game_id: uuid.UUID) -> GameState:
        """The game's state as stored: its snapshot and the events after it."""
        row = self.games[game_id]
        return restore(row.snapshot, row.tail, row.version)

    async def load(
        self, game_id: uuid.UUID, token: str | None = None, key: str | None = None, now: datetime | None = None
    ) -> Loaded:
        self.calls.append("load")
        stored = self.keys.get((game_id, key)) if key is not None else None
        caller = self.players.get(token_hash(token)) if token else None
        if caller is not None and caller.id in self.revoked:
            caller = None
        return Loaded(self.games.get(game_id), caller, stored[0] if stored else None, stored[1] if stored else None)

    async def read_events_upto(self, game_id: uuid.UUID, version: int) -> list[StoredEvent]:
        self.calls.append("read_events_upto")
        return [StoredEvent(e.version, e.type, e.data, T0) for e in self.events[game_id][:version]]

    def unit_of_work(self) -> UnitOfWork:
        return UnitOfWork(self)

    async def commit(self, work: UnitOfWork) -> None:
        assert isinstance(work.write, Append), "moves only: this store creates no games"
        await self.append(work.write)
        self.committed.append(work)

    async def append(self, move: Append) -> None:
        reply = move.reply
        self.calls.append("append" if reply is None else "append-with-key")
        await asyncio.sleep(0)  # a round trip: other tasks run meanwhile (and group commit can gather them)
        while self.before_append:
            self.before_append.pop(0)()
        if reply is not None and (move.game_id, reply.key) in self.keys:
            raise IdempotencyRace()
        row = self.games[move.game_id]
        if row.version != move.expected_version or (move.token_id is not None and move.token_id in self.revoked):
            raise ConcurrencyConflict()
        # as in PostgreSQL: the snapshot only when one is written, else the events join its tail
        if move.snapshot is None:
            written, tail = row.snapshot, row.tail + [(e.type, e.data) for e in move.events]
        else:
            written, tail = move.snapshot, []
        self.games[move.game_id] = GameRow(row.id, row.player_id, row.deal, move.events[-1].version, written,
                                           row.started_at, move.finished_at, tail)
        self.events[move.game_id] += move.events
        if reply is not None:
            self.keys[(move.game_id, reply.key)] = (reply.request_hash, reply.response)

    async def append_many(self, moves: list[Append]) -> set[uuid.UUID]:
        self.calls.append("append_many")
        written = set()
        for move in moves:
            if self.games[move.game_id].version == move.expected_version and move.token_id not in self.revoked:
                await self.append(move)
                written.add(move.game_id)
        return written
