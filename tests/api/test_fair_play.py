"""Fair play on shared deals, over HTTP: the solver refuses a copy of a deal in play however it was
dealt (the exact deck or a relabelled one: ranks rotated, same-colour suits swapped, the colours
traded, columns reordered; under any ruleset), for hints and analyses alike, until the daily's
date is over or the race has finished; a refusal changes nothing; dealing a copy stays allowed
and is counted; and a daily deal is one game per player while its date is on.

The copies are built from the stored decks (``daily_deals.deck``, ``races.deck``), as an attacker
who had rebuilt the deck on a second account would send them."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from typing import Any

import httpx
import psycopg
import pytest

from domain import CODES, parse_deck
from domain.deal import STOCK_SLICE
from domain.fingerprint import fingerprint, relabelled
from tests.support import assert_problem

from .conftest import Clock, Player, running_server, server_settings
from .race_support import create_race, game_of, join, start
from .test_metrics import scrape, value

DAY = Clock.START.date()
# (rank rotation, suit relabelling old -> new as S H D C, tableau column order)
RELABELLINGS = [
    (0, (0, 1, 2, 3), (0, 1, 2, 3)),  # the deck itself
    (5, (3, 1, 2, 0), (0, 1, 2, 3)),  # ranks up 5, spades <-> clubs
    (0, (0, 2, 1, 3), (3, 2, 1, 0)),  # hearts <-> diamonds, the columns reversed
    (12, (1, 0, 3, 2), (1, 3, 0, 2)),  # ranks down 1, black suits for red ones, the columns shuffled
]


@pytest.fixture(scope="module")
def fair_clock() -> Clock:
    return Clock()


@pytest.fixture(scope="module")
def fair_url(database_url: str, fair_clock: Clock) -> Iterator[str]:
    """A server by a clock the tests move, taking analyses but running none (they stay queued)."""
    with running_server(server_settings(database_url, analysis_workers=0), clock=fair_clock) as url:
        yield url


@pytest.fixture
def clock(fair_clock: Clock) -> Clock:
    fair_clock.now = Clock.START
    return fair_clock


@pytest.fixture
def fair(fair_url: str, clean_database: str, clock: Clock) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=fair_url, timeout=60) as http:
        yield http


def stored_deck(url: str, query: str, key: Any) -> list[str]:
    with psycopg.connect(url) as conn:
        row = conn.execute(query, (key,)).fetchone()
    assert row is not None
    deck: list[str] = row[0]
    return deck


def copy_of(deck: list[str], rotation: int, suits: tuple[int, ...], columns: tuple[int, ...]) -> list[str]:
    return [CODES[card] for card in relabelled(parse_deck(deck), rotation, suits, columns)]


def near_copy(deck: list[str]) -> list[str]:
    """The deck with its first two stock cards swapped: another deal, which plays almost the same."""
    cards = list(deck)
    first = STOCK_SLICE.start
    cards[first], cards[first + 1] = cards[first + 1], cards[first]
    return cards


def game_record(client: httpx.Client, player: Player, game_id: str) -> tuple[Any, ...]:
    """What a refusal must leave as it was: the view's version and figures, and the whole log."""
    view = client.get(f"/games/{game_id}", headers=player.auth).json()
    events = client.get(f"/games/{game_id}/events", headers=player.auth).json()["events"]
    return view["version"], view["moveCount"], view["assisted"], view["status"], events


def solver_hint(client: httpx.Client, player: Player, game_id: str) -> httpx.Response:
    return client.get(f"/games/{game_id}/hints", params={"solver": "true"}, headers=player.auth)


def analyse(client: httpx.Client, player: Player, game_id: str) -> httpx.Response:
    return client.post(f"/games/{game_id}/analysis", headers=player.auth)


def refused(
    client: httpx.Client, player: Player, game_id: str, ask: Callable[[httpx.Client, Player, str], httpx.Response],
    words: str,
) -> None:
    """``ask`` (a solver hint, an analysis) is 409 shared_deal in words that say why, and the game
    is as it was before."""
    before = game_record(client, player, game_id)
    body = assert_problem(ask(client, player, game_id), 409, "shared_deal")
    assert "copy of a deal in play" in body["detail"], body["detail"]
    assert words in body["detail"], body["detail"]
    assert game_record(client, player, game_id) == before


