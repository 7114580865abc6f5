"""Test oracles for the solver: exhaustive search through the rules engine, and small positions.

``brute_force`` knows nothing of the solver: it walks every state that ``domain.legal_moves``
and ``domain.apply`` reach (draws and recycles one by one, no macro moves, no pruning besides
"this exact state was seen"), so its ``lost`` is the rules' own answer. It looks depth first,
foundation moves tried first, so a win turns up after a few states rather than after every
shorter line; where that walk passes ``limit`` states it walks again breadth first, so it
decides every position the breadth-first walk alone decides, with the same answer.
"""

from __future__ import annotations

import random
from collections import deque

from domain import Draw, GameState, MoveCard, Recycle, Status, apply, get_ruleset, legal_moves
from domain.cards import RANKS, SUITS, code, is_red, rank_of
from domain.piles import FOUNDATION

from .tables import table


class TooBig(Exception):
    """The position has more states than the oracle was allowed to walk."""


def _key(state: GameState) -> tuple[object, ...]:
    return (state.reserve, state.stock, state.waste, state.foundations, state.tableau, state.progress, state.status)


def brute_force(start: GameState, limit: int = 200_000) -> str:
    """``won`` if some sequence of moves wins from ``start``, else ``lost`` (every state was seen).
    ``TooBig`` when neither walk decides within ``limit`` states."""
    if start.status is Status.WON:
        return "won"
    try:
        return _walk(start, limit, depth_first=True)
    except TooBig:
        return _walk(start, limit, depth_first=False)


def _walk(start: GameState, limit: int, depth_first: bool) -> str:
    """Every state reachable from ``start``: ``won`` at the first won one, ``lost`` when none is.
    Both walks see the same states when none is won, so a ``lost`` or a ``TooBig`` is the same."""
    seen = {_key(start)}
    queue = deque([start])
    while queue:
        state = queue.pop() if depth_first else queue.popleft()
        moves = [move for move in legal_moves(state) if isinstance(move, Draw | Recycle | MoveCard)]
        if depth_first:  # the last pushed comes out first: foundation moves last
            moves.sort(key=lambda move: isinstance(move, MoveCard) and move.to == FOUNDATION)
        for move in moves:  # undo and resign win nothing
            after, _ = apply(state, move)
            if after.status is Status.WON:
                return "won"
            if after.status is not Status.PLAYING:
                continue
            key = _key(after)
            if key not in seen:
                if len(seen) >= limit:
                    raise TooBig(f"more than {limit} states")
                seen.add(key)
                queue.append(after)
    return "lost"


def _fits(card: int, end: int) -> bool:
    return rank_of(card) == (rank_of(end) + 12) % 13 and is_red(card) != is_red(end)


def small_position(rng: random.Random, ruleset_id: str, left: int) -> GameState:
    """A random legal-looking position with ``left`` cards off the foundations: every column an
    ordered run, no empty column while the reserve has cards, the rest split into reserve, waste
    and stock."""
    base = rng.randrange(13)
    counts = [13] * 4
    weights = [rng.random() ** 3 + 0.01 for _ in range(4)]  # uneven: some suits nearly home, so hosts are scarce
    for _ in range(left):
        open_suits = [s for s in range(4) if counts[s] > 0]
        suit = rng.choices(open_suits, [weights[s] for s in open_suits])[0]
        counts[suit] -= 1
    loose = [
        suit * 13 + (base + i) % 13 for suit in range(4) for i in range(counts[suit], 13)
    ]  # the cards above each foundation's top
    rng.shuffle(loose)
    reserve_size = rng.choice([0, 2, 4, 6, 8])
    reserve, loose = loose[:reserve_size], loose[reserve_size:]
    columns: list[list[int]] = []
    for _ in range(4):
        if not loose or (not reserve and rng.random() < 0.5):
            columns.append([])
            continue
        column = [loose.pop()]
        while rng.random() < 0.4:
            fitting = [card for card in loose if _fits(card, column[-1])]
            if not fitting:
                break
            card = rng.choice(fitting)
            loose.remove(card)
            column.append(card)
        columns.append(column)
    if reserve and not all(columns):
        loose += reserve  # a reserve with an empty column beside it cannot happen
        reserve = []
    split = rng.randrange(len(loose) + 1)
    waste, stock = loose[:split], loose[split:]
    ruleset = get_ruleset(ruleset_id)
    progress = rng.random() < 0.5
    return table(
        ruleset.id,
        base=RANKS[base],
        foundations={SUITS[s]: counts[s] for s in range(4)},
        tableau=[[code(c) for c in column] for column in columns],
        reserve=[code(c) for c in reserve],
        waste=[code(c) for c in waste],
        stock=[code(c) for c in stock],
        progress=progress,
    )
