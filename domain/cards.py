"""Cards as small ints (hot paths) and as two-letter codes like ``TD`` (the boundary).

A card is ``suit * 13 + rank`` with ranks ``A 2 .. T J Q K`` as 0..12 and suits
``S H D C`` as 0..3. Spades and clubs are black, hearts and diamonds red.
"""

from __future__ import annotations

from .errors import InvalidRequest

RANKS = "A23456789TJQK"
SUITS = "SHDC"
SUIT_NAMES = ("spades", "hearts", "diamonds", "clubs")
DECK_SIZE = 52
RANK_COUNT = 13

Card = int

CODES: tuple[str, ...] = tuple(rank + suit for suit in SUITS for rank in RANKS)
_BY_CODE: dict[str, Card] = {code: card for card, code in enumerate(CODES)}


def rank_of(card: Card) -> int:
    return card % RANK_COUNT


def rank_after(rank: int, steps: int = 1) -> int:
    """The rank ``steps`` above ``rank`` (below, if negative), wrapping K -> A."""
    return (rank + steps) % RANK_COUNT


def suit_of(card: Card) -> int:
    return card // RANK_COUNT


def is_red(card: Card) -> bool:
    return 13 <= card < 39


def code(card: Card) -> str:
    return CODES[card]


def codes(cards: tuple[Card, ...] | list[Card]) -> list[str]:
    return [CODES[card] for card in cards]


def make_card(rank: int, suit: int) -> Card:
    return suit * RANK_COUNT + rank


def is_card_code(text: object) -> bool:
    return isinstance(text, str) and text in _BY_CODE


def parse_card(text: object) -> Card:
    """The card for a code like ``TD``; anything else is an ``InvalidRequest`` saying why."""
    if isinstance(text, str):
        card = _BY_CODE.get(text)
        if card is not None:
            return card
        shown = text if len(text) <= 12 else text[:12] + "..."
        raise InvalidRequest(
            f"{shown!r} is not a card code: write the rank (A 2-9 T J Q K) then the suit "
            "(S H D C), for example 'TD' for the ten of diamonds"
        )
    raise InvalidRequest(f"a card code must be a string like 'TD', not {type(text).__name__}")


def rank_name(rank: int) -> str:
    return RANKS[rank]
