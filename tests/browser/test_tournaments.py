"""Tournaments on the page: a player makes one on the Tournaments page, enters it and plays deal
after deal from its page and from the strip above each game's table, while the standings follow
another entrant live (GET /tournaments/{id}/stream) without ever showing that entrant's games;
the lobby lists it under its status; at the end the places are shown and every game can be replayed."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx

from tests.live import ServerProcess

from .accounts import NEWEST, Account
from .conftest import PHONE
from .pages import Page
from .test_challenges import choose, shows
from .test_live_and_replay import resign

READY = 60.0  # seconds for a tournament's deals to be proven winnable


def standing(page: Page, player_id: str) -> dict[str, Any] | None:
    found: dict[str, Any] | None = page.js(
        "const r = document.querySelector(`table.tournament-standings tr[data-player='${arguments[0]}']`);"
        "return r && {place: r.dataset.place, won: r.dataset.won, played: r.dataset.played, text: r.textContent};",
        player_id)
    return found


def status_of(page: Page) -> str | None:
    found: str | None = page.js("return document.querySelector('#tournament-title [data-tournament-status]')"
                                "?.dataset.tournamentStatus")
    return found


def listed(page: Page) -> list[str]:
    rows = "[...document.querySelectorAll('[data-tournaments] li')]"
    return list(page.js(f"return {rows}.map((row) => row.dataset.tournament)"))


def make_and_enter(ann: Page) -> str:
    """Ann makes a tournament of two classic deals on the Tournaments page and enters it once it runs."""
    ann.click("header.site a[data-nav=tournaments]")
    ann.click("input[name=ruleset][value=classic]")
    choose(ann, "select[name=deals]", "2")
    choose(ann, "select[name=minutes]", "30")
    ann.click("[data-action=create-tournament]")
    tournament_id: str = ann.wait_for(
        lambda: ann.js("return document.querySelector('section.tournament')?.dataset.tournament"), "its page")
    ann.wait_for(lambda: status_of(ann) == "running", "its deals proven: it runs", timeout=READY)
    assert ann.text("[data-summary]").startswith("Running: enter to play its 2 deals")
    ann.click("[data-action=enter-tournament]")
    ann.wait_for(lambda: standing(ann, ann.player()["id"]), "Ann in the standings")
    return tournament_id


def play_first_deal_then_deal_the_second(ann: Page, screenshots: Path) -> str:
    """From the tournament's page to deal 1, resigned, then deal 2 from the strip: its game's id."""
    ann.click("[data-action=next-deal]")  # "Play your first deal"
    first_game = ann.wait_for_game()
    assert ann.text("#game-title") == "Classic · Tournament deal 1"
    ann.wait_for(lambda: ann.text(".tournament-strip").startswith("Tournament · deal 1 of 2"), "the strip")
    assert not shows(ann, ".tournament-strip [data-action=next-deal]"), "no next deal while this one is in play"
    resign(ann)
    ann.click(".tournament-strip [data-action=next-deal]")
    ann.wait_for(lambda: first_game not in ann.driver.current_url, "the second deal")
    second_game = ann.wait_for_game()
    assert ann.text("#game-title") == "Classic · Tournament deal 2"
    ann.screenshot(screenshots / "tournament-game-desktop.png", full=False)
    return second_game


def find_in_the_lobby(ann: Page, tournament_id: str, screenshots: Path) -> None:
    ann.open("#/tournaments")
    ann.wait_for(lambda: tournament_id in listed(ann), "the tournament in the lobby")
    row = f"[data-tournaments] li[data-tournament='{tournament_id}']"
    assert ann.text(row).startswith("Ann Organiser's tournament · Classic"), ann.text(row)
    assert ann.js(f"return document.querySelector(\"{row}\").dataset.status") == "running"
    ann.click("fieldset.filter input[value=finished]")
    ann.wait_for(lambda: tournament_id not in listed(ann), "not among the finished ones")
    ann.click("fieldset.filter input[value=running]")
    ann.wait_for(lambda: tournament_id in listed(ann), "among the running ones")
    ann.screenshot(screenshots / "tournaments-desktop.png")


def check_the_finish(ann: Page, web: ServerProcess, tournament_id: str, private_game: str) -> None:
    """The places as the server gives them, and every game linked for replay (public now)."""
    final = httpx.get(f"{web.url}/tournaments/{tournament_id}", headers=NEWEST, timeout=10).json()
    assert final["status"] == "finished"
    for entrant in final["standings"]:
        shown = standing(ann, entrant["player"]["id"])
        assert shown is not None
        assert shown["place"] == str(entrant["place"])
    replays = ann.js("return [...document.querySelectorAll('table.tournament-standings a[href^=\"#/replay/\"]')]"
                     ".map((a) => a.getAttribute('href').slice(9))")
    assert sorted(replays) == sorted(g for e in final["standings"] for g in e["games"]), "every game, once it is over"
    assert private_game in replays
    assert httpx.get(f"{web.url}/games/{private_game}", headers=NEWEST, timeout=10).status_code == 200
    mine = next(e for e in final["standings"] if e["player"]["id"] == ann.player()["id"])
    assert f"You placed {ordinal(mine['place'])} of 2." in ann.text("[data-summary]")


def test_a_tournament_made_entered_and_played_deal_after_deal_with_the_standings_live(
    open_page: Callable[..., Page], web: ServerProcess, helper_server: ServerProcess, screenshots: Path
) -> None:
    ann = open_page()
    ann.register("Ann Organiser")
    tournament_id = make_and_enter(ann)
    bob = Account.register(helper_server.url, "Bob Entrant")
    bob.post(f"/tournaments/{tournament_id}/entries")
    bob_first = bob.post(f"/tournaments/{tournament_id}/games")
    ann.wait_for(lambda: (standing(ann, bob.id) or {}).get("played") == "1", "Bob's first deal, live on Ann's page")
    assert ann.js("return !!document.querySelector(`tr[data-player='${arguments[0]}'] .playing`)", bob.id), "playing"
    html = ann.js("return document.body.innerHTML")
    assert bob_first["id"] not in html, "another entrant's game is never linked while the tournament runs"
    assert ann.js("return !document.querySelector('section.tournament a[href^=\"#/game/\"], "
                  "section.tournament a[href^=\"#/replay/\"]')")
    assert httpx.get(f"{web.url}/games/{bob_first['id']}", headers=NEWEST, timeout=10).status_code == 403
    assert ann.fits()
    ann.screenshot(screenshots / "tournament-desktop.png")
    second_game = play_first_deal_then_deal_the_second(ann, screenshots)

    viewer = open_page(*PHONE)  # someone not entered, on a phone
    viewer.open(f"#/tournament/{tournament_id}")
    viewer.wait_for(lambda: standing(viewer, bob.id) and standing(viewer, ann.player()["id"]), "the standings")
    assert viewer.js("return !!document.querySelector('section.tournament a.button.primary[href=\"#/\"]')"), (
        "a visitor is asked to pick a name to enter"
    )
    assert viewer.fits()
    viewer.screenshot(screenshots / "tournament-phone.png")
    find_in_the_lobby(ann, tournament_id, screenshots)

    ann.open(f"#/tournament/{tournament_id}")
    ann.click("[data-action=next-deal]")  # "Continue your game": the second deal, still in play
    assert ann.wait_for_game() == second_game
    resign(ann)
    ann.open(f"#/tournament/{tournament_id}")
    bob.move(bob_first["id"], {"type": "resign"})
    bob_second = bob.post(f"/tournaments/{tournament_id}/games")
    bob.move(bob_second["id"], {"type": "resign"})  # every deal played by everyone: it ends at once
    for page in (ann, viewer):
        page.wait_for(lambda page=page: status_of(page) == "finished", "the end, by the stream")
    check_the_finish(ann, web, tournament_id, bob_first["id"])
    viewer.screenshot(screenshots / "tournament-finished-phone.png")
    viewer.open("#/tournaments")
    viewer.wait_for(lambda: tournament_id in listed(viewer), "the lobby on a phone")
    row = f"[data-tournaments] li[data-tournament='{tournament_id}']"
    assert viewer.js(f"return document.querySelector(\"{row}\").dataset.status") == "finished"
    viewer.screenshot(screenshots / "tournaments-phone.png")
    assert viewer.fits()


def ordinal(n: int) -> str:
    return f"{n}{ {1: 'st', 2: 'nd', 3: 'rd'}.get(n if n < 20 else n % 10, 'th') }"
