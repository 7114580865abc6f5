"""The rating-model simulation's own measures (bench/ratings_bench.py), so its table can be trusted."""

from __future__ import annotations

from bench.ratings_bench import kendall_tau, pairwise_accuracy, simulate


def test_pairwise_accuracy_counts_the_pairs_put_in_their_order() -> None:
    assert pairwise_accuracy([3.0, 2.0, 1.0], [1, 2, 3]) == 1.0
    assert pairwise_accuracy([1.0, 2.0, 3.0], [1, 2, 3]) == 0.0
    assert pairwise_accuracy([1.0, 1.0], [1, 2]) == 0.5  # an even guess
    assert pairwise_accuracy([3.0, 1.0, 2.0], [1, 2, 3]) == 2 / 3


def test_kendall_tau_is_one_for_the_same_order_and_minus_one_reversed() -> None:
    assert kendall_tau([1, 2, 3, 4], [10, 20, 30, 40]) == 1.0
    assert kendall_tau([1, 2, 3, 4], [40, 30, 20, 10]) == -1.0


def test_a_simulated_race_places_every_entrant_once_and_favours_skill() -> None:
    skills, races = simulate(players=50, races=2000, noise=1.0, seed=3)
    for race in races:
        assert 2 <= len(race.entrants) <= 8
        assert sorted(race.places) == list(range(1, len(race.entrants) + 1))
    by_skill = sum(pairwise_accuracy([skills[e] for e in r.entrants], r.places) for r in races) / len(races)
    assert 0.65 < by_skill < 0.85  # skill decides more often than not, and luck still counts
