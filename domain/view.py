"""What a player may see: the table of API.md's game view, and events in public form.

While a game is in progress nothing here contains a face-down card: not the stock and not
the covered reserve cards. The waste is face up (RULES.md): it is listed whole, and a draw's
event names the cards it turned up. Once the game has ended every card may be shown, unless
the caller withholds them longer (``withhold``: a daily deck before its date is over).
"""

from __future__ import annotations

from typing import Any

from .cards import CODES, RANK_COUNT, RANKS, SUITS, codes, make_card, rank_after
from .deal import FOUNDATION_INDEX, RESERVE_SLICE, STOCK_SLICE, TABLEAU_SLICE
from .events import (
    CardsMoved,
    Event,
    GameAbandoned,
    GameDealt,
    LessonCompleted,
    MoveUndone,
    ReserveRefilled,
    StockDrawn,
    WasteRecycled,
    event_type,
)
from .piles import TABLEAU
from .state import GameState

JSON = dict[str, Any]


# _FOUNDATION_CODES[base rank][suit]: that suit's foundation cards in the order they go home; a
# foundation holding n cards shows the first n (a slice: a new list, built in C).
_FOUNDATION_CODES = tuple(
    tuple([CODES[make_card(rank_after(base, i), suit)] for i in range(RANK_COUNT)] for suit in range(4))
    for base in range(RANK_COUNT)
)


def table_view(state: GameState, withhold: bool = False) -> JSON:
    """The table, bottom to top in every list; the face-up waste whole. Face-down cards (stock,
    covered reserve) only once the game is over, and not even then when ``withhold``."""
    reserve: JSON = {"count": len(state.reserve), "top": CODES[state.reserve[-1]] if state.reserve else None}
    stock: JSON = {"count": len(state.stock)}
    if not state.playing and not withhold:
        reserve["cards"] = codes(state.reserve)
        stock["cards"] = codes(tuple(reversed(state.stock)))  # in the order they would be drawn
    return {
        "stock": stock,
        "waste": codes(state.waste),
        "reserve": reserve,
        "foundations": {suit: cards[: state.foundations[index]] for index, (suit, cards) in enumerate(
            zip(SUITS, _FOUNDATION_CODES[state.base_rank], strict=True)
        )},
        "tableau": [codes(column) for column in state.tableau],
    }


def game_view(state: GameState, withhold: bool = False) -> JSON:
    """The domain part of the API's game view (the service adds id, player, deal and times)."""
    view = {
        "ruleset": {"id": state.ruleset.id, "version": state.ruleset.version},
        "baseRank": RANKS[state.base_rank],
        "status": state.status.value,
        "version": state.version,
        "moveCount": state.move_count,
        "undoCount": state.undo_count,
        "assisted": state.assisted,
        "table": table_view(state, withhold),
    }
    if state.abandoned_after:  # the service ended it (GameAbandoned): why, in the view
        view["abandoned"] = {"idleDays": state.abandoned_after}
    return view


# ---------------------------------------------------------------- events


def event_data(event: Event) -> JSON:
    """The full data of an event, as stored. ``event_from_data`` reads it back."""
    if isinstance(event, GameDealt):
        deck = event.deck
        return {
            "ruleset": {"id": event.ruleset_id, "version": event.ruleset_version},
            "deal": dict(event.source),
            "baseCard": CODES[deck[FOUNDATION_INDEX]],
            "reserveTop": CODES[deck[RESERVE_SLICE][-1]],
            "reserveCount": len(deck[RESERVE_SLICE]),
            "tableau": codes(deck[TABLEAU_SLICE]),
            "stockCount": len(deck[STOCK_SLICE]),
            "deck": codes(deck),
        }
    if isinstance(event, StockDrawn):
        return {"count": len(event.cards), "wasteTop": CODES[event.cards[-1]], "cards": codes(event.cards)}
    if isinstance(event, WasteRecycled):
        return {"count": event.count}
    if isinstance(event, CardsMoved):
        return {"card": CODES[event.cards[0]], "cards": codes(event.cards), "from": event.source, "to": event.target}
    if isinstance(event, ReserveRefilled):
        return {"card": CODES[event.card], "to": TABLEAU[event.column]}
    if isinstance(event, MoveUndone):
        return {"reverted": [{"type": event_type(e), "data": event_data(e)} for e in event.reverted]}
    if isinstance(event, LessonCompleted):
        return {"lesson": event.lesson}
    if isinstance(event, GameAbandoned):
        return {"idleDays": event.idle_days}
    return {}


def public_event_data(event: Event, reveal: bool) -> JSON:
    """The data of an event as a client may see it (``public_data`` of its stored form)."""
    return public_data(event_type(event), event_data(event), reveal)


def public_data(kind: str, data: JSON, reveal: bool) -> JSON:
    """The stored data of an event of type ``kind`` (``event_data``) as a client may see it: no
    face-down card unless ``reveal`` (a game that is over, and whose deck may be shown). The one
    place an event is redacted: the service shows stored events through it."""
    return data if reveal else redact(kind, data)


def redact(kind: str, data: JSON) -> JSON:
    """The stored data of an event of type ``kind`` without the cards a player may not see yet."""
    if kind == "GameDealt":
        return {key: value for key, value in data.items() if key != "deck"}
    if kind == "MoveUndone":
        return {"reverted": [{"type": e["type"], "data": redact(e["type"], e["data"])} for e in data["reverted"]]}
    return data
