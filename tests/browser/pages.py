"""The web client as a player sees it: a page object over one Selenium-driven browser.

Everything here clicks, types and reads the page; nothing calls the API. `table()` reads the table
from the DOM in the shape of `expected_table(state)`, which the tests compute in-process with the
rules engine, so a test compares what the page shows with what the rules say.
"""

from __future__ import annotations

import json
import re
import time
from pathlib import Path
from typing import Any

from domain import GameState, table_view
from domain.cards import CODES
from domain.commands import Command, Draw, MoveCard, Recycle
from domain.piles import FOUNDATION

WAIT = 15.0  # seconds any expected change may take (a 429 makes the page wait Retry-After)

READ_TABLE = """
const t = document.querySelector('.table');
if (!t) return null;
const count = (el) => el ? Number(el.dataset.count) : null;
const foundations = {};
for (const f of t.querySelectorAll('.foundation')) {
  foundations[f.dataset.suit] = {count: Number(f.dataset.count), top: f.dataset.top || null};
}
return {
  version: Number(t.dataset.version), status: t.dataset.status,
  stock: count(t.querySelector('[data-pile=stock]')),
  waste: {count: count(t.querySelector('.waste')),
          fan: [...t.querySelectorAll('.waste [data-card]')].map((e) => e.dataset.card)},
  reserve: {count: count(t.querySelector('.reserve')),
            top: t.querySelector('.reserve > [data-card]')?.dataset.card ?? null},
  foundations,
  tableau: [...t.querySelectorAll('.column')]
    .map((c) => [...c.querySelectorAll('.cards [data-card]')].map((e) => e.dataset.card)),
};
"""

RECORD_STREAMS = """
if (!window.streamRequests) {
  window.streamRequests = [];
  const original = window.fetch;
  window.fetch = function (input, init) {
    const seen = {url: String(input), headers: {...(init?.headers || {})}, status: null};
    if (seen.url.includes('/stream')) window.streamRequests.push(seen);
    return original.apply(this, arguments).then((response) => { seen.status = response.status; return response; });
  };
}
"""


def expected_table(state: GameState, fan: int = 3) -> dict[str, Any]:
    """What the page must show for ``state``, from the rules engine's own view of the table."""
    return table_shown({"version": state.version, "status": state.status.value, "table": table_view(state)}, fan)


def table_shown(view: dict[str, Any], fan: int = 3) -> dict[str, Any]:
    """What the page must show for a game view of the API (``GET /games/{id}/states/{v}``, say)."""
    table = view["table"]
    waste = table["waste"]
    return {
        "version": view["version"],
        "status": view["status"],
        "stock": table["stock"]["count"],
        "waste": {"count": len(waste), "fan": waste[-fan:] if waste else []},
        "reserve": {"count": table["reserve"]["count"], "top": table["reserve"]["top"]},
        "foundations": {suit: {"count": len(cards), "top": cards[-1] if cards else None}
                        for suit, cards in table["foundations"].items()},
        "tableau": table["tableau"],
    }


