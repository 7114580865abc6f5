"""Moves: legal moves and hints (the move requests, tagged by ``type``, and a move's reply are the game
feature's Structs, service.games.wire)."""

from __future__ import annotations

from typing import Annotated, Literal

from msgspec import UNSET, Meta, UnsetType

from ...games.wire import DrawRequest, MoveCardRequest, MoveRequest, RecycleRequest, ResignRequest, UndoRequest
from .common import Body, Version


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


__all__ = [
    "DrawRequest",
    "HintView",
    "Hints",
    "LegalMoves",
    "MoveCardRequest",
    "MoveRequest",
    "RecycleRequest",
    "ResignRequest",
    "SolverHint",
    "UndoRequest",
]
