"""Races across real server processes: racing requests through two servers on one database (two
joins for the last seat, a join against the start, a double start: one outcome each, a clear 409
for the rest) and a server killed in the middle of a race, whose replacement loses nothing."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from functools import partial
from pathlib import Path
from typing import Any, TypeVar

import httpx
import psycopg
import pytest

from tests.live import ServerProcess
from tests.support import assert_problem

from .conftest import Player, play
from .race_support import CARD, POOL_DEAL, game_of, prefix_with_cards, winning_line

T = TypeVar("T")
ROUNDS = 6


@pytest.fixture(scope="module")
def two_servers(database_url: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, str]]:
    """Two separate server processes on the same database."""
    logs = Path(tmp_path_factory.mktemp("race-servers"))
    servers = [ServerProcess(database_url, logs / f"server-{i}.log") for i in range(2)]
    try:
        for server in servers:
            server.wait_until_up()
        yield servers[0].url, servers[1].url
    finally:
        for server in servers:
            server.stop()


def at_once(calls: list[Callable[[], T]]) -> list[T]:
    """Every call at the same moment (a barrier releases them together)."""
    barrier = threading.Barrier(len(calls))

    def run(call: Callable[[], T]) -> T:
        barrier.wait(timeout=30)
        return call()

    with ThreadPoolExecutor(max_workers=len(calls)) as pool:
        return list(pool.map(run, calls))


class Site:
    """A player's warm connection to one server."""

    def __init__(self, url: str, player: Player) -> None:
        self.http = httpx.Client(base_url=url, timeout=30, headers=player.auth)
        assert self.http.get("/health").status_code == 200

    def post(self, path: str) -> httpx.Response:
        return self.http.post(path, json={})


def entrants_in_db(url: str, race_id: str) -> list[tuple[int, Any]]:
    with psycopg.connect(url, autocommit=True) as conn:
        return conn.execute(
            "SELECT seat, game_id FROM race_entrants WHERE race_id = %s ORDER BY seat", (race_id,)
        ).fetchall()


def test_racing_joins_and_starts_through_two_servers_have_one_outcome_each(
    two_servers: tuple[str, str], clean_database: str
) -> None:
    first, second = two_servers
    with httpx.Client(base_url=first, timeout=30) as setup:
        ann, bob, cid = Player(setup, "Ann"), Player(setup, "Bob"), Player(setup, "Cid")
    sites = {(p.id, url): Site(url, p) for p in (ann, bob, cid) for url in (first, second)}
    try:
        for round_number in range(ROUNDS):
            # Two joins for the last seat, one through each server.
            race = sites[ann.id, first].http.post("/races", json={"maxEntrants": 2}).json()
            path = f"/races/{race['id']}"
            joins = at_once([partial(sites[bob.id, first].post, path + "/entries"),
                             partial(sites[cid.id, second].post, path + "/entries")])
            assert sorted(r.status_code for r in joins) == [201, 409], [r.text for r in joins]
            loser = next(r for r in joins if r.status_code == 409)
            assert_problem(loser, 409, "race_full")
            assert [seat for seat, _ in entrants_in_db(clean_database, race["id"])] == [1, 2]

            # A join against the start: either the joiner is in and dealt a game, or refused and not in.
            race = sites[ann.id, first].http.post("/races", json={"maxEntrants": 3}).json()
            path = f"/races/{race['id']}"
            started, joined = at_once([partial(sites[ann.id, first].post, path + "/start"),
                                       partial(sites[bob.id, second].post, path + "/entries")])
            assert started.status_code == 200, started.text
            stored = entrants_in_db(clean_database, race["id"])
            if joined.status_code == 201:
                assert len(stored) == 2, (round_number, stored)
                assert all(game is not None for _, game in stored), (round_number, stored)
            else:
                assert_problem(joined, 409, "race_not_open")
                assert len(stored) == 1
                assert stored[0][1] is not None
            view = sites[cid.id, second].http.get(path).json()
            assert view["status"] == "running"
            assert len(view["entrants"]) == len(stored)

            # Two starts of the same race, one through each server.
            race = sites[ann.id, second].http.post("/races", json={"maxEntrants": 2}).json()
            path = f"/races/{race['id']}"
            assert sites[bob.id, first].post(path + "/entries").status_code == 201
            starts = at_once([partial(sites[ann.id, first].post, path + "/start"),
                              partial(sites[ann.id, second].post, path + "/start")])
            assert sorted(r.status_code for r in starts) == [200, 409], [r.text for r in starts]
            assert next(r for r in starts if r.status_code == 409).json()["code"] == "race_not_open"
            with psycopg.connect(clean_database, autocommit=True) as conn:
                dealt = conn.execute(
                    "SELECT count(*) FROM games WHERE deal->>'race' = %s", (race["id"],)
                ).fetchone()
            assert dealt == (2,), "each entrant dealt exactly one game"
    finally:
        for site in sites.values():
            site.http.close()