class Page:
    def __init__(self, driver: Any, base_url: str) -> None:
        self.driver = driver
        self.base_url = base_url
        self.expected_statuses: set[int] = set()
        self.network_errors_expected = False

    # ------------------------------------------------------------ plumbing

    def emulate(self, width: int, height: int) -> None:
        """A phone's viewport (headless Chromium keeps windows at least 500 px wide)."""
        self.driver.execute_cdp_cmd("Emulation.setDeviceMetricsOverride",
                                    {"width": width, "height": height, "deviceScaleFactor": 2, "mobile": True})

    def open(self, fragment: str = "#/") -> None:
        target = self.base_url + "/" + fragment
        if self.driver.current_url == target:
            self.driver.refresh()  # the same address again: a new visit, not a same-page jump
        else:
            self.driver.get(target)
        self.wait_for(lambda: self.js("return document.querySelector('main[aria-busy]') === null "
                                      "&& !document.querySelector('main .loading')"), "the page to load")

    def record_stream_requests(self) -> None:
        """From now on (reloads included), note each stream request the page makes: its address,
        headers and the status it got (a test's eye on the wire; the page is not changed)."""
        self.driver.execute_cdp_cmd("Page.addScriptToEvaluateOnNewDocument", {"source": RECORD_STREAMS})
        self.js(RECORD_STREAMS)

    def stream_requests(self) -> list[dict[str, Any]]:
        """``[{"url", "headers", "status"}]`` of the stream requests since ``record_stream_requests``."""
        return list(self.js("return window.streamRequests ?? []"))

    def js(self, script: str, *args: Any) -> Any:
        return self.driver.execute_script(script, *args)

    def wait_for(self, condition: Any, what: str, timeout: float = WAIT) -> Any:
        deadline = time.monotonic() + timeout
        while True:
            value = condition()
            if value:
                return value
            if time.monotonic() > deadline:
                raise AssertionError(f"waited {timeout} s for {what}; the page says: {self.status_text()!r}")
            time.sleep(0.02)

    def find(self, css: str) -> Any:
        from selenium.webdriver.common.by import By

        return self.driver.find_element(By.CSS_SELECTOR, css)

    def click(self, css: str, *, top: bool = False) -> None:
        """Click the element; ``top``: its upper edge, the part of a card a fanned column leaves in sight."""
        from selenium.common.exceptions import StaleElementReferenceException
        from selenium.webdriver.common.action_chains import ActionChains

        self.wait_for(lambda: self.js("return !!document.querySelector(arguments[0])", css), f"{css} to show")
        for _ in range(20):
            try:  # the page may redraw between finding and clicking (new legal moves came in)
                element = self.find(css)
                if top:
                    below_top_edge = 6 - element.size["height"] // 2
                    ActionChains(self.driver, duration=0).move_to_element_with_offset(
                        element, 0, below_top_edge
                    ).click().perform()
                else:
                    element.click()
                return
            except StaleElementReferenceException:
                time.sleep(0.02)
        raise AssertionError(f"{css} kept being redrawn")

    def text(self, css: str) -> str:
        return str(self.js("return document.querySelector(arguments[0])?.textContent ?? ''", css))

    def status_text(self) -> str:
        try:
            return str(self.js("return document.querySelector('.status-line')?.textContent ?? ''"))
        except Exception:  # any failure: it only feeds a failure message
            return "?"

    def expect_status(self, *statuses: int) -> None:
        """Declare failed requests this test causes on purpose (they show in the console)."""
        self.expected_statuses.update(statuses)

    def expect_network_errors(self) -> None:
        """Declare that the test takes the server away (refused and broken connections show in the console)."""
        self.network_errors_expected = True

    def console_problems(self) -> list[str]:
        """Console entries that are JavaScript errors or warnings, or unexpected failed requests.
        A 429 is the server's rate limit at work: the page waits Retry-After and goes on."""
        problems = []
        for entry in self.driver.get_log("browser"):
            message = entry.get("message", "")
            if entry.get("source") == "network":
                found = re.search(r"status of (\d{3})", message)
                if found and int(found.group(1)) in self.expected_statuses | {429}:
                    continue
                if self.network_errors_expected and "net::ERR_" in message:
                    continue
            if entry.get("level") in ("SEVERE", "WARNING"):
                problems.append(f"{entry.get('level')} {entry.get('source')}: {message}")
        return problems

    def screenshot(self, path: Path, full: bool = True) -> Path:
        """A PNG of the page (the whole page, beyond the viewport, when ``full``)."""
        import base64

        shot = self.driver.execute_cdp_cmd("Page.captureScreenshot",
                                           {"format": "png", "captureBeyondViewport": full})
        path.write_bytes(base64.b64decode(shot["data"]))
        return path

    # ------------------------------------------------------------ player and deals

    def register(self, name: str) -> None:
        self.open("#/")
        field = self.find("#player-name")
        field.send_keys(name)
        self.click("[data-action=register]")
        self.wait_for(lambda: self.text("#who .name") == name, f"{name} to be signed in")
        self.wait_for(lambda: self.js("return !!document.querySelector('[data-action=deal]')"), "the deal form")

    def player(self) -> dict[str, Any]:
        stored: dict[str, Any] = json.loads(self.js("return localStorage.getItem('canfield.player')"))
        return stored

    def adopt(self, player: dict[str, Any]) -> None:
        """This browser plays as ``player`` too (a second tab of the same browser, in effect)."""
        self.driver.get(self.base_url + "/#/stats")
        self.js("localStorage.setItem('canfield.player', arguments[0])", json.dumps(player))

    def deal(self, ruleset: str, source: str = "random", number: int | None = None) -> str:
        """Deal from the Play page; returns the new game's id once its table shows."""
        self.open("#/")
        self.click(f"input[name=ruleset][value={ruleset}]")
        self.click(f"input[name=source][value={source}]")
        if number is not None:
            box = self.find(f"input[name={source}]")
            box.clear()
            box.send_keys(str(number))
        self.click("[data-action=deal]")
        return self.wait_for_game()

    def wait_for_game(self) -> str:
        found = self.wait_for(
            lambda: re.fullmatch(r".*#/game/([0-9a-f-]{36})", self.driver.current_url), "a game to open"
        )
        self.wait_for(lambda: self.js("return !!document.querySelector('.table')"), "the table")
        return str(found.group(1))

    # ------------------------------------------------------------ the table

    def table(self) -> dict[str, Any]:
        return self.js(READ_TABLE)  # type: ignore[no-any-return]

    def version(self) -> int:
        return int(self.js("return Number(document.querySelector('.table')?.dataset.version ?? 0)"))

    def wait_version(self, above: int) -> int:
        return int(self.wait_for(lambda: self.version() > above and self.version(), f"a version above {above}"))

    def fits(self) -> bool:
        """Neither the page nor the table scrolls sideways: everything is in sight at this width."""
        return bool(self.js("const f = document.querySelector('.table-frame'); const d = document.documentElement;"
                            "return d.scrollWidth <= d.clientWidth && (!f || f.scrollWidth <= f.clientWidth);"))

    def wait_table(self, expected: dict[str, Any]) -> None:
        self.wait_for(lambda: self.table() == expected, f"the table {expected}")

    def card(self, code: str) -> str:
        return f".table button[data-card='{code}']"

    def pile(self, to: str, card: str | None = None) -> str:
        if to == FOUNDATION:
            assert card is not None
            return f".table button[data-pile=foundation][data-suit={card[1]}]"
        return f".table button.column-head[data-pile={to}]"

    def select_and_move(self, card: str, to: str) -> None:
        """Click the card, then its destination (a column heading or a foundation)."""
        self.click(self.card(card), top=True)
        self.wait_for(
            lambda: self.js(
                "return document.querySelector(arguments[0])?.getAttribute('aria-pressed') === 'true'", self.card(card)
            ),
            f"{card} to be selected",
        )
        self.click(self.pile(to, card))

    def drag(self, source: str, target: str) -> None:
        """Press the mouse on ``source`` (a card's visible top), move onto ``target``, let go."""
        from selenium.webdriver.common.action_chains import ActionChains

        card, onto = self.find(source), self.find(target)
        chain = ActionChains(self.driver, duration=50)
        chain.move_to_element_with_offset(card, 0, 6 - card.size["height"] // 2).click_and_hold()
        chain.move_by_offset(10, 10).move_to_element(onto).release().perform()

    def play(self, command: Command) -> None:
        """One move by clicks, waiting until the table shows its result."""
        before = self.version()
        if isinstance(command, (Draw, Recycle)):
            self.click(".table button[data-pile=stock]")
        elif isinstance(command, MoveCard):
            self.select_and_move(CODES[command.card], command.to)
        else:
            raise ValueError(f"no click for {command!r}")
        self.wait_version(before)

    # ------------------------------------------------------------ the keyboard

    def keys(self, *keys: str) -> None:
        from selenium.webdriver.common.action_chains import ActionChains

        ActionChains(self.driver, duration=0).send_keys(*keys).perform()

    def focused(self, css: str) -> bool:
        return bool(self.js("return document.activeElement?.matches(arguments[0]) ?? false", css))

    def tab_to(self, css: str, most: int = 80) -> None:
        """Press Tab until the focused element matches ``css`` (the way a keyboard user gets there)."""
        from selenium.webdriver.common.keys import Keys

        for _ in range(most):
            if self.focused(css):
                return
            self.keys(Keys.TAB)
        raise AssertionError(f"{most} presses of Tab never reached {css}")
