"""The reference web client: static files under service/http/web/, served at ``/`` and ``/web/``.

The page is plain HTML, CSS and JavaScript modules that talk to the public API like any other
client; nothing here renders a table. These routes stay out of the OpenAPI document.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

from litestar import get
from litestar.params import PathParameter
from litestar.response import File
from litestar.types import ControllerRouterHandler

from ...errors import NotFound

WEB_DIR = Path(__file__).resolve().parent.parent / "web"

# Only the page's own files; the API is same-origin. No inline script or style anywhere.
_SECURITY_HEADERS = {
    "Content-Security-Policy": (
        "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
        "connect-src 'self'; object-src 'none'; base-uri 'none'; frame-ancestors 'none'; form-action 'self'"
    ),
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
}


@get("/", include_in_schema=False, name="web-index", sync_to_thread=False)
def index() -> File:
    """The page itself; every view of it is a #fragment, so this is its only HTML address."""
    return File(WEB_DIR / "index.html", filename="index.html", media_type="text/html",
                content_disposition_type="inline",
                headers={**_SECURITY_HEADERS, "Cache-Control": "no-cache"})


_MEDIA_TYPES = {".js": "text/javascript", ".css": "text/css", ".svg": "image/svg+xml", ".html": "text/html"}
_FILES = {
    "/" + path.relative_to(WEB_DIR).as_posix(): path
    for path in sorted(WEB_DIR.rglob("*"))
    if path.is_file() and path.suffix in _MEDIA_TYPES
}
"""The page's files by their path under ``/web``: the only paths served there. A lookup, not a
path joined onto the folder, so no name (a NUL, a newline, ``..``, thousands of characters) ever
reaches the file system."""


@get("/web/{name:path}", include_in_schema=False, name="web-assets", sync_to_thread=False)
def asset(name: Annotated[str, PathParameter()]) -> File:
    """One of the page's scripts, styles or its icon."""
    path = _FILES.get(name)
    if path is None:
        raise NotFound("the web page has no such file")
    return File(path, filename=path.name, media_type=_MEDIA_TYPES[path.suffix], content_disposition_type="inline",
                headers={"X-Content-Type-Options": "nosniff", "Cache-Control": "no-cache"})


def web_routes() -> list[ControllerRouterHandler]:
    """The index at ``/`` and its scripts, styles and icon under ``/web/``."""
    return [index, asset]
