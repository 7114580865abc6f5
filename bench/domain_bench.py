"""Rules-engine speed: events replayed per second and legal-move generations per second."""

from __future__ import annotations

import time
from collections.abc import Callable

from domain import ALL_RULESETS, Event, GameState, Resign, Undo, deal, initial_state, legal_moves, replay, shuffled_deck
from domain.deal import SplitMix64
from domain.rules import apply


def long_game(ruleset_index: int, seed: int, target_events: int = 300) -> tuple[list[Event], list[GameState]]:
    """A deterministic playout that stays in play for ``target_events`` events (undo keeps it alive)."""
    ruleset = ALL_RULESETS[ruleset_index]
    first = deal(ruleset, shuffled_deck(seed), {"source": "seed", "seed": seed})
    state = initial_state(first)
    events: list[Event] = [first]
    states = [state]
    rng = SplitMix64(seed)
    while len(events) < target_events:
        moves = [m for m in legal_moves(state) if not isinstance(m, Resign | Undo)]
        if not moves:
            moves = [Undo()]
        candidate, new_events = apply(state, moves[rng.below(len(moves))])
        if not candidate.playing:  # stay in play: take it back instead
            candidate, new_events = apply(state, Undo()) if state.undo else (state, [])  # within the undo window
            if not new_events:
                break
        state = candidate
        events.extend(new_events)
        states.append(state)
    return events[:target_events], states


def _best_of(repeats: int, work: Callable[[], object]) -> float:
    best = float("inf")
    for _ in range(repeats):
        started = time.perf_counter()
        work()
        best = min(best, time.perf_counter() - started)
    return best


def main() -> None:
    for index, ruleset in enumerate(ALL_RULESETS):
        events, states = long_game(index, seed=7)
        replay_seconds = _best_of(50, lambda events=events: replay(events))
        generation_seconds = _best_of(5, lambda states=states: [legal_moves(s) for s in states])
        print(
            f"{ruleset.key:12} replay of {len(events)} events: {replay_seconds * 1e3:.2f} ms "
            f"({len(events) / replay_seconds:,.0f} events/s); "
            f"legal-move generation: {len(states) / generation_seconds:,.0f} positions/s"
        )
