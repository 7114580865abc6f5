"""The service's probes: ``/livez`` (the process serves), ``/readyz`` (it can do its work: the
database answers, its schema is the one this code needs or a later release's, the stream listener
is connected, and the process is not shutting down) and ``/health`` (the database answers; kept for existing load
balancers). None of them counts against a rate limit."""

from __future__ import annotations

import asyncio

from litestar import get
from litestar.di import NamedDependency

from ...errors import Unavailable
from ...store.connections import NOT_ANSWERING, PrimaryPool, PrimaryUnavailable, primary_of
from ...store.event_store import EventStore
from ...store.migrations import head_revision, serves_schema
from ...streams.hub import StreamHub
from ..problems import documented
from ..schemas import Health, Liveness, Readiness

HEAD = head_revision()
READY_SECONDS = 1.0
"""``/readyz`` waits this long for the database's answer, then says it is not answering: a load
balancer's probe reads "not ready" rather than timing out."""


@get("/health", operation_id="getHealth", summary="200 when the database answers, 503 otherwise", tags=["service"],
     responses=documented(400, 503))
async def health(store: NamedDependency[EventStore]) -> Health:
    try:
        await store.ping()
    except Exception:
        raise Unavailable("the database is not answering") from None
    return Health(status="ok", database="up")


@get("/livez", operation_id="getLiveness", summary="200 while the process serves requests (liveness)",
     tags=["service"], responses=documented(400))
async def livez() -> Liveness:
    return Liveness(status="ok")


@get("/readyz", operation_id="getReadiness",
     summary="200 when this process can do its work: database up, schema at head, stream listener connected",
     tags=["service"], responses=documented(400, 503))
async def readyz(store: NamedDependency[EventStore], streams: NamedDependency[StreamHub]) -> Readiness:
    problems, revision = await _not_ready(store, streams)
    if problems:
        raise Unavailable("not ready: " + "; ".join(problems))
    schema = revision or HEAD  # this code's head, or a later release's during a rolling deploy
    reads = store.reads
    if reads.replica is None:
        return Readiness(status="ready", database="up", schema=schema, streams="connected")
    return Readiness(status="ready", database="up", schema=schema, streams="connected", replica=reads.status())


async def _not_ready(store: EventStore, streams: StreamHub) -> tuple[list[str], str | None]:
    """What keeps the process from being ready, and the database's schema revision."""
    problems: list[str] = []
    revision: str | None = None
    if streams.closing:
        problems.append("shutting down")
    primary = primary_of(store.pool)
    try:
        async with asyncio.timeout(READY_SECONDS):
            if isinstance(store.pool, PrimaryPool) and store.pool.primary.problem is not None:
                await store.pool.probe()  # still down, a standby, fenced: raises PrimaryUnavailable
            revision = await store.schema_revision()
    except PrimaryUnavailable as error:
        problems.append(str(error))
    except Exception:
        problems.append(primary.problem if primary is not None and primary.problem else NOT_ANSWERING)
    else:
        if not serves_schema(revision, HEAD):
            problems.append(f"the database schema is at {revision or 'no revision'}, this code needs {HEAD}")
    if not streams.connected.is_set():
        problems.append("the stream listener is not connected to the database")
    return problems, revision
