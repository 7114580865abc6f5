"""The sound stage's C search (``domain/_sound.c``) against its Python reference (``Search.run``):
the same result (won with the same macro line, lost, out of budget) after the same positions."""

from __future__ import annotations

import random
import shutil
import sysconfig
from collections.abc import Callable
from dataclasses import replace
from functools import partial

import pytest

from domain import Draw, GameState, MoveCard, Recycle, Status, apply, get_ruleset, legal_moves, solver
from domain.solver import SOUND, Budget, Macro, OutOfBudget, Search, native_available, solve, stages, start_position
from domain.solver import native as native_search
from domain.solver.macros import TWIN_FIRST
from domain.solver.shorten import shortest
from service.deals.deal_pools import start_state

from .brute import small_position
from .test_solver_soundness import _big_tableau_position

RULESETS = ("open-runs", "classic", "draw-one")
needs_native = pytest.mark.skipif(
    not native_available(), reason="domain._sound (the solver's optional C extension) is not built here"
)


def _compiler() -> str | None:
    """A C compiler this Python would build extensions with, if the machine has one."""
    configured = (sysconfig.get_config_var("CC") or "").split()
    for name in [*configured[:1], "cc"]:
        found = shutil.which(name)
        if found:
            return found
    return None


def test_the_extension_is_built_wherever_a_c_compiler_is() -> None:
    """CI must not lose the C search silently: with a compiler the optional build has to succeed."""
    compiler = _compiler()
    if compiler is None and not native_available():
        pytest.skip("no C compiler here and domain._sound not built: the solver uses its Python search (slower)")
    if compiler is not None:
        assert native_available(), (
            f"a C compiler ({compiler}) is here but domain._sound does not import: "
            "`pip install --no-build-isolation -e .` (make) should have built it; see its output"
        )


def _outcome(
    state: GameState,
    native: bool,
    cap: int | None,
    check_every: int = 512,
    out_of_time: Callable[[], bool] | None = None,
) -> tuple[str, list[Macro] | None, int]:
    """(won / lost / unknown, the macro line if won, positions) of one sound-stage search."""
    budget = Budget(check_every=check_every)
    if out_of_time is not None:
        budget = Budget(check_every=check_every, out_of_time=out_of_time)
    search = Search(state, budget, cap, SOUND)
    try:
        line = search.run_native(start_position(state)) if native else search.run(start_position(state))
    except OutOfBudget:
        return "unknown", None, search.states
    return ("won" if line is not None else "lost"), line, search.states


def _same(state: GameState, cap: int | None, check_every: int = 512) -> str:
    python = _outcome(state, False, cap, check_every)
    native = _outcome(state, True, cap, check_every)
    assert native == python
    return python[0]


def _played(ruleset_id: str, rng: random.Random) -> GameState:
    """A position partway through a real deal, by random play (card moves favoured)."""
    while True:
        state = start_state(get_ruleset(ruleset_id), rng.randrange(1, 10**6))
        for _ in range(rng.randrange(5, 300)):
            moves = [m for m in legal_moves(state) if isinstance(m, Draw | Recycle | MoveCard)]
            cards = [m for m in moves if isinstance(m, MoveCard)]
            state, _ = apply(state, rng.choice(cards) if cards and rng.random() < 0.7 else rng.choice(moves))
            if state.status is not Status.PLAYING:
                break
        if state.status is Status.PLAYING:
            return state


@needs_native
@pytest.mark.parametrize("ruleset_id", RULESETS)
def test_dealt_games_stop_out_of_budget_at_the_same_position(ruleset_id: str) -> None:
    """Seeds 1..40 with a small position limit (both stop at the same count), some checked at every
    7th position (a limit that is not a multiple of it)."""
    for seed in range(1, 41):
        state = start_state(get_ruleset(ruleset_id), seed)
        _same(state, 1_500 if seed % 2 else 1_234, check_every=512 if seed % 2 else 7)


@needs_native
@pytest.mark.parametrize("ruleset_id", RULESETS)
def test_positions_partway_through_games_agree(ruleset_id: str) -> None:
    rng = random.Random(f"native-played-{ruleset_id}")
    results = {_same(_played(ruleset_id, rng), 3_000) for _ in range(40)}
    assert "unknown" in results


@needs_native
@pytest.mark.parametrize("ruleset_id", RULESETS)
def test_small_positions_searched_to_the_end_agree(ruleset_id: str) -> None:
    """Small positions are decided: won (the same line, twin moves and all) and lost."""
    rng = random.Random(f"native-small-{ruleset_id}")
    results = [_same(small_position(rng, ruleset_id, rng.randrange(6, 18)), None) for _ in range(120)]
    assert "won" in results
    assert "lost" in results


