"""``GET /metrics``: the service's instruments (``service.metrics``) in Prometheus' text format.

* ``RequestMetrics`` times every request (``RequestIds``, the outermost layer, hands it each one
  as it ends, refusals of the rate limiter included: their route is ``(none)``, as they are
  refused before routing) by its route template (``/games/{game_id}``, never the raw path),
  method and status. The histogram child of each combination is made once and kept.
* ``PoolGauges`` reads the connection pool's own statistics (psycopg_pool's ``get_stats``) every
  ``SAMPLE_SECONDS`` and on each scrape: connections in use and idle, requests waiting now, and
  the waits, their time and the failures since the last reading.
* ``metrics_handler`` answers the scrape; ``METRICS=off`` leaves it out (404) and
  ``METRICS_TOKEN`` asks for ``Authorization: Bearer <token>`` (401 without it). The rate limiter
  does not count it. With several server processes (``canfield serve`` gives them a fresh
  ``PROMETHEUS_MULTIPROC_DIR``: ``service.http.server.metrics_directory``) any of them answers
  for all: the values of the processes still running, and what the ones that ended counted.
"""

from __future__ import annotations

import asyncio
import hmac
import os
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

from litestar import Request, Response, get
from litestar.datastructures import State
from litestar.handlers import HTTPRouteHandler
from litestar.openapi.datastructures import ResponseSpec
from prometheus_client import REGISTRY, CollectorRegistry, generate_latest, multiprocess

from ..errors import Unauthorized
from ..metrics import HTTP_REQUESTS, POOL_CONNECTIONS, POOL_ERRORS, POOL_WAIT_SECONDS, POOL_WAITING, POOL_WAITS
from ..settings import Settings
from .problems import documented

CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"
NO_ROUTE = "(none)"
"""The route of a request that matched none (404, 405)."""
METHODS = frozenset({"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"})
SAMPLE_SECONDS = 1.0
_PID_FILE = re.compile(r"_(\d+)\.db$")


class RequestMetrics:
    """Every HTTP request observed once, by ``RequestIds`` (outermost: the rate limiter's
    refusals too) when it ends: ``observe(scope, status, seconds)``."""

    __slots__ = ("children",)

    def __init__(self) -> None:
        self.children: dict[tuple[str, str, int], Callable[[float], None]] = {}

    def observe(self, scope: Any, status: int, seconds: float) -> None:
        key = (scope.get("path_template") or NO_ROUTE, scope["method"], status)
        observe = self.children.get(key)
        if observe is None:
            observe = self.children[key] = _child(*key)
        observe(seconds)


def _child(route: str, method: str, status: int) -> Callable[[float], None]:
    """The ``observe`` of one route, method and status (an unusual method is ``other``)."""
    return HTTP_REQUESTS.labels(route, method if method in METHODS else "other", str(status)).observe


class PoolGauges:
    """The pool's statistics as the pool gauges and counters; ``sample`` reads them once."""

    _COUNTED = (("requests_queued", POOL_WAITS, 1.0), ("requests_wait_ms", POOL_WAIT_SECONDS, 0.001),
                ("requests_errors", POOL_ERRORS, 1.0))

    def __init__(self, pool: Any) -> None:
        self.pool = pool
        self.seen = dict.fromkeys((key for key, _, _ in self._COUNTED), 0)
        self._in_use = POOL_CONNECTIONS.labels("in_use")
        self._idle = POOL_CONNECTIONS.labels("idle")

    def sample(self) -> None:
        stats: dict[str, int] = self.pool.get_stats()  # counters present once they are not 0
        idle = stats.get("pool_available", 0)
        self._in_use.set(stats.get("pool_size", 0) - idle)
        self._idle.set(idle)
        POOL_WAITING.set(stats.get("requests_waiting", 0))
        for key, counter, scale in self._COUNTED:
            value = stats.get(key, 0)
            if value > self.seen[key]:
                counter.inc((value - self.seen[key]) * scale)
            self.seen[key] = value

    async def sample_forever(self, seconds: float = SAMPLE_SECONDS) -> None:
        while True:
            self.sample()
            await asyncio.sleep(seconds)


