"""Which rating model to rate races with: ``python -m bench ratings``.

A simulation of races between players of known strength. ``RATINGS_PLAYERS`` players (default
300) each have a true skill drawn from N(0, 1); a race takes 2 to 8 of them at random, each
performs at their skill plus N(0, ``RATINGS_NOISE``) (default 1.0: a race is a noisy trial, as a
deal's luck makes it), and the places follow the performances. Every model rates the same races,
in the same order, and before each race predicts its places from its ratings so far; what is
reported is how often it orders a pair of entrants the right way (the pairwise accuracy of its
prediction) in the races around each point, after N races per player on average, next to:

* ``true skill``: the prediction from the true skills, the best any model can do with this noise;
* ``no rating``: an even guess, 0.5.

And how well the final ladder recovers the true order of the whole field (Kendall's tau between
rating and skill), and what rating one race costs (microseconds, this machine).

The models are libraries from PyPI, none of our own: openskill's Weng-Lin models (Plackett-Luce,
Bradley-Terry full pairing, Thurstone-Mosteller full pairing: made for free-for-all places) and
Glicko-2 (``glicko2``, a one-on-one model) applied to every pair of a race as one rating period.
docs/ratings.md has the table and the choice it supports. ``RATINGS_SEED`` (default 7) fixes the
simulation; ``RATINGS_RACES`` (default 40 per player) its length.
"""

from __future__ import annotations

import itertools
import os
import random
import statistics
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from .harness.env import quick

PLAYERS = int(os.environ.get("RATINGS_PLAYERS", quick("300", "60")))
RACES_PER_PLAYER = int(os.environ.get("RATINGS_RACES", quick("40", "10")))
NOISE = float(os.environ.get("RATINGS_NOISE", "1.0"))
SEED = int(os.environ.get("RATINGS_SEED", "7"))
REPEATS = int(os.environ.get("RATINGS_REPEATS", quick("5", "2")))
"""Simulations (seeds SEED, SEED + 1, ...) whose figures are averaged."""
CHECKPOINTS = (1, 2, 5, 10, 20, 40)
"""Races per player (on average) after which the prediction of the next races is reported."""


@dataclass
class Race:
    entrants: list[int]
    places: list[int]  # 1 = first, by entrant


def simulate(players: int, races: int, noise: float, seed: int) -> tuple[list[float], list[Race]]:
    """True skills and a sequence of races with their places."""
    rng = random.Random(seed)
    skills = [rng.gauss(0.0, 1.0) for _ in range(players)]
    out = []
    for _ in range(races):
        entrants = rng.sample(range(players), rng.randint(2, 8))
        performance = {e: skills[e] + rng.gauss(0.0, noise) for e in entrants}
        order = sorted(entrants, key=lambda e: -performance[e])
        place = {e: i + 1 for i, e in enumerate(order)}
        out.append(Race(entrants, [place[e] for e in entrants]))
    return skills, out


def pairwise_accuracy(scores: Sequence[float], places: Sequence[int]) -> float:
    """The share of entrant pairs a prediction (higher score: better place) orders as they finished
    (an even score counts half)."""
    right = total = 0.0
    for (s1, p1), (s2, p2) in itertools.combinations(zip(scores, places, strict=True), 2):
        total += 1
        if s1 == s2:
            right += 0.5
        elif (s1 > s2) == (p1 < p2):
            right += 1
    return right / total


def kendall_tau(xs: Sequence[float], ys: Sequence[float]) -> float:
    concordant = discordant = 0
    for (x1, y1), (x2, y2) in itertools.combinations(zip(xs, ys, strict=True), 2):
        sign = (x1 - x2) * (y1 - y2)
        if sign > 0:
            concordant += 1
        elif sign < 0:
            discordant += 1
    pairs = concordant + discordant
    return (concordant - discordant) / pairs if pairs else 0.0


class Model:
    """A rating model behind one interface: ``score`` (the prediction of one player) and ``rate``."""

    name: str

    def score(self, player: int) -> float:
        raise NotImplementedError

    def rate(self, race: Race) -> None:
        raise NotImplementedError


class OpenSkill(Model):
    def __init__(self, name: str, model: Any, players: int) -> None:
        self.name = name
        self.model = model
        self.ratings = [model.rating() for _ in range(players)]

    def score(self, player: int) -> float:
        return float(self.ratings[player].mu)

    def rate(self, race: Race) -> None:
        teams = [[self.ratings[e]] for e in race.entrants]
        rated = self.model.rate(teams, ranks=race.places)
        for entrant, team in zip(race.entrants, rated, strict=True):
            self.ratings[entrant] = team[0]