def copies(client: httpx.Client, player: Player, deck: list[str]) -> tuple[list[str], list[str]]:
    """Games of ``player`` dealt from relabelled copies of ``deck`` (one under classic rules): some in
    play, some resigned (to be analysed)."""
    playing, resigned = [], []
    for index, (rotation, suits, columns) in enumerate(RELABELLINGS):
        ruleset = "classic" if index == 3 else "open-runs"
        game = player.new_game(ruleset=ruleset, deal={"deck": copy_of(deck, rotation, suits, columns)})
        playing.append(game["id"])
        ended = player.new_game(ruleset=ruleset, deal={"deck": copy_of(deck, rotation, suits, columns)})
        assert player.move(ended["id"], {"type": "resign"}).status_code == 200
        resigned.append(ended["id"])
    return playing, resigned


def test_a_copy_of_the_open_daily_deal_gets_no_solver_until_its_date_is_over(
    fair: httpx.Client, clock: Clock, clean_database: str
) -> None:
    ann, eve = Player(fair, "Ann"), Player(fair, "Eve")  # Eve has rebuilt the deck on a second account
    ann.new_game(deal={"daily": "today"})
    deck = stored_deck(clean_database, "SELECT deck FROM daily_deals WHERE day = %s", DAY)
    playing, resigned = copies(fair, eve, deck)
    for game_id in playing:
        refused(fair, eve, game_id, solver_hint, f"until its date ({DAY}, UTC) is over")
        assert fair.get(f"/games/{game_id}/hints", headers=eve.auth).status_code == 200  # the heuristic ones stay
    for game_id in resigned:
        refused(fair, eve, game_id, analyse, f"the daily deal of {DAY}")
        assert_problem(fair.get(f"/games/{game_id}/analysis", headers=eve.auth), 404)  # nothing queued
    # A near copy is another deal: the index does not know it (docs/security.md, what remains possible).
    near = eve.new_game(deal={"deck": near_copy(deck)})
    assert solver_hint(fair, eve, near["id"]).status_code == 200

    clock.advance(days=1)  # the date is over: the deal is public, its copies too
    for game_id in playing:
        answer = solver_hint(fair, eve, game_id)
        assert answer.status_code == 200, answer.text
        assert answer.json()["solver"]["result"] in ("won", "unknown")
        assert fair.get(f"/games/{game_id}", headers=eve.auth).json()["assisted"] is True
    assert analyse(fair, eve, resigned[1]).status_code == 202  # one: a player's queued analyses are capped


def test_a_copy_of_a_race_deal_gets_no_solver_while_the_race_runs(
    fair: httpx.Client, clean_database: str
) -> None:
    ann, bob, eve = Player(fair, "Ann"), Player(fair, "Bob"), Player(fair, "Eve")
    race = create_race(ann, maxEntrants=2)  # a secret deal: nobody can look it up
    deck = stored_deck(clean_database, "SELECT deck FROM races WHERE id = %s", race["id"])
    playing, resigned = copies(fair, eve, deck)
    # open: no entrant has been dealt a card, so nobody can have rebuilt the deck; a race that is
    # only open never holds a deal back from the solver (anyone could open one on any deal)
    assert solver_hint(fair, eve, playing[0]).status_code == 200
    assert join(bob, race["id"]).status_code == 201
    running = start(ann, race["id"]).json()
    # A race stored by the release before migration 0013 has no fingerprint: the first lookup makes it.
    with psycopg.connect(clean_database, autocommit=True) as conn:
        conn.execute("UPDATE races SET fingerprint = NULL WHERE id = %s", (race["id"],))
    for game_id in playing:
        refused(fair, eve, game_id, solver_hint, "a race still running")
    for game_id in resigned:
        refused(fair, eve, game_id, analyse, "until the race has finished")
    filled = stored_deck(clean_database, "SELECT ARRAY[fingerprint] FROM races WHERE id = %s", race["id"])
    assert filled == [fingerprint(parse_deck(deck))]

    for player in (ann, bob):  # every game ends: the race finishes
        assert player.move(game_of(running, player), {"type": "resign"}).status_code == 200
    assert fair.get(f"/races/{race['id']}").json()["status"] == "finished"
    for game_id in playing:
        assert solver_hint(fair, eve, game_id).status_code == 200
    assert analyse(fair, eve, resigned[3]).status_code == 202


