"""Browser tests: Debian's Chromium, headless, driven by Selenium through Debian's chromedriver,
against real server processes on the test PostgreSQL.

Nothing is downloaded: the browser is /usr/bin/chromium and the driver /usr/bin/chromedriver
(apt packages `chromium` and `chromium-driver`; `.ci/run` installs them). Without them every test
here is skipped with a reason that the summary repeats in capitals, never silently.

Fixtures:

* `web` (package): `uvicorn` in a subprocess with the **default rate limits**, the server the
  page is tested against;
* `helper_server` (package): another process on the same database without rate limits, for
  setting up what other players did (an opponent's daily win), never for what a test checks;
* `open_page(width=...)`: a fresh browser (its own profile) on the `web` server, wrapped in a
  `tests.browser.pages.Page`. After the test, each browser's console must hold no JavaScript
  error or warning, and no failed request other than those the test declared with
  `page.expect_status(...)` (an illegal move's 422, say).
"""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.live import ServerProcess

from ..conftest import fresh_database
from .pages import Page

CHROMIUM = Path(os.environ.get("CHROMIUM", "/usr/bin/chromium"))
CHROMEDRIVER = Path(os.environ.get("CHROMEDRIVER", "/usr/bin/chromedriver"))
DESKTOP = (1280, 900)
PHONE = (390, 844)
DEFAULT_LIMITS = {  # the server's defaults (service/settings.py), stated so a test never runs without them
    "RATE_LIMIT_WRITES_PER_SECOND": "20",
    "RATE_LIMIT_WRITE_BURST": "40",
    "RATE_LIMIT_READS_PER_SECOND": "50",
    "RATE_LIMIT_READ_BURST": "100",
}
NO_ANALYSIS = {"ANALYSIS_WORKERS": "0"}
"""The package's servers run no analysis job: a job asked for stays queued until a test starts a
worker (test_analysis.py's ``analysis_worker``), so what the page shows meanwhile is fixed."""
CHROMIUM_FLAGS = [
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
    "--disable-dev-shm-usage", "--lang=en-GB",
]


def _missing() -> str | None:
    try:
        import selenium  # noqa: F401
    except ImportError:
        return "the Python package selenium is not installed (pip install -e '.[test]')"
    for path in (CHROMIUM, CHROMEDRIVER):
        if not path.exists():
            return f"{path} is missing (apt-get install -y chromium chromium-driver; .ci/run does it)"
    return None


MISSING = _missing()
_skipped: list[str] = []


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if MISSING is None:
        return
    here = Path(__file__).parent
    for item in items:
        if here in Path(str(item.fspath)).parents:
            item.add_marker(pytest.mark.skip(reason=f"BROWSER TESTS SKIPPED: {MISSING}"))
            _skipped.append(item.nodeid)


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    if _skipped:
        terminalreporter.write_sep("!", f"{len(_skipped)} BROWSER TESTS SKIPPED: {MISSING}", red=True, bold=True)


@pytest.fixture(scope="package")
def database_url(postgres_server_url: str) -> Iterator[str]:
    """The browser tests' own database (not the session's): their servers run no analysis job, and
    a server of another test on the session's database would take a job the page must show queued."""
    with fresh_database(postgres_server_url) as url:
        yield url


def start_server(database_url: str, log: Path, env: dict[str, str]) -> Iterator[ServerProcess]:
    server = ServerProcess(database_url, log, env=env)
    try:
        server.wait_until_up()
        yield server
    finally:
        server.stop()


@pytest.fixture(scope="package")
def web(database_url: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    """The server under test, with the default rate limits (the page must live with them)."""
    yield from start_server(database_url, tmp_path_factory.mktemp("web") / "server.log",
                            {**DEFAULT_LIMITS, **NO_ANALYSIS})


@pytest.fixture(scope="package")
def helper_server(database_url: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    """Another process on the same database, without rate limits: for setting up other players."""
    yield from start_server(database_url, tmp_path_factory.mktemp("helper") / "server.log", NO_ANALYSIS)


@pytest.fixture(scope="package")
def screenshots(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Where tests save screenshots: $BROWSER_SCREENSHOTS (e.g. docs/) or a temporary folder."""
    chosen = os.environ.get("BROWSER_SCREENSHOTS")
    folder = Path(chosen) if chosen else tmp_path_factory.mktemp("screenshots")
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def new_driver(width: int, height: int, profile: str) -> Any:
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    os.environ["SE_OFFLINE"] = "true"  # Selenium Manager must never fetch a browser or driver
    options = webdriver.ChromeOptions()
    options.binary_location = str(CHROMIUM)
    for flag in [*CHROMIUM_FLAGS, f"--user-data-dir={profile}", f"--window-size={width},{height}"]:
        options.add_argument(flag)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    driver = webdriver.Chrome(options=options, service=Service(str(CHROMEDRIVER)))
    driver.set_script_timeout(30)
    return driver


class PageOpener:
    """What `open_page` gives a test: `open_page(width=1280, height=900, server=web)` opens a new
    browser with its own profile; the fixture checks every page's console at the end."""

    def __init__(self, web: ServerProcess) -> None:
        self.web = web
        self.opened: list[tuple[Page, str]] = []

    def __call__(self, width: int = DESKTOP[0], height: int = DESKTOP[1], server: ServerProcess | None = None) -> Page:
        profile = tempfile.mkdtemp(prefix="canfield-chromium-")
        page = Page(new_driver(width, height, profile), (server or self.web).url)
        self.opened.append((page, profile))
        if width < 500:  # headless windows are at least 500 px wide: emulate the phone's viewport
            page.emulate(width, height)
        return page

    def check_consoles_before_a_server_stops(self) -> None:
        """For a fixture that stops a server of the test's own (SIGTERM) while its pages are still
        open: it is torn down before `open_page`, so it calls this first. The consoles are checked
        now (reading them empties them), and from here on 503 is allowed: a stream that reconnects
        while the server is stopping is answered 503 with Retry-After, "the server is shutting
        down" (`StreamHub.subscribe`), the right answer from a stopping server, which the page
        waits out and tries again."""
        problems = [problem for page, _ in self.opened for problem in page.console_problems()]
        for page, _ in self.opened:
            page.expect_status(503)
            # the page leaves, so no stream of it tries to reconnect to a server that is gone
            # (net::ERR_CONNECTION_REFUSED in its console once the server has stopped)
            page.driver.get("about:blank")
        assert not problems, "the browser console reported:\n" + "\n".join(problems)


@pytest.fixture
def open_page(web: ServerProcess) -> Iterator[PageOpener]:
    """A `PageOpener`: `open_page(width=1280, height=900, server=web)` is a new browser with its own profile."""
    if MISSING is not None:
        pytest.skip(f"BROWSER TESTS SKIPPED: {MISSING}")
    opener = PageOpener(web)
    yield opener
    problems = []
    for page, profile in opener.opened:
        try:
            problems += page.console_problems()
        finally:
            page.driver.quit()
            shutil.rmtree(profile, ignore_errors=True)
    assert not problems, "the browser console reported:\n" + "\n".join(problems)
