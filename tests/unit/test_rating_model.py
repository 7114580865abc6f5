"""The rating model (service/ratings/model.py): openskill's Plackett-Luce on the 1500 scale."""

from __future__ import annotations

import uuid

import pytest

from service.ratings.model import INITIAL_MU, INITIAL_SIGMA, PROVISIONAL_DEVIATION, Skill, rate
from service.ratings.rating_store import changes_of


def test_a_race_moves_ratings_by_place_and_narrows_every_deviation() -> None:
    after = rate([Skill()] * 4, [1, 2, 3, 4])
    assert [s.mu for s in after] == sorted((s.mu for s in after), reverse=True)
    assert after[0].mu > INITIAL_MU > after[3].mu
    assert all(s.sigma < INITIAL_SIGMA for s in after)
    assert sum(s.mu for s in after) == pytest.approx(4 * INITIAL_MU, abs=1e-6), "nothing made or lost among equals"


def test_a_tie_between_equals_changes_no_rating_and_upsets_move_more() -> None:
    tied = rate([Skill(), Skill()], [1, 1])
    assert tied[0].mu == tied[1].mu == pytest.approx(INITIAL_MU)
    strong, weak = Skill(1800, 150), Skill(1200, 150)
    expected = rate([strong, weak], [1, 2])
    upset = rate([strong, weak], [2, 1])
    assert upset[1].mu - weak.mu > expected[0].mu - strong.mu > 0


def test_the_same_race_gives_the_same_floats() -> None:
    field = [Skill(1500 + 37.5 * n, 500 - 11 * n) for n in range(6)]
    assert rate(field, [3, 1, 2, 2, 6, 5]) == rate(field, [3, 1, 2, 2, 6, 5])


def test_a_new_player_is_provisional_and_shown_rounded() -> None:
    assert (Skill().rating, Skill().deviation, Skill().provisional) == (1500, 500, True)
    settled = Skill(1623.5001, PROVISIONAL_DEVIATION - 0.6)
    assert (settled.rating, settled.deviation, settled.provisional) == (1624, 399, False)


def test_fewer_than_two_rated_entrants_change_nothing() -> None:
    assert changes_of([], {}) == []
    assert changes_of([(uuid.uuid4(), 1)], {}) == []
    with pytest.raises(ValueError, match="at least two"):
        rate([Skill()], [1])
