"""The rating model: Weng-Lin Plackett-Luce from the ``openskill`` library, chosen by measurement
(``python -m bench ratings``, docs/ratings.md), on a scale whose new player is 1500 +- 500.

A race is one ranking of its rated entrants (ties share a place), so a race is one update of the
model. openskill's defaults are mu 25, sigma mu/3, beta sigma/2, tau mu/300; the scale here is
those times 60, which changes no prediction, only the figures shown. The displayed ``rating`` and
``deviation`` are mu and sigma rounded; a rating is ``provisional`` while its deviation is above
``PROVISIONAL_DEVIATION``.

Pure arithmetic on floats, in a fixed order: the same races in the same order give the same
numbers to the last bit, which is what lets the rebuild from the log compare equal.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from openskill.models import PlackettLuce

INITIAL_MU = 1500.0
INITIAL_SIGMA = 500.0
PROVISIONAL_DEVIATION = 400
"""A rating whose deviation is above this is provisional (a new player's is 500; four-entrant races
bring it under 400 in about a dozen races)."""

_MODEL = PlackettLuce(mu=INITIAL_MU, sigma=INITIAL_SIGMA, beta=INITIAL_SIGMA / 2, tau=INITIAL_MU / 300)


@dataclass(frozen=True, slots=True)
class Skill:
    """A player's rating as the model holds it."""

    mu: float = INITIAL_MU
    sigma: float = INITIAL_SIGMA

    @property
    def rating(self) -> int:
        return displayed(self.mu)

    @property
    def deviation(self) -> int:
        return displayed(self.sigma)

    @property
    def provisional(self) -> bool:
        return self.deviation > PROVISIONAL_DEVIATION


def displayed(value: float) -> int:
    """A figure as shown: rounded to the nearest whole number (Python's ``round``, as the race view
    rounds a rating too)."""
    return round(value)


def rate(before: Sequence[Skill], places: Sequence[int]) -> list[Skill]:
    """Each entrant's skill after a race they finished in ``places`` (1 is first; equal places tie).
    Needs at least two entrants."""
    if len(before) < 2 or len(before) != len(places):
        raise ValueError("a rated race needs at least two entrants, each with a place")
    teams = [[_MODEL.rating(mu=skill.mu, sigma=skill.sigma)] for skill in before]
    after = _MODEL.rate(teams, ranks=[float(place) for place in places])
    return [Skill(team[0].mu, team[0].sigma) for team in after]
