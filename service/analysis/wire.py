"""A game's analysis on the wire (``POST`` and ``GET /games/{id}/analysis``): its status and
progress, then a verdict per position and the turning point, as msgspec Structs (camelCase on the
wire). ``analyses.job_view`` builds them from a job's row; service.http.schemas names them for the
HTTP layer and the OpenAPI document."""

from __future__ import annotations

from typing import Annotated, Literal, Union

from msgspec import Meta

from ..games.wire import DrawRequest, MoveCardRequest, MoveRequest, RecycleRequest, ResignRequest, UndoRequest
from ..wire import Body, Version


class AnalysisProgress(Body):
    done: Annotated[int, Meta(ge=0, description="positions settled so far")]
    total: Annotated[int, Meta(ge=0, description="positions of the game: the deal and one after each move")]


class PositionVerdict(Body):
    version: Annotated[
        Version, Meta(description="the game's version after the move that made this position; 0 is the deal")
    ]
    verdict: Annotated[
        Literal["won", "lost", "unknown"],
        Meta(description="won: a line of moves wins from here (one that replays through the rules); lost: proven "
             "that none does; unknown: the solver's budget ran out"),
    ]
    moves_to_win: Annotated[
        Annotated[int, Meta(ge=0)] | None, Meta(description="the length of the winning line found; null unless won")
    ]


class AbandonMove(Body, tag_field="type", tag="abandon"):
    """The service ended the game: nobody moved it for ABANDON_AFTER_DAYS days (its GameAbandoned
    event). Not a move a client sends: an analysis names it where the abandonment is the turning point."""


# A move of a game as its analysis names it, tagged by ``type``: a player's move, or the abandonment.
AnalysedMove = Union[DrawRequest, RecycleRequest, UndoRequest, ResignRequest, MoveCardRequest, AbandonMove]  # noqa: UP007 (see Body)


class TurningPoint(Body):
    before: Annotated[Version, Meta(description="the last position from which the game could be won")]
    after: Annotated[Version, Meta(description="the proven-lost position the move made (the final version for a "
                                   "resignation, a stall or an abandonment)")]
    move: AnalysedMove
    winning_line_before: Annotated[list[MoveRequest], Meta(description="a line that wins from position 'before'")]


class AnalysisView(Body):
    status: Literal["queued", "running", "done", "failed"]
    progress: AnalysisProgress
    positions: Annotated[
        list[PositionVerdict],
        Meta(description="a verdict for each position, in version order, once the analysis is done"),
    ]
    turning_point: Annotated[
        TurningPoint | None,
        Meta(description="the move that took a winnable game to a proven-lost position; null for a won game, a "
             "deal lost from the start, or where unknown positions hide it"),
    ]
    budget_spent: Annotated[
        bool,
        Meta(description="true when the job's solver time (ANALYSIS_JOB_SECONDS) ran out before every position was "
             "judged: the positions it did not reach are unknown"),
    ]
