"""A job's budget and the verdict cache, without a database: ``domain.analysis.position_key`` (equal
tables, equal keys, across games), ``Analysis.give_up``, and ``service.analysis.jobs.run`` with a
counting solver and an in-memory cache (the cache is asked first, a cached won line must replay,
and once the budget is spent the rest is unknown)."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from domain import Draw, Event, Resign, apply, deal, get_ruleset, initial_state, shuffled_deck
from domain.analysis import FROM_BUDGET, LOST, UNKNOWN, WON, Analysis, Answer, position_key, positions
from service.analysis.jobs import JSON, SolverTime, report, run


def _events(seed: int, moves: list[Any], ruleset: str = "open-runs") -> list[Event]:
    dealt = deal(get_ruleset(ruleset), shuffled_deck(seed), {"source": "seed", "seed": seed})
    state = initial_state(dealt)
    events: list[Event] = [dealt]
    for move in moves:
        state, new = apply(state, move)
        events += new
    return events


def test_equal_tables_have_equal_keys_across_games_and_other_tables_other_keys() -> None:
    one = positions(_events(7, [Draw(), Draw(), Resign()]))
    two = positions(_events(7, [Draw(), Draw(), Draw(), Resign()]))
    assert [position_key(p.state) for p in one[:3]] == [position_key(p.state) for p in two[:3]]
    keys = {position_key(p.state) for p in two}
    assert len(keys) == len(two)  # every table of the game differs
    assert position_key(one[0].state) != position_key(positions(_events(8, [Resign()]))[0].state)
    assert position_key(one[0].state) != position_key(positions(_events(7, [Resign()], "classic"))[0].state)


def test_giving_up_leaves_every_unsettled_position_unknown_and_only_unknown() -> None:
    analysis = Analysis(positions(_events(7, [Draw()] * 3 + [Resign()])))
    given = analysis.give_up()
    assert sorted(given) == [0, 1, 2, 3]
    assert [v.result for v in analysis.verdicts if v is not None] == [UNKNOWN] * 4 + [LOST]
    assert (analysis.given_up, analysis.solved) == (4, 0)
    with pytest.raises(ValueError, match="unknown"):
        Analysis(analysis.positions).record(0, Answer(WON), FROM_BUDGET)


class Cache:
    def __init__(self) -> None:
        self.kept: dict[str, tuple[str, str | None, float]] = {}
        self.dropped: list[str] = []

    async def find(self, key: str, seconds: float) -> tuple[str, str | None] | None:
        found = self.kept.get(key)
        if found is None or (found[0] == UNKNOWN and found[2] < seconds):
            return None
        return found[0], found[1]

    async def keep(self, key: str, result: str, line: str | None, seconds: float) -> None:
        self.kept[key] = (result, line, seconds)

    async def drop(self, key: str) -> None:
        self.dropped.append(key)
        del self.kept[key]


def _run(analysis: Analysis, answer: tuple[str, str | None], cache: Cache | None, budget: float,
         calls: list[float], sleep: float = 0.0) -> list[JSON]:
    kept: list[JSON] = []

    async def solve_one(snapshot: dict[str, Any], seconds: float) -> tuple[str, str | None]:
        calls.append(seconds)
        await asyncio.sleep(sleep)
        return answer

    async def keep(answers: list[JSON], done: int) -> bool:
        kept.extend(answers)
        return True

    assert asyncio.run(run(analysis, solve_one, SolverTime(0.5, budget), keep, cache))
    return kept


def test_a_table_in_the_cache_is_not_searched_and_the_budget_bounds_the_searches() -> None:
    events = _events(7, [Draw()] * 3 + [Resign()])
    cache, calls = Cache(), []
    first = _run(Analysis(positions(events)), (UNKNOWN, None), cache, 60.0, calls)
    assert len(calls) == 4
    assert all(seconds == 0.5 for seconds in calls)
    assert {a["source"] for a in first} == {"solver"}
    again = _run(Analysis(positions(events)), (UNKNOWN, None), cache, 60.0, calls)
    assert len(calls) == 4  # no search: every table's unknown was kept with as much time
    assert {a["source"] for a in again} == {"cache"}

    calls.clear()
    spent = Analysis(positions(events))
    answers = _run(spent, (UNKNOWN, None), None, 0.001, calls, sleep=0.01)  # one search outlasts the budget
    assert len(calls) == 1
    assert calls[0] == 0.001
    assert [a["source"] for a in answers] == ["solver", "budget", "budget", "budget"]
    assert report(spent)["budgetSpent"] is True
    assert report(spent)["positions"][-1]["verdict"] == LOST


def test_a_cached_won_line_that_does_not_win_is_dropped_and_searched_again() -> None:
    events = _events(4, [Resign()])  # seed 4: lost from the deal
    analysis = Analysis(positions(events))
    key = position_key(analysis.positions[0].state)
    cache, calls = Cache(), []
    cache.kept[key] = (WON, "D D D", 0.0)
    answers = _run(analysis, (LOST, None), cache, 60.0, calls)
    assert cache.dropped == [key]
    assert len(calls) == 1
    assert [a["source"] for a in answers] == ["solver"]
    assert cache.kept[key][0] == LOST
