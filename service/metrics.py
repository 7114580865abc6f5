"""The service's Prometheus instruments: what each layer counts, in one place (docs/metrics.md).

Every module records into these with ``inc`` or ``observe`` on a child made once (a label
lookup per request would cost more than the count); ``service.http.metrics`` serves them at
``GET /metrics``. Under ``canfield serve`` every server process writes its values to files in
``PROMETHEUS_MULTIPROC_DIR`` (prometheus-client's multiprocess mode, chosen by that variable
when prometheus-client is first imported) and a scrape adds up the processes': gauges of the
processes that are running (``livesum``), counters and histograms of every process that ran.
Nothing here imports another module of the service; its one I/O is the check below.

A process started while its server shuts down (a solver worker spawned in the last moments) may
find the directory already removed: it then keeps its values in memory, where nothing reads
them, instead of failing on its first instrument.
"""

from __future__ import annotations

import os

_DIRECTORY = os.environ.get("PROMETHEUS_MULTIPROC_DIR")
if _DIRECTORY is not None and not os.path.isdir(_DIRECTORY):
    del os.environ["PROMETHEUS_MULTIPROC_DIR"]  # before prometheus-client reads it, on its import

from prometheus_client import Counter, Gauge, Histogram  # noqa: E402

LATENCY_BUCKETS = (0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0)
"""Seconds: a move takes about a millisecond on an idle server, a solver hint up to its budget."""

HTTP_REQUESTS = Histogram(
    "canfield_http_request_duration_seconds",
    "Requests answered, by route template (never the raw path), method and status, and how long each took "
    "from its first byte to its last byte sent",
    ("route", "method", "status"),
    buckets=LATENCY_BUCKETS,
)

MOVES_APPLIED = Counter("canfield_moves_applied", "Moves written to the event log (solver hints' marks included)")
MOVES_ILLEGAL = Counter("canfield_moves_illegal", "Moves the rules refused (illegal, or the game is over)")
MOVE_CONFLICTS = Counter(
    "canfield_move_conflicts",
    "Moves that met a newer version of their game: at the conditional write (decided again, or 412 with "
    "If-Match) or at the If-Match check (412)",
    ("at",),
)
CONFLICTS_AT_WRITE = MOVE_CONFLICTS.labels("write")
CONFLICTS_AT_IF_MATCH = MOVE_CONFLICTS.labels("if_match")

BATCH_SIZES = Histogram(
    "canfield_move_batch_size",
    "Moves per group-commit statement (1: a move written alone by the batcher)",
    buckets=(1, 2, 4, 8, 16, 32, 64, 128),
)

POOL_CONNECTIONS = Gauge(
    "canfield_db_pool_connections", "Database connections of the pools, by state", ("state",),
    multiprocess_mode="livesum",
)
POOL_WAITING = Gauge(
    "canfield_db_pool_waiting", "Requests waiting for a database connection now", multiprocess_mode="livesum"
)
POOL_WAITS = Counter("canfield_db_pool_waits", "Requests for a connection that had to wait for one")
POOL_WAIT_SECONDS = Counter("canfield_db_pool_wait_seconds", "Time requests spent waiting for a connection")
POOL_ERRORS = Counter("canfield_db_pool_errors", "Requests for a connection that failed (timed out, pool closed)")

STREAMS_OPEN = Gauge("canfield_streams_open", "Live streams (Server-Sent Events) open now", multiprocess_mode="livesum")

SOLVER_HINTS = Counter("canfield_solver_hints", "Solver hints answered, by the solver's verdict", ("result",))
SHARED_DEAL_COPIES = Counter(
    "canfield_shared_deal_copies",
    "Copies of a deal in play (a daily deal whose date is not over, a race not finished; a relabelled copy too) "
    "dealt from an explicit deck, and solver requests refused on such a copy",
    ("event",),
)
SHARED_DEAL_COPIES_DEALT = SHARED_DEAL_COPIES.labels("dealt")
SHARED_DEAL_COPIES_REFUSED = SHARED_DEAL_COPIES.labels("solver_refused")
SOLVER_JOBS = Histogram(
    "canfield_solver_job_duration_seconds",
    "Jobs of the solver's worker processes and how long each ran there: hints, and proofs of daily and race deals",
    ("job",),
    buckets=(0.01, 0.05, 0.1, 0.25, 0.5, 1.0, 2.0, 5.0, 10.0, 30.0, 60.0),
)
SOLVER_WAITING = Gauge(
    "canfield_solver_jobs_waiting", "Jobs waiting for a solver worker process now", multiprocess_mode="livesum"
)

RATE_LIMITED = Counter(
    "canfield_rate_limit_refusals",
    "Requests refused with 429 by a budget: reads, writes, solver hints, open streams",
    ("budget",),
)
REFUSED_READS = RATE_LIMITED.labels("reads")
REFUSED_WRITES = RATE_LIMITED.labels("writes")
REFUSED_SOLVER_HINTS = RATE_LIMITED.labels("solver_hints")
REFUSED_STREAMS = RATE_LIMITED.labels("streams")

WEBHOOK_ATTEMPTS = Counter(
    "canfield_webhook_attempts",
    "Webhook delivery attempts by outcome: delivered (a 2xx answer), failed (anything else; retried), disabled "
    "(failed, and the hook has been failing past WEBHOOK_RETRY_SECONDS: disabled)",
    ("outcome",),
)
WEBHOOK_SECONDS = Histogram(
    "canfield_webhook_attempt_duration_seconds",
    "Webhook delivery attempts, from resolving the address to the receiver's answer (or the error)",
    buckets=(0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0),
)
