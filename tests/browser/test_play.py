"""Playing in the browser: register, deal, win a whole game by clicks, an illegal move, undo,
and the keyboard alone. The rules engine, in-process, says what each table must look like."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import httpx
import pytest

from domain import GameState, IllegalMove, apply, decide, get_ruleset, legal_moves
from domain.cards import CODES, RANKS
from domain.commands import Command, Draw, MoveCard, Recycle, Undo
from domain.piles import TABLEAU
from service.deals.deal_pools import decode_line, load_deal_pool, start_state

from .conftest import DESKTOP, PHONE
from .pages import Page, expected_table

CLASSIC = get_ruleset("classic")


def classic_seed_with(condition: Callable[[GameState], bool]) -> tuple[int, GameState]:
    """The first classic seed whose opening deal satisfies ``condition`` (the test needs one)."""
    for seed in range(1, 500):
        state = start_state(CLASSIC, seed, {"source": "seed", "seed": seed})
        if condition(state):
            return seed, state
    raise AssertionError("no such seed below 500")


def card_moves(state: GameState) -> list[MoveCard]:
    return [move for move in legal_moves(state) if isinstance(move, MoveCard)]


def an_illegal_move(state: GameState) -> tuple[MoveCard, str]:
    """The reserve top onto a column where the rules refuse it, and the rules' own reason."""
    top = state.reserve[-1]
    for column in TABLEAU:
        move = MoveCard(top, column)
        try:
            decide(state, move)
        except IllegalMove as refused:
            return move, refused.reason
    raise AssertionError("the reserve top fits every column")


def busiest_table(state: GameState, line: list[Command]) -> int:
    """The index of the move after which the columns hold the most cards (while the reserve lasts)."""
    counts = []
    for move in line:
        state, _ = apply(state, move)
        counts.append(sum(len(column) for column in state.tableau) if state.reserve else 0)
    return counts.index(max(counts))


def test_a_new_player_registers_and_deals_the_table_of_seed_000(open_page: Callable[..., Page]) -> None:
    page = open_page()
    page.register("Ada")
    assert page.player()["name"] == "Ada", "the token is kept in the browser"
    assert page.player()["token"], "the token is kept in the browser"
    me = httpx.get(page.base_url + "/players/me", headers={"Authorization": f"Bearer {page.player()['token']}"})
    assert me.json()["token"]["name"] == "web table", "the page keeps a token of its own, revocable alone"

    game_id = page.deal("classic", "seed", 42)
    start = start_state(CLASSIC, 42, {"source": "seed", "seed": 42})
    page.wait_table(expected_table(start))

    assert page.text("#game-title") == "Classic · Seed 42"
    assert page.js("return document.querySelector('[data-base-rank]').dataset.baseRank") == RANKS[start.base_rank]
    assert page.text("[data-moves]") == "0"
    assert page.text("[data-clock]").count(":") == 1, "a clock shows m:ss"
    top = CODES[start.reserve[-1]]
    label = page.js("return document.querySelector(arguments[0]).getAttribute('aria-label')", page.card(top))
    assert label.endswith("reserve top"), f"cards are named for screen readers: {label!r}"
    assert " of " in label, f"cards are named for screen readers: {label!r}"
    # Reloading the page (a new visit) finds the same game and the same player.
    page.open(f"#/game/{game_id}")
    page.wait_table(expected_table(start))
    assert page.text("#who .name") == "Ada"


