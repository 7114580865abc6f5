"""Races on the page: one player creates a race and shares its link, another joins by it, the
creator starts it, both are dealt the same cards, and each page follows the other's moves and the
end of the race live (GET /races/{id}/stream), down to the places."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx

from tests.live import ServerProcess

from .conftest import PHONE
from .pages import Page
from .test_live_and_replay import resign


def strip_row(page: Page, player: dict[str, Any]) -> dict[str, Any] | None:
    """The player's row of the race strip above the table: place, game status, moves."""
    found: dict[str, Any] | None = page.js(
        "const r = document.querySelector(`.race-strip tr[data-player='${arguments[0]}']`);"
        "return r && {place: r.dataset.place, status: r.dataset.gameStatus, moves: r.dataset.moves};", player["id"])
    return found


def test_two_players_race_on_one_deal_and_each_page_follows_the_other_live(
    open_page: Callable[..., Page], web: ServerProcess, screenshots: Path
) -> None:
    ann = open_page()
    ann.register("Ann")
    ann.click("header.site a[data-nav=races]")
    ann.click("input[name=ruleset][value=classic]")
    ann.click("[data-action=create-race]")
    race_id = ann.wait_for(
        lambda: ann.js("return document.querySelector('section.race')?.dataset.race"), "the race page"
    )
    link = ann.js("return document.querySelector('[data-share-link]').value")
    assert link == f"{web.url}/#/race/{race_id}", "the share link is the race's own address"
    assert ann.js("return document.querySelector('[data-race-status]').dataset.raceStatus") == "open"
    assert ann.js("return !document.querySelector('[data-action=join-race]')"), "the creator is in already"

    bob = open_page(*PHONE)
    bob.register("Bob")
    bob.click("header.site a[data-nav=races]")
    listed = f"[data-open-races] li[data-race='{race_id}']"
    bob.wait_for(
        lambda: bob.js("return !!document.querySelector(arguments[0])", listed), "Ann's race among the open races"
    )
    assert bob.text(listed).startswith("Ann's race · Classic"), bob.text(listed)
    assert bob.fits()
    bob.screenshot(screenshots / "races-phone.png")
    bob.driver.get(link)  # the link as Ann would send it
    bob.wait_for(lambda: bob.js("return !!document.querySelector('[data-action=join-race]')"), "the join button")
    bob.screenshot(screenshots / "race-join-phone.png")
    assert bob.fits()
    bob.click("[data-action=join-race]")
    ann.wait_for(lambda: ann.js("return document.querySelectorAll('table.standings tbody tr').length") == 2,
                 "Bob on Ann's page, by the race stream")
    ann.screenshot(screenshots / "race-open-desktop.png")

    ann.click("[data-action=start-race]")
    ann_game = ann.wait_for_game()
    bob_game = bob.wait_for_game()  # the start reached Bob's page by the stream and took him to his game
    assert ann_game != bob_game
    assert ann.table() == bob.table(), "both were dealt the same cards"
    ann_player, bob_player = ann.player(), bob.player()
    for page in (ann, bob):
        page.wait_for(
            lambda page=page: strip_row(page, ann_player) and strip_row(page, bob_player), "both entrants in the strip"
        )
    assert httpx.get(f"{web.url}/games/{bob_game}", timeout=10).status_code == 403, (
        "a race game is private while it runs"
    )

    bob.click(".table button[data-pile=stock]")
    bob.wait_version(1)
    ann.wait_for(lambda: (strip_row(ann, bob_player) or {}).get("moves") == "1", "Bob's draw in Ann's strip")
    ann.screenshot(screenshots / "race-game-desktop.png")
    assert bob.fits(), "the race game with its standings fits a phone"
    bob.screenshot(screenshots / "race-game-phone.png")
    resign(bob)
    ann.wait_for(
        lambda: (strip_row(ann, bob_player) or {}).get("status") == "resigned", "Bob's resignation in Ann's strip"
    )
    assert ann.js("return document.querySelector('.race-strip').dataset.status") == "running"

    resign(ann)  # the last game ends: the race is over
    bob.wait_for(lambda: bob.js("return document.querySelector('.race-strip')?.dataset.status") == "finished",
                 "the end of the race on Bob's page")
    final = httpx.get(f"{web.url}/races/{race_id}", timeout=10).json()
    assert final["status"] == "finished"
    places = {entrant["player"]: str(entrant["place"]) for entrant in final["entrants"]}
    for page in (ann, bob):
        page.wait_for(
            lambda page=page: (
                {p["id"]: (strip_row(page, p) or {}).get("place") for p in (ann_player, bob_player)} == places
            ),
            "the places the server gave",
        )

    bob.click("[data-action=race-page]")
    bob.wait_for(
        lambda: bob.js("return document.querySelector('[data-race-status]')?.dataset.raceStatus") == "finished",
        "the finished race's page",
    )
    shown = bob.js(
        "return [...document.querySelectorAll('table.standings tbody tr')]"
        ".map((r) => [r.dataset.player, r.dataset.place])"
    )
    assert shown == [[e["player"], str(e["place"])] for e in final["entrants"]], "the standings in the server's order"
    mine = next(e for e in final["entrants"] if e["player"] == bob_player["id"])
    assert f"You placed {ordinal(mine['place'])} of 2." in bob.text("[data-summary]")
    assert bob.fits()
    bob.screenshot(screenshots / "race-finished-phone.png")


def ordinal(n: int) -> str:
    return f"{n}{ {1: 'st', 2: 'nd', 3: 'rd'}.get(n if n < 20 else n % 10, 'th') }"


def test_a_race_cancelled_before_its_start_shows_as_cancelled(
    open_page: Callable[..., Page], web: ServerProcess
) -> None:
    """A race whose creator deleted their account before anyone joined is ``cancelled`` in the
    page's version (2026-12-04 showed it as ``finished``): said so with the server's reason, with
    nothing to join or start."""
    newest = {"Api-Version": "2026-12-05"}
    made = httpx.post(f"{web.url}/players", json={"name": "Gone"}, headers=newest, timeout=10).json()
    auth = {**newest, "Authorization": f"Bearer {made['token']}"}
    race = httpx.post(f"{web.url}/races", json={"maxEntrants": 2}, headers=auth, timeout=10).json()
    assert httpx.delete(f"{web.url}/players/me", headers=auth, timeout=10).status_code == 204
    page = open_page()
    page.register("Late")
    page.driver.get(f"{web.url}/#/race/{race['id']}")
    page.wait_for(lambda: page.js("return document.querySelector('[data-race-status]')?.dataset.raceStatus")
                  == "cancelled", "the cancelled race's page")  # fmt: skip
    assert page.text("[data-race-status]") == "Cancelled"
    assert page.text("[data-summary]").startswith("Cancelled before it started: "), page.text("[data-summary]")
    assert page.js("return !document.querySelector('[data-action=join-race], [data-action=start-race]')")
