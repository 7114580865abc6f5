import pytest

from domain import (
    ALL_RULESETS,
    GameOver,
    IllegalMove,
    Status,
    apply,
    deal,
    decide,
    initial_state,
    parse_card,
    parse_deck,
)
from domain.cards import CODES
from domain.events import CardsMoved, GameWon
from tests.support import cards, move

from .tables import RULESETS, table


@pytest.mark.parametrize("ruleset", RULESETS)
def test_the_dealt_foundation_card_sets_the_base_rank_for_every_suit(ruleset: str) -> None:
    deck = list(CODES)
    deck[13], deck[44] = deck[44], deck[13]  # put 6C (index 44) on the foundation
    state = initial_state(deal(next(r for r in ALL_RULESETS if r.id == ruleset), parse_deck(deck), {}))
    assert state.base_rank == 5
    assert state.foundations == (0, 0, 0, 1)
    assert state.foundation_cards(3) == (parse_card("6C"),)


@pytest.mark.parametrize("ruleset", RULESETS)
def test_an_empty_foundation_takes_only_the_base_rank(ruleset: str) -> None:
    state = table(ruleset, base="Q", foundations={"S": 1}, tableau=[["QH"], ["AH"], ["5D"], ["9C"]], reserve=["KD"])
    apply(state, move("QH", "foundation"))
    with pytest.raises(
        IllegalMove, match="AH cannot start the hearts foundation: foundations start at the base rank, Q"
    ):
        decide(state, move("AH", "foundation"))


@pytest.mark.parametrize("ruleset", RULESETS)
def test_foundations_build_up_in_suit_and_wrap_from_king_to_ace(ruleset: str) -> None:
    state = table(ruleset, base="Q", foundations={"S": 2}, tableau=[["AS"], ["2S"], ["AH"], ["9C"]], reserve=["KD"])
    state, _ = apply(state, move("AS", "foundation"))
    state, _ = apply(state, move("2S", "foundation"))
    assert state.foundation_cards(0) == cards("QS", "KS", "AS", "2S")


@pytest.mark.parametrize("ruleset", RULESETS)
def test_a_foundation_refuses_a_card_out_of_sequence(ruleset: str) -> None:
    state = table(ruleset, base="Q", foundations={"S": 2}, tableau=[["2S"], ["5H"], ["AH"], ["9C"]], reserve=["KD"])
    with pytest.raises(IllegalMove, match="2S cannot go on the spades foundation: it takes AS next"):
        decide(state, move("2S", "foundation"))


@pytest.mark.parametrize("ruleset", RULESETS)
def test_only_a_single_card_goes_to_a_foundation(ruleset: str) -> None:
    if ruleset == "classic":
        tableau = [["3H", "2S"], ["5H"], ["4D"], ["9C"]]  # whole column
    else:
        tableau = [["4C", "3H", "2S"], ["5H"], ["4D"], ["9C"]]
    state = table(ruleset, base="3", foundations={"H": 0, "S": 0, "C": 1}, tableau=tableau, reserve=["KD"])
    with pytest.raises(IllegalMove, match="only a single card can go to a foundation: 3H has 1 card on it"):
        decide(state, move("3H", "foundation"))


@pytest.mark.parametrize("ruleset", RULESETS)
def test_placing_the_last_card_wins_in_the_same_decision(ruleset: str) -> None:
    state = table(ruleset, base="A", foundations={"S": 13, "H": 13, "D": 13, "C": 12}, tableau=[["KC"], [], [], []])
    events = decide(state, move("KC", "foundation"))
    assert [type(e) for e in events] == [CardsMoved, GameWon]
    after, _ = apply(state, move("KC", "foundation"))
    assert after.status is Status.WON
    with pytest.raises(GameOver):
        decide(after, move("KC", "tableau-1"))


def test_classic_lets_a_foundation_top_come_back_to_a_legal_tableau_end() -> None:
    state = table("classic", base="A", foundations={"H": 3}, tableau=[["4S"], ["9D"], ["JH"], ["5C"]], reserve=["KD"])
    after, events = apply(state, move("3H", "tableau-1"))
    assert events == [CardsMoved((parse_card("3H"),), "foundation", "tableau-1")]
    assert after.foundations[1] == 2
    assert after.tableau[0] == (parse_card("4S"), parse_card("3H"))


def test_classic_base_rank_stays_fixed_after_the_base_card_comes_back() -> None:
    state = table("classic", base="7", foundations={"H": 1}, tableau=[["8S"], ["9D"], ["JH"], ["5C"]], reserve=["KD"])
    after, _ = apply(state, move("7H", "tableau-1"))
    assert after.foundations[1] == 0
    assert after.base_rank == 6
    with pytest.raises(IllegalMove, match="foundations start at the base rank, 7"):
        decide(after, move("5C", "foundation"))


def test_classic_returns_only_the_top_foundation_card() -> None:
    state = table("classic", base="A", foundations={"H": 3}, tableau=[["3S"], ["9D"], ["JH"], ["5C"]], reserve=["KD"])
    with pytest.raises(IllegalMove, match="2H is covered on its foundation"):
        decide(state, move("2H", "tableau-1"))


@pytest.mark.parametrize("ruleset", ["draw-one", "open-runs"])
def test_foundation_cards_stay_put_outside_classic(ruleset: str) -> None:
    state = table(ruleset, base="A", foundations={"H": 3}, tableau=[["4S"], ["9D"], ["JH"], ["5C"]], reserve=["KD"])
    with pytest.raises(IllegalMove, match=f"3H is on its foundation, and in {ruleset} foundation cards stay there"):
        decide(state, move("3H", "tableau-1"))
