"""Every queue a request waits on has a bound: past it, 503 with Retry-After and the queue's own code,
and nothing is made. Race creations waiting for a secret deal (503 race_deals_busy, and 429
race_deal_pending past a player's share), daily deals being prepared (503 daily_deals_busy); the
solver hints' queue (503 solver_busy) is in test_solver_limits.py.

The proofs are held at a gate the test opens (a wrapper around the real prover in the server's
Games facade), so which request waits where does not depend on how fast the solver is.
"""

from __future__ import annotations

import asyncio
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import UTC, date, datetime, timedelta
from typing import Any

import httpx
import psycopg
import pytest

from domain import Ruleset
from service.deals.daily import Proof
from service.http.app import create_app
from service.settings import Settings
from tests.support import assert_problem

from .conftest import Player, running_server, server_settings


@contextmanager
def server(database_url: str, **settings: Any) -> Iterator[tuple[httpx.Client, Any]]:
    chosen = server_settings(database_url, **settings)
    app = create_app(chosen)
    with running_server(chosen, app=app) as url, httpx.Client(base_url=url, timeout=60) as http:
        yield http, app


Prover = Callable[[Ruleset, int], Any]


def gated(prover: Prover, gate: threading.Event) -> Prover:
    """``prover``, once the test has opened ``gate``."""

    async def held(ruleset: Ruleset, seed: int) -> Proof:
        while not gate.is_set():
            await asyncio.sleep(0.01)
        proof: Proof = await prover(ruleset, seed)
        return proof

    return held


def in_thread(work: Callable[[], httpx.Response]) -> tuple[threading.Thread, list[httpx.Response]]:
    answers: list[httpx.Response] = []
    thread = threading.Thread(target=lambda: answers.append(work()))
    thread.start()
    return thread, answers


def until(condition: Callable[[], bool], what: str) -> None:
    deadline = time.monotonic() + 30
    while not condition():
        assert time.monotonic() < deadline, f"never happened: {what}"
        time.sleep(0.01)


def race_count(url: str) -> int:
    with psycopg.connect(url) as conn:
        row = conn.execute("SELECT count(*) FROM races").fetchone()
    assert row is not None
    return int(row[0])


def stored_days(url: str) -> set[date]:
    with psycopg.connect(url) as conn:
        return {row[0] for row in conn.execute("SELECT day FROM daily_deals")}


def test_race_creations_waiting_for_a_deal_are_bounded(database_url: str, clean_database: str) -> None:
    with server(database_url, race_deal_queue_max=2, race_deals_per_player=1) as (http, app):
        races = app.state.services.races
        queue = races.deal_queue
        gate = threading.Event()
        races.prover = gated(races.prover, gate)
        ann, bob, cy = Player(http, "Ann"), Player(http, "Bob"), Player(http, "Cy")

        def create(player: Player) -> httpx.Response:
            return http.post("/races", json={"maxEntrants": 2}, headers=player.auth)

        first, ann_answers = in_thread(lambda: create(ann))
        until(lambda: queue.size == 1, "Ann's race waits for its deal")
        pending = create(ann)  # Ann's share is one race waiting
        assert_problem(pending, 429, "race_deal_pending")
        assert int(pending.headers["retry-after"]) >= 1
        assert "waiting for their secret deal" in pending.json()["detail"]

        second, bob_answers = in_thread(lambda: create(bob))
        until(lambda: queue.size == 2, "Bob's race waits for its deal")
        busy = create(cy)  # the queue is full
        assert_problem(busy, 503, "race_deals_busy")
        assert int(busy.headers["retry-after"]) >= 1
        assert "try again in a moment" in busy.json()["detail"]
        assert race_count(clean_database) == 0, "no race is made before its deal is proven, none for a refusal"
        assert queue.pending == {uuid.UUID(ann.id): 1, uuid.UUID(bob.id): 1}

        gate.set()  # the queue drains
        first.join()
        second.join()
        assert [ann_answers[0].status_code, bob_answers[0].status_code] == [201, 201]
        assert (queue.size, queue.pending) == (0, {})
        created = create(cy)  # the player refused before gets their race now
        assert created.status_code == 201, created.text
        assert created.json()["deal"] == {"source": "secret"}
        assert create(ann).status_code == 201, "Ann's share is free again"
        assert race_count(clean_database) == 4


def test_a_race_creation_that_times_out_gives_its_place_back(database_url: str, clean_database: str) -> None:
    with server(database_url, race_deal_queue_max=1, race_deals_per_player=1, race_deal_wait_seconds=0.3) as (
        http, app
    ):
        races = app.state.services.races
        gate = threading.Event()
        races.prover = gated(races.prover, gate)
        ann = Player(http, "Ann")
        timed_out = http.post("/races", json={"maxEntrants": 2}, headers=ann.auth)
        assert_problem(timed_out, 503, "unavailable")  # not proven in time
        assert race_count(clean_database) == 0
        assert (races.deal_queue.size, races.deal_queue.pending) == (0, {}), "its place is given back"
        gate.set()
        races.deal_wait_seconds = 60  # the next one has all the time a proof takes
        assert http.post("/races", json={"maxEntrants": 2}, headers=ann.auth).status_code == 201


def test_daily_deals_prepared_at_once_are_bounded(database_url: str, clean_database: str) -> None:
    with server(database_url, daily_preparing_max=1, daily_wait_seconds=60) as (http, app):
        daily = app.state.services.daily
        today = datetime.now(UTC).date()
        until(lambda: stored_days(clean_database) >= {today, today + timedelta(days=1)} and not daily.preparing,
              "today's and tomorrow's deals are prepared ahead")
        gate = threading.Event()
        daily.prover = gated(daily.prover, gate)
        first_day, other_day = (today - timedelta(days=days) for days in (3, 4))

        waiting, answers = in_thread(lambda: http.get(f"/deals/daily/{first_day}"))
        until(lambda: first_day in daily.preparing, "the first date is being prepared")
        same = in_thread(lambda: http.get(f"/deals/daily/{first_day}"))  # waits for the same preparation
        busy = http.get(f"/deals/daily/{other_day}")
        assert_problem(busy, 503, "daily_deals_busy")
        assert int(busy.headers["retry-after"]) >= 1
        assert other_day not in daily.preparing, "a refused date starts nothing"
        with psycopg.connect(clean_database) as conn:
            assert conn.execute("SELECT count(*) FROM daily_deals WHERE day IN (%s, %s)",
                                (first_day, other_day)).fetchone() == (0,)

        gate.set()
        waiting.join()
        same[0].join()
        assert answers[0].status_code == 200, answers[0].text
        assert same[1][0].json() == answers[0].json(), "one preparation for both requests"
        assert http.get(f"/deals/daily/{other_day}").status_code == 200, "prepared once there is room"


def test_the_bounds_come_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    names = ("RACE_DEAL_QUEUE_MAX", "RACE_DEALS_PER_PLAYER", "DAILY_PREPARING_MAX")
    for name in names:
        monkeypatch.delenv(name, raising=False)
    defaults = Settings.from_env()
    assert (defaults.race_deal_queue_max, defaults.race_deals_per_player, defaults.daily_preparing_max) == (8, 2, 4)
    for name, value in zip(names, ("3", "1", "0"), strict=True):
        monkeypatch.setenv(name, value)
    chosen = Settings.from_env()
    assert (chosen.race_deal_queue_max, chosen.race_deals_per_player, chosen.daily_preparing_max) == (3, 1, 1)
