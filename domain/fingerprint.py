"""A deal's fingerprint: one value for every copy of a deal that plays the same.

Three relabellings change a deck but not its play (docs/rules.md), so a winning line of one copy
maps card by card and column by column onto a winning line of any other:

- **a rank rotation** (13): every rank rule is relative, "one rank up in suit" on a foundation
  and "one rank down" on the tableau, both wrapping K -> A, and the base rank is whatever the
  deal's foundation card is; adding ``k`` to every rank (mod 13) keeps every move legal or not;
- **a suit relabelling that keeps colours apart** (8): a foundation holds one suit, any suit,
  and the tableau asks only that colours alternate, never which colour or suit. So the two black
  suits may swap, the two red suits may swap, and the black pair may trade places with the red
  pair as a whole: the 8 permutations of ``S H D C`` that map same-coloured suits to
  same-coloured suits. (Any other permutation puts a red and a black suit in one colour, which
  changes which cards may go on which);
- **a reordering of the four tableau columns** (24): no rule names a column, a reserve refill
  goes to whichever column was emptied.

That is 13 x 8 x 24 = 2,496 relabellings, and every deal has exactly 2,496 distinct copies: a
relabelling that is not a mere column reordering moves at least 26 of the 48 cards outside the
tableau (a rotation moves every card; a suit swap every card of two suits), so it changes the
deck, and a column reordering changes the order of four distinct cards.

The fingerprint is the SHA-256 of the smallest encoding over the 104 card relabellings (rank
rotation and suit relabelling) of the deal in order, reserve, foundation card, tableau and stock,
with the four tableau cards sorted (which stands for every column order at once). It ignores the
ruleset: a deck is the same deal, for the solver, under any of them.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterator, Sequence
from itertools import permutations

from .cards import DECK_SIZE, RANK_COUNT, Card, make_card, rank_of, suit_of
from .deal import FOUNDATION_INDEX, RESERVE_SLICE, STOCK_SLICE, TABLEAU_SLICE

_BLACK = frozenset({0, 3})  # spades, clubs (cards.SUITS is "SHDC")

SUIT_RELABELLINGS: tuple[tuple[int, int, int, int], ...] = tuple(
    (a, b, c, d)
    for a, b, c, d in permutations(range(4))
    if len({(suit in _BLACK) == (image in _BLACK) for suit, image in enumerate((a, b, c, d))}) == 1
)
"""The permutations of the suits (old suit -> new suit) that keep colours apart: 8."""

COLUMN_ORDERS: tuple[tuple[int, ...], ...] = tuple(permutations(range(4)))
"""The orders of the four tableau columns: 24."""

RELABELLINGS = RANK_COUNT * len(SUIT_RELABELLINGS) * len(COLUMN_ORDERS)
"""How many copies a deal has, itself included (2,496)."""

_CARD_MAPS: tuple[tuple[Card, ...], ...] = tuple(
    tuple(make_card((rank_of(card) + rotation) % RANK_COUNT, suits[suit_of(card)]) for card in range(DECK_SIZE))
    for rotation in range(RANK_COUNT)
    for suits in SUIT_RELABELLINGS
)
_VERSION = b"canfield-deal-fingerprint:1:"


def relabel_card(card: Card, rotation: int, suits: Sequence[int]) -> Card:
    """``card`` with its rank moved up ``rotation`` (wrapping) and its suit renamed by ``suits``."""
    return make_card((rank_of(card) + rotation) % RANK_COUNT, suits[suit_of(card)])


def relabelled(
    deck: Sequence[Card], rotation: int, suits: Sequence[int], columns: Sequence[int] = (0, 1, 2, 3)
) -> tuple[Card, ...]:
    """The copy of ``deck`` (deal order) with every card relabelled and the tableau column ``i``
    dealt to column ``columns[i]``."""
    cards = [relabel_card(card, rotation, suits) for card in deck]
    tableau = cards[TABLEAU_SLICE]
    placed = [0] * len(tableau)
    for column, card in zip(columns, tableau, strict=True):
        placed[column] = card
    cards[TABLEAU_SLICE] = placed
    return tuple(cards)


def every_copy(deck: Sequence[Card]) -> Iterator[tuple[Card, ...]]:
    """Every relabelled copy of ``deck``, itself included (``RELABELLINGS`` of them)."""
    for rotation in range(RANK_COUNT):
        for suits in SUIT_RELABELLINGS:
            for columns in COLUMN_ORDERS:
                yield relabelled(deck, rotation, suits, columns)


def canonical_deck(deck: Sequence[Card]) -> tuple[Card, ...]:
    """The smallest copy of ``deck`` with its tableau cards sorted: the same for every copy."""
    if len(deck) != DECK_SIZE:
        raise ValueError(f"a deck has {DECK_SIZE} cards, not {len(deck)}")
    best: tuple[Card, ...] | None = None
    for card_map in _CARD_MAPS:
        mapped = [card_map[card] for card in deck]
        candidate = (
            *mapped[RESERVE_SLICE], mapped[FOUNDATION_INDEX], *sorted(mapped[TABLEAU_SLICE]), *mapped[STOCK_SLICE]
        )
        if best is None or candidate < best:
            best = candidate
    assert best is not None
    return best


def fingerprint(deck: Sequence[Card]) -> str:
    """The deal's fingerprint (64 hex digits): equal for two decks exactly when one is a
    relabelled copy of the other."""
    return hashlib.sha256(_VERSION + bytes(canonical_deck(deck))).hexdigest()
