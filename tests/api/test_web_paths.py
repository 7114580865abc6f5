"""The web client's files (service/http/controllers/web.py): every file of the page is served with
its media type, and any other path under ``/web/`` is a 404 problem in our words, never a 500,
whatever bytes it carries (a NUL, a newline, thousands of characters, a way out of the folder)."""

from __future__ import annotations

import httpx
import pytest

from service.http.controllers.web import WEB_DIR
from tests.support import assert_problem

FILES = sorted(path.relative_to(WEB_DIR).as_posix() for path in WEB_DIR.rglob("*") if path.is_file())


def test_every_file_of_the_page_is_served_with_its_media_type(client: httpx.Client) -> None:
    kinds = {"js": "text/javascript", "css": "text/css", "svg": "image/svg+xml", "html": "text/html"}
    for name in FILES:
        response = client.get(f"/web/{name}")
        assert response.status_code == 200, name
        assert response.content == (WEB_DIR / name).read_bytes()
        assert response.headers["content-type"].split(";")[0] == kinds[name.rsplit(".", 1)[1]], name
        assert response.headers["x-content-type-options"] == "nosniff"


@pytest.mark.parametrize("path", [
    "/web/x%00", "/web/js/x%00.js", "/web/" + "a" * 5000, "/web/" + "a/" * 300 + "b.js", "/web/x%0a%0dforged",
    "/web/..%2f..%2fpyproject.toml", "/web/js/", "/web/js", "/web/nothing.js", "/web/%ff%fe", "/web/%2e%2e/README.md",
])
def test_any_other_path_under_web_is_a_404_in_our_words(client: httpx.Client, path: str) -> None:
    response = client.get(path)
    assert_problem(response, 404, "not_found")
