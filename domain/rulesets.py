"""The hosted rulesets as data. A game keeps the (id, version) it was dealt with for life."""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

from .errors import UnknownRuleset


class RecyclePolicy(StrEnum):
    UNLIMITED = "unlimited"
    # draw-one: a recycle needs a move other than draw/recycle since the last one, else the game stalls
    AFTER_PROGRESS = "after-progress"


class TableauMoves(StrEnum):
    # classic: the exposed end card alone, or the whole column as one unit
    END_OR_WHOLE_COLUMN = "end-or-whole-column"
    # draw-one, open-runs: any run from a chosen card to the end of its column
    ANY_RUN = "any-run"


@dataclass(frozen=True, slots=True)
class Ruleset:
    id: str
    version: int
    draw_count: int
    recycle: RecyclePolicy
    tableau_moves: TableauMoves
    foundation_returns: bool
    default_deal: str
    description: str

    @property
    def key(self) -> str:
        return f"{self.id}@{self.version}"


CLASSIC = Ruleset(
    id="classic",
    version=1,
    draw_count=3,
    recycle=RecyclePolicy.UNLIMITED,
    tableau_moves=TableauMoves.END_OR_WHOLE_COLUMN,
    foundation_returns=True,
    default_deal="seed",
    description=(
        "Draw-three Canfield (Demon Patience): unlimited recycles, move the end card or a whole "
        "column, foundation cards may come back to the tableau."
    ),
)
DRAW_ONE = Ruleset(
    id="draw-one",
    version=1,
    draw_count=1,
    recycle=RecyclePolicy.AFTER_PROGRESS,
    tableau_moves=TableauMoves.ANY_RUN,
    foundation_returns=False,
    default_deal="seed",
    description=(
        "Draw one; recycle only after a pass with a real move, otherwise the game stalls; "
        "any run moves; foundations are final."
    ),
)
OPEN_RUNS = Ruleset(
    id="open-runs",
    version=1,
    draw_count=3,
    recycle=RecyclePolicy.UNLIMITED,
    tableau_moves=TableauMoves.ANY_RUN,
    foundation_returns=False,
    default_deal="pool",
    description=(
        "Draw three with unlimited recycles; any run moves; foundations are final; "
        "deals come from a solver-verified pool by default."
    ),
)

DEFAULT_RULESET_ID = OPEN_RUNS.id
ALL_RULESETS: tuple[Ruleset, ...] = (CLASSIC, DRAW_ONE, OPEN_RUNS)
_BY_KEY: dict[tuple[str, int], Ruleset] = {(r.id, r.version): r for r in ALL_RULESETS}
LATEST: dict[str, Ruleset] = {}
for _ruleset in ALL_RULESETS:
    if _ruleset.version >= LATEST.get(_ruleset.id, _ruleset).version:
        LATEST[_ruleset.id] = _ruleset


def get_ruleset(ruleset_id: str, version: int | None = None) -> Ruleset:
    """The ruleset by id (its latest version unless one is named)."""
    found = LATEST.get(ruleset_id) if version is None else _BY_KEY.get((ruleset_id, version))
    if found is None:
        known = ", ".join(sorted(LATEST))
        what = ruleset_id if version is None else f"{ruleset_id}@{version}"
        shown = what if len(what) <= 40 else what[:40] + "..."
        raise UnknownRuleset(f"unknown ruleset {shown!r}: the hosted rulesets are {known}")
    return found
