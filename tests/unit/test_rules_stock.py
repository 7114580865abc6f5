import pytest

from domain import Draw, GameOver, IllegalMove, MoveCard, Recycle, Status, apply, decide, legal_moves
from domain.events import GameStalled, StockDrawn, WasteRecycled
from tests.support import cards, move

from .tables import play, table

COLUMNS = [["9S"], ["TD"], ["3D"], ["QC"]]  # the tableau most positions here start from (8H fits on 9S)


def test_draw_three_turns_three_cards_and_the_third_is_on_top() -> None:
    state = table("open-runs", tableau=COLUMNS, reserve=["KD"], stock=["2H", "7C", "5S", "JD"], rest_to="waste")
    after, events = apply(state, Draw())
    assert events == [StockDrawn(cards("2H", "7C", "5S"))]
    assert after.waste[-3:] == cards("2H", "7C", "5S")
    assert after.stock == cards("JD")


@pytest.mark.parametrize("ruleset", ["classic", "open-runs"])
def test_draw_three_turns_fewer_at_the_end_of_the_stock(ruleset: str) -> None:
    state = table(ruleset, tableau=COLUMNS, reserve=["KD"], stock=["2H", "7C"], rest_to="waste")
    after, events = apply(state, Draw())
    assert events == [StockDrawn(cards("2H", "7C"))]
    assert after.stock == ()


def test_draw_one_turns_one_card() -> None:
    state = table("draw-one", tableau=COLUMNS, reserve=["KD"], stock=["2H", "7C"], rest_to="waste")
    after, events = apply(state, Draw())
    assert events == [StockDrawn(cards("2H"))]
    assert after.stock == cards("7C")


def test_only_the_waste_top_plays() -> None:
    state = table("open-runs", tableau=COLUMNS, reserve=["KD"], waste=["8H", "2C"])
    assert move("8H", "tableau-1") not in legal_moves(state)
    with pytest.raises(IllegalMove, match="8H is not an exposed card"):
        decide(state, move("8H", "tableau-1"))


@pytest.mark.parametrize("ruleset", ["classic", "draw-one", "open-runs"])
def test_recycle_needs_an_empty_stock(ruleset: str) -> None:
    state = table(ruleset, tableau=COLUMNS, reserve=["KD"], waste=["8H"], stock=["2C", "3C"], rest_to="reserve")
    with pytest.raises(IllegalMove, match="the stock still has 2 cards: recycle only when it is empty"):
        decide(state, Recycle())


@pytest.mark.parametrize("ruleset", ["classic", "draw-one", "open-runs"])
def test_recycle_needs_a_waste(ruleset: str) -> None:
    state = table(ruleset, tableau=COLUMNS, reserve=[], rest_to="reserve")
    with pytest.raises(IllegalMove, match="the waste is empty"):
        decide(state, Recycle())
    with pytest.raises(IllegalMove, match="the stock and the waste are both empty"):
        decide(state, Draw())


@pytest.mark.parametrize("ruleset", ["classic", "open-runs"])
def test_recycling_keeps_the_order_so_the_next_pass_draws_the_same_cards(ruleset: str) -> None:
    start = table(ruleset, tableau=COLUMNS, reserve=["KD"], stock=["2H", "7C", "5S", "JD", "4C"], rest_to="reserve")
    state = start
    first_pass = []
    while state.stock:
        state, events = apply(state, Draw())
        first_pass.append(events)
    with pytest.raises(IllegalMove):
        decide(state, Draw())
    state, events = apply(state, Recycle())
    assert events == [WasteRecycled(5)]
    second_pass = []
    while state.stock:
        state, events = apply(state, Draw())
        second_pass.append(events)
    assert second_pass == first_pass


@pytest.mark.parametrize("ruleset", ["classic", "open-runs"])
def test_recycling_is_unlimited_in_draw_three(ruleset: str) -> None:
    state = table(ruleset, tableau=COLUMNS, reserve=["KD"], stock=["2H", "7C"], rest_to="reserve")
    for _ in range(5):
        state, _ = apply(state, Draw())
        state, events = apply(state, Recycle())
        assert events == [WasteRecycled(2)]
    assert state.status is Status.PLAYING


def test_draw_one_recycles_after_a_pass_with_a_move() -> None:
    state = table("draw-one", tableau=COLUMNS, reserve=["KD"], stock=["8H", "7C"], rest_to="reserve")
    state, _ = play(state, [Draw(), move("8H", "tableau-1"), Draw()])
    state, events = apply(state, Recycle())
    assert events == [WasteRecycled(1)]
    assert state.status is Status.PLAYING


def test_draw_one_stalls_when_a_pass_made_no_move() -> None:
    state = table("draw-one", tableau=COLUMNS, reserve=["KD"], stock=["2H", "7C"], rest_to="reserve")
    state, _ = play(state, [Draw(), Draw()])
    assert Recycle() in legal_moves(state)  # legal, but it ends the game
    state, events = apply(state, Recycle())
    assert events == [GameStalled()]
    assert state.status is Status.STALLED
    with pytest.raises(GameOver):
        decide(state, Draw())


def test_draw_one_progress_resets_at_each_recycle() -> None:
    state = table("draw-one", tableau=COLUMNS, reserve=["KD"], stock=["8H", "7C"], rest_to="reserve")
    state, _ = play(state, [Draw(), move("8H", "tableau-1"), Draw(), Recycle(), Draw()])
    state, events = apply(state, Recycle())
    assert events == [GameStalled()]


@pytest.mark.parametrize("ruleset", ["classic", "open-runs"])
def test_draw_three_never_stalls(ruleset: str) -> None:
    state = table(ruleset, tableau=COLUMNS, reserve=["KD"], stock=["2H"], rest_to="reserve")
    state, _ = apply(state, Draw())
    state, events = apply(state, Recycle())
    assert events == [WasteRecycled(1)]


def test_draw_one_does_not_count_a_column_moved_into_an_empty_column_as_progress() -> None:
    state = table("draw-one", tableau=[["9S", "8H"], [], ["3D"], ["QC"]], reserve=[], stock=["2H"], rest_to="waste")
    state, _ = play(state, [Draw(), move("9S", "tableau-2")])  # the table looks the same
    assert state.progress is False
    state, events = apply(state, Recycle())
    assert events == [GameStalled()]
    assert state.move_count == 3  # the stalling recycle is a move too


def test_a_hand_built_command_that_is_not_a_move_is_refused_cleanly() -> None:
    from domain import InvalidRequest

    state = table("open-runs", tableau=COLUMNS, reserve=["KD"])
    for command in (MoveCard(99, "foundation"), move("KD", "stock")):
        with pytest.raises(InvalidRequest):
            decide(state, command)
