"""What a client sees of a game, as the game's wire Structs (service.games.wire): its view (the
domain's table plus who, where from and when), its stored events as shown (face-down cards
redacted until they may be revealed) and a move's reply; and the cursors of a list's pages. The
one place a game and its state are turned into what the API shows of them."""

from __future__ import annotations

import base64
import uuid
from collections.abc import Callable, Mapping, Sequence
from datetime import datetime
from typing import Any, Literal, Protocol, cast

from msgspec import UNSET

from domain import GameState, public_data, table_view
from domain.cards import RANKS

from ..deals.contests import RACE, contest_id
from ..deals.daily import reveals_hidden_cards, source_view
from ..deals.lessons import lesson_progress
from ..errors import CursorInvalid
from ..store.game_records import GameSummaryRow
from ..wire import LessonId, PlayerRef, ruleset_ref
from .wire import (
    Abandonment,
    CardsMovedData,
    CardsMovedEvent,
    CardsMovedReverted,
    EventView,
    Foundations,
    GameAbandonedData,
    GameAbandonedEvent,
    GameDealtData,
    GameDealtEvent,
    GameList,
    GameResignedEvent,
    GameStalledEvent,
    GameSummary,
    GameView,
    GameWonEvent,
    LessonCompletedData,
    LessonCompletedEvent,
    MoveResult,
    MoveUndoneData,
    MoveUndoneEvent,
    NoData,
    Reserve,
    ReserveRefilledData,
    ReserveRefilledEvent,
    ReserveRefilledReverted,
    RevertedEvent,
    SolverHintUsedEvent,
    Stock,
    StockDrawnData,
    StockDrawnEvent,
    StockDrawnReverted,
    Table,
    WasteRecycledData,
    WasteRecycledEvent,
    WasteRecycledReverted,
)

JSON = dict[str, Any]


class ShownGame(Protocol):
    """A game as its view needs it: a stored ``GameRow`` or a move's ``Game``."""

    @property
    def id(self) -> uuid.UUID: ...
    @property
    def player_id(self) -> uuid.UUID: ...
    @property
    def player_name(self) -> str: ...
    @property
    def player_bot(self) -> bool: ...
    @property
    def deal(self) -> Mapping[str, Any]: ...
    @property
    def started_at(self) -> datetime: ...
    @property
    def finished_at(self) -> datetime | None: ...


class MovedGame(ShownGame, Protocol):
    """A game after a move (``service.games.moves.Game``): with its state."""

    @property
    def state(self) -> GameState: ...


def player_of(game: ShownGame) -> PlayerRef:
    """A game's player as every view names one."""
    return PlayerRef(game.player_id, game.player_name, game.player_bot)


def view_of(game: ShownGame, state: GameState, withhold: bool) -> GameView:
    """The API's game view of ``game`` at ``state`` (its state now, or a past one): the domain's
    table plus who, where from and when; ``finishedAt`` once ``state`` has ended. ``withhold``:
    hidden cards stay hidden even if the game has ended (``withheld``, ``Games.readable``)."""
    table = table_view(state, withhold)
    lesson = lesson_progress(state)
    return GameView(
        id=game.id,
        player=player_of(game),
        ruleset=ruleset_ref(state.ruleset.id, state.ruleset.version),
        deal=source_view(game.deal),
        base_rank=RANKS[state.base_rank],
        status=state.status.value,
        version=state.version,
        move_count=state.move_count,
        undo_count=state.undo_count,
        assisted=state.assisted,
        started_at=game.started_at,
        finished_at=None if state.playing else game.finished_at,
        table=Table(Stock(**table["stock"]), table["waste"], Reserve(**table["reserve"]),
                    Foundations(**table["foundations"]), table["tableau"]),
        lesson=UNSET if lesson is None else lesson,
        abandoned=Abandonment(state.abandoned_after) if state.abandoned_after else UNSET,  # the service ended it
    )


GameStatus = Literal["playing", "won", "stalled", "resigned"]


def summary_of(row: GameSummaryRow) -> GameSummary:
    """A game as a player's list of games shows it: figures and where its cards came from, no table."""
    return GameSummary(
        id=row.id, ruleset=ruleset_ref(row.ruleset_id, row.ruleset_version), deal=source_view(row.deal),
        status=cast(GameStatus, row.status), version=row.version, move_count=row.move_count,
        undo_count=row.undo_count, assisted=row.assisted, started_at=row.started_at, finished_at=row.finished_at,
    )


def game_list(rows: Sequence[GameSummaryRow], limit: int) -> GameList:
    """A page of a player's games from up to ``limit + 1`` rows: ``next`` is set when there was one more."""
    page = rows[:limit]
    following = cursor_of(page[-1].started_at, page[-1].id) if len(rows) > limit else None
    return GameList([summary_of(row) for row in page], following)


