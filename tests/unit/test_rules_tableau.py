import pytest

from domain import IllegalMove, apply, decide, legal_moves, parse_card
from domain.events import CardsMoved, ReserveRefilled
from tests.support import cards, move

from .tables import RULESETS, table


@pytest.mark.parametrize("ruleset", RULESETS)
def test_a_red_card_goes_on_a_black_card_one_rank_higher(ruleset: str) -> None:
    state = table(ruleset, tableau=[["9S"], ["8H"], ["3D"], ["QC"]], reserve=["KD"])
    after, _ = apply(state, move("8H", "tableau-1"))
    assert after.tableau[0] == cards("9S", "8H")


@pytest.mark.parametrize("ruleset", RULESETS)
def test_ranks_must_be_consecutive(ruleset: str) -> None:
    state = table(ruleset, tableau=[["9S"], ["7H"], ["3D"], ["QC"]], reserve=["KD"])
    with pytest.raises(IllegalMove, match=r"^7H cannot go on 9S: ranks must be consecutive$"):
        decide(state, move("7H", "tableau-1"))


@pytest.mark.parametrize("ruleset", RULESETS)
def test_colours_must_alternate(ruleset: str) -> None:
    state = table(ruleset, tableau=[["9D"], ["8H"], ["3D"], ["QC"]], reserve=["KD"])
    with pytest.raises(IllegalMove, match=r"^8H cannot go on 9D: colours must alternate$"):
        decide(state, move("8H", "tableau-1"))


@pytest.mark.parametrize("ruleset", RULESETS)
def test_a_king_goes_on_an_opposite_colour_ace(ruleset: str) -> None:
    state = table(ruleset, tableau=[["AS"], ["KH"], ["3D"], ["QC"]], reserve=["KD"])
    after, _ = apply(state, move("KH", "tableau-1"))
    assert after.tableau[0] == cards("AS", "KH")
    same_colour = table(ruleset, tableau=[["AS"], ["KC"], ["3D"], ["QH"]], reserve=["KD"])
    with pytest.raises(IllegalMove, match="colours must alternate"):
        decide(same_colour, move("KC", "tableau-1"))


@pytest.mark.parametrize("ruleset", RULESETS)
def test_a_card_cannot_move_onto_its_own_column(ruleset: str) -> None:
    state = table(ruleset, tableau=[["9S", "8H"], ["4C"], ["3D"], ["QC"]], reserve=["KD"])
    with pytest.raises(IllegalMove, match="8H is already in tableau-1"):
        decide(state, move("8H", "tableau-1"))


@pytest.mark.parametrize("ruleset", RULESETS)
def test_reserve_and_waste_tops_play_to_tableau_ends(ruleset: str) -> None:
    state = table(ruleset, tableau=[["9S"], ["4C"], ["3D"], ["QC"]], reserve=["5D", "8H"], waste=["JH", "3H"])
    after, _ = apply(state, move("8H", "tableau-1"))
    assert after.reserve == cards("5D")
    after, _ = apply(after, move("3H", "tableau-2"))
    assert after.waste == cards("JH")
    assert after.tableau[1] == cards("4C", "3H")


@pytest.mark.parametrize("ruleset", RULESETS)
def test_covered_and_hidden_cards_cannot_move_and_the_reason_does_not_say_where_they_are(ruleset: str) -> None:
    state = table(
        ruleset, tableau=[["9S"], ["4C"], ["3D"], ["QC"]], reserve=["5D", "8H"], waste=["8D", "3H"], stock=["8C"]
    )
    for hidden in ("5D", "8D", "8C"):
        with pytest.raises(IllegalMove) as refused:
            decide(state, move(hidden, "tableau-1"))
        assert (
            refused.value.reason
            == f"{hidden} is not an exposed card: only the reserve top, the waste top and tableau cards can move"
        )


def test_classic_moves_the_end_card_alone() -> None:
    state = table("classic", tableau=[["9S", "8H"], ["9C"], ["3D"], ["QC"]], reserve=["KD"])
    after, _ = apply(state, move("8H", "tableau-2"))
    assert after.tableau[0] == cards("9S")
    assert after.tableau[1] == cards("9C", "8H")


def test_classic_moves_a_whole_column_by_its_first_card() -> None:
    state = table("classic", tableau=[["9S", "8H", "7C"], ["TD"], ["3D"], ["QC"]], reserve=["5H", "KD"])
    after, events = apply(state, move("9S", "tableau-2"))
    assert events == [
        CardsMoved(cards("9S", "8H", "7C"), "tableau-1", "tableau-2"),
        ReserveRefilled(parse_card("KD"), 0),
    ]
    assert after.tableau[1] == cards("TD", "9S", "8H", "7C")


def test_classic_refuses_part_of_a_column() -> None:
    state = table("classic", tableau=[["TS", "9H", "8C"], ["TD"], ["3D"], ["QC"]], reserve=["KD"])
    with pytest.raises(
        IllegalMove, match="9H is inside tableau-1: classic moves only the end card or the whole column"
    ):
        decide(state, move("9H", "tableau-2"))
    assert move("9H", "tableau-2") not in legal_moves(state)


@pytest.mark.parametrize("ruleset", ["draw-one", "open-runs"])
def test_a_partial_run_moves_with_every_card_after_it(ruleset: str) -> None:
    state = table(ruleset, tableau=[["TS", "9H", "8C"], ["TC"], ["3D"], ["QC"]], reserve=["KD"])
    after, events = apply(state, move("9H", "tableau-2"))
    assert events == [CardsMoved(cards("9H", "8C"), "tableau-1", "tableau-2")]
    assert after.tableau[0] == cards("TS")
    assert after.tableau[1] == cards("TC", "9H", "8C")


@pytest.mark.parametrize("ruleset", RULESETS)
def test_once_the_reserve_is_empty_an_empty_column_takes_any_card_or_run(ruleset: str) -> None:
    state = table(ruleset, tableau=[["9S", "8H"], [], ["3D"], ["QC"]], reserve=[], waste=["5C"])
    after, _ = apply(state, move("5C", "tableau-2"))
    assert after.tableau[1] == cards("5C")
    after, _ = apply(state, move("9S", "tableau-2"))  # a whole column (or, outside classic, any run)
    assert after.tableau[1] == cards("9S", "8H")
    assert after.tableau[0] == ()
    after, _ = apply(state, move("QC", "tableau-2"))  # no king-only rule
    assert after.tableau[1] == cards("QC")