def test_a_whole_game_is_won_by_clicking_cards_and_buttons(open_page: Callable[..., Page], screenshots: Path) -> None:
    pool = load_deal_pool("classic")
    assert pool is not None
    number = min(range(1, pool.size + 1), key=lambda n: (pool.deal(n).length, n))  # the shortest stored line
    item = pool.deal(number)
    line = decode_line(item.line)
    page = open_page()
    page.register("Winner")
    page.deal("classic", "pool", number)
    state = start_state(CLASSIC, item.seed, {"source": "pool", "pool": number})
    page.wait_table(expected_table(state))

    busiest = busiest_table(state, line)
    for index, move in enumerate(line):
        state, _ = apply(state, move)
        page.play(move)
        assert page.table() == expected_table(state), f"after move {index + 1} ({move})"
        if index == busiest:  # the README's screenshot: a table in full play
            assert page.fits(), "the desktop table is in sight"
            page.screenshot(screenshots / "table-desktop.png", full=False)
            page.emulate(*PHONE)
            page.screenshot(screenshots / "table-phone.png")
            assert page.fits(), "the phone table is in sight"
            page.driver.execute_cdp_cmd("Emulation.clearDeviceMetricsOverride", {})
            page.driver.set_window_size(*DESKTOP)

    assert state.status.value == "won"
    page.wait_for(lambda: page.js("return !document.querySelector('.ended').hidden"), "the end of the game")
    assert page.text(".ended").startswith("Won"), page.text(".ended")
    assert page.table()["status"] == "won"
    assert all(f["count"] == 13 for f in page.table()["foundations"].values())
    assert page.js("return document.querySelector('[data-action=undo]').disabled"), "a won game takes no more moves"
    page.screenshot(screenshots / "table-won-desktop.png", full=False)


def test_an_illegal_move_shows_the_servers_reason_and_changes_nothing(open_page: Callable[..., Page]) -> None:
    seed, start = classic_seed_with(lambda s: an_illegal_move(s) is not None)
    move, reason = an_illegal_move(start)
    page = open_page()
    page.expect_status(422)
    page.register("Careful")
    game_id = page.deal("classic", "seed", seed)
    page.wait_table(expected_table(start))

    page.select_and_move(CODES[move.card], move.to)
    page.wait_for(lambda: reason in page.status_text(), f"the reason {reason!r}")
    assert page.js("return document.querySelector('.status-line').dataset.kind") == "error"
    assert page.table() == expected_table(start), "the table is as it was"

    page.open(f"#/game/{game_id}")  # read afresh from the server: nothing was recorded
    page.wait_table(expected_table(start))


def test_undo_takes_back_the_last_move(open_page: Callable[..., Page]) -> None:
    seed, start = classic_seed_with(lambda s: bool(card_moves(s)))
    move = card_moves(start)[0]
    page = open_page()
    page.register("Second thoughts")
    page.deal("classic", "seed", seed)
    page.wait_table(expected_table(start))

    moved, _ = apply(start, move)
    page.play(move)
    page.wait_table(expected_table(moved))
    drawn, _ = apply(moved, Draw())
    page.play(Draw())
    page.wait_table(expected_table(drawn))

    undone, _ = apply(drawn, Undo())
    page.click("[data-action=undo]")
    page.wait_table(expected_table(undone))
    assert expected_table(undone) | {"version": 0} == expected_table(moved) | {"version": 0}, "the draw is taken back"
    undone_again, _ = apply(undone, Undo())
    page.click("[data-action=undo]")
    page.wait_table(expected_table(undone_again))
    assert page.table()["tableau"] == expected_table(start)["tableau"], "and the card move before it"


def test_the_keyboard_alone_registers_deals_and_plays(open_page: Callable[..., Page]) -> None:
    from selenium.webdriver.common.keys import Keys

    seed, start = classic_seed_with(lambda s: any(m.card == s.reserve[-1] for m in card_moves(s)))
    move = next(m for m in card_moves(start) if m.card == start.reserve[-1])
    page = open_page()
    page.open("#/")
    page.tab_to("#player-name")
    page.keys("Keys Only", Keys.ENTER)
    page.wait_for(lambda: page.text("#who .name") == "Keys Only", "the player to be signed in")

    page.tab_to("input[name=ruleset][value=classic]")  # Tab enters the radio group; arrows choose
    page.tab_to("input[name=source]:checked")
    page.keys(Keys.ARROW_DOWN)
    assert page.focused("input[name=source][value=seed]")
    assert page.js(
        "return document.querySelector('input[name=source][value=seed]').checked")
    page.tab_to("input[name=seed]")
    page.keys(str(seed))
    page.tab_to("[data-action=deal]")
    page.keys(Keys.ENTER)
    page.wait_for_game()
    page.wait_table(expected_table(start))

    page.tab_to(page.card(CODES[move.card]))
    page.keys(Keys.ENTER)
    page.wait_for(lambda: page.js("return document.activeElement.getAttribute('aria-pressed')") == "true",
                  "the focused card to be selected")
    page.tab_to(page.pile(move.to, CODES[move.card]))
    page.keys(Keys.ENTER)
    moved, _ = apply(start, move)
    page.wait_table(expected_table(moved))

    page.tab_to(".table button[data-pile=stock]")
    page.keys(Keys.SPACE)
    drawn, _ = apply(moved, Draw())
    page.wait_table(expected_table(drawn))
    assert page.focused(".table button[data-pile=stock]"), "focus stays where the player was"


