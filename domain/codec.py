"""Plain-data forms of events and states for storage (JSON-ready dicts, no I/O here)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from . import undo_stack
from .cards import CODES
from .deal import parse_deck
from .events import (
    EVENT_TYPES,
    CardsMoved,
    Event,
    GameAbandoned,
    GameDealt,
    LessonCompleted,
    MoveUndone,
    ReserveRefilled,
    StockDrawn,
    WasteRecycled,
)
from .piles import COLUMN_OF
from .rules import evolve
from .rulesets import get_ruleset
from .state import GameState, Status
from .undo_stack import UndoHistoryNeeded

SNAPSHOT_FORMAT = 2
"""2: the undo stack is a window (domain.undo_stack) plus ``undoDepth``. 1 (read, never written)
held the whole stack."""
_BY_CODE = {code: card for card, code in enumerate(CODES)}


def _cards(items: Any) -> tuple[int, ...]:
    return tuple(_BY_CODE[item] for item in items)


def event_from_data(kind: str, data: Mapping[str, Any]) -> Event:
    """The event stored as ``(kind, data)`` (the full form made by ``view.event_data``)."""
    cls = EVENT_TYPES[kind]
    if cls is GameDealt:
        ruleset = data["ruleset"]
        return GameDealt(ruleset["id"], int(ruleset["version"]), parse_deck(data["deck"]), dict(data.get("deal", {})))
    if cls is StockDrawn:
        return StockDrawn(_cards(data["cards"]))
    if cls is WasteRecycled:
        return WasteRecycled(int(data["count"]))
    if cls is CardsMoved:
        return CardsMoved(_cards(data["cards"]), data["from"], data["to"])
    if cls is ReserveRefilled:
        return ReserveRefilled(_BY_CODE[data["card"]], COLUMN_OF[data["to"]])
    if cls is MoveUndone:
        return MoveUndone(tuple(event_from_data(item["type"], item["data"]) for item in data["reverted"]))
    if cls is LessonCompleted:
        return LessonCompleted(str(data["lesson"]))
    if cls is GameAbandoned:
        return GameAbandoned(int(data["idleDays"]))
    return cls()  # type: ignore[call-arg]  # the rest take no fields; mypy cannot narrow type[...] by `is`


def state_to_snapshot(state: GameState) -> dict[str, Any]:
    """A compact JSON-ready snapshot (its arrays as tuples); ``snapshot_to_state`` reads it, or its
    JSON decoded, back exactly."""
    # Tuples encode to the same JSON arrays as lists (msgspec), without a copy per pile.
    snapshot: dict[str, Any] = {
        "format": SNAPSHOT_FORMAT,
        "ruleset": (state.ruleset.id, state.ruleset.version),
        "deck": state.deck,
        "baseRank": state.base_rank,
        "reserve": state.reserve,
        "stock": state.stock,
        "waste": state.waste,
        "foundations": state.foundations,
        "tableau": state.tableau,
        "status": state.status.value,
        "progress": state.progress,
        "moveCount": state.move_count,
        "undoCount": state.undo_count,
        "assisted": state.assisted,
        "version": state.version,
        "undo": state.undo,
        "undoDepth": state.undo_depth,
    }
    if state.lesson:  # only lesson games carry these
        snapshot["lesson"] = state.lesson
        snapshot["lessonDone"] = state.lesson_done
    if state.abandoned_after:  # only games the service ended
        snapshot["abandonedAfter"] = state.abandoned_after
    return snapshot


def restore(snapshot: Mapping[str, Any], tail: Iterable[tuple[str, Mapping[str, Any]]], version: int) -> GameState:
    """The state at ``version``: a stored snapshot, and the events stored after it folded in.

    A game's snapshot is written only now and then (``service.store.snapshots.SNAPSHOT_EVERY``),
    so a stored game is its snapshot plus a short tail of ``(type, data)`` events. Folding them
    with ``evolve`` is exact: an undo that needs the older moves (``UndoHistoryNeeded``) always
    writes a snapshot, so a tail never holds one. Raises ValueError when the tail does not lead to
    ``version`` (a tail that is not the one after this snapshot)."""
    state = snapshot_to_state(snapshot)
    taken_at = state.version
    for kind, data in tail:
        try:
            state = evolve(state, event_from_data(kind, data))
        except UndoHistoryNeeded:
            raise ValueError(
                f"the events after the snapshot at version {taken_at} need the older moves (at version {state.version})"
            ) from None
    if state.version != version:
        raise ValueError(f"the snapshot and the events after it lead to version {state.version}, not {version}")
    return state


def snapshot_to_state(snapshot: Mapping[str, Any]) -> GameState:
    written_as = snapshot.get("format")
    if written_as == 1:  # the whole stack: keep its top as the window
        whole = snapshot["undo"]
        entries = whole.split(";") if whole else []
        snapshot = {**snapshot, "undo": undo_stack.window(entries), "undoDepth": len(entries)}
    elif written_as != SNAPSHOT_FORMAT:
        raise ValueError(f"unknown snapshot format {written_as!r}")
    f = snapshot["foundations"]
    return GameState(
        ruleset=get_ruleset(snapshot["ruleset"][0], int(snapshot["ruleset"][1])),
        deck=tuple(snapshot["deck"]),
        base_rank=snapshot["baseRank"],
        reserve=tuple(snapshot["reserve"]),
        stock=tuple(snapshot["stock"]),
        waste=tuple(snapshot["waste"]),
        foundations=(f[0], f[1], f[2], f[3]),
        tableau=tuple(tuple(column) for column in snapshot["tableau"]),
        status=Status(snapshot["status"]),
        progress=bool(snapshot["progress"]),
        move_count=snapshot["moveCount"],
        undo_count=snapshot["undoCount"],
        assisted=bool(snapshot["assisted"]),
        version=snapshot["version"],
        undo=snapshot["undo"],
        lesson=str(snapshot.get("lesson", "")),
        lesson_done=bool(snapshot.get("lessonDone", False)),
        abandoned_after=int(snapshot.get("abandonedAfter", 0)),
        undo_depth=snapshot["undoDepth"],
    )



def checkpoint_of(state: GameState, stack: list[str]) -> dict[str, Any]:
    """A stored point of a game to replay from (``rules.replay_from``): the state's snapshot and
    its whole undo stack (``stack``, oldest entry first, as ``rules.replay_from`` returns it), so
    that an undo reaching below the state's window after it folds as a replay from the deal does."""
    if len(stack) != state.undo_depth:
        raise ValueError(f"an undo stack of {len(stack)} entries for a state {state.undo_depth} moves deep")
    return {**state_to_snapshot(state), "undoStack": ";".join(stack)}


def from_checkpoint(checkpoint: Mapping[str, Any]) -> tuple[GameState, list[str]]:
    """The state and the whole undo stack of a ``checkpoint_of``."""
    whole = checkpoint["undoStack"]
    stack = whole.split(";") if whole else []
    state = snapshot_to_state(checkpoint)
    if len(stack) != state.undo_depth:
        raise ValueError(f"a checkpoint at version {state.version} whose undo stack is not {state.undo_depth} deep")
    return state, stack
