"""Moves: the move requests (tagged by ``type``), legal moves and hints (a move's reply is the game feature's
Struct, service.games.wire)."""

from __future__ import annotations

from typing import Annotated, ClassVar, Literal, Union

from msgspec import UNSET, Meta, UnsetType

from .common import Body, CardCode, RequestBody, Target, Version


class DrawRequest(RequestBody, tag_field="type", tag="draw"):
    """Turn the next packet of the stock onto the waste."""

    __schema_name__: ClassVar[str] = "Draw"  # see RequestBody


class RecycleRequest(RequestBody, tag_field="type", tag="recycle"):
    """Turn the waste over to be the stock again (only when the stock is empty)."""

    __schema_name__: ClassVar[str] = "Recycle"  # see RequestBody


class UndoRequest(RequestBody, tag_field="type", tag="undo"):
    """Take back the last move (recorded as an event, never a deletion)."""

    __schema_name__: ClassVar[str] = "Undo"  # see RequestBody


class ResignRequest(RequestBody, tag_field="type", tag="resign"):
    """Give the game up."""

    __schema_name__: ClassVar[str] = "Resign"  # see RequestBody


class MoveCardRequest(RequestBody, tag_field="type", tag="move"):
    """Move a card, with every card after it in its column, to a tableau column or its foundation."""

    __schema_name__: ClassVar[str] = "MoveCard"  # see RequestBody

    card: CardCode
    to: Annotated[Target, Meta(description="'foundation' (the card's own suit) or 'tableau-1' .. 'tableau-4'")]


# A move as in API.md, tagged by ``type``; legal moves, hints and solver hints list moves in this form.
MoveRequest = Union[DrawRequest, RecycleRequest, UndoRequest, ResignRequest, MoveCardRequest]  # noqa: UP007 (see Body)


class LegalMoves(Body):
    version: Version
    moves: Annotated[list[MoveRequest], Meta(description="every legal move now; each can be sent back as it is")]


class HintView(Body):
    move: MoveRequest
    reason: str


class SolverHint(Body):
    result: Literal["won", "lost", "unknown"]
    move: Annotated[
        MoveRequest | None, Meta(description="the next move of a winning line from here; null unless result is won")
    ]


class Hints(Body, omit_defaults=True):
    version: Version
    hints: list[HintView]
    solver: SolverHint | UnsetType = UNSET