@pytest.mark.parametrize("ruleset", ["draw-one", "open-runs"])
def test_every_ruleset_deals_and_draws(open_page: Callable[..., Page], ruleset: str) -> None:
    rules = get_ruleset(ruleset)
    page = open_page(*PHONE)
    page.register(f"Phone {ruleset}")
    page.deal(ruleset, "seed", 7)
    state = start_state(rules, 7, {"source": "seed", "seed": 7})
    fan = rules.draw_count if rules.draw_count == 1 else 3
    page.wait_table(expected_table(state, fan))
    for _ in range(3):
        state, _ = apply(state, Draw())
        page.play(Draw())
        assert page.table() == expected_table(state, fan)
    assert page.js("return document.documentElement.clientWidth") == PHONE[0]
    assert page.fits(), "nothing sticks out at 390 px"


def test_legal_destinations_light_up_and_a_foundation_card_comes_back(open_page: Callable[..., Page]) -> None:
    def base_card_returns(state: GameState) -> bool:
        return any(m.card == state.foundation_cards(suit)[-1] for m in card_moves(state)
                   for suit in range(4) if state.foundation_cards(suit))

    seed, start = classic_seed_with(base_card_returns)
    base = next(card for suit in range(4) for card in start.foundation_cards(suit))  # the deal's one foundation card
    targets = sorted(m.to for m in card_moves(start) if m.card == base)
    page = open_page()
    page.register("Returner")
    page.deal("classic", "seed", seed)
    page.wait_table(expected_table(start))

    code = CODES[base]
    foundation = f".table button[data-pile=foundation][data-suit={code[1]}]"
    page.click(foundation)  # nothing selected: the foundation's top is picked up (classic allows returns)
    page.wait_for(lambda: page.js("return document.querySelector(arguments[0]).getAttribute('aria-pressed')",
                                  foundation) == "true", "the foundation card to be selected")
    page.wait_for(lambda: page.js("return [...document.querySelectorAll('.column.legal')].map((c) => c.dataset.pile)")
                  == targets, f"exactly the legal columns {targets} to light up")
    heading = page.js("return document.querySelector(arguments[0]).getAttribute('aria-label')", page.pile(targets[0]))
    assert heading.endswith("a legal destination"), heading

    page.click(page.pile(targets[0]))
    moved, _ = apply(start, MoveCard(base, targets[0]))
    page.wait_table(expected_table(moved))
    assert page.js("return document.querySelector('[data-base-rank]').dataset.baseRank") == RANKS[start.base_rank], \
        "the base rank stays, though its card left the foundation"