@needs_native
@pytest.mark.parametrize("ruleset_id", ["open-runs", "draw-one"])
def test_positions_twin_merged_past_26_tableau_cards_agree(ruleset_id: str) -> None:
    """27-32 cards off the foundations, most in four runs: twin merging with few ranks and colours,
    wins whose lines make twin moves."""
    rng = random.Random(f"native-big-{ruleset_id}")
    twin_lines = 0
    for _ in range(40):
        state = _big_tableau_position(rng, ruleset_id)
        python = _outcome(state, False, 50_000)
        assert _outcome(state, True, 50_000) == python
        line = python[1]
        twin_lines += line is not None and any(move[3] >= TWIN_FIRST for move in line)
    assert twin_lines


@needs_native
def test_dealt_games_searched_to_the_end_agree() -> None:
    """Deals the sound stage decides within a few thousand positions (lost, with twin merging in
    open-runs, foundation returns in classic), and draw-one deals in full or stopped."""
    for ruleset_id, seed in [("open-runs", s) for s in (4, 58, 96, 100, 102, 105)] + [
        ("classic", s) for s in (4, 96, 102, 105)
    ]:
        assert _same(start_state(get_ruleset(ruleset_id), seed), 200_000) == "lost"
    for seed in (2, 3, 5, 8):
        _same(start_state(get_ruleset("draw-one"), seed), 20_000)


@needs_native
def test_the_clock_is_asked_at_the_same_positions() -> None:
    """``out_of_time`` every ``check_every`` positions: the same number of questions, the same stop."""
    state = start_state(get_ruleset("open-runs"), 6)
    for late_at in (1, 3, 10):
        counts = []
        for native in (False, True):
            asked = [0]

            def out_of_time(asked: list[int] = asked, late_at: int = late_at) -> bool:
                asked[0] += 1
                return asked[0] >= late_at

            counts.append((_outcome(state, native, None, check_every=100, out_of_time=out_of_time), asked[0]))
        assert counts[0] == counts[1]
        assert counts[0][0][0] == "unknown"
        assert counts[0][0][2] == 100 * late_at


@needs_native
def test_an_error_of_the_clock_comes_through() -> None:
    def broken() -> bool:
        raise RuntimeError("clock broken")

    search = Search(start_state(get_ruleset("open-runs"), 6), Budget(check_every=50, out_of_time=broken), None, SOUND)
    with pytest.raises(RuntimeError, match="clock broken"):
        search.run_native(start_position(start_state(get_ruleset("open-runs"), 6)))


