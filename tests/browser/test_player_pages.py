"""A player's page: their rating in each ruleset and a chart of its history (an SVG line with its
uncertainty band, readable at a desktop's and a phone's width), reached from a name in a list."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from tests.live import ServerProcess

from .accounts import Account, rated_race
from .conftest import PHONE
from .pages import Page

CHART = """
const svg = document.querySelector(`[data-history='${arguments[0]}'] svg.rating-chart`);
if (!svg || !svg.querySelector('circle')) return null;  // not drawn yet
const labels = (css) => [...svg.querySelectorAll(css)].map((t) => t.textContent);
return {
  ratings: [...svg.querySelectorAll('circle')].map((c) => Number(c.dataset.rating)),
  numbers: [...svg.querySelectorAll('circle')].map((c) => Number(c.dataset.raceNumber)),
  band: !!svg.querySelector('polygon.band'),
  yLabels: [...svg.querySelectorAll('.grid text')].map((t) => [Number(t.textContent), Number(t.getAttribute('y'))]),
  xLabels: labels('.x-axis text').map(Number),
  width: svg.getBoundingClientRect().width,
  box: svg.parentElement.clientWidth,
  fontPx: Math.min(...[...svg.querySelectorAll('text')].map((t) => parseFloat(getComputedStyle(t).fontSize))),
  label: svg.getAttribute('aria-label'),
};
"""


def chart(page: Page, ruleset: str = "classic") -> dict[str, Any] | None:
    found: dict[str, Any] | None = page.js(CHART, ruleset)
    return found


def test_a_players_page_shows_their_rating_and_its_history_as_a_chart(
    open_page: Callable[..., Page], web: ServerProcess, helper_server: ServerProcess, screenshots: Path
) -> None:
    ann = open_page()
    ann.register("Ann Rated")
    bob = Account.register(helper_server.url, "Bob Rated")
    me = Account(helper_server.url, ann.player())
    for winner, loser in ((me, bob), (me, bob), (bob, me), (me, bob), (me, bob), (bob, me), (me, bob)):
        last = rated_race(winner, loser)

    ann.open(f"#/race/{last['id']}")  # a name in a list leads to the player's page
    ann.click(f"table.standings [data-player-link='{bob.id}']")
    ann.wait_for(lambda: ann.text("#player-title").startswith("Bob Rated"), "Bob's page")
    rating = bob.get(f"/players/{bob.id}/ratings")["ratings"][0]
    history = list(reversed(bob.get(f"/players/{bob.id}/ratings/classic/history")["items"]))
    row = "table.ratings-table tr[data-ruleset=classic]"
    assert ann.js(f"return document.querySelector(\"{row}\").dataset.rating") == str(rating["rating"])
    assert f"± {rating['deviation']}" in ann.text(row)
    drawn = ann.wait_for(lambda: chart(ann), "the chart of Bob's classic rating")
    assert drawn["ratings"] == [history[0]["ratingBefore"]] + [p["ratingAfter"] for p in history], (
        "a point per rated race, oldest first, after the rating it started from"
    )
    assert drawn["numbers"] == list(range(len(history) + 1))
    assert drawn["band"], "the deviation as a band around the line"
    values = [value for value, _ in sorted(drawn["yLabels"], key=lambda label: label[1])]
    assert values == sorted(values, reverse=True), "higher ratings higher up"
    assert values[-1] <= min(drawn["ratings"]) <= max(drawn["ratings"]) <= values[0]
    assert drawn["xLabels"][0] == 0
    assert drawn["xLabels"][-1] == len(history), "the last race is labelled"
    assert drawn["fontPx"] >= 12, "axis labels at a readable size"
    assert f"to {history[-1]['ratingAfter']}" in drawn["label"], "a screen reader hears the chart in words"
    assert ann.js("return !!document.querySelector('form.challenge [data-action=challenge]')"), "Bob can be challenged"
    assert ann.fits()
    ann.screenshot(screenshots / "player-desktop.png")

    ann.click("#who a.name")  # your own page: no challenge to yourself, whom you accept them from instead
    ann.wait_for(lambda: ann.text("#player-title").startswith("Ann Rated"), "Ann's own page")
    assert ann.js("return !document.querySelector('form.challenge')")
    assert ann.js("return document.querySelector('#challenge-policy')?.value") in ("everyone", "")
    mine = ann.wait_for(lambda: chart(ann), "the chart of Ann's classic rating")
    assert len(mine["ratings"]) == 8

    phone = open_page(*PHONE)  # a visitor on a phone: the same chart, drawn at the phone's width
    phone.open(f"#/player/{bob.id}")
    small = phone.wait_for(lambda: chart(phone), "the chart on a phone")
    assert small["ratings"] == drawn["ratings"]
    assert abs(small["width"] - small["box"]) <= 1, "drawn at the width it has, not scaled down"
    assert small["width"] < 400
    assert small["fontPx"] >= 12
    assert len(small["xLabels"]) >= 2
    assert "Pick a name" in phone.text("section.profile")
    assert phone.fits()
    phone.screenshot(screenshots / "player-phone.png")
