import pytest

from domain import (
    ALL_RULESETS,
    Draw,
    GameState,
    Recycle,
    Resign,
    apply,
    deal,
    game_view,
    hints,
    initial_state,
    public_event_data,
    shuffled_deck,
)
from domain.events import StockDrawn
from tests.support import cards, move

from .tables import table


def test_the_view_has_the_api_table_the_whole_waste_and_no_hidden_card() -> None:
    state = table("open-runs", base="Q", foundations={"S": 2}, tableau=[["9C", "8H"], ["4D"], ["JS"], ["5C"]],
                  reserve=["3H", "QD"], waste=["7H", "2C"], stock=["6S"])
    view = game_view(state)
    assert view["baseRank"] == "Q"
    assert view["status"] == "playing"
    assert view["table"] == {
        "stock": {"count": len(state.stock)},
        "waste": ["7H", "2C"],
        "reserve": {"count": 2, "top": "QD"},
        "foundations": {"S": ["QS", "KS"], "H": [], "D": [], "C": []},
        "tableau": [["9C", "8H"], ["4D"], ["JS"], ["5C"]],
    }


def resigned() -> GameState:
    """A resigned game with known cards in its reserve, waste and stock."""
    state = table("open-runs", tableau=[["9C"], ["4D"], ["JS"], ["5C"]], reserve=["3H", "QD"], waste=["7H", "2C"],
                  stock=["6S", "8S"])
    ended, _ = apply(state, Resign())
    return ended


def test_a_finished_game_shows_every_card() -> None:
    ended = resigned()
    view = game_view(ended)["table"]
    assert view["waste"][-2:] == ["7H", "2C"]
    assert view["stock"]["cards"][:2] == ["6S", "8S"]
    assert view["reserve"]["cards"] == ["3H", "QD"]


def test_a_finished_game_can_withhold_its_hidden_cards() -> None:
    ended = resigned()
    view = game_view(ended, withhold=True)["table"]
    assert view["stock"] == {"count": len(ended.stock)}
    assert view["reserve"] == {"count": 2, "top": "QD"}
    assert view["waste"] == ["7H", "2C"]


def test_the_deal_event_withholds_the_deck_until_the_game_ends() -> None:
    event = deal(ALL_RULESETS[2], shuffled_deck(3), {"source": "seed", "seed": 3})
    public = public_event_data(event, reveal=False)
    assert "deck" not in public
    assert public["deal"] == {"source": "seed", "seed": 3}
    assert public["reserveCount"] == 13
    assert public["stockCount"] == 34
    assert len(public["tableau"]) == 4
    assert len(public_event_data(event, reveal=True)["deck"]) == 52


def test_a_draw_event_names_every_card_it_turned_up_in_the_order_they_landed() -> None:
    event = StockDrawn(cards("2H", "7C", "5S"))
    assert public_event_data(event, reveal=False) == {"count": 3, "wasteTop": "5S", "cards": ["2H", "7C", "5S"]}
    assert public_event_data(event, reveal=True) == public_event_data(event, reveal=False)


def test_hints_put_foundation_moves_first_and_give_reasons() -> None:
    state = table(
        "open-runs",
        base="4",
        foundations={"H": 1},
        tableau=[["9S"], ["TD"], ["3D"], ["QC"]],
        reserve=["KD", "5H"],
        stock=["2C"],
    )
    ranked = hints(state)
    assert ranked[0].move == move("5H", "foundation")
    assert "reserve" in ranked[0].reason
    assert all(h.reason for h in ranked)
    assert Draw() in [h.move for h in ranked]


def test_hints_warn_that_a_draw_one_recycle_would_stall() -> None:
    state = table(
        "draw-one", tableau=[["9S"], ["TD"], ["3D"], ["QC"]], reserve=["KD"], stock=[], waste=["2C"], rest_to="reserve"
    )
    ranked = hints(state)
    assert ranked[-1].move == Recycle()
    assert "stalled" in ranked[-1].reason


@pytest.mark.parametrize("ruleset", ALL_RULESETS, ids=lambda r: r.id)
def test_hints_list_every_legal_move_but_undo_and_resign(ruleset) -> None:
    from domain import Undo, legal_moves

    state = initial_state(deal(ruleset, shuffled_deck(11), {}))
    state, _ = apply(state, Draw())
    expected = [m for m in legal_moves(state) if not isinstance(m, Undo | Resign)]
    assert sorted(map(repr, (h.move for h in hints(state)))) == sorted(map(repr, expected))