def test_the_race_view_and_stream_follow_moves_made_through_the_other_server(
    two_servers: tuple[str, str], clean_database: str
) -> None:
    first, second = two_servers
    with httpx.Client(base_url=first, timeout=30) as one, httpx.Client(base_url=second, timeout=30) as two:
        ann, bob = Player(one, "Ann"), Player(two, "Bob")
        race = one.post("/races", json={"maxEntrants": 2, "ruleset": "classic"}, headers=ann.auth).json()
        assert two.post(f"/races/{race['id']}/entries", json={}, headers=bob.auth).status_code == 201
        running = one.post(f"/races/{race['id']}/start", json={}, headers=ann.auth).json()
        with two.stream("GET", f"/races/{race['id']}/stream", timeout=httpx.Timeout(10)) as stream:
            lines = stream.iter_lines()
            assert next(line for line in lines if line.startswith("data: "))
            assert ann.move(game_of(running, ann), {"type": "draw"}).status_code == 200  # through server one
            data = next(line for line in lines if line.startswith("data: "))
            assert '"moveCount":1' in data
            assert not CARD.search(data)


def test_a_server_killed_mid_race_loses_nothing(database_url: str, clean_database: str, tmp_path: Path) -> None:
    server = ServerProcess(database_url, tmp_path / "first.log")
    replacement: ServerProcess | None = None
    try:
        server.wait_until_up()
        with httpx.Client(base_url=server.url, timeout=30) as http:
            ann, bob, cid = Player(http, "Ann"), Player(http, "Bob"), Player(http, "Cid")
            race = http.post("/races", json={"maxEntrants": 3, "ruleset": "classic", "deal": {"pool": POOL_DEAL}},
                             headers=ann.auth).json()
            assert http.post(f"/races/{race['id']}/entries", json={}, headers=bob.auth).status_code == 201
            assert http.post(f"/races/{race['id']}/entries", json={}, headers=cid.auth).status_code == 201
            running = http.post(f"/races/{race['id']}/start", json={}, headers=ann.auth).json()
            line = winning_line()
            half = len(line) // 2
            play(ann, game_of(running, ann), line[:half])
            play(bob, game_of(running, bob), line[:prefix_with_cards(2)])
            before = http.get(f"/races/{race['id']}").json()
        server.kill()  # SIGKILL: no shutdown at all
        replacement = ServerProcess(database_url, tmp_path / "second.log")
        replacement.wait_until_up()
        with httpx.Client(base_url=replacement.url, timeout=30) as http:
            for player in (ann, bob, cid):
                player.client = http
            assert http.get(f"/races/{race['id']}").json() == before  # the race and its standings as they were
            cid_game = game_of(running, cid)
            assert http.get(f"/games/{cid_game}", headers=ann.auth).status_code == 403  # the race rule holds
            assert (
                http.post(f"/races/{race['id']}/entries", json={}, headers=Player(http, "Dan").auth).json()["code"]
                == "race_not_open"
            )
            play(ann, game_of(running, ann), line[half:])  # Ann finishes her win on the new server
            play(bob, game_of(running, bob), [{"type": "resign"}])
            play(cid, cid_game, [{"type": "resign"}])
            final = http.get(f"/races/{race['id']}").json()
            assert final["status"] == "finished"
            assert [(e["name"], e["place"], e["verified"]) for e in final["entrants"]] == [
                ("Ann", 1, True), ("Bob", 2, True), ("Cid", 3, True)]
            assert final["entrants"][0]["moveCount"] == len(line)
            assert http.get(f"/players/{ann.id}/stats").json()["races"] == {"played": 1, "won": 1}
    finally:
        server.kill()
        if replacement is not None:
            replacement.stop()
