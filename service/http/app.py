"""The application factory: settings in, a Litestar app out. Nothing connects until startup."""

from __future__ import annotations

import asyncio
import gc
import logging
from collections.abc import AsyncIterator, Callable
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from datetime import datetime
from typing import Any

from litestar import Litestar, Request, Response
from litestar.config.cors import CORSConfig
from litestar.openapi import OpenAPIConfig
from litestar.openapi.spec import Components, License, SecurityScheme
from litestar.types import ControllerRouterHandler
from psycopg_pool import AsyncConnectionPool

from ..errors import UnsupportedMediaType
from ..games.games import Games, utc_now
from ..settings import Settings
from ..store.connections import libpq_url, open_pool
from ..store.event_store import EventStore
from ..store.request_keys import RequestKeys
from ..streams.hub import StreamHub
from ..tasks import cancel_and_wait
from .caching import ConditionalGets
from .controllers.account import AccountController
from .controllers.common import check_json_body, check_parameters
from .controllers.deals import DealController
from .controllers.games import GameController, document_move
from .controllers.health import health, livez, readyz
from .controllers.lessons import LessonController
from .controllers.players import PlayerController
from .controllers.races import RaceController
from .controllers.rulesets import RulesetController
from .controllers.stats import player_stats, stats
from .controllers.streams import StreamController
from .controllers.web import web_routes
from .idempotency import expire_keys_forever
from .limits import install_rate_limits
from .metrics import PoolGauges, RequestMetrics, forget_this_process, metrics_handler
from .move_route import make_move, route_moves
from .openapi import ComponentNamePlugin, DealUnionPlugin, TaggedUnionPlugin, complete
from .problems import EXCEPTION_HANDLERS
from .request_ids import RequestIds

API_VERSION = "1.0.0"
log = logging.getLogger("canfield")


async def _require_json(request: Request[Any, Any, Any]) -> Response[None] | None:
    if request.method == "OPTIONS":
        return _options(request)
    check_parameters(request)  # one spelling per UUID and integer, each query parameter once
    if request.method in {"POST", "PUT", "PATCH"}:
        if "data" not in request.route_handler.parsed_fn_signature.parameters and not await request.body():
            return None  # a POST that takes no body (join or start a race) may come without one
        media_type = request.headers.get("content-type", "").split(";")[0].strip().lower()
        if media_type != "application/json" and not media_type.endswith("+json"):
            raise UnsupportedMediaType("send the body as JSON with 'Content-Type: application/json'")
        check_json_body(await request.body())  # duplicate names, runaway nesting: 400
    return None


def _options(request: Request[Any, Any, Any]) -> Response[None]:
    """``OPTIONS`` (not a CORS preflight, which the CORS layer answers): every method of the path.
    Litestar's own answer lists only the methods of the first handler of a path that several
    handlers share (``Allow: OPTIONS, POST`` for ``/players/me/tokens``)."""
    template = request.scope.get("path_template") or request.scope["path"]
    methods = {
        method
        for route in request.app.routes
        if template in (route.path, route.path_format)
        for method in route.methods
    }
    return Response(None, status_code=204, headers={"Allow": ", ".join(sorted(methods | {"OPTIONS"}))})


def create_app(settings: Settings, clock: Callable[[], datetime] = utc_now) -> Litestar:
    """The app; ``clock`` is the service's one clock (games' times, daily dates, race deadlines),
    injected by tests."""
    if not settings.database_url:
        raise ValueError("create_app needs settings.database_url")
    pool = open_pool(
        libpq_url(settings.database_url),
        settings.pool_min_size,
        settings.pool_max_size,
        settings.statement_timeout_ms,
        settings.pool_timeout_seconds,
    )
    store = EventStore(pool)
    streams = StreamHub(libpq_url(settings.database_url), store, settings, clock=clock)
    app = Litestar(
        route_handlers=_route_handlers() + ([metrics_handler(settings)] if settings.metrics else []),
        lifespan=[_lifespan(settings, pool, store, streams, clock)],
        exception_handlers=EXCEPTION_HANDLERS,
        plugins=[ComponentNamePlugin(), DealUnionPlugin(), TaggedUnionPlugin()],
        before_request=_require_json,
        request_max_body_size=settings.max_body_bytes,
        cors_config=_cors(settings),
        openapi_config=_openapi(),
        logging_config=None,
        debug=False,
    )
    app.state.max_body_bytes = settings.max_body_bytes  # the move route reads its body itself
    app.state.request_keys = RequestKeys(pool)  # service.http.idempotency
    app.state.idempotency_key_hours = settings.idempotency_key_hours
    route_moves(app)
    document_move(app.openapi_schema)  # the move route's operation (an ASGI route is not documented)
    complete(app.openapi_schema)  # response headers (built once here, served as built)
    app.asgi_handler = ConditionalGets(app.asgi_handler)  # ETags, 304s and cache headers on every GET
    if settings.metrics:
        app.asgi_handler = RequestMetrics(app.asgi_handler)  # every request the rate limiter lets through, timed
    install_rate_limits(app, settings)  # in front of routing, CORS and body parsing: every request
    app.asgi_handler = RequestIds(app.asgi_handler)  # outermost: every answer and log line has the id
    return app


