"""A game's analysis on the web table: the player asks once the game has ended, sees the progress,
then the move list with every position's verdict and the turning point marked; a click on a
position shows its table, and the winning line from before the turning point steps forward and
back. A game the service abandoned says so, never that the player resigned. A game whose cards are
still hidden says why in words."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx
import psycopg

from domain import Resign, command_to_api
from tests.live import ServerProcess
from tests.support import WON_DEAL, thrown_away

from .conftest import PHONE
from .pages import Page, table_shown

ANALYSED = 60.0  # seconds the analysis may take (a few seconds of solver time on a quiet machine)


@contextmanager
def analysis_worker(database_url: str, log: Path) -> Iterator[ServerProcess]:
    """A server process that runs analysis jobs (the package's servers run none), for as long as
    the test needs one."""
    worker = ServerProcess(database_url, log, env={"ANALYSIS_WORKERS": "1"})
    try:
        worker.wait_until_up()
        yield worker
    finally:
        worker.stop()


def verdict_text(position: dict[str, Any]) -> str:
    if position["verdict"] == "won":
        count = position["movesToWin"]
        return f"won in {count} move{'' if count == 1 else 's'}"
    return str(position["verdict"])


def ended_game(server: ServerProcess, token: str, body: dict[str, Any], moves: list[dict[str, Any]]) -> str:
    """A game of the player with ``token``, dealt and played by its API to the end (set-up only)."""
    auth = {"Authorization": f"Bearer {token}"}
    with httpx.Client(base_url=server.url, timeout=30) as http:
        dealt = http.post("/games", json=body, headers=auth)
        assert dealt.status_code == 201, dealt.text
        game_id: str = dealt.json()["id"]
        for move in moves:
            reply = http.post(f"/games/{game_id}/moves", json=move, headers=auth)
            assert reply.status_code == 200, (move, reply.text)
    return game_id


def rows(page: Page) -> list[dict[str, Any]]:
    """The move list as the page shows it: each row's version, verdict in words and mark."""
    return page.js(  # type: ignore[no-any-return]
        "return [...document.querySelectorAll('ol.positions li')].map((li) => ({"
        "version: Number(li.dataset.version), verdict: li.querySelector('.verdict').textContent,"
        "turning: li.hasAttribute('data-turning-point'), text: li.textContent}))"
    )


def list_in_view(page: Page) -> dict[str, bool]:
    """Whether the move list, as it opens, shows the turning point's row whole (in the list and in
    the window, with no scrolling of the page), and starts with a whole row at its top edge (not
    one cut in half)."""
    return page.js(  # type: ignore[no-any-return]
        "const list = document.querySelector('ol.positions');"
        "const box = list.getBoundingClientRect(); const top = box.top + list.clientTop;"
        "const bottom = top + list.clientHeight;"
        "const items = [...list.querySelectorAll('li')].map((li) => li.getBoundingClientRect());"
        "const turning = list.querySelector('li[data-turning-point]').getBoundingClientRect();"
        "const first = items.find((r) => r.bottom > top + 0.5);"
        "return {turningInSight: turning.top >= top - 0.5 && turning.bottom <= Math.min(bottom, innerHeight) + 0.5,"
        "topRowWhole: first.top >= top - 0.5};"
    )


def in_sight(shown: dict[str, Any], card: str) -> bool:
    """Whether a table as `table_shown` gives it shows ``card`` face up."""
    return (card in shown["waste"]["fan"] or card == shown["reserve"]["top"]
            or any(card in column for column in shown["tableau"])
            or any(pile["top"] == card for pile in shown["foundations"].values()))


def test_the_analysis_shows_progress_verdicts_past_tables_and_the_winning_line(
    open_page: Callable[..., Page], web: ServerProcess, helper_server: ServerProcess, screenshots: Path,
    database_url: str, tmp_path: Path,
) -> None:
    page = open_page()
    page.register("Analyst")
    token = page.player()["token"]
    along, wrong = thrown_away()
    moves = [command_to_api(command) for command in (*along, wrong, Resign())]
    game_id = ended_game(helper_server, token, {"ruleset": "open-runs", "deal": {"seed": WON_DEAL}}, moves)

    page.open(f"#/game/{game_id}")
    page.wait_for(lambda: page.text(".ended").startswith("Resigned"), "the resigned game")
    page.click("[data-action=analyse]")
    page.wait_for(lambda: page.driver.current_url.endswith(f"#/analysis/{game_id}"), "the analysis page")
    page.wait_for(lambda: page.text("[data-analysis-status]").startswith("Queued"), "the queued analysis")
    assert page.js("return document.querySelector('.analysis-progress progress').value") == 0
    assert page.js("return document.querySelectorAll('ol.positions li').length") == 0
    page.screenshot(screenshots / "analysis-progress.png")

    auth = {"Authorization": f"Bearer {token}"}
    with analysis_worker(database_url, tmp_path / "worker.log") as worker, \
            httpx.Client(base_url=web.url, timeout=30) as http:
        # asked again where a worker runs: the same job, taken at once; the page hears it on its stream
        assert httpx.post(f"{worker.url}/games/{game_id}/analysis", headers=auth).status_code == 202
        page.wait_for(lambda: rows(page), "the move list", timeout=ANALYSED)
        analysis = http.get(f"/games/{game_id}/analysis").json()
        point = analysis["turningPoint"]
        line = point["winningLineBefore"]
        before = http.get(f"/games/{game_id}/states/{point['before']}").json()
        deal = http.get(f"/games/{game_id}/states/1").json()
        after = http.get(f"/games/{game_id}/states/{point['after']}").json()
        final = http.get(f"/games/{game_id}").json()
    assert analysis["status"] == "done"
    positions = analysis["positions"]
    assert len(positions) == len(moves) + 1  # the deal and one after each move

    shown = rows(page)
    assert [(r["version"], r["verdict"]) for r in shown] == [(p["version"], verdict_text(p)) for p in positions]
    marked = [r for r in shown if r["turning"]]
    assert [r["version"] for r in marked] == [point["after"]]
    assert "Turning point" in marked[0]["text"]
    assert point["after"] == positions[len(along) + 1]["version"]  # the move off the line, not the resignation
    assert page.text(".analysis-summary").startswith(f"Turning point: move {len(along) + 1}")
    assert page.js("return document.querySelector('.analysis-progress').hidden")
    assert list_in_view(page) == {"turningInSight": True, "topRowWhole": True}
    # the window as laid out (a capture beyond the window lays the list out again, at another height)
    page.screenshot(screenshots / "analysis-moves.png", full=False)

    page.click("ol.positions button[data-version='0']")  # the deal: the game's version 1
    page.wait_table(table_shown(deal))
    assert page.text("[data-caption]") == f"The deal: {verdict_text(positions[0])}."
    page.click(f"ol.positions button[data-version='{point['after']}']")
    page.wait_table(table_shown(after))
    assert "The turning point" in page.text("[data-caption]")
    assert page.js("return document.querySelector('ol.positions button[aria-current]').dataset.version") \
        == str(point["after"])
    page.click(f"ol.positions button[data-version='{point['before']}']")
    page.wait_table(table_shown(before))
    page.screenshot(screenshots / "analysis-position.png")
    page.click("[data-action=final]")
    page.wait_table(table_shown(final))
    assert not page.js("return document.querySelector('ol.positions button[aria-current]')")

    def shows_move(step: int) -> None:
        page.wait_for(lambda: page.text("[data-line-step]") == f"Move {step + 1} of {len(line)}",
                      f"move {step + 1} of the line")
        move = line[step]
        assert json.loads(page.js("return document.querySelector('[data-caption]').dataset.move")) == move
        page.wait_table(table_shown(before))  # each move is shown over the table before the turning point
        highlighted = page.js("return [...document.querySelectorAll('.table .hinted')]"
                              ".map((e) => e.dataset.card || e.dataset.pile)")
        if move["type"] == "move":
            assert highlighted == ([move["card"]] if in_sight(table_shown(before), move["card"]) else [])
        else:
            assert highlighted == ["stock"]

    page.click("[data-action=line]")
    shows_move(0)
    assert page.js("return document.querySelector('[data-action=line-back]').disabled")
    for action, step in [("forward", 1), ("forward", 2), ("back", 1), ("back", 0), ("forward", 1)]:
        page.click(f"[data-action=line-{action}]")
        shows_move(step)
    seen = next(index for index, move in enumerate(line)  # a move whose card lies face up before the turning point
                if move["type"] == "move" and in_sight(table_shown(before), move["card"]))
    steps = range(0, seen - 1, -1) if seen < 1 else range(2, seen + 1)  # from move 2 (step 1) to it
    for step in steps:
        page.click(f"[data-action=line-{'back' if seen < 1 else 'forward'}]")
        shows_move(step)
    assert page.js("return document.querySelectorAll('.table [data-card].hinted').length") == 1
    assert page.fits()
    page.screenshot(screenshots / "analysis-line.png")

    phone = open_page(*PHONE)  # the same player on a phone: the analysis is there at once
    phone.adopt(page.player())
    phone.open(f"#/analysis/{game_id}")
    phone.wait_for(lambda: rows(phone) == shown, "the move list on the phone")
    assert phone.fits()
    phone.screenshot(screenshots / "analysis-phone.png")


def test_an_abandoned_games_analysis_says_the_game_was_abandoned_while_it_could_still_be_won(
    open_page: Callable[..., Page], helper_server: ServerProcess, web: ServerProcess, database_url: str,
    tmp_path: Path, screenshots: Path,
) -> None:
    page = open_page()
    page.register("Idle Analyst")
    token = page.player()["token"]
    along, _ = thrown_away()
    moves = [command_to_api(command) for command in along[:5]]  # five moves along a winning line, then nothing
    game_id = ended_game(helper_server, token, {"ruleset": "open-runs", "deal": {"seed": WON_DEAL}}, moves)
    with psycopg.connect(database_url, autocommit=True) as conn:  # its last move two days ago (set-up only)
        conn.execute("UPDATE games SET updated_at = now() - interval '2 days' WHERE id = %s", (game_id,))
    # a server that ends games idle for a day, for this test alone (every other game here moved today)
    abandoning = ServerProcess(database_url, tmp_path / "abandoning.log",
                               env={"ABANDON_AFTER_DAYS": "1", "ABANDON_CHECK_SECONDS": "1", "ANALYSIS_WORKERS": "0"})
    try:
        abandoning.wait_until_up()
        page.wait_for(lambda: httpx.get(f"{web.url}/games/{game_id}").json()["status"] == "resigned", "the game's end")
    finally:
        abandoning.stop()
    page.open(f"#/game/{game_id}")
    page.wait_for(lambda: page.text(".ended").startswith("Abandoned: no move for 2 days"), "the abandoned game")
    with analysis_worker(database_url, tmp_path / "worker.log"):
        page.click("[data-action=analyse]")
        page.wait_for(lambda: rows(page), "the move list", timeout=ANALYSED)
    with httpx.Client(base_url=web.url, timeout=30) as http:
        analysis = http.get(f"/games/{game_id}/analysis").json()
    positions, point = analysis["positions"], analysis["turningPoint"]
    assert [p["verdict"] for p in positions] == ["won"] * 6 + ["lost"]  # the player's last table is still won
    assert point["move"] == {"type": "abandon"}

    shown = rows(page)
    assert [(r["version"], r["verdict"]) for r in shown] == [(p["version"], verdict_text(p)) for p in positions]
    assert [r["version"] for r in shown if r["turning"]] == [point["after"]] == [positions[-1]["version"]]
    assert "Abandoned by the service: no move for 2 days" in shown[-1]["text"]
    summary = page.text(".analysis-summary")
    assert summary.startswith("Turning point: the game was abandoned after 2 days without a move. "
                              "The game ended there while it could still be won"), summary
    assert "Abandoned" in page.text(".game-head")
    page.click(f"ol.positions button[data-version='{point['after']}']")
    page.wait_for(lambda: page.text("[data-caption]").startswith("The end (Abandoned by the service"),
                  "the caption of the end")
    assert "the game was abandoned while it could still be won" in page.text("[data-caption]")
    page.screenshot(screenshots / "analysis-abandoned.png")
    said = " ".join((summary, page.text(".game-head"), page.text("[data-caption]"), shown[-1]["text"]))
    assert "esign" not in said  # the player did not resign: the service ended the game


def test_a_daily_game_during_its_date_says_in_words_why_it_cannot_be_analysed(
    open_page: Callable[..., Page], helper_server: ServerProcess
) -> None:
    page = open_page()
    page.register("Daily Analyst")
    game_id = ended_game(helper_server, page.player()["token"], {"deal": {"daily": "today"}}, [{"type": "resign"}])
    page.open(f"#/game/{game_id}")
    page.wait_for(lambda: page.text(".ended").startswith("Resigned"), "the resigned game")
    page.expect_status(409)
    page.click("[data-action=analyse]")
    page.wait_for(lambda: "cannot be analysed yet" in page.status_text(), "the refusal in words")
    said = page.status_text()
    assert "face-down cards may not be shown yet" in said
    assert not any(raw in said for raw in ("{", "409", "cards_hidden"))  # words, not an error dump
    assert page.driver.current_url.endswith(f"#/game/{game_id}")
