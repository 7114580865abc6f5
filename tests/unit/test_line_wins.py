"""``line_wins``: a move line replayed from its deal, and where it first fails when it does not win."""

from __future__ import annotations

from domain import Command, MoveCard, Status, get_ruleset, line_wins
from domain.piles import FOUNDATION
from domain.solver import Budget, solve
from service.deals.deal_pools import start_state


def _won_line() -> tuple[Command, ...]:
    outcome = solve(start_state(get_ruleset("open-runs"), 2), Budget(max_states=50_000))
    assert outcome.result == "won"
    return outcome.moves


def test_a_solver_line_wins_and_has_no_problem() -> None:
    line = _won_line()
    check = line_wins(start_state(get_ruleset("open-runs"), 2), line)
    assert check.won
    assert check.problem is None
    assert check.replay.applied == len(line)


def test_a_line_cut_short_reports_how_it_ends() -> None:
    line = _won_line()[:-1]
    check = line_wins(start_state(get_ruleset("open-runs"), 2), line)
    assert not check.won
    assert check.replay.ok
    assert check.replay.applied == len(line)
    assert check.problem == "the line ends playing, not won"


def test_an_illegal_move_reports_the_first_one_and_the_work_before_it() -> None:
    line = _won_line()
    start = start_state(get_ruleset("open-runs"), 2)
    illegal = MoveCard(start.stock[0], FOUNDATION)  # a stock card is never playable
    check = line_wins(start, (*line[:5], illegal, *line[5:]))
    assert not check.won
    assert check.replay.failed_at == 5
    assert check.replay.applied == 5
    assert check.replay.state == line_wins(start, line[:5]).replay.state
    assert check.replay.state.status is Status.PLAYING
    assert check.problem is not None
    assert check.problem.startswith("move 5 refused: ")