def _route_handlers() -> list[ControllerRouterHandler]:
    return [
        AccountController, PlayerController, RulesetController, GameController, make_move, StreamController,
        DealController, player_stats, stats, health, livez, readyz, LessonController, RaceController, *web_routes(),
    ]


def _lifespan(
    settings: Settings,
    pool: AsyncConnectionPool,
    store: EventStore,
    streams: StreamHub,
    clock: Callable[[], datetime],
) -> Callable[[Litestar], AbstractAsyncContextManager[None]]:
    """Startup and shutdown: the pool opens, the Games facade and the streams start, and each is
    closed again in the reverse order."""

    @asynccontextmanager
    async def lifespan(app: Litestar) -> AsyncIterator[None]:
        for warning in settings.warnings():
            log.warning("canfield: %s", warning)
        await pool.open(wait=False)
        app.state.games = games = Games(store, settings, clock)
        app.state.streams = streams
        streams.tokens = games.tokens  # revocations reach this process's token cache
        await streams.start()
        games.daily.start()  # today's and tomorrow's daily deals, solved ahead of the first request
        expiry = asyncio.create_task(expire_keys_forever(app.state.request_keys, clock, settings.idempotency_key_hours))
        app.state.pool_gauges = gauges = PoolGauges(pool) if settings.metrics else None
        sampler = asyncio.create_task(gauges.sample_forever()) if gauges is not None else None
        # What startup made (routes, schemas, the rules' tables, caches) lives as long as the
        # process: out of the collector's generations, a full collection does not walk it again
        gc.collect()
        gc.freeze()
        try:
            yield
        finally:
            expiry.cancel()
            await asyncio.gather(expiry, return_exceptions=True)
            if sampler is not None:
                await cancel_and_wait(sampler)
            await games.daily.close()
            await streams.stop()
            await games.batcher.close()
            games.solver.close()
            games.race_solver.close()
            await pool.close()
            forget_this_process()  # this process's live gauges leave the sums (several server processes)

    return lifespan


def _cors(settings: Settings) -> CORSConfig:
    return CORSConfig(
        allow_origins=settings.cors_origins,
        allow_methods=["GET", "POST", "DELETE", "OPTIONS"],
        allow_headers=[
            "Authorization", "Content-Type", "If-Match", "If-None-Match", "Idempotency-Key", "Last-Event-ID",
            "X-Request-Id", "traceparent",
        ],
        expose_headers=[
            "ETag", "Location", "Retry-After", "Idempotent-Replayed", "RateLimit", "RateLimit-Policy", "X-Request-Id"
        ],
        max_age=3600,
    )


def _openapi() -> OpenAPIConfig:
    return OpenAPIConfig(
        title="Canfield Solitaire API",
        version=API_VERSION,
        description=(
            "Deal, play, replay and inspect Canfield Solitaire games. Errors are application/problem+json "
            "with a stable `code`. Writes need `Authorization: Bearer <token>` (POST /players)."
        ),
        path="/schema",
        license=License(name="MIT", identifier="MIT"),
        components=Components(
            security_schemes={
                "bearer": SecurityScheme(type="http", scheme="bearer", description="token from POST /players")
            }
        ),
        security=[],
    )


logging.getLogger("canfield").setLevel(logging.INFO)
