"""Build exact table positions for rule tests, with all 52 cards accounted for."""

from __future__ import annotations

from domain import GameState, Status, get_ruleset, parse_card
from domain.cards import RANKS, SUITS


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
    counts = {suit: 0 for suit in SUITS}
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
    deck = tuple(range(52))  # not the real deal order; rule tests do not reveal it
    return GameState(
        ruleset=get_ruleset(ruleset),
        deck=deck,
        base_rank=base_rank,
        reserve=tuple(placed_reserve),
        stock=tuple(reversed(placed_stock)),
        waste=tuple(placed_waste),
        foundations=(counts["S"], counts["H"], counts["D"], counts["C"]),
        tableau=tuple(tuple(column) for column in columns),
        status=Status.PLAYING,
        progress=progress,
        move_count=0,
        undo_count=0,
        assisted=False,
        version=1,
        undo="",
    )
