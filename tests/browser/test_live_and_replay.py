"""Two pages on one game stay in step (the stream), the replay slider shows any version, and a
player's record follows their finished games."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from domain import GameState, decide, evolve, get_ruleset
from domain.commands import Command, Draw, MoveCard, Resign, Undo

from .conftest import PHONE
from .pages import Page, expected_table
from .test_play import card_moves, classic_seed_with

CLASSIC = get_ruleset("classic")


def states_by_version(state: GameState, commands: list[Command]) -> dict[int, GameState]:
    """Every state a game passes through, by version (a move may append several events)."""
    seen = {state.version: state}
    for command in commands:
        for event in decide(state, command):
            state = evolve(state, event)
            seen[state.version] = state
    return seen


def resign(page: Page) -> None:
    page.click("[data-action=resign]")
    page.click("dialog.ask button[value=yes]")
    page.wait_for(lambda: page.text(".ended").startswith("Resigned"), "the game to end as resigned")


def test_two_pages_on_one_game_stay_in_step(open_page: Callable[..., Page]) -> None:
    seed, start = classic_seed_with(lambda s: len(card_moves(s)) >= 1)
    first = open_page()
    first.register("Two Tabs")
    game_id = first.deal("classic", "seed", seed)
    second = open_page()
    second.adopt(first.player())  # the same player in another window
    second.open(f"#/game/{game_id}")
    second.wait_table(expected_table(start))

    state, _ = _after(start, Draw())
    first.play(Draw())
    second.wait_table(expected_table(state))  # only the stream told the second page

    move = card_moves(state)[0]
    state, _ = _after(state, move)
    second.play(move)
    first.wait_table(expected_table(state))
    assert first.text("[data-moves]") == second.text("[data-moves]") == "2"

    state, _ = _after(state, Undo())
    second.click("[data-action=undo]")
    first.wait_table(expected_table(state))

    resign(first)
    second.wait_for(lambda: second.text(".ended").startswith("Resigned"), "the other page to show the end")
    assert second.table()["status"] == "resigned"
    assert second.js("return document.querySelector('[data-action=undo]').disabled")

    first.click("header.site a[data-nav=stats]")
    played, won = "td[data-ruleset=classic][data-stat=played]", "td[data-ruleset=classic][data-stat=won]"
    first.wait_for(lambda: first.text(played) == "1", "one classic game played")
    assert first.text(won) == "0"


def _after(state: GameState, command: Command) -> tuple[GameState, int]:
    events = decide(state, command)
    for event in events:
        state = evolve(state, event)
    return state, len(events)


def test_the_replay_slider_shows_the_table_of_a_chosen_version(
    open_page: Callable[..., Page], screenshots: Path
) -> None:
    from selenium.webdriver.common.keys import Keys

    seed, start = classic_seed_with(lambda s: len(card_moves(s)) >= 1)
    page = open_page()
    page.register("Replayer")
    game_id = page.deal("classic", "seed", seed)
    commands: list[Command] = []
    state = start
    for command in (Draw(), Draw(), card_moves(start)[0], Draw(), Undo()):
        if isinstance(command, MoveCard) and command not in card_moves(state):
            continue
        state, _ = _after(state, command)
        commands.append(command)
        if isinstance(command, Undo):
            page.click("[data-action=undo]")
        else:
            page.play(command)
        page.wait_table(expected_table(state))
    states = states_by_version(start, commands)
    last = max(states)

    page.click("[data-action=replay]")  # one's own game, still in play
    page.wait_for(lambda: page.js("return !!document.querySelector('[data-replay-slider]')"), "the replay")
    assert int(page.js("return document.querySelector('[data-replay-slider]').max")) == last
    assert page.js("return document.querySelectorAll('ol.events button').length") == last
    page.wait_table(expected_table(states[last]))

    chosen = 3
    page.tab_to("[data-replay-slider]")
    page.keys(Keys.HOME, *[Keys.ARROW_RIGHT] * (chosen - 1))
    page.wait_for(lambda: page.text(".position") == f"{chosen} / {last}", "the slider to rest on the chosen version")
    page.wait_table(expected_table(states[chosen]))
    assert page.js("return document.querySelector('ol.events button[aria-current]').dataset.version") == str(chosen)

    page.screenshot(screenshots / "replay-desktop.png")
    assert page.fits(), "the replay's table fits beside its event list"
    page.click("ol.events button[data-version='1']")
    page.wait_table(expected_table(states[1]))
    page.click("[data-action=forward]")
    page.wait_table(expected_table(states[2]))

    # Somebody else may replay it once it has ended, not before.
    other = open_page(*PHONE)
    other.register("Onlooker")
    other.open(f"#/replay/{game_id}")
    other.wait_for(lambda: "still being played" in other.text("main"), "the replay to wait for the end")
    page.open(f"#/game/{game_id}")
    resign(page)
    final, _ = _after(state, Resign())
    other.open(f"#/replay/{game_id}")
    other.wait_for(lambda: other.js("return !!document.querySelector('[data-replay-slider]')"), "the replay")
    other.wait_table(expected_table(final))
    other.click("ol.events button[data-version='2']")
    other.wait_table(expected_table(states[2]))
    other.screenshot(screenshots / "replay-phone.png")
    assert other.fits()
