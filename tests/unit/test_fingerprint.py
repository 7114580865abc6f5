"""A deal's fingerprint: every relabelled copy of a deal shares it, a near copy does not, and a
copy's winning line maps back move by move (so the relabellings really do preserve play)."""

from __future__ import annotations

import random

import pytest

from domain import Command, MoveCard, deal, get_ruleset, initial_state, line_wins, shuffled_deck
from domain.cards import make_card, rank_of, suit_of
from domain.deal import STOCK_SLICE, TABLEAU_SLICE
from domain.fingerprint import (
    COLUMN_ORDERS,
    RELABELLINGS,
    SUIT_RELABELLINGS,
    canonical_deck,
    every_copy,
    fingerprint,
    relabel_card,
    relabelled,
)
from domain.piles import COLUMN_OF, TABLEAU
from domain.solver import Budget, solve

DECK = shuffled_deck(2)


def test_the_group_is_13_rotations_8_colour_keeping_suit_maps_and_24_column_orders() -> None:
    assert len(SUIT_RELABELLINGS) == 8
    assert (0, 1, 2, 3) in SUIT_RELABELLINGS  # identity
    assert (3, 1, 2, 0) in SUIT_RELABELLINGS  # spades <-> clubs
    assert (0, 2, 1, 3) in SUIT_RELABELLINGS  # hearts <-> diamonds
    assert (1, 0, 3, 2) in SUIT_RELABELLINGS  # the black pair for the red pair
    assert (1, 0, 2, 3) not in SUIT_RELABELLINGS  # spades <-> hearts alone mixes the colours
    assert len(COLUMN_ORDERS) == 24
    assert RELABELLINGS == 2_496


def test_every_copy_of_a_deal_has_its_fingerprint_and_there_are_2496_of_them() -> None:
    copies = list(every_copy(DECK))
    assert len(copies) == RELABELLINGS
    assert len(set(copies)) == RELABELLINGS  # the orbit: no relabelling leaves a deal as it was
    assert {canonical_deck(copy) for copy in copies} == {canonical_deck(DECK)}
    assert {fingerprint(copy) for copy in copies} == {fingerprint(DECK)}


@pytest.mark.parametrize("seed", [7, 123_456_789, 2**53 - 1])
def test_copies_of_other_deals_share_their_fingerprint(seed: int) -> None:
    deck = shuffled_deck(seed)
    chosen = random.Random(seed)
    for _ in range(50):
        copy = relabelled(deck, chosen.randrange(13), chosen.choice(SUIT_RELABELLINGS), chosen.choice(COLUMN_ORDERS))
        assert fingerprint(copy) == fingerprint(deck)


def _swapped(deck: tuple[int, ...], i: int, j: int) -> tuple[int, ...]:
    cards = list(deck)
    cards[i], cards[j] = cards[j], cards[i]
    return tuple(cards)


def test_a_near_copy_has_a_fingerprint_of_its_own() -> None:
    first_stock = STOCK_SLICE.start
    near = [
        _swapped(DECK, first_stock, first_stock + 1),  # two stock cards swapped
        _swapped(DECK, 0, 12),  # the reserve's bottom and top card swapped
        _swapped(DECK, TABLEAU_SLICE.start, first_stock),  # a tableau card and a stock card swapped
        tuple(make_card(rank_of(c), (1, 0, 2, 3)[suit_of(c)]) for c in DECK),  # spades <-> hearts: colours mix
        tuple(make_card(12 - rank_of(c), suit_of(c)) for c in DECK),  # ranks mirrored, not rotated
    ]
    assert len({fingerprint(deck) for deck in near} | {fingerprint(DECK)}) == len(near) + 1


def test_shuffled_deals_have_fingerprints_of_their_own() -> None:
    assert len({fingerprint(shuffled_deck(seed)) for seed in range(300)}) == 300


def test_a_deck_of_another_size_is_refused() -> None:
    with pytest.raises(ValueError, match="52 cards"):
        fingerprint(DECK[:51])


def _mapped(
    line: tuple[Command, ...], rotation: int, suits: tuple[int, ...], columns: tuple[int, ...]
) -> list[Command]:
    """A line of the deal, as the same moves on the copy: each card relabelled, each column renamed."""
    moved: list[Command] = []
    for move in line:
        if isinstance(move, MoveCard):
            to = TABLEAU[columns[COLUMN_OF[move.to]]] if move.to in COLUMN_OF else move.to
            moved.append(MoveCard(relabel_card(move.card, rotation, suits), to))
        else:
            moved.append(move)
    return moved


@pytest.mark.parametrize(("ruleset_id", "seed"), [("open-runs", 2), ("classic", 2), ("draw-one", 5)])
def test_a_winning_line_maps_onto_every_kind_of_copy(ruleset_id: str, seed: int) -> None:
    ruleset = get_ruleset(ruleset_id)
    deck = shuffled_deck(seed)
    outcome = solve(initial_state(deal(ruleset, deck, {})), Budget(max_states=200_000))
    if outcome.result != "won":
        pytest.skip(f"{ruleset_id} seed {seed} is not won within the budget")
    chosen = random.Random(seed)
    for _ in range(6):
        rotation = chosen.randrange(1, 13)
        suits = chosen.choice(SUIT_RELABELLINGS[1:])
        columns = chosen.choice(COLUMN_ORDERS[1:])
        copy = relabelled(deck, rotation, suits, columns)
        check = line_wins(initial_state(deal(ruleset, copy, {})), _mapped(outcome.moves, rotation, suits, columns))
        assert check.won, (rotation, suits, columns, check.problem)
