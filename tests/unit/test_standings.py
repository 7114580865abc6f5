"""Race places as a pure function (service/races/standings.py): wins by time, then cards, then moves; ties
share a place; an unranked entrant takes none."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from service.races.standings import Standing, places

T0 = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)


def won(seconds: float) -> Standing:
    return Standing("won", 52, 150, T0 + timedelta(seconds=seconds), False, True)


def other(cards: int, moves: int, status: str = "resigned") -> Standing:
    return Standing(status, cards, moves, None if status == "playing" else T0, False, True)


def test_wins_come_first_by_finishing_time() -> None:
    assert places([won(90), won(30), other(51, 10)]) == [2, 1, 3]


def test_then_more_cards_on_foundations_then_fewer_moves() -> None:
    assert places([other(5, 40), other(9, 80), other(5, 30), other(9, 80, "playing")]) == [4, 1, 3, 1]


def test_ties_share_a_place_and_the_next_place_skips() -> None:
    assert places([other(3, 20), other(3, 20), other(2, 5), won(10)]) == [2, 2, 4, 1]


def test_an_unranked_entrant_takes_no_place_and_moves_nobody() -> None:
    assert places([None, other(3, 20), won(5)]) == [None, 2, 1]


def test_a_standing_survives_its_json_form() -> None:
    for standing in (won(12.5), other(7, 33, "playing"), Standing("stalled", 4, 9, T0, True, False)):
        assert Standing.from_json(standing.to_json()) == standing
