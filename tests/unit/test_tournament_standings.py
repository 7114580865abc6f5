"""A tournament's order (service/tournaments/standings.py): deals won, then seconds, then moves."""

from __future__ import annotations

from service.tournaments.standings import GameResult, Tally, places


def tally(won: int, seconds: float, moves: int) -> Tally:
    return Tally(3, won, seconds, moves, False)


def test_more_deals_won_beats_faster_wins() -> None:
    assert places([tally(1, 10, 50), tally(2, 500, 900)]) == [2, 1]


def test_equal_wins_go_to_fewer_seconds_then_fewer_moves() -> None:
    assert places([tally(2, 90, 300), tally(2, 60, 400), tally(2, 90, 250)]) == [3, 1, 2]


def test_equals_share_a_place_and_the_unplaced_rank_nowhere() -> None:
    assert places([tally(1, 5, 10), None, tally(1, 5, 10), tally(0, 0, 3)]) == [1, None, 1, 3]


def test_a_tally_counts_seconds_of_won_games_only_and_moves_of_all() -> None:
    games = [GameResult(1, False, True, 12.5, 100), GameResult(2, False, False, 0.0, 40),
             GameResult(3, True, False, 0.0, 7)]
    assert Tally.of(games) == Tally(3, 1, 12.5, 147, True)
    assert Tally.from_json(Tally.of(games, True).to_json()) == Tally(3, 1, 12.5, 147, True, True)