class Glicko2Pairs(Model):
    """Glicko-2 with a race as one rating period: each entrant against every other, a win for the
    better place."""

    name = "Glicko-2, every pair of a race (glicko2)"

    def __init__(self, players: int) -> None:
        import glicko2  # type: ignore[import-untyped]

        self.players = [glicko2.Player() for _ in range(players)]

    def score(self, player: int) -> float:
        return float(self.players[player].getRating())

    def rate(self, race: Race) -> None:
        before = {e: (self.players[e].getRating(), self.players[e].getRd()) for e in race.entrants}
        for entrant, place in zip(race.entrants, race.places, strict=True):
            others = [(o, p) for o, p in zip(race.entrants, race.places, strict=True) if o != entrant]
            self.players[entrant].update_player(
                [before[o][0] for o, _ in others], [before[o][1] for o, _ in others],
                [1.0 if place < p else 0.0 if place > p else 0.5 for _, p in others],
            )


class TrueSkill(Model):
    name = "true skill (the best possible)"

    def __init__(self, skills: list[float]) -> None:
        self.skills = skills

    def score(self, player: int) -> float:
        return self.skills[player]

    def rate(self, race: Race) -> None:
        pass


@dataclass
class Result:
    name: str
    accuracy: dict[int, float] = field(default_factory=dict)  # races per player -> next races' accuracy
    tau: float = 0.0
    micros_per_race: float = 0.0


def run(model: Model, skills: list[float], races: list[Race], players: int) -> Result:
    result = Result(model.name)
    window = max(1, players // 2)  # the races after each checkpoint averaged (2.5 a player)
    due = {checkpoint * players // 5: checkpoint for checkpoint in CHECKPOINTS}  # 5 entrants a race on average
    predictions: list[float] = []
    spent = 0.0
    for index, race in enumerate(races):
        predictions.append(pairwise_accuracy([model.score(e) for e in race.entrants], race.places))
        started = time.perf_counter()
        model.rate(race)
        spent += time.perf_counter() - started
        for at, checkpoint in due.items():
            if index + 1 == at + window:
                result.accuracy[checkpoint] = statistics.fmean(predictions[at:at + window])
    result.tau = kendall_tau([model.score(p) for p in range(players)], skills)
    result.micros_per_race = spent / len(races) * 1e6
    return result


def models(skills: list[float], players: int) -> list[Callable[[], Model]]:
    from openskill.models import BradleyTerryFull, PlackettLuce, ThurstoneMostellerFull

    return [
        lambda: TrueSkill(skills),
        lambda: OpenSkill("Weng-Lin Plackett-Luce (openskill)", PlackettLuce(), players),
        lambda: OpenSkill("Weng-Lin Bradley-Terry, full pairing (openskill)", BradleyTerryFull(), players),
        lambda: OpenSkill("Weng-Lin Thurstone-Mosteller, full pairing (openskill)", ThurstoneMostellerFull(), players),
        lambda: Glicko2Pairs(players),
    ]


def main() -> None:
    window = PLAYERS // 2
    count = RACES_PER_PLAYER * PLAYERS // 5 + window + 1  # 5 entrants a race on average
    print(f"{PLAYERS} players, {count} races of 2-8 entrants, performance noise {NOISE} (skill sd 1), "
          f"{REPEATS} simulations (seeds {SEED}..{SEED + REPEATS - 1}), averaged")
    shown = [c for c in CHECKPOINTS if c <= RACES_PER_PLAYER]
    results: dict[str, list[Result]] = {}
    for repeat in range(REPEATS):
        skills, races = simulate(PLAYERS, count, NOISE, SEED + repeat)
        for make in models(skills, PLAYERS):
            result = run(make(), skills, races, PLAYERS)
            results.setdefault(result.name, []).append(result)
    print(f"{'model':58} " + " ".join(f"{c:>6}" for c in shown) + "    tau  us/race")
    print(f"{'no rating (an even guess)':58} " + " ".join(f"{0.5:6.3f}" for _ in shown))
    for name, runs in results.items():
        cells = " ".join(f"{statistics.fmean(r.accuracy[c] for r in runs):6.3f}" for c in shown)
        tau = statistics.fmean(r.tau for r in runs)
        micros = statistics.fmean(r.micros_per_race for r in runs)
        print(f"{name:58} {cells} {tau:6.3f} {micros:8.0f}")
    print("columns: pairwise accuracy of the prediction of the next races after N races per player (on average);")
    print("tau: Kendall's tau of the final ratings against the true skills; us/race: the cost of rating one race")