def cursor_of(started_at: datetime, game_id: uuid.UUID) -> str:
    """An opaque page cursor: the sort key of the last game on a page."""
    return base64.urlsafe_b64encode(f"{started_at.isoformat()}|{game_id}".encode()).decode().rstrip("=")


def parse_cursor(cursor: str) -> tuple[datetime, uuid.UUID]:
    try:
        text = base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4)).decode()
        started, game_id = text.split("|")
        key = datetime.fromisoformat(started), uuid.UUID(game_id)
    except ValueError:  # also binascii.Error and UnicodeDecodeError
        raise CursorInvalid("'cursor' is not a cursor of this list: pass the 'next' of the previous page") from None
    if key[0].tzinfo is None:
        raise CursorInvalid("'cursor' is not a cursor of this list: pass the 'next' of the previous page")
    return key


def public_event(version: int, kind: str, data: JSON, recorded_at: datetime, reveal: bool) -> EventView:
    """A stored event as a client sees it: the domain's ``public_data`` (``reveal``,
    ``daily.reveals_hidden_cards``, lets it show face-down cards: the first event's ``deck``), with
    the deal source as the API shows it."""
    event, data_of = _EVENTS[kind]
    return event(version, recorded_at, data_of(public_data(kind, data, reveal)))


def _game_dealt(data: JSON) -> GameDealtData:
    ruleset = data["ruleset"]
    return GameDealtData(
        ruleset_ref(ruleset["id"], ruleset["version"]), source_view(data["deal"]), data["baseCard"],
        data["reserveTop"], data["reserveCount"], data["tableau"], data["stockCount"], data.get("deck", UNSET),
    )


def _stock_drawn(data: JSON) -> StockDrawnData:
    return StockDrawnData(data["count"], data["wasteTop"], data["cards"])


def _waste_recycled(data: JSON) -> WasteRecycledData:
    return WasteRecycledData(data["count"])


def _cards_moved(data: JSON) -> CardsMovedData:
    return CardsMovedData(data["card"], data["cards"], data["from"], data["to"])


def _reserve_refilled(data: JSON) -> ReserveRefilledData:
    return ReserveRefilledData(data["card"], data["to"])


def _move_undone(data: JSON) -> MoveUndoneData:
    return MoveUndoneData([_reverted(taken["type"], taken["data"]) for taken in data["reverted"]])


def _reverted(kind: str, data: JSON) -> RevertedEvent:
    """An event of the move an undo took back (only a move's own events can be)."""
    if kind == "StockDrawn":
        return StockDrawnReverted(_stock_drawn(data))
    if kind == "WasteRecycled":
        return WasteRecycledReverted(_waste_recycled(data))
    if kind == "CardsMoved":
        return CardsMovedReverted(_cards_moved(data))
    if kind == "ReserveRefilled":
        return ReserveRefilledReverted(_reserve_refilled(data))
    raise ValueError(f"an undo cannot take back a {kind} event")


def _no_data(data: JSON) -> NoData:
    return NoData()


_EVENTS: dict[str, tuple[Callable[[int, datetime, Any], EventView], Callable[[JSON], Any]]] = {
    "GameDealt": (GameDealtEvent, _game_dealt),
    "StockDrawn": (StockDrawnEvent, _stock_drawn),
    "WasteRecycled": (WasteRecycledEvent, _waste_recycled),
    "CardsMoved": (CardsMovedEvent, _cards_moved),
    "ReserveRefilled": (ReserveRefilledEvent, _reserve_refilled),
    "MoveUndone": (MoveUndoneEvent, _move_undone),
    "SolverHintUsed": (SolverHintUsedEvent, _no_data),
    "GameWon": (GameWonEvent, _no_data),
    "GameStalled": (GameStalledEvent, _no_data),
    "GameResigned": (GameResignedEvent, _no_data),
    "GameAbandoned": (GameAbandonedEvent, lambda data: GameAbandonedData(data["idleDays"])),
    "LessonCompleted": (LessonCompletedEvent, lambda data: LessonCompletedData(LessonId(data["lesson"]))),
}
"""Each event type's Struct, and how its (public) data becomes its data's Struct."""


def withheld(deal_source: Mapping[str, Any], now: datetime) -> bool:
    """Whether a game's hidden cards stay hidden in a reply to its player even once it has ended:
    a daily game's until its date is over, a race game's always (reads ask ``Races.guard``)."""
    return contest_id(deal_source, RACE) is not None or not reveals_hidden_cards(deal_source, True, now)


def move_result(game: MovedGame, events: Sequence[Any], now: datetime) -> MoveResult:
    """The reply to a move, as its player sees it: the game's view after it, and the events it
    appended (``NewEvent``s, recorded ``now``). The one place a move's reply is shaped; an
    Idempotency-Key stores exactly this (as JSON)."""
    withhold = withheld(game.deal, now)
    reveal = not game.state.playing and not withhold
    return MoveResult(
        view_of(game, game.state, withhold),
        [public_event(event.version, event.type, event.data, now, reveal) for event in events],
    )
