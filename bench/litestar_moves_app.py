"""The service with every move through Litestar (no ``service.http.move_route`` lean path), for
``python -m bench cpu`` (``CPU_TARGETS=litestar``): what the lean path saves, side by side."""

from __future__ import annotations

from bench.harness.service_api import MoveRoute, Settings, create_app

app = create_app(Settings.from_env())
if isinstance(app.asgi_handler, MoveRoute):  # the bench runs without rate limits: the lean path is outermost
    app.asgi_handler = app.asgi_handler.handler
else:
    raise SystemExit("litestar_moves_app: run it without rate limits (RATE_LIMIT_*=0), as the benches do")
