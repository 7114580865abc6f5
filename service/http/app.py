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

from ..bootstrap import build_services, start, stop
from ..clock import utc_now
from ..errors import UnsupportedMediaType
from ..settings import Settings
from ..store.connections import PoolOptions, Primary, libpq_url, open_pool
from ..store.event_store import EventStore
from ..store.replica import ReadPool
from .caching import ConditionalGets
from .controllers.account import AccountController
from .controllers.analysis import AnalysisController
from .controllers.challenges import ChallengeController
from .controllers.common import check_parameters
from .controllers.deals import DealController
from .controllers.following import FollowingController
from .controllers.games import GameController, document_move
from .controllers.health import health, livez, readyz
from .controllers.lessons import LessonController
from .controllers.players import PlayerController
from .controllers.races import RaceController
from .controllers.ratings import RatingController
from .controllers.rulesets import RulesetController
from .controllers.stats import player_stats, stats
from .controllers.streams import StreamController
from .controllers.tournaments import TournamentController
from .controllers.watch import WatchController
from .controllers.web import web_routes
from .dependencies import dependencies
from .idempotency import expire_keys_forever
from .json_bodies import check_json_body
from .limits import install_rate_limits
from .metrics import PoolGauges, RequestMetrics, forget_this_process, metrics_handler
from .move_route import MoveDispatch, make_move, route_moves
from .openapi.document import complete
from .openapi.plugins import ComponentNamePlugin, DealUnionPlugin, TaggedUnionPlugin
from .openapi.versions import versioned_json
from .problems import EXCEPTION_HANDLERS
from .replica_reads import ReplicaReads
from .request_ids import RequestIds
from .tracing import traced
from .versions import versions

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
        PoolOptions(settings.pool_min_size, settings.pool_max_size, settings.statement_timeout_ms,
                    settings.pool_timeout_seconds, settings.connect_timeout_seconds,
                    settings.primary_down_wait_seconds),
        Primary(),  # fails fast while no primary answers; refuses standbys and old primaries
    )
    reads = _read_pool(settings, pool)
    store = EventStore(pool, reads)
    app = Litestar(
        route_handlers=_route_handlers() + ([metrics_handler(settings)] if settings.metrics else []),
        dependencies=dependencies(),
        lifespan=[_lifespan(settings, store, clock), _replica_lifespan(reads)],
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
    app.state.idempotency_key_hours = settings.idempotency_key_hours
    route_moves(app)
    document_move(app.openapi_schema)  # the move route's operation (an ASGI route is not documented)
    complete(app.openapi_schema)  # response headers (built once here, served as built)
    app.asgi_handler = ConditionalGets(app.asgi_handler)  # ETags, 304s and cache headers on every GET
    # a plain move request past the router (and the GET-only layer above) to its route
    app.asgi_handler = MoveDispatch(app.asgi_handler)
    if reads.replica is not None:
        app.asgi_handler = ReplicaReads(app.asgi_handler, reads)  # read-your-writes (Read-After)
    install_rate_limits(app, settings)  # in front of routing, CORS and body parsing: every request
    # outermost: every answer and log line has the id and the API version; every request is timed (METRICS)
    app.asgi_handler = RequestIds(app.asgi_handler, RequestMetrics() if settings.metrics else None)
    if settings.otel_tracing:
        app.asgi_handler = traced(app.asgi_handler)  # a span per request, around everything (OTEL_TRACING)
    return app


def _route_handlers() -> list[ControllerRouterHandler]:
    return [
        AccountController, PlayerController, RulesetController, GameController, make_move, StreamController,
        DealController, player_stats, stats, health, livez, readyz, LessonController, RaceController, *web_routes(),
        TournamentController, AnalysisController, versions, WatchController, RatingController, ChallengeController,
        FollowingController,
    ]


def _lifespan(
    settings: Settings, store: EventStore, clock: Callable[[], datetime]
) -> Callable[[Litestar], AbstractAsyncContextManager[None]]:
    """Startup and shutdown: the pool opens, the composition root builds every service
    (``app.state.services``, service.bootstrap) and starts its jobs; each is stopped and closed
    again in the reverse order."""

    @asynccontextmanager
    async def lifespan(app: Litestar) -> AsyncIterator[None]:
        for warning in settings.warnings():
            log.warning("canfield: %s", warning)
        await store.pool.open(wait=False)
        app.state.services = services = build_services(store, settings, clock)
        jobs = await start(services)
        jobs.append(asyncio.create_task(
            expire_keys_forever(services.request_keys, clock, settings.idempotency_key_hours)))
        app.state.pool_gauges = gauges = PoolGauges(store.pool) if settings.metrics else None
        if gauges is not None:
            jobs.append(asyncio.create_task(gauges.sample_forever()))
        # What startup made (routes, schemas, the rules' tables, caches) lives as long as the
        # process: out of the collector's generations, a full collection does not walk it again
        gc.collect()
        gc.freeze()
        try:
            yield
        finally:
            await stop(services, jobs)
            await store.pool.close()
            forget_this_process()  # this process's live gauges leave the sums (several server processes)

    return lifespan


def _read_pool(settings: Settings, primary: AsyncConnectionPool) -> ReadPool:
    """The reads that tolerate a replica: on DATABASE_READ_URL's replica when set (service.store.replica)."""
    replica = None
    if settings.database_read_url:
        replica = open_pool(libpq_url(settings.database_read_url),
                            PoolOptions(1, settings.pool_max_size, settings.statement_timeout_ms,
                                        settings.pool_timeout_seconds, settings.connect_timeout_seconds))
    return ReadPool(primary, replica, wait_seconds=settings.replica_wait_seconds,
                    max_lag_seconds=settings.replica_max_lag_seconds)


def _replica_lifespan(reads: ReadPool) -> Callable[[Litestar], AbstractAsyncContextManager[None]]:
    """The replica's pool and its watch, when there is a replica (after the primary's pool opened)."""

    @asynccontextmanager
    async def lifespan(app: Litestar) -> AsyncIterator[None]:
        if reads.replica is None:
            yield
            return
        await reads.replica.open(wait=False)
        watch = asyncio.create_task(reads.watch())
        try:
            yield
        finally:
            watch.cancel()
            await asyncio.gather(watch, return_exceptions=True)
            await reads.replica.close()

    return lifespan


def _cors(settings: Settings) -> CORSConfig:
    return CORSConfig(
        allow_origins=settings.cors_origins,
        allow_methods=["GET", "POST", "DELETE", "OPTIONS"],
        allow_headers=[
            "Authorization", "Content-Type", "If-Match", "If-None-Match", "Idempotency-Key", "Last-Event-ID",
            "X-Request-Id", "traceparent", "Read-After", "Api-Version",
        ],
        expose_headers=[
            "ETag", "Location", "Retry-After", "Idempotent-Replayed", "RateLimit", "RateLimit-Policy", "X-Request-Id",
            "Read-After", "Api-Version", "Deprecation", "Sunset", "Link",
        ],
        max_age=3600,
    )


def _openapi() -> OpenAPIConfig:
    return versioned_json(OpenAPIConfig(
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
    ))


logging.getLogger("canfield").setLevel(logging.INFO)