@needs_native
@pytest.mark.parametrize("ruleset_id", RULESETS)
def test_solve_answers_alike_with_either_search(ruleset_id: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """``solve`` with only the sound stage (the others get no positions), C and Python."""
    sound_only = Budget(
        max_states=4_000,
        narrow_states=0,
        narrow_best_states=0,
        best_states=0,
        narrow_reach_states=0,
        sound_best_states=0,
        wide_states=0,
    )
    for seed in (2, 3, 4, 6, 10, 58):
        state = start_state(get_ruleset(ruleset_id), seed)
        monkeypatch.setattr(native_search, "NATIVE_SEARCH", True)
        native = solve(state, sound_only)
        monkeypatch.setattr(native_search, "NATIVE_SEARCH", False)
        assert solve(state, sound_only) == native


def ticking(checks: int) -> Callable[[], bool]:
    """A clock that runs out after ``checks`` questions (one every ``check_every`` positions): a
    time budget whose end does not depend on the machine."""
    asked = 0

    def out_of_time() -> bool:
        nonlocal asked
        asked += 1
        return asked > checks

    return out_of_time


@needs_native
def test_the_capped_sound_stage_first_decides_what_it_can_and_hands_on_the_rest() -> None:
    """``Budget.sound_first_states``: open-runs seed 39 is proven lost within it (about 370,000
    positions, before the best-first stages' 610,000); with a limit it does not decide within,
    the later stages decide as without it."""
    state = start_state(get_ruleset("open-runs"), 39)
    outcome = solve(state, Budget())
    assert outcome.result == "lost"
    assert outcome.states < 600_000
    for ruleset_id, seed in (("open-runs", 4), ("draw-one", 4), ("open-runs", 2)):
        state = start_state(get_ruleset(ruleset_id), seed)
        capped = solve(state, Budget(out_of_time=ticking(800), sound_first_states=50, draw_one_sound_first_states=50))
        without = Budget(out_of_time=ticking(800), sound_first_states=0, draw_one_sound_first_states=0)
        assert capped.result == solve(state, without).result


def test_with_a_position_limit_the_stages_are_version_5s(monkeypatch: pytest.MonkeyPatch) -> None:
    """A position-limited verdict (a daily deal's proof) is the same with the C search or without:
    no capped sound stage first there; otherwise it comes right after narrow (in classic too, as a
    fallback: ``test_in_classic_the_capped_sound_stage_win_is_a_fallback``); in draw-one it has no
    limit of its own, so it is the sound stage itself, and nothing comes after it."""
    monkeypatch.setattr(native_search, "NATIVE_SEARCH", True)
    timed = Budget(out_of_time=ticking(10))
    for ruleset_id in RULESETS:
        state = start_state(get_ruleset(ruleset_id), 39)
        names = [name for name, _ in stages.stage_plan(state, timed)]
        if ruleset_id == "draw-one":
            assert stages.stage_plan(state, timed) == [(solver.NARROW, timed.narrow_states), (SOUND, None)]
            capped = stages.stage_plan(state, replace(timed, draw_one_sound_first_states=1_000))
            assert capped[:2] == [(solver.NARROW, timed.narrow_states), (solver.SOUND_FIRST, 1_000)]
            assert capped[-1] == (SOUND, None)
            assert len(capped) > 3  # the best-first stages between
        else:
            assert names[:2] == [solver.NARROW, solver.SOUND_FIRST]
            cap = timed.classic_sound_first_states if ruleset_id == "classic" else timed.sound_first_states
            assert stages.stage_plan(state, timed)[1] == (solver.SOUND_FIRST, cap)
        assert solver.SOUND_FIRST not in [name for name, _ in stages.stage_plan(state, Budget(max_states=600_000))]
        assert len(stages.stage_plan(state, Budget(max_states=600_000))) > 3
    monkeypatch.setattr(native_search, "NATIVE_SEARCH", False)
    state = start_state(get_ruleset("open-runs"), 39)
    assert solver.SOUND_FIRST not in [name for name, _ in stages.stage_plan(state, timed)]


@needs_native
def test_in_classic_the_capped_sound_stage_win_is_a_fallback() -> None:
    """Classic's sound-stage wins wander through foundation returns, so the win of the capped sound
    stage is kept while the win-finding stages look for a shorter line: seed 2, which both win,
    gets best-first's line (242 moves), as without the capped stage; seed 64, which only the sound
    stage wins (in about 50,000 positions), is won even when the clock runs out in the stages after
    it, and is not decided by the same clock without it."""
    no_narrow = {"narrow_states": 0}
    state = start_state(get_ruleset("classic"), 2)
    with_fallback = solve(state, Budget(**no_narrow))
    without = solve(state, Budget(classic_sound_first_states=0, **no_narrow))
    assert with_fallback.moves == without.moves
    assert with_fallback.result == "won"
    assert with_fallback.states > without.states  # the capped sound stage ran (and won) first
    search = Search(state, Budget(), None, SOUND)
    assert search.run_native(start_position(state)) is not None
    assert len(with_fallback.moves) < 300

    state = start_state(get_ruleset("classic"), 64)
    won = solve(state, Budget(out_of_time=ticking(130), **no_narrow))
    assert won.result == "won"  # a checked line: ``solve`` replays it through the rules
    final = state
    for move in won.moves:
        final, _events = apply(final, move)
    assert final.status is Status.WON
    assert solve(state, Budget(out_of_time=ticking(130), classic_sound_first_states=0, **no_narrow)).result == "unknown"


def test_a_long_line_is_shortened_while_there_is_time() -> None:
    """``shortest`` with a clock: out of time it keeps the rest of the line as it is (still a win)."""
    state = start_state(get_ruleset("classic"), 64)
    search = Search(state, Budget(), 60_000, SOUND)
    line = search.run(start_position(state))
    assert line is not None
    at_once = shortest(search, start_position(state), line, lambda: True)
    assert at_once == line
    some = shortest(search, start_position(state), line, ticking(3))
    assert len(some) < len(line)
    assert stages.checked_line(state, some)
    assert len(shortest(search, start_position(state), line)) <= len(some)


@needs_native
def test_a_position_limited_verdict_is_the_same_with_the_c_search_or_without(monkeypatch: pytest.MonkeyPatch) -> None:
    state = start_state(get_ruleset("open-runs"), 2)
    native = solve(state, Budget(max_states=60_000))
    monkeypatch.setattr(native_search, "NATIVE_SEARCH", False)
    assert solve(state, Budget(max_states=60_000)) == native


def test_without_the_c_search_the_stages_are_the_python_ones(monkeypatch: pytest.MonkeyPatch) -> None:
    """The capped sound stage first runs only with the C search: the Python order is unchanged."""
    monkeypatch.setattr(native_search, "NATIVE_SEARCH", False)
    state = start_state(get_ruleset("open-runs"), 2)
    assert solve(state, Budget(out_of_time=ticking(200))) == solve(
        state, Budget(out_of_time=ticking(200), sound_first_states=0)
    )


def _resumed(state: GameState, step: int, check_every: int) -> tuple[str, list[Macro] | None, int, int]:
    """One C search stopped every ``step`` positions and resumed until it answers: (won / lost, the
    line, positions, how many times it stopped)."""
    search = Search(state, Budget(check_every=check_every), step, SOUND)
    stops = 0
    go_on = partial(search.run_native, start_position(state))
    while True:
        try:
            line = go_on()
        except OutOfBudget:
            stops += 1
            assert search.resumable
            search.max_states = (search.max_states or 0) + step
            go_on = search.resume_native
            continue
        assert not search.resumable
        return ("won" if line is not None else "lost"), line, search.states, stops


@needs_native
@pytest.mark.parametrize("ruleset_id", RULESETS)
def test_a_search_stopped_and_resumed_answers_as_one_search(ruleset_id: str) -> None:
    """Stopped every few hundred positions (or every one, at the very start too) and resumed, the C
    search makes the uninterrupted one's moves: the same answer, line and count, nothing twice."""
    rng = random.Random(f"native-resume-{ruleset_id}")
    answers = set()
    for index in range(30):
        state = small_position(rng, ruleset_id, rng.randrange(8, 18))
        whole = _outcome(state, True, None, check_every=7 if index % 2 else 1)
        step = 1 if index % 5 == 0 else rng.randrange(20, 400)
        result, line, states, stops = _resumed(state, step, 7 if index % 2 else 1)
        assert (result, line, states) == whole
        assert stops >= (states - 1) // max(step, 7) // 2
        answers.add(result)
    assert answers == {"won", "lost"}


@needs_native
def test_a_dealt_game_stopped_by_the_clock_and_resumed_answers_as_one_search() -> None:
    """Open-runs seed 39 (proven lost after about 370,000 positions): stopped by its clock three
    times, then resumed with a clock that never runs out."""
    state = start_state(get_ruleset("open-runs"), 39)
    whole = _outcome(state, True, None)
    clocks = [ticking(100), ticking(150), ticking(200)]
    search = Search(state, Budget(out_of_time=clocks[0]), None, SOUND)
    with pytest.raises(OutOfBudget):
        search.run_native(start_position(state))
    assert search.states == 101 * 512
    for clock in [*clocks[1:], None]:
        search = _with_clock(search, clock)
        if clock is None:
            line = search.resume_native()
            break
        with pytest.raises(OutOfBudget):
            search.resume_native()
    assert ("lost" if line is None else "won", line, search.states) == whole
    assert whole[0] == "lost"
    with pytest.raises(RuntimeError, match="no C search"):
        search.resume_native()


def _with_clock(search: Search, clock: Callable[[], bool] | None) -> Search:
    """The search with a new clock (``Budget`` is frozen: the search takes a new one)."""
    search.budget = Budget(out_of_time=clock) if clock is not None else Budget()
    return search


@needs_native
def test_an_ended_c_search_cannot_go_on() -> None:
    state = start_state(get_ruleset("open-runs"), 4)
    handle = native_search.module.start(  # type: ignore[union-attr]
        tuple(state.reserve), state.base_rank, 3, True, True, False, True, False, True, start_position(state), 0
    )
    status, _states, _line = native_search.module.resume(handle, -1, 512, lambda: False)  # type: ignore[union-attr]
    assert status == 0
    with pytest.raises(RuntimeError, match="has ended"):
        native_search.module.resume(handle, -1, 512, lambda: False)  # type: ignore[union-attr]


@needs_native
@pytest.mark.parametrize(("ruleset_id", "seed"), [("open-runs", 39), ("open-runs", 7000281), ("draw-one", 1)])
def test_the_sound_stage_goes_on_from_the_capped_one(ruleset_id: str, seed: int) -> None:
    """With the win-finding stages given nothing, a capped sound stage first and the sound stage
    after it count what one sound stage counts: the second goes on where the first stopped."""
    state = start_state(get_ruleset(ruleset_id), seed)
    nothing_else = {
        "narrow_states": 0,
        "narrow_best_states": 0,
        "best_states": 0,
        "narrow_reach_states": 0,
        "sound_best_states": 0,
    }
    whole = solve(state, Budget(sound_first_states=0, draw_one_sound_first_states=0, **nothing_else))
    for cap in (1_000, 3_999):
        assert solve(state, Budget(sound_first_states=cap, draw_one_sound_first_states=cap, **nothing_else)) == whole
    # draw-one's default: no limit of its own, the sound stage at once (the same search again)
    assert solve(state, Budget(**nothing_else)) == whole
    assert whole.states > 3_999