def test_a_race_game_after_its_race_is_refused_while_its_deck_copies_the_open_daily(
    fair: httpx.Client, clean_database: str
) -> None:
    """A race dealt a copy of the daily deal: once the race is over its games are public, but the
    solver still refuses them while the daily's date is on."""
    ann, bob = Player(fair, "Ann"), Player(fair, "Bob")
    fair.get("/deals/daily").raise_for_status()
    deck = stored_deck(clean_database, "SELECT deck FROM daily_deals WHERE day = %s", DAY)
    race = create_race(ann, maxEntrants=2, deal={"deck": copy_of(deck, *RELABELLINGS[2])})
    assert join(bob, race["id"]).status_code == 201
    running = start(ann, race["id"]).json()
    for player in (ann, bob):
        assert player.move(game_of(running, player), {"type": "resign"}).status_code == 200
    game_id = game_of(running, ann)
    refused(fair, ann, game_id, analyse, f"the daily deal of {DAY}")


def test_dealing_a_copy_is_allowed_and_counted(fair: httpx.Client, clean_database: str) -> None:
    eve = Player(fair, "Eve")
    fair.get("/deals/daily").raise_for_status()
    deck = stored_deck(clean_database, "SELECT deck FROM daily_deals WHERE day = %s", DAY)
    before = scrape(fair)
    eve.new_game(deal={"deck": copy_of(deck, *RELABELLINGS[3])})
    eve.new_game(deal={"deck": near_copy(deck)})  # not a copy: not counted
    eve.new_game(deal={"seed": 7})
    after = scrape(fair)
    name = "canfield_shared_deal_copies_total"
    assert value(after, name, event="dealt") - value(before, name, event="dealt") == 1


def test_a_daily_deal_is_one_game_per_player_while_its_date_is_on(
    fair: httpx.Client, clock: Clock, clean_database: str
) -> None:
    ann, bob = Player(fair, "Ann"), Player(fair, "Bob")
    entry = ann.new_game(deal={"daily": "today"})
    assert entry["deal"] == {"source": "daily", "daily": DAY.isoformat(), "practice": False}
    assert ann.move(entry["id"], {"type": "draw"}).status_code == 200
    listed = fair.get(f"/players/{ann.id}/games").json()
    for asked in ({"deal": {"daily": "today"}}, {"deal": {"daily": DAY.isoformat()}, "ruleset": "open-runs"}):
        again = fair.post("/games", json=asked, headers=ann.auth)
        body = assert_problem(again, 409, "daily_already_played")
        assert body["game"] == entry["id"]
        assert entry["id"] in body["detail"], body["detail"]
        assert DAY.isoformat() in body["detail"], body["detail"]
    assert fair.get(f"/players/{ann.id}/games").json() == listed  # nothing dealt
    assert bob.new_game(deal={"daily": "today"})["deal"]["practice"] is False  # another player's own game

    clock.advance(days=1)  # the date is over: its deal is practice now, as often as wanted
    for _ in range(2):
        practice = ann.new_game(deal={"daily": DAY.isoformat()})
        assert practice["deal"] == {"source": "daily", "daily": DAY.isoformat(), "practice": True}


def test_a_second_daily_game_asked_for_at_once_is_still_refused(fair: httpx.Client) -> None:
    ann = Player(fair, "Ann")
    fair.get("/deals/daily").raise_for_status()  # prepared: the requests meet at the insert
    answers: list[httpx.Response] = []
    gate = threading.Barrier(6)

    def deal() -> None:
        with httpx.Client(base_url=str(fair.base_url), timeout=60) as http:
            gate.wait()
            answers.append(http.post("/games", json={"deal": {"daily": "today"}}, headers=ann.auth))

    threads = [threading.Thread(target=deal) for _ in range(6)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    created = [answer.json()["id"] for answer in answers if answer.status_code == 201]
    assert len(created) == 1, [answer.text for answer in answers]
    for answer in answers:
        if answer.status_code != 201:
            assert assert_problem(answer, 409, "daily_already_played")["game"] == created[0]
    assert [g["id"] for g in fair.get(f"/players/{ann.id}/games").json()["games"]] == created
