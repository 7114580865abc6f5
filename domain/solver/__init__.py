"""The solver: a won line, a proof of loss, or unknown within a budget (``solve``).

Modules: ``stages`` (``solve``: the order of the stages and their verdicts), ``macros``
(positions, macro moves, the stages' names), ``search`` (the depth-first search over macro moves,
``Search``), built on ``position_rules`` (each stage's rules, playing a move), ``twins`` (twin
merging) and ``moves`` (the move generator); ``shorten`` (cutting detours out of a won line),
``best_first`` (the best-first stages), ``talon`` (which waste cards draws reach), ``budget``
(``Budget``) and ``native`` (the optional C search of the sound stage, ``domain._sound``).
"""

from .best_first import BestFirst, best_first
from .budget import Budget, OutOfBudget
from .macros import (
    BEST,
    NARROW,
    NARROW_BEST,
    SOUND,
    SOUND_FIRST,
    WIDE,
    Macro,
    Position,
    start_position,
)
from .native import NATIVE_SEARCH, native_available
from .search import Search
from .stages import SOLVER_VERSION, SolveResult, solve
from .talon import talon_positions

__all__ = [
    "BEST",
    "NARROW",
    "NARROW_BEST",
    "NATIVE_SEARCH",
    "SOLVER_VERSION",
    "SOUND",
    "SOUND_FIRST",
    "WIDE",
    "BestFirst",
    "Budget",
    "Macro",
    "OutOfBudget",
    "Position",
    "Search",
    "SolveResult",
    "best_first",
    "native_available",
    "solve",
    "start_position",
    "talon_positions",
]
