"""What rule tests build on: exact table positions (all 52 cards accounted for) and a line of
commands played through ``apply`` (cards and moves as codes: ``tests.support``)."""

from __future__ import annotations

from domain import ALL_RULESETS, Command, GameState, apply, get_ruleset, initial_state, parse_card
from domain.cards import RANKS, SUITS
from domain.events import Event
from domain.rules import deal

RULESETS = [r.id for r in ALL_RULESETS]


def play(state: GameState, commands: list[Command]) -> tuple[GameState, list[Event]]:
    """``commands`` applied in turn: the last state and every event, in order."""
    events: list[Event] = []
    for command in commands:
        state, new = apply(state, command)
        events += new
    return state, events


def table(
    ruleset: str,
    *,
    base: str = "A",
    foundations: dict[str, int] | None = None,
    tableau: list[list[str]] | None = None,
    reserve: list[str] | None = None,
    waste: list[str] | None = None,
    stock: list[str] | None = None,
    rest_to: str = "stock",
    progress: bool = False,
) -> GameState:
    """A playing position. Cards not placed anywhere go to ``rest_to`` (stock, waste or reserve bottom)."""
    base_rank = RANKS.index(base)
    counts = dict.fromkeys(SUITS, 0)
    counts.update(foundations or {})
    on_foundations = {
        parse_card(RANKS[(base_rank + i) % 13] + suit) for suit, count in counts.items() for i in range(count)
    }
    columns = [[parse_card(c) for c in column] for column in (tableau or [[], [], [], []])]
    placed_reserve = [parse_card(c) for c in reserve or []]
    placed_waste = [parse_card(c) for c in waste or []]
    placed_stock = [parse_card(c) for c in stock or []]  # in draw order: the first is drawn next
    used = on_foundations | set(placed_reserve) | set(placed_waste) | set(placed_stock)
    used |= {card for column in columns for card in column}
    rest = [card for card in range(52) if card not in used]
    if rest_to == "stock":
        placed_stock += rest
    elif rest_to == "waste":
        placed_waste = rest + placed_waste
    else:
        placed_reserve = rest + placed_reserve
    total = len(on_foundations) + len(placed_reserve) + len(placed_waste) + len(placed_stock)
    total += sum(len(c) for c in columns)
    assert total == 52, "a card is placed twice"
    # A fresh game (counters, status, version as dealt) whose piles are then set: the deck is not the
    # real deal order; rule tests do not reveal it.
    fresh = initial_state(deal(get_ruleset(ruleset), tuple(range(52)), {}))
    return fresh._replace(
        base_rank=base_rank,
        reserve=tuple(placed_reserve),
        stock=tuple(reversed(placed_stock)),
        waste=tuple(placed_waste),
        foundations=(counts["S"], counts["H"], counts["D"], counts["C"]),
        tableau=tuple(tuple(column) for column in columns),
        progress=progress,
    )
