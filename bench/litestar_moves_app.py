"""The service with every move through Litestar (no ``service.http.move_route`` lean path), for
``python -m bench cpu`` (``CPU_TARGETS=litestar``): what the lean path saves, side by side."""

from __future__ import annotations

from service.http.app import create_app
from service.http.move_route import MoveRoute
from service.settings import Settings

app = create_app(Settings.from_env())
if isinstance(app.asgi_handler, MoveRoute):  # the bench runs without rate limits: the lean path is outermost
    app.asgi_handler = app.asgi_handler.handler
else:
    raise SystemExit("litestar_moves_app: run it without rate limits (RATE_LIMIT_*=0), as the benches do")
