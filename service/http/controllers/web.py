"""The reference web client: static files under service/http/web/, served at ``/`` and ``/web/``.

The page is plain HTML, CSS and JavaScript modules that talk to the public API like any other
client; nothing here renders a table. These routes stay out of the OpenAPI document.
"""

from __future__ import annotations

from pathlib import Path

from litestar import Router, get
from litestar.response import File
from litestar.static_files import create_static_files_router
from litestar.types import ControllerRouterHandler

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


def web_routes() -> list[ControllerRouterHandler]:
    """The index at ``/`` and its scripts, styles and icon under ``/web/``."""
    assets: Router = create_static_files_router(
        path="/web", directories=[WEB_DIR], name="web-assets", include_in_schema=False
    )
    return [index, assets]
