"""Deals: a documented, language-neutral shuffle from a seed, and explicit decks.

The shuffle (see docs/deals.md): SplitMix64 seeded with the seed, then an unbiased
Fisher-Yates over the deck in code order AS 2S .. KS AH .. KC, from the last index down.
"""

from __future__ import annotations

from collections.abc import Sequence

from .cards import CODES, DECK_SIZE, Card, parse_card
from .errors import InvalidRequest

MAX_SEED = 2**53 - 1
_MASK64 = (1 << 64) - 1

# Deal order positions (API.md): reserve bottom..top, the foundation card, tableau 1-4, stock in draw order.
RESERVE_SLICE = slice(0, 13)
FOUNDATION_INDEX = 13
TABLEAU_SLICE = slice(14, 18)
STOCK_SLICE = slice(18, 52)


class SplitMix64:
    """Steele, Lea and Flood's SplitMix64: 64-bit state, one add and three mixes per output."""

    __slots__ = ("state",)

    def __init__(self, seed: int) -> None:
        self.state = seed & _MASK64

    def next(self) -> int:
        self.state = (self.state + 0x9E3779B97F4A7C15) & _MASK64
        z = self.state
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & _MASK64
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & _MASK64
        return z ^ (z >> 31)

    def below(self, bound: int) -> int:
        """A uniform integer in [0, bound): draws at or above the largest multiple of bound are redrawn."""
        limit = (1 << 64) - ((1 << 64) % bound)
        while True:
            value = self.next()
            if value < limit:
                return value % bound


def check_seed(seed: object) -> int:
    if isinstance(seed, bool) or not isinstance(seed, int):
        raise InvalidRequest("a seed must be an integer from 0 to 2^53 - 1")
    if not 0 <= seed <= MAX_SEED:
        raise InvalidRequest(f"seed {seed} is out of range: seeds run from 0 to 2^53 - 1 ({MAX_SEED})")
    return seed


def shuffled_deck(seed: int) -> tuple[Card, ...]:
    """The 52 cards in deal order for a seed."""
    check_seed(seed)
    deck = list(range(DECK_SIZE))
    rng = SplitMix64(seed)
    for i in range(DECK_SIZE - 1, 0, -1):
        j = rng.below(i + 1)
        deck[i], deck[j] = deck[j], deck[i]
    return tuple(deck)


def parse_deck(codes: object) -> tuple[Card, ...]:
    """An explicit deck in deal order; anything but 52 distinct valid codes is rejected with the reason."""
    if not isinstance(codes, Sequence) or isinstance(codes, str | bytes):
        raise InvalidRequest("a deck must be a list of 52 card codes in deal order")
    if len(codes) != DECK_SIZE:
        raise InvalidRequest(f"a deck must list exactly 52 cards, not {len(codes)}")
    cards: list[Card] = []
    seen: dict[Card, int] = {}
    for position, text in enumerate(codes):
        try:
            card = parse_card(text)
        except InvalidRequest as error:
            raise InvalidRequest(f"deck[{position}]: {error.reason}") from None
        if card in seen:
            raise InvalidRequest(
                f"deck[{position}]: {CODES[card]} is already at deck[{seen[card]}]; every card must appear once"
            )
        seen[card] = position
        cards.append(card)
    return tuple(cards)
