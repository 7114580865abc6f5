"""The daily deal page and its leaderboard, and a page that meets the rate limit and waits as
the server's Retry-After says."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import httpx
import pytest

from domain import apply, deal, get_ruleset, initial_state, parse_deck
from domain.commands import Draw, command_to_api
from domain.solver import solve
from service.deals.deal_pools import start_state
from tests.live import ServerProcess, stored

from .conftest import start_server
from .pages import Page, expected_table


def win_todays_daily_deal(server: ServerProcess, database_url: str, name: str) -> dict[str, Any]:
    """Another player wins today's daily deal (set-up, through the helper server): the line comes from
    the solver, run here on the deck the server dealt (read from the stored GameDealt event)."""
    with httpx.Client(base_url=server.url, timeout=30) as http:
        player = http.post("/players", json={"name": name}).json()
        auth = {"Authorization": f"Bearer {player['token']}"}
        daily = http.get("/deals/daily").json()
        game = http.post("/games", json={"ruleset": daily["ruleset"], "deal": {"daily": daily["date"]}},
                         headers=auth).json()
        deck = stored(database_url, [game["id"]])[game["id"]].events[0][2]["deck"]
        ruleset = get_ruleset(daily["ruleset"], daily["rulesetVersion"])
        start = initial_state(deal(ruleset, parse_deck(deck), {}))
        line = solve(start)
        assert line.result == "won", "a daily deal is proved winnable before it is served"
        view = game
        for command in line.moves:
            reply = http.post(f"/games/{game['id']}/moves", json=command_to_api(command), headers=auth)
            assert reply.status_code == 200, reply.text
            view = reply.json()["game"]
        assert view["status"] == "won"
        return {"player": player, "game": view, "date": daily["date"], "start": start}


def test_the_daily_page_deals_everyone_the_same_cards_and_ranks_the_winners(
    open_page: Callable[..., Page], helper_server: ServerProcess, database_url: str, screenshots: Path
) -> None:
    early = win_todays_daily_deal(helper_server, database_url, "Early Bird")
    today = datetime.now(UTC).date().isoformat()
    assert early["date"] == today

    page = open_page()
    page.register("Daily Player")
    page.click("header.site a[data-nav=daily]")
    page.wait_for(lambda: page.js("return document.querySelector('.daily')?.dataset.date") == today, "today's deal")
    assert page.text("#daily-title").startswith("Today's daily deal")
    winner = f"tr[data-player='{early['player']['id']}']"
    page.wait_for(lambda: page.js("return !!document.querySelector(arguments[0])", winner), "the winner on the board")
    first_row = page.js("return document.querySelector('table.leaderboard tbody tr').dataset.player")
    assert first_row == early["player"]["id"], "the only winner is ranked first"
    cells = page.js("return [...document.querySelectorAll(arguments[0] + ' > *')].map((c) => c.textContent)", winner)
    assert cells[:4] == ["1", "Early Bird", "won", str(early["game"]["moveCount"])], cells
    assert page.js("return !document.querySelector(arguments[0] + ' a[href^=\"#/replay/\"]')", winner), \
        "no replay link to another player's daily game before the date is over (it answers only to its player)"

    page.click("[data-action=play-daily]")
    page.wait_for_game()
    assert page.text("#game-title") == f"Open runs · Daily deal of {today}"
    page.wait_table(expected_table(early["start"]))  # the very cards the other player was dealt
    drawn, _ = apply(early["start"], Draw())
    page.play(Draw())
    page.wait_table(expected_table(drawn))
    mine = page.js("return location.hash")

    page.click("header.site a[data-nav=daily]")
    page.wait_for(lambda: page.js("return !!document.querySelector(arguments[0])", winner), "the board again")
    # One game per player while the date is on: the button says so, and opens the same game as it was left.
    page.wait_for(lambda: page.text("[data-action=play-daily]") == "Continue your game of today's deal",
                  "the button offering the player's own game")
    page.click("[data-action=play-daily]")
    page.wait_for(lambda: page.js("return location.hash") == mine, "the player's own daily game again")
    page.wait_for_game()
    page.wait_table(expected_table(drawn))

    page.click("header.site a[data-nav=daily]")
    page.wait_for(lambda: page.js("return !!document.querySelector(arguments[0])", winner), "the board again")
    assert (
        page.js("return document.querySelector('table.leaderboard tbody tr').dataset.player") == early["player"]["id"]
    )
    page.screenshot(screenshots / "daily-desktop.png")
    mine = page.js("return document.querySelector('tr[data-me]')?.textContent ?? null")
    assert mine is None or "(you)" in mine, "the player's own entry, when the board lists it, says so"


@pytest.fixture(scope="module")
def tight_server(database_url: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    """A server that allows one write a second per player after a burst of three."""
    limits = {"RATE_LIMIT_WRITES_PER_SECOND": "1", "RATE_LIMIT_WRITE_BURST": "3"}
    yield from start_server(database_url, tmp_path_factory.mktemp("tight") / "server.log", limits)


def test_the_page_waits_as_retry_after_says_and_loses_no_move(
    open_page: Callable[..., Page], tight_server: ServerProcess
) -> None:
    page = open_page(server=tight_server)
    page.register("Impatient")
    page.deal("classic", "seed", 5)
    state = start_state(get_ruleset("classic"), 5)
    page.wait_table(expected_table(state))
    for _ in range(5):  # five clicks at once: two fit the budget left, the rest meet 429
        state, _ = apply(state, Draw())
        page.click(".table button[data-pile=stock]")
    saw_notice = False

    def settled() -> bool:
        nonlocal saw_notice
        notice = page.js("const n = document.getElementById('notice'); return n.hidden ? '' : n.textContent")
        saw_notice = saw_notice or notice.startswith("Waiting")
        return bool(page.table() == expected_table(state))

    page.wait_for(settled, "all five draws", timeout=30)
    assert saw_notice, "the page said it was waiting for the server"
    # The live stream can draw the last draw a moment before that draw's own reply is read, and
    # the reply is what ends the wait: so the notice goes soon after the table is whole, not with it.
    page.wait_for(lambda: page.js("return document.getElementById('notice').hidden"),
                  "the page to stop saying it waits", timeout=10)
    assert page.text("[data-moves]") == "5"
