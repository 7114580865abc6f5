"""The verified deal pools: files of solver-proven deals with their winning lines.

One JSON file per ruleset under service/data/pools/ (written by `canfield pool build`):

    {"ruleset": "open-runs", "rulesetVersion": 1, "budgetSeconds": 10.0,
     "seedsTried": 1751, "won": 1500, "lost": 30, "undecided": 221,
     "deals": [{"seed": 1, "length": 178, "line": "D 7H3 KSf R ..."}, ...]}

Pool deal n (1-based) is ``deals[n - 1]``: the n-th won seed, in seed order. A line is the
winning moves, space-separated: ``D`` draw, ``R`` recycle, ``<card><column>`` a move to
tableau-1..4 (``7H3``), ``<card>f`` a move to the foundation (``KSf``).
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
    parse_card,
    replay_commands,
    shuffled_deck,
)
from domain.cards import CODES
from domain.piles import FOUNDATION, TABLEAU

POOL_DIR = Path(__file__).resolve().parent / "data" / "pools"


def pool_path(ruleset_id: str, directory: Path = POOL_DIR) -> Path:
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
class Pool:
    ruleset: Ruleset
    budget_seconds: float
    seeds_tried: int
    won: int
    lost: int
    undecided: int
    deals: tuple[PoolDeal, ...]

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


def parse_pool(document: dict[str, Any]) -> Pool:
    ruleset = get_ruleset(document["ruleset"], int(document["rulesetVersion"]))
    deals = tuple(
        PoolDeal(number, int(item["seed"]), int(item["length"]), item["line"])
        for number, item in enumerate(document["deals"], start=1)
    )
    return Pool(
        ruleset=ruleset,
        budget_seconds=float(document["budgetSeconds"]),
        seeds_tried=int(document["seedsTried"]),
        won=int(document["won"]),
        lost=int(document["lost"]),
        undecided=int(document["undecided"]),
        deals=deals,
    )


@cache
def load_pool(ruleset_id: str) -> Pool | None:
    """The shipped pool of a ruleset, or None if it has none."""
    path = pool_path(ruleset_id)
    if not path.exists():
        return None
    return parse_pool(json.loads(path.read_text()))


def verify_deal(pool: Pool, item: PoolDeal) -> str | None:
    """None when the stored line replays to a win through the rules engine, else what went wrong."""
    try:
        moves = decode_line(item.line)
    except (ValueError, IndexError) as error:
        return f"pool deal {item.number} (seed {item.seed}): unreadable line ({error})"
    if len(moves) != item.length:
        return f"pool deal {item.number} (seed {item.seed}): length {item.length} but the line has {len(moves)} moves"
    report = replay_commands(start_state(pool.ruleset, item.seed), moves)
    if not report.ok:
        return f"pool deal {item.number} (seed {item.seed}): move {report.failed_at} refused: {report.reason}"
    if report.state.status.value != "won":
        return f"pool deal {item.number} (seed {item.seed}): the line ends {report.state.status.value}, not won"
    return None
