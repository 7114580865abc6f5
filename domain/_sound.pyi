"""Types of the optional C extension domain/_sound.c: the sound stage's depth-first search
(``domain.solver.search.Search.run_native``)."""

from collections.abc import Callable

def start(
    reserve_cards: tuple[int, ...],
    base: int,
    draw: int,
    free_recycle: bool,
    any_run: bool,
    returns: bool,
    auto_home: bool,
    auto_talon: bool,
    twins: bool,
    start: tuple[int, tuple[int, int, int, int], tuple[tuple[int, ...], ...], tuple[int, ...], int, bool],
    states: int,
    /,
) -> object: ...
def resume(
    search: object,
    max_states: int,
    check_every: int,
    out_of_time: Callable[[], bool],
    /,
) -> tuple[int, int, list[tuple[int, int, int, int]] | None]: ...