def test_a_hint_shows_the_ranked_move_and_the_solver_hint_warns_first(open_page: Callable[..., Page]) -> None:
    from domain import hints

    seed, start = classic_seed_with(lambda s: isinstance(hints(s)[0].move, MoveCard))
    best = hints(start)[0]
    assert isinstance(best.move, MoveCard)
    page = open_page()
    page.register("Hinted")
    page.deal("classic", "seed", seed)
    page.wait_table(expected_table(start))

    page.click("[data-action=hint]")
    page.wait_for(lambda: page.status_text().startswith("Hint:"), "the hint")
    assert best.reason.lower() in page.status_text().lower(), (best.reason, page.status_text())
    assert page.js("return document.querySelector('.card.hinted')?.dataset.card") == CODES[best.move.card]
    assert page.js("return document.querySelector('.hint-target')?.dataset.pile") in {best.move.to, "foundation"}
    assert not page.js("return !!document.querySelector('[data-assisted]')")

    page.click("[data-action=solver]")
    page.wait_for(lambda: page.js("return !!document.querySelector('dialog.ask[open]')"), "the warning")
    assert "assisted" in page.text("dialog.ask")
    page.click("dialog.ask button[value='']")  # cancel: nothing asked, nothing marked
    assert not page.js("return !!document.querySelector('[data-assisted]')")

    page.click("[data-action=solver]")
    page.click("dialog.ask button[value=yes]")
    page.wait_for(lambda: page.status_text().startswith("Solver:"), "the solver's answer")
    page.wait_for(
        lambda: page.js("return !!document.querySelector('[data-assisted]')"), "the game to be marked assisted"
    )


def test_the_play_page_lists_the_players_games_to_resume(open_page: Callable[..., Page]) -> None:
    page = open_page()
    page.register("Returning")
    older = page.deal("classic", "seed", 11)
    state, _ = apply(start_state(CLASSIC, 11, {"source": "seed", "seed": 11}), Draw())
    page.play(Draw())
    newer = page.deal("draw-one", "seed", 12)

    page.click("header.site a[data-nav=play]")
    rows = "ul.games li[data-game]"
    page.wait_for(
        lambda: page.js("return document.querySelectorAll(arguments[0]).length", rows) == 2, "two games listed"
    )
    assert page.js("return [...document.querySelectorAll(arguments[0])].map((r) => r.dataset.game)", rows) == [
        newer,
        older,
    ]
    assert "Classic · Seed 11" in page.text(f"li[data-game='{older}']")
    assert "1 move" in page.text(f"li[data-game='{older}']")

    page.click(f"li[data-game='{older}'] a[href='#/game/{older}']")
    assert page.wait_for_game() == older
    page.wait_table(expected_table(state))


def test_a_draw_one_recycle_without_progress_asks_first_and_then_stalls(open_page: Callable[..., Page]) -> None:
    rules = get_ruleset("draw-one")
    page = open_page()
    page.register("Stuck")
    page.deal("draw-one", "seed", 3)
    state = start_state(rules, 3, {"source": "seed", "seed": 3})
    while state.stock:
        state, _ = apply(state, Draw())
        page.play(Draw())
    page.wait_table(expected_table(state, fan=1))

    page.click(".table button[data-pile=stock]")  # empty stock: recycle, which would stall this game
    page.wait_for(lambda: page.js("return !!document.querySelector('dialog.ask[open]')"), "the warning")
    assert "stalled" in page.text("dialog.ask")
    page.click("dialog.ask button[value='']")
    assert page.table() == expected_table(state, fan=1), "not now: nothing happened"

    page.click(".table button[data-pile=stock]")
    page.click("dialog.ask button[value=yes]")
    stalled, _ = apply(state, Recycle())
    assert stalled.status.value == "stalled"
    page.wait_for(lambda: page.text(".ended").startswith("Stalled"), "the game to end as stalled")
    page.wait_table(expected_table(stalled, fan=1))


def test_a_card_can_be_dragged_onto_a_column_with_the_mouse(open_page: Callable[..., Page]) -> None:
    seed, start = classic_seed_with(lambda s: any(m.card == s.reserve[-1] for m in card_moves(s)))
    move = next(m for m in card_moves(start) if m.card == start.reserve[-1])
    page = open_page()
    page.register("Dragger")
    page.deal("classic", "seed", seed)
    page.wait_table(expected_table(start))

    page.drag(page.card(CODES[move.card]), f".table .column[data-pile={move.to}] .column-body")
    moved, _ = apply(start, move)
    page.wait_table(expected_table(moved))
    assert not page.js("return !!document.querySelector('.drag-ghost')"), "the dragged picture is gone"
