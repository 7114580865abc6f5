import pytest

from domain import apply, legal_moves, parse_card
from domain.events import CardsMoved, ReserveRefilled
from tests.support import cards, move

from .tables import RULESETS, table


@pytest.mark.parametrize("ruleset", RULESETS)
def test_emptying_a_column_refills_it_from_the_reserve_in_the_same_move(ruleset: str) -> None:
    state = table(ruleset, tableau=[["9S"], ["TD"], ["3D"], ["QC"]], reserve=["4H", "KD"])
    after, events = apply(state, move("9S", "tableau-2"))
    assert events == [CardsMoved(cards("9S"), "tableau-1", "tableau-2"), ReserveRefilled(parse_card("KD"), 0)]
    assert after.tableau[0] == cards("KD")
    assert after.reserve == cards("4H")  # the next reserve card is now the face-up top


@pytest.mark.parametrize("ruleset", RULESETS)
def test_a_refilled_card_moved_away_again_is_refilled_again(ruleset: str) -> None:
    state = table(ruleset, tableau=[["9S"], ["TD"], ["3D"], ["AC"]], reserve=["4H", "KD"])
    after, _ = apply(state, move("9S", "tableau-2"))
    after, events = apply(after, move("KD", "tableau-4"))
    assert events == [CardsMoved(cards("KD"), "tableau-1", "tableau-4"), ReserveRefilled(parse_card("4H"), 0)]
    assert after.tableau[0] == cards("4H")
    assert after.reserve == ()


@pytest.mark.parametrize("ruleset", RULESETS)
def test_while_the_reserve_has_cards_no_column_is_ever_empty(ruleset: str) -> None:
    state = table(ruleset, base="9", foundations={"S": 1}, tableau=[["TS"], ["JD"], ["3D"], ["QC"]], reserve=["KD"])
    after, _ = apply(state, move("TS", "foundation"))
    assert all(after.tableau)


@pytest.mark.parametrize("ruleset", RULESETS)
def test_emptying_a_column_with_an_empty_reserve_leaves_it_empty(ruleset: str) -> None:
    state = table(ruleset, tableau=[["9S"], ["TD"], ["3D"], ["QC"]], reserve=[], waste=["KD"])
    after, events = apply(state, move("9S", "tableau-2"))
    assert events == [CardsMoved(cards("9S"), "tableau-1", "tableau-2")]
    assert after.tableau[0] == ()


@pytest.mark.parametrize("ruleset", RULESETS)
def test_the_reserve_top_plays_to_its_foundation(ruleset: str) -> None:
    state = table(
        ruleset, base="4", foundations={"H": 1}, tableau=[["9S"], ["TD"], ["3D"], ["QC"]], reserve=["KD", "5H"]
    )
    assert move("5H", "foundation") in legal_moves(state)
    after, _ = apply(state, move("5H", "foundation"))
    assert after.reserve == cards("KD")
    assert after.foundations[1] == 2