def exposition() -> bytes:
    """Every instrument in the text format: this process's, or with ``PROMETHEUS_MULTIPROC_DIR``
    every server process's, after forgetting the gauges of the processes that have ended."""
    directory = os.environ.get("PROMETHEUS_MULTIPROC_DIR")
    if not directory:
        return generate_latest(REGISTRY)
    forget_ended(Path(directory))
    registry = CollectorRegistry()
    registry.register(_SizedFiles(Path(directory)))
    return generate_latest(registry)


class _SizedFiles:
    """prometheus-client's multiprocess collector over the files a process has finished making: a
    process creates its file empty and sizes it a moment later, and reading it in between fails
    (a scrape answered 500 while a new solver worker started)."""

    def __init__(self, directory: Path) -> None:
        self.directory = directory

    def collect(self) -> Any:
        files = [str(path) for path in self.directory.glob("*.db") if _sized(path)]
        return multiprocess.MultiProcessCollector.merge(files, accumulate=True)  # type: ignore[no-untyped-call]


def _sized(path: Path) -> bool:
    try:
        return path.stat().st_size > 0
    except FileNotFoundError:  # a live gauge's file, removed as its process ended
        return False


def forget_ended(directory: Path) -> list[int]:
    """``mark_process_dead`` for every process with files in ``directory`` that no longer runs
    (a worker uvicorn replaced, one killed): its live gauges stop counting. The pids forgotten."""
    pids = {int(found.group(1)) for path in directory.glob("gauge_live*.db") if (found := _PID_FILE.search(path.name))}
    ended = sorted(pid for pid in pids if not _running(pid))
    for pid in ended:
        multiprocess.mark_process_dead(pid, str(directory))  # type: ignore[no-untyped-call]
    return ended


def forget_this_process() -> None:
    """At a server process's clean exit: its live gauges leave the sums at once."""
    directory = os.environ.get("PROMETHEUS_MULTIPROC_DIR")
    if directory:
        multiprocess.mark_process_dead(os.getpid(), directory)  # type: ignore[no-untyped-call]


def _running(pid: int) -> bool:
    """Whether ``pid`` is a process that has not ended: a worker killed a moment ago stays a zombie
    (state ``Z`` in /proc on Linux) until uvicorn notices and reaps it, seconds later."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # someone else's process now has that pid
        return True
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:  # not Linux, or gone since
        return True
    fields = stat.rpartition(")")[2].split()  # after the command name, which may hold anything
    return not fields or fields[0] != "Z"


def metrics_handler(settings: Settings) -> HTTPRouteHandler:
    """The ``GET /metrics`` route for these settings (only made when ``METRICS`` is on)."""
    token = settings.metrics_token

    @get("/metrics", operation_id="getMetrics", tags=["service"], sync_to_thread=False,
         summary="The service's metrics in Prometheus' text format (METRICS_TOKEN: with its bearer token)",
         media_type="text/plain", responses={200: _TEXT, **documented(400, 401)})
    def metrics(request: Request[Any, Any, Any], state: State) -> Response[bytes]:
        if token is not None and not _bearer_is(request.headers.get("authorization"), token):
            raise Unauthorized("the metrics need 'Authorization: Bearer <METRICS_TOKEN>'")
        gauges: PoolGauges | None = getattr(state, "pool_gauges", None)
        if gauges is not None:
            gauges.sample()
        return Response(exposition(), media_type=CONTENT_TYPE, headers={"Cache-Control": "no-store"})

    return metrics


_TEXT = ResponseSpec(
    data_container=str, media_type="text/plain", generate_examples=False,
    description="the service's metrics in Prometheus' text exposition format 0.0.4",
)


def _bearer_is(header: str | None, token: str) -> bool:
    scheme, _, given = (header or "").partition(" ")
    return scheme.lower() == "bearer" and hmac.compare_digest(given.strip().encode(), token.encode())
