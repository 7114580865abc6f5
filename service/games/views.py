"""What a client sees of a game: its view (the domain's part plus who, where from and when), its
stored events as shown (face-down cards redacted until they may be revealed), and the cursors of
a list's pages."""

from __future__ import annotations

import base64
import uuid
from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any

from domain import GameState, game_view, public_data

from ..deals.daily import reveals_hidden_cards, shown_source
from ..deals.lessons import lesson_progress
from ..errors import CursorInvalid
from ..races.races import race_of
from ..store.players import player_reference

JSON = dict[str, Any]


def player_of(game: Any) -> JSON:
    """A stored game's player as every view names one (a ``GameRow`` or a move's ``Game``)."""
    return player_reference(_text(game.player_id), game.player_name, game.player_bot)


def view_of(game_id: uuid.UUID | str, player: JSON, deal_source: JSON, started_at: Any,
            finished_at: Any, state: GameState, withhold: bool) -> JSON:
    """The API's game view: the domain's part plus who (``player_of``), where from and when.
    ``withhold``: hidden cards stay hidden even if the game has ended (``withheld``, ``Games.readable``)."""
    domain_view = game_view(state, withhold)
    view = {
        "id": _text(game_id),
        "player": player,
        "ruleset": domain_view["ruleset"],
        "deal": shown_source(deal_source),
        "baseRank": domain_view["baseRank"],
        "status": domain_view["status"],
        "version": domain_view["version"],
        "moveCount": domain_view["moveCount"],
        "undoCount": domain_view["undoCount"],
        "assisted": domain_view["assisted"],
        "startedAt": started_at,
        "finishedAt": finished_at,
        "table": domain_view["table"],
    }
    lesson = lesson_progress(state)  # races branch: lesson games
    if lesson is not None:
        view["lesson"] = lesson
    if "abandoned" in domain_view:  # the service ended it (service.games.abandon)
        view["abandoned"] = domain_view["abandoned"]
    return view


_TEXTS: dict[uuid.UUID | str, str] = {}
"""Ids of recent views as text: every move's reply shows its game's and player's id, and
``str(uuid)`` formats in Python (about a microsecond each)."""
_TEXTS_MAX = 4096


def _text(value: uuid.UUID | str) -> str:
    text = _TEXTS.get(value)
    if text is None:
        if len(_TEXTS) >= _TEXTS_MAX:
            _TEXTS.clear()
        text = _TEXTS[value] = str(value)
    return text


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


def public_event(version: int, kind: str, data: JSON, recorded_at: Any, reveal: bool) -> JSON:
    """A stored event as a client sees it: the domain's ``public_data`` (``reveal``,
    ``daily.reveals_hidden_cards``, lets it show face-down cards: the first event's ``deck``), with
    the deal source as the API shows it."""
    shown = public_data(kind, data, reveal)
    if kind == "GameDealt" and isinstance(shown.get("deal"), Mapping):
        shown = {**shown, "deal": shown_source(shown["deal"])}
    # the keys in the order of the API's event schemas (the tag first), so that the reply of a move
    # encodes to the same bytes as a dict as it does as its MoveResult (service.http.move_route)
    return {"type": kind, "version": version, "recordedAt": recorded_at, "data": shown}


def withheld(deal_source: Mapping[str, Any], now: datetime) -> bool:
    """Whether a game's hidden cards stay hidden in a reply to its player even once it has ended:
    a daily game's until its date is over, a race game's always (reads ask ``Races.guard``)."""
    return race_of(deal_source) is not None or not reveals_hidden_cards(deal_source, True, now)


def move_reply(
    game_id: uuid.UUID, player: JSON, deal_source: JSON, started_at: Any, finished_at: Any,
    state: GameState, events: Sequence[Any], now: datetime,
) -> JSON:
    """The reply to a move, as its player sees it: the game's view after it, and the events it
    appended (``NewEvent``s, recorded ``now``). The one place a move's reply is shaped; an
    Idempotency-Key stores exactly this."""
    withhold = withheld(deal_source, now)
    reveal = not state.playing and not withhold
    return {
        "game": view_of(game_id, player, deal_source, started_at, finished_at, state, withhold),
        "events": [public_event(event.version, event.type, event.data, now, reveal) for event in events],
    }
