"""domain.analysis: positions of a game, verdicts reused along it, the turning point; with a fake solver
that knows one winning line of a deal and calls every position off it lost (or unknown)."""

from __future__ import annotations

import functools
from collections.abc import Sequence

import pytest

from domain import (
    Abandon,
    Command,
    Draw,
    Event,
    GameState,
    MoveCard,
    Resign,
    Undo,
    UseSolverHint,
    apply,
    deal,
    get_ruleset,
    initial_state,
    legal_moves,
    line_wins,
    shuffled_deck,
)
from domain.analysis import (
    END,
    FOLLOWS,
    LOST,
    PREFIX,
    REPEAT,
    SOLVER,
    UNKNOWN,
    WON,
    Analysis,
    Answer,
    Contradiction,
    positions,
    table_key,
)
from domain.solver import Budget, solve

SEED = 3  # open-runs seed 3: won, its line found in a few hundred positions


def _deal(seed: int = SEED, ruleset: str = "open-runs") -> tuple[GameState, Event]:
    first = deal(get_ruleset(ruleset), shuffled_deck(seed), {"source": "seed", "seed": seed})
    return initial_state(first), first


@functools.cache
def _line(seed: int = SEED) -> tuple[Command, ...]:
    result = solve(_deal(seed)[0], Budget(max_states=100_000))
    assert result.result == WON
    return result.moves


def _events(commands: Sequence[Command], seed: int = SEED) -> list[Event]:
    state, first = _deal(seed)
    events = [first]
    for command in commands:
        state, made = apply(state, command, events)
        events += made
    return events


class FakeSolver:
    """Won with the rest of the line for the tables along ``line``; ``otherwise`` for any other."""

    def __init__(self, line: Sequence[Command], otherwise: str = LOST) -> None:
        self.otherwise = otherwise
        self.rest: dict[tuple[object, ...], tuple[Command, ...]] = {}
        state = _deal()[0]
        for index in range(len(line) + 1 if line else 0):
            self.rest[table_key(state)] = tuple(line[index:])
            if index < len(line):
                state, _ = apply(state, line[index])
        self.asked: list[int] = []

    def __call__(self, state: GameState) -> Answer:
        rest = self.rest.get(table_key(state))
        return Answer(WON, rest) if rest is not None else Answer(self.otherwise)


def _run(events: list[Event], solver: FakeSolver) -> Analysis:
    analysis = Analysis(positions(events))
    while (index := analysis.next_position()) is not None:
        solver.asked.append(index)
        analysis.record(index, solver(analysis.positions[index].state))
    assert analysis.done
    return analysis


def _every_won_line_wins(analysis: Analysis) -> None:
    lengths = analysis.moves_to_win()
    for index, verdict in enumerate(analysis.verdicts):
        assert verdict is not None
        if verdict.result == WON:
            line = analysis.line(index)
            check = line_wins(analysis.positions[index].state, line)
            assert check.won, (index, check.problem)
            assert lengths[index] == len(line)
        else:
            assert lengths[index] is None


def _deviation(state: GameState, on_line: Command) -> Command:
    return next(m for m in legal_moves(state) if m != on_line and not isinstance(m, (Undo, Resign)))


def test_positions_are_the_deal_and_one_after_each_move_named_by_version() -> None:
    line = _line()
    events = _events([line[0], line[1], UseSolverHint(), Undo(), line[1], Resign()])
    found = positions(events)
    assert found[0].version == 0
    assert len(found) == 6  # the deal, two moves, the undo, the move again, the resignation (no hint)
    assert [p.version for p in found[1:]] == sorted(p.version for p in found[1:])
    assert found[-1].version == len(events)
    assert [p.forward for p in found] == [False, True, True, False, True, True]
    assert isinstance(found[3].move, Undo)
    assert table_key(found[3].state) == table_key(found[1].state)  # the undo is the table before again
    assert table_key(found[4].state) == table_key(found[2].state)


def test_a_won_game_is_won_everywhere_without_asking_the_solver() -> None:
    line = _line()
    solver = FakeSolver(line)
    analysis = _run(_events(line), solver)
    assert solver.asked == []
    assert all(v is not None and v.result == WON for v in analysis.verdicts)
    assert analysis.verdicts[-1] is not None
    assert analysis.verdicts[-1].how == END
    assert analysis.line(0) == line
    assert analysis.moves_to_win()[:3] == [len(line), len(line) - 1, len(line) - 2]
    assert analysis.turning_point() is None
    _every_won_line_wins(analysis)


def test_a_resignation_while_still_winnable_is_the_turning_point_after_one_solve() -> None:
    line = _line()
    events = _events([*line[:20], Resign()])
    solver = FakeSolver(line)
    analysis = _run(events, solver)
    assert solver.asked == [20]  # the last position before resigning: won, so every one before it is
    point = analysis.turning_point()
    assert point is not None
    assert (point.before, point.after) == (analysis.positions[20].version, len(events))
    assert isinstance(point.move, Resign)
    assert point.line == line[20:]
    _every_won_line_wins(analysis)


