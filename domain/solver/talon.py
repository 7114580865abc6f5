"""Which waste cards draws and recycles alone can bring to the top: the solver's talon moves.

The talon is the waste (bottom .. top) followed by the stock in draw order; a pointer ``p``
says the waste holds its first ``p`` cards, so ``talon[p - 1]`` is the playable top. A draw
moves the pointer ``draw`` cards on (fewer at the end); a recycle, allowed only with the stock
empty and the waste not, sets it back to 0. Playing the top card takes ``talon[p - 1]`` out
and leaves the pointer at ``p - 1``.
"""

from __future__ import annotations


def talon_positions(size: int, pointer: int, draw: int, can_recycle: bool) -> tuple[int, ...]:
    """Every pointer in 1..size that draws and recycles reach from ``pointer``, fewest draws first.

    The current top (if any), the forward draws of this pass (the last one may take fewer than
    ``draw`` cards), then, when a recycle is allowed, every pass after it: those start from 0,
    so they reach the multiples of ``draw`` and the end, whatever ``pointer`` was. (In draw-one
    the recycle clears the pass's progress, but a single pass from 0 already reaches every card.)
    """
    found: list[int] = [pointer] if pointer else []
    q = pointer
    while q < size:
        q = min(q + draw, size)
        found.append(q)
    if can_recycle and size:
        seen = set(found)
        q = 0
        while q < size:
            q = min(q + draw, size)
            if q not in seen:
                found.append(q)
    return tuple(found)

