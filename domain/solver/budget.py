"""The solver's limits: positions and time (``Budget``), and the signal that one is reached."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field


@dataclass(frozen=True, slots=True)
class Budget:
    """Two separate limits; the search answers ``unknown`` at whichever is reached first.

    ``max_states``: positions searched, all stages together (None: no limit). ``out_of_time``:
    the caller's clock, asked every ``check_every`` positions (the default has no time limit).
    ``narrow_states``, ``narrow_best_states``, ``best_states`` (not in draw-one while
    ``sound_best_states`` is not 0: that stage takes its place), ``narrow_reach_states``,
    ``sound_best_states`` (draw-one only) and ``wide_states`` (classic only): at most this many of
    the positions go to each of those stages before the sound stage (0: the stage is skipped).
    The best-first stages take turns, as one stage. ``sound_first_states``: where the C search is
    built (``NATIVE_SEARCH``) and there is no ``max_states``, the sound stage runs first with this
    limit, right after narrow (in classic its win is a fallback: ``solve``); its ``lost`` is a
    proof like the sound stage's, and where it stops at its limit the sound stage goes on with the
    same search (0: not run). That limit is open-runs'; in classic (foundation cards come back) it
    is ``classic_sound_first_states``, in draw-one ``draw_one_sound_first_states`` (None: no limit
    of its own, the rest of the budget, so no stage after it runs).
    """

    max_states: int | None = None
    out_of_time: Callable[[], bool] = field(default=lambda: False)
    check_every: int = 512
    narrow_states: int = 40_000
    narrow_best_states: int = 320_000
    best_states: int = 200_000
    narrow_reach_states: int = 90_000  # the narrow moves best first, with the ``reach`` evaluation
    sound_best_states: int = 300_000  # draw-one only: the sound stage's moves best first (see ``solve``)
    wide_states: int = 200_000  # classic only: the stage between narrow and sound
    # the sound stage with this position limit right after narrow, before the best-first stages
    # (0: not run; it runs only where the C search is, ``NATIVE_SEARCH``): open-runs' limit, about
    # 4 CPU s at most on the machine of docs/solver.md's figures
    sound_first_states: int = 10_000_000
    # classic's (its win only a fallback: ``solve``): 10,000,000 there left a deal's fallback line
    # of 73,000 moves where 5,000,000 gives the win-finding stages time to find a short one
    classic_sound_first_states: int = 5_000_000
    # draw-one's limit for it (None: the rest of the budget; 0: not run). With the C search, the
    # sound stage there decides more deals in 10 s than the best-first stages win in the time
    # they take from it (docs/solver.md)
    draw_one_sound_first_states: int | None = None


class OutOfBudget(Exception):
    """A search reached its position limit or ran out of time."""
