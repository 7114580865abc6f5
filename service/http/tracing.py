"""Optional OpenTelemetry tracing (``OTEL_TRACING=1``): every request a server span, made by
OpenTelemetry's own ASGI middleware (``opentelemetry-instrumentation-asgi``), which also continues
a trace a client started (``traceparent``).

Not a dependency of the service: an operator who wants traces installs that package, an SDK and an
exporter (``opentelemetry-sdk``, ``opentelemetry-exporter-otlp``) and configures them the usual way
(``opentelemetry-instrument``, or ``OTEL_*`` variables read by their own code). Asked for without
the package, the server refuses to start, saying what to install.

The middleware names a span from the request's path as it arrives (``GET /games/5b1e...``: one name
per game). Litestar finds the route template (``/games/{game_id:uuid}``) only once it has routed the
request, so ``RouteNames`` renames the span and sets ``http.route`` when the response starts (a
request refused before routing is named by its method alone).
"""

from __future__ import annotations

import importlib
from typing import Any

from litestar.types import ASGIApp, Receive, Send

PACKAGE = "opentelemetry-instrumentation-asgi"
MODULE = "opentelemetry.instrumentation.asgi"


class TracingUnavailable(Exception):
    """OTEL_TRACING asks for traces, but the instrumentation is not installed."""


def check_available() -> None:
    """Raise ``TracingUnavailable`` with what to do when the middleware cannot be imported."""
    try:
        importlib.import_module(MODULE)
    except ImportError:
        raise TracingUnavailable(
            f"OTEL_TRACING=1 needs the package {PACKAGE} (pip install {PACKAGE} opentelemetry-sdk and an exporter); "
            "install it or unset OTEL_TRACING"
        ) from None


def traced(app: ASGIApp) -> ASGIApp:
    """``app`` inside OpenTelemetry's ASGI middleware, its spans named after the route template."""
    check_available()
    middleware: Any = importlib.import_module(MODULE).OpenTelemetryMiddleware
    wrapped: ASGIApp = middleware(RouteNames(app))
    return wrapped


class RouteNames:
    """Names the current span ``<METHOD> <route template>`` and sets ``http.route`` once the app
    has routed the request (when the response starts)."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app
        self.current_span = importlib.import_module("opentelemetry.trace").get_current_span

    async def __call__(self, scope: Any, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        span = self.current_span()

        async def named(message: Any) -> None:
            if message["type"] == "http.response.start" and span.is_recording():
                route = scope.get("path_template")
                if route:
                    span.update_name(f"{scope['method']} {route}")
                    span.set_attribute("http.route", route)
                else:  # refused before routing: the method alone, as OpenTelemetry's conventions say
                    span.update_name(scope["method"])
            await send(message)

        await self.app(scope, receive, named)
