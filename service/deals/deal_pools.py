"""The verified deal pools: files of solver-proven deals with their winning lines.

One JSON file per ruleset under service/deals/data/pools/ (written by `canfield pool build`, its
verdicts renewed by `canfield pool recheck`):

    {"ruleset": "open-runs", "rulesetVersion": 1, "budgetSeconds": 10.0,
     "seedsTried": 1903, "won": 1510, "lost": 240, "undecided": 153,
     "verdicts": {"solver": "domain.solver@2", "budgetSeconds": 10.0,
                  "wonOutsidePool": [{"seed": 19, "length": 248, "line": "..."}, ...],
                  "lost": [4, 26, ...], "undecided": [7, ...]},
     "deals": [{"seed": 1, "length": 178, "line": "D 7H3 KSf R ..."}, ...]}

Pool deal n (1-based) is ``deals[n - 1]``, for good: a pool number is a published address, so
the deals never change order and are only ever appended to. When the pool was built they were
the won seeds in seed order; ``won`` / ``lost`` / ``undecided`` count seeds 1..seedsTried by
the verdicts of ``verdicts.solver`` (a later, sound solver re-decided every seed that is not a
deal): ``won`` is the pool's deals plus ``wonOutsidePool`` (seeds won only by the later solver,
kept out of the pool so that no number moves), each with a line that replays to a win; ``lost``
is proven. A line is the winning moves, space-separated: ``D`` draw, ``R`` recycle,
``<card><column>`` a move to tableau-1..4 (``7H3``), ``<card>f`` a move to the foundation (``KSf``).
"""

from __future__ import annotations

import json
import statistics
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

from domain import (
    Command,
    Draw,
    GameState,
    MoveCard,
    Recycle,
    Ruleset,
    deal,
    get_ruleset,
    initial_state,
    line_wins,
    parse_card,
    shuffled_deck,
)
from domain.cards import CODES
from domain.piles import FOUNDATION, TABLEAU

DEAL_POOL_DIR = Path(__file__).resolve().parent / "data" / "pools"


def deal_pool_path(ruleset_id: str, directory: Path = DEAL_POOL_DIR) -> Path:
    return directory / f"{ruleset_id}.json"


def encode_line(moves: tuple[Command, ...] | list[Command]) -> str:
    tokens = []
    for move in moves:
        if isinstance(move, Draw):
            tokens.append("D")
        elif isinstance(move, Recycle):
            tokens.append("R")
        elif isinstance(move, MoveCard):
            target = "f" if move.to == FOUNDATION else str(TABLEAU.index(move.to) + 1)
            tokens.append(CODES[move.card] + target)
        else:
            raise ValueError(f"a winning line has no {move!r}")
    return " ".join(tokens)


def decode_line(line: str) -> list[Command]:
    moves: list[Command] = []
    for token in line.split():
        if token == "D":
            moves.append(Draw())
        elif token == "R":
            moves.append(Recycle())
        else:
            target = FOUNDATION if token[2] == "f" else TABLEAU[int(token[2]) - 1]
            moves.append(MoveCard(parse_card(token[:2]), target))
    return moves


@dataclass(frozen=True, slots=True)
class PoolDeal:
    number: int
    seed: int
    length: int
    line: str


@dataclass(frozen=True, slots=True)
class Verdicts:
    """Which seeds of 1..seedsTried outside the pool were won, proven lost, or left undecided, and by whom."""

    solver: str
    budget_seconds: float
    won_outside_pool: tuple[PoolDeal, ...]  # number 0: not pool deals
    lost: tuple[int, ...]
    undecided: tuple[int, ...]


@dataclass(frozen=True, slots=True)
class DealPool:
    ruleset: Ruleset
    budget_seconds: float
    seeds_tried: int
    won: int
    lost: int
    undecided: int
    deals: tuple[PoolDeal, ...]
    verdicts: Verdicts | None = None  # None: a pool file from before verdicts were listed

    @property
    def size(self) -> int:
        return len(self.deals)

    def deal(self, number: int) -> PoolDeal:
        return self.deals[number - 1]

    def line_lengths(self) -> dict[str, float]:
        lengths = [d.length for d in self.deals]
        if len(lengths) < 2:
            return {"median": float(lengths[0]) if lengths else 0.0, "q1": 0.0, "q3": 0.0}
        q1, median, q3 = statistics.quantiles(lengths, n=4, method="inclusive")
        return {"median": median, "q1": q1, "q3": q3}


def start_state(ruleset: Ruleset, seed: int, source: dict[str, Any] | None = None) -> GameState:
    return initial_state(deal(ruleset, shuffled_deck(seed), source or {}))


def parse_pool(document: dict[str, Any]) -> DealPool:
    ruleset = get_ruleset(document["ruleset"], int(document["rulesetVersion"]))
    deals = tuple(
        PoolDeal(number, int(item["seed"]), int(item["length"]), item["line"])
        for number, item in enumerate(document["deals"], start=1)
    )
    listed = document.get("verdicts")
    verdicts = None
    if listed is not None:
        verdicts = Verdicts(
            solver=str(listed["solver"]),
            budget_seconds=float(listed["budgetSeconds"]),
            won_outside_pool=tuple(
                PoolDeal(0, int(item["seed"]), int(item["length"]), item["line"]) for item in listed["wonOutsidePool"]
            ),
            lost=tuple(int(seed) for seed in listed["lost"]),
            undecided=tuple(int(seed) for seed in listed["undecided"]),
        )
    return DealPool(
        ruleset=ruleset,
        budget_seconds=float(document["budgetSeconds"]),
        seeds_tried=int(document["seedsTried"]),
        won=int(document["won"]),
        lost=int(document["lost"]),
        undecided=int(document["undecided"]),
        deals=deals,
        verdicts=verdicts,
    )


@cache
def load_deal_pool(ruleset_id: str) -> DealPool | None:
    """The shipped pool of a ruleset, or None if it has none."""
    path = deal_pool_path(ruleset_id)
    if not path.exists():
        return None
    return parse_pool(json.loads(path.read_text()))


def verify_deal(pool: DealPool, item: PoolDeal) -> str | None:
    """None when the stored line replays to a win through the rules engine, else what went wrong."""
    what = f"pool deal {item.number} (seed {item.seed})" if item.number else f"won seed {item.seed}"
    try:
        moves = decode_line(item.line)
    except (ValueError, IndexError) as error:
        return f"{what}: unreadable line ({error})"
    if len(moves) != item.length:
        return f"{what}: length {item.length} but the line has {len(moves)} moves"
    problem = line_wins(start_state(pool.ruleset, item.seed), moves).problem
    return None if problem is None else f"{what}: {problem}"