def test_an_abandonment_is_a_position_of_its_own_and_the_turning_point_of_a_game_still_winnable() -> None:
    line = _line()
    events = _events([*line[:20], Abandon(31)])
    found = positions(events)
    assert len(found) == 22  # the deal, twenty moves, the abandonment
    assert found[20].state.playing  # the player's last table: the game was still on there
    assert isinstance(found[21].move, Abandon)
    assert found[21].version == len(events)
    solver = FakeSolver(line)
    analysis = _run(events, solver)
    assert solver.asked == [20]  # the last table the player left: won, so every one before it is
    last, end = analysis.verdicts[20], analysis.verdicts[21]
    assert last is not None
    assert (last.result, last.how) == (WON, SOLVER)
    assert end is not None
    assert (end.result, end.how) == (LOST, END)
    point = analysis.turning_point()
    assert point is not None
    assert (point.before, point.after) == (found[20].version, len(events))
    assert point.move == Abandon(31)
    assert point.line == line[20:]
    _every_won_line_wins(analysis)


def test_the_last_table_before_an_abandonment_is_not_lost_unless_proven() -> None:
    line = _line()
    events = _events([*line[:6], Abandon(31)])  # the deal, six moves, the abandonment
    analysis = _run(events, FakeSolver((), otherwise=UNKNOWN))
    assert [v.result if v else None for v in analysis.verdicts] == [UNKNOWN] * 7 + [LOST]
    assert analysis.turning_point() is None


def test_the_move_that_threw_the_win_away_is_found_by_bisection() -> None:
    line = _line()
    state = _deal()[0]
    for command in line[:40]:
        state, _ = apply(state, command)
    wrong = _deviation(state, line[40])
    after, _ = apply(state, wrong)
    events = _events([*line[:40], wrong, _deviation(after, Resign()), Resign()])
    solver = FakeSolver(line)
    analysis = _run(events, solver)
    point = analysis.turning_point()
    assert point is not None
    assert point.before == analysis.positions[40].version
    assert point.after == analysis.positions[41].version
    assert point.move == wrong
    assert point.line == line[40:]
    assert 3 <= len(solver.asked) <= 3 + 6  # the last two, the deal, then a binary search over 40 positions
    assert {SOLVER, PREFIX, END} <= {v.how for v in analysis.verdicts if v is not None}
    _every_won_line_wins(analysis)


def test_a_deal_lost_from_the_start_is_lost_everywhere_with_no_turning_point() -> None:
    line = _line()
    events = _events([*line[:10], Undo(), Undo(), Resign()])
    analysis = _run(events, FakeSolver((), otherwise=LOST))
    assert all(v is not None and v.result == LOST for v in analysis.verdicts)
    assert analysis.turning_point() is None
    assert analysis.solved == 2  # the last position before resigning, then the deal
    assert any(v is not None and v.how == FOLLOWS for v in analysis.verdicts)
    assert any(v is not None and v.how == REPEAT for v in analysis.verdicts)  # the undos repeat tables


def test_an_undone_mistake_repeats_a_won_table_and_only_the_mistake_is_solved() -> None:
    line = _line()
    state = _deal()[0]
    for command in line[:30]:
        state, _ = apply(state, command)
    wrong = _deviation(state, line[30])
    events = _events([*line[:30], wrong, Undo(), *line[30:]])
    solver = FakeSolver(line)
    analysis = _run(events, solver)
    assert solver.asked == [31]  # the table after the mistake; everything else follows from the win
    assert analysis.verdicts[31] is not None
    assert analysis.verdicts[31].result == LOST
    assert analysis.verdicts[30] is not None
    assert analysis.verdicts[30].how == REPEAT
    assert analysis.turning_point() is None  # the game was won
    _every_won_line_wins(analysis)


def test_unknown_positions_stay_unknown_and_give_no_turning_point() -> None:
    line = _line()
    events = _events([*line[:6], Resign()])  # the deal, six moves, the resignation
    analysis = _run(events, FakeSolver((), otherwise=UNKNOWN))
    assert [v.result if v else None for v in analysis.verdicts] == [UNKNOWN] * 7 + [LOST]
    assert analysis.solved == 7
    assert analysis.turning_point() is None


def test_an_unknown_position_is_settled_by_a_won_one_after_it() -> None:
    line = _line()
    analysis = Analysis(positions(_events([*line[:5], Resign()])))
    analysis.record(2, Answer(UNKNOWN))
    analysis.record(5, Answer(WON, line[5:]))
    assert [v.result if v else None for v in analysis.verdicts] == [WON] * 6 + [LOST]
    assert analysis.verdicts[2] is not None
    assert analysis.verdicts[2].how == PREFIX


def test_a_line_that_does_not_win_is_refused() -> None:
    line = _line()
    analysis = Analysis(positions(_events([*line[:5], Resign()])))
    with pytest.raises(Contradiction, match="does not win"):
        analysis.record(4, Answer(WON, line[5:]))


def test_a_won_position_after_a_proven_lost_one_is_a_contradiction() -> None:
    line = _line()
    analysis = Analysis(positions(_events([*line[:5], Resign()])))
    analysis.record(1, Answer(LOST))
    with pytest.raises(Contradiction):
        analysis.record(4, Answer(WON, line[4:]))


def test_a_move_that_is_not_one_of_the_line_can_still_be_won_by_prefix() -> None:
    line = _line()
    first = next(m for m in legal_moves(_deal()[0]) if isinstance(m, MoveCard)) if line[0] == Draw() else Draw()
    analysis = Analysis(positions(_events([first, Resign()])))
    rest = solve(analysis.positions[1].state, Budget(max_states=100_000))
    if rest.result != WON:
        pytest.fail("the position after the first move should be won for this deal")
    analysis.record(1, Answer(WON, rest.moves))
    assert analysis.line(0) == (first, *rest.moves)
    assert line_wins(analysis.positions[0].state, analysis.line(0)).won
