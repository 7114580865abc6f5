"""Challenges on the page: a player challenges another from their page; the other sees a notice
(from their account stream) and accepts, and both pages go to their games of the race; a notice
declined or cancelled goes away, and a challenger hears of a refusal; a challenger who is at a
table meanwhile is offered the race instead of being taken away; and a player who accepts no
challenges is not challenged."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from tests.live import ServerProcess

from .accounts import Account
from .conftest import PHONE
from .pages import Page

RECEIVED = "#challenges li[data-direction=received]"
SENT = "#challenges li[data-direction=sent]"


def choose(page: Page, css: str, value: str) -> None:
    from selenium.webdriver.support.select import Select

    Select(page.find(css)).select_by_value(value)


def challenge_from_page(page: Page, player_id: str, ruleset: str = "classic", seconds: int = 300) -> None:
    page.open(f"#/player/{player_id}")
    choose(page, "form.challenge select[name=ruleset]", ruleset)
    choose(page, "form.challenge select[name=timeLimit]", str(seconds))
    page.click("[data-action=challenge]")


def shows(page: Page, css: str) -> bool:
    return bool(page.js("return !!document.querySelector(arguments[0])", css))


def test_a_challenge_made_on_a_players_page_is_accepted_from_the_notice_and_both_go_to_the_race(
    open_page: Callable[..., Page], web: ServerProcess, screenshots: Path
) -> None:
    bob = open_page(*PHONE)
    bob.register("Bob Challenged")
    bob_id = bob.player()["id"]
    ann = open_page()
    ann.register("Ann Challenger")
    challenge_from_page(ann, bob_id)
    ann.wait_for(lambda: ann.text("form.challenge .status-line").startswith("Challenge sent"), "the challenge sent")
    ann.wait_for(lambda: shows(ann, SENT), "Ann's notice of her challenge")
    assert "You challenged Bob Challenged (Classic, not rated, 5 min limit)" in ann.text(SENT)

    bob.wait_for(lambda: shows(bob, RECEIVED), "the challenge on Bob's page, by his account stream")
    notice = bob.text(RECEIVED)
    assert notice.startswith("Ann Challenger challenges you to a race (Classic, not rated, 5 min limit)"), notice
    assert "minutes left to answer" in notice
    assert bob.fits()
    bob.screenshot(screenshots / "challenge-notice-phone.png", full=False)
    bob.click("[data-action=accept-challenge]")
    bob_game = bob.wait_for_game()
    ann_game = ann.wait_for_game()  # the acceptance reached Ann's page and took her to her game
    assert ann_game != bob_game
    assert ann.table() == bob.table(), "both were dealt the same cards"
    race_id = ann.js("return document.querySelector('.race-strip')?.dataset.race")
    race = Account(web.url, ann.player()).get(f"/races/{race_id}")
    assert (race["status"], race["timeLimitSeconds"], race["rated"]) == ("running", 300, False)
    assert {e["player"]["id"]: e["game"] for e in race["entrants"]} == {ann.player()["id"]: ann_game, bob_id: bob_game}
    for page in (ann, bob):
        page.wait_for(lambda page=page: not shows(page, "#challenges li"), "the notice gone once answered")
    ann.screenshot(screenshots / "challenge-race-desktop.png", full=False)


def test_a_notice_declined_or_cancelled_goes_away_and_a_player_at_a_table_is_offered_the_race(
    open_page: Callable[..., Page], web: ServerProcess, helper_server: ServerProcess
) -> None:
    ann = open_page()
    ann.register("Ann At Tables")
    cy = Account.register(helper_server.url, "Cy Elsewhere")
    me = Account(helper_server.url, ann.player())

    cy.post("/challenges", {"to": me.id, "ruleset": "draw-one"})  # someone else challenges Ann
    ann.wait_for(lambda: shows(ann, RECEIVED), "Cy's challenge in Ann's notice")
    assert "Cy Elsewhere challenges you" in ann.text(RECEIVED)
    ann.click("[data-action=decline-challenge]")
    ann.wait_for(lambda: not shows(ann, RECEIVED), "the declined challenge gone")
    assert cy.get("/challenges")["items"] == [], "declined: no longer pending for Cy either"

    challenge_from_page(ann, cy.id)
    ann.wait_for(lambda: shows(ann, SENT), "Ann's challenge to Cy in her notice")
    ann.click("[data-action=cancel-challenge]")
    ann.wait_for(lambda: not shows(ann, SENT), "the cancelled challenge gone")
    assert cy.get("/challenges")["items"] == [], "cancelled: Cy has nothing to answer"

    challenge_from_page(ann, cy.id)
    ann.wait_for(lambda: shows(ann, SENT), "another challenge to Cy")
    cy.post(f"/challenges/{cy.get('/challenges')['items'][0]['id']}/decline", status=200)
    ann.wait_for(lambda: ann.text("#challenges .challenge-message") == "Cy Elsewhere declined your challenge.",
                 "Cy's refusal, said in the notice")
    assert not shows(ann, SENT)

    challenge_from_page(ann, cy.id)
    ann.wait_for(lambda: shows(ann, SENT), "the next challenge to Cy")
    own_game = ann.deal("classic", "seed", 5)  # Ann is at a table when Cy accepts
    pending = cy.get("/challenges")["items"]
    assert len(pending) == 1
    cy.post(f"/challenges/{pending[0]['id']}/accept")
    offer = "#challenges li[data-direction=begun]"
    ann.wait_for(lambda: shows(ann, offer), "the race offered in the notice")
    assert ann.text(offer).startswith("Cy Elsewhere accepted your challenge: the race is on."), ann.text(offer)
    assert ann.driver.current_url.endswith(f"#/game/{own_game}"), "her own game stays on the screen"
    ann.click("[data-action=challenge-race]")
    race_game = ann.wait_for_game()
    assert race_game != own_game
    assert ann.js("return document.querySelector('.race-strip')?.dataset.race") == pending[0]["id"]
    ann.wait_for(lambda: not shows(ann, offer), "the offer gone once taken")


def test_a_player_who_accepts_no_challenges_says_so_on_their_page_and_is_not_challenged(
    open_page: Callable[..., Page], helper_server: ServerProcess
) -> None:
    bob = open_page()
    bob.register("Bob Busy")
    bob.click("#who a.name")
    bob.wait_for(lambda: bob.js("return document.querySelector('#challenge-policy')?.disabled === false"), "read")
    choose(bob, "#challenge-policy", "nobody")
    bob.wait_for(lambda: bob.text(".policy .status-line") == "Saved.", "the setting saved")
    me = Account(helper_server.url, bob.player())
    assert me.get("/players/me")["acceptChallengesFrom"] == "nobody"
    bob.open(f"#/player/{me.id}")  # read again: the page shows what the server holds
    bob.wait_for(lambda: bob.js("return document.querySelector('#challenge-policy')?.disabled === false"), "read again")
    assert bob.js("return document.querySelector('#challenge-policy').value") == "nobody"

    ann = open_page()
    ann.register("Ann Refused")
    ann.expect_status(403)
    challenge_from_page(ann, me.id)
    ann.wait_for(lambda: ann.js("return document.querySelector('form.challenge .status-line')?.dataset.kind")
                 == "error", "the refusal")  # fmt: skip
    assert "challenge" in ann.text("form.challenge .status-line").lower()
    assert not shows(ann, SENT), "nothing was made"
    assert me.get("/challenges")["items"] == []
