"""GameAbandoned: the service ends a game nobody moved for days. It ends like a resignation, replays,
survives a snapshot and re-decides like any other move."""

import pytest

from domain import (
    Abandon,
    Draw,
    GameOver,
    InvalidRequest,
    Resign,
    Status,
    Undo,
    apply,
    deal,
    event_data,
    event_type,
    game_view,
    get_ruleset,
    initial_state,
    legal_moves,
    parse_command,
    replay,
    shuffled_deck,
)
from domain.codec import event_from_data, restore, snapshot_to_state, state_to_snapshot
from domain.events import GameAbandoned
from domain.verify import redecide

from .tables import RULESETS


def dealt(ruleset: str, seed: int = 11):
    first = deal(get_ruleset(ruleset), shuffled_deck(seed), {"source": "seed", "seed": seed})
    return first, initial_state(first)


@pytest.mark.parametrize("ruleset", RULESETS)
def test_an_abandoned_game_ends_resigned_and_says_why(ruleset: str) -> None:
    first, state = dealt(ruleset)
    drawn, draw_events = apply(state, Draw())
    ended, events = apply(drawn, Abandon(30))
    assert events == [GameAbandoned(30)]
    assert ended.status is Status.RESIGNED
    assert ended.abandoned_after == 30
    assert ended.version == drawn.version + 1
    assert ended.move_count == drawn.move_count  # the service's act is not one of the player's moves
    view = game_view(ended)
    assert view["status"] == "resigned"
    assert view["abandoned"] == {"idleDays": 30}
    assert "abandoned" not in game_view(drawn)
    assert replay([first, *draw_events, *events]) == ended


def test_an_ended_game_is_not_abandoned_and_takes_no_move_after() -> None:
    _, state = dealt("classic")
    resigned, _ = apply(state, Resign())
    with pytest.raises(GameOver):
        apply(resigned, Abandon(30))
    abandoned, _ = apply(state, Abandon(30))
    for command in (Draw(), Undo(), Resign(), Abandon(30)):
        with pytest.raises(GameOver):
            apply(abandoned, command)
    assert legal_moves(abandoned) == []


def test_abandoning_needs_at_least_one_idle_day() -> None:
    _, state = dealt("draw-one")
    with pytest.raises(InvalidRequest):
        apply(state, Abandon(0))


def test_a_player_cannot_send_abandon_and_it_is_never_listed() -> None:
    _, state = dealt("open-runs")
    with pytest.raises(InvalidRequest):
        parse_command({"type": "abandon"})
    assert not any(isinstance(move, Abandon) for move in legal_moves(state))


def test_the_event_and_the_snapshot_round_trip() -> None:
    first, state = dealt("classic", 3)
    ended, events = apply(state, Abandon(45))
    stored = [(event_type(e), event_data(e)) for e in [first, *events]]
    assert stored[-1] == ("GameAbandoned", {"idleDays": 45})
    assert [event_from_data(kind, data) for kind, data in stored] == [first, *events]
    assert snapshot_to_state(state_to_snapshot(ended)) == ended
    assert "abandonedAfter" not in state_to_snapshot(state)
    assert restore(state_to_snapshot(state), stored[1:], ended.version) == ended


def test_a_stored_abandoned_log_is_re_decided_by_the_rules() -> None:
    first, state = dealt("classic", 8)
    drawn, draw_events = apply(state, Draw())
    ended, events = apply(drawn, Abandon(30))
    log = [(event_type(e), event_data(e)) for e in [first, *draw_events, *events]]
    assert redecide(log) == ended
