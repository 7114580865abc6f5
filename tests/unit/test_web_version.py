"""The web table (service/http/web/js) is a client of one API version: the one its code reads and
writes, named once in api.js (``API_VERSION``) and sent by every request and stream it makes. It
must be the newest version served, so that adding a version fails here until the page is moved to
it (its shapes read again, then the browser tests run against it)."""

from __future__ import annotations

import re

from service.http.controllers.web import WEB_DIR
from service.http.versions import NEWEST, SERVED

JS = WEB_DIR / "js"


def _declared() -> str:
    found = re.findall(r'^export const API_VERSION = "(\d{4}-\d{2}-\d{2})";$', (JS / "api.js").read_text(), re.M)
    assert len(found) == 1, "api.js names its API version once, as API_VERSION"
    return found[0]


def test_the_page_speaks_the_newest_version_served() -> None:
    assert _declared() in {version.name for version in SERVED.all}
    assert _declared() == NEWEST.name


def test_every_request_and_stream_of_the_page_sends_it() -> None:
    # the page's two ways to reach the server: api.js's request() and sse.js's readEvents()
    fetches = {path.name: path.read_text().count("await fetch(") for path in JS.glob("*.js")}
    assert {name: count for name, count in fetches.items() if count} == {"api.js": 1, "sse.js": 1}
    assert '"Api-Version": API_VERSION' in (JS / "api.js").read_text().split("export async function request", 1)[1]
    assert '"Api-Version": API_VERSION' in (JS / "sse.js").read_text().split("async function connect", 1)[1]
    assert not re.search(r"new EventSource\(|new XMLHttpRequest\(|sendBeacon\(",
                         "".join(path.read_text() for path in JS.glob("*.js")))
