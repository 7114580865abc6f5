"""Settings from the environment, in one typed place."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

PROJECT_ROOT = Path(__file__).resolve().parent.parent


def _int(name: str, default: int) -> int:
    raw = os.environ.get(name)
    if raw is None or raw.strip() == "":
        return default
    try:
        return int(raw)
    except ValueError:
        raise SystemExit(f"{name} must be an integer, not {raw!r}") from None


def _float(name: str, default: float) -> float:
    raw = os.environ.get(name)
    if raw is None or raw.strip() == "":
        return default
    try:
        return float(raw)
    except ValueError:
        raise SystemExit(f"{name} must be a number, not {raw!r}") from None


def _switch(name: str, default: bool) -> bool:
    raw = os.environ.get(name)
    if raw is None or raw.strip() == "":
        return default
    value = raw.strip().lower()
    if value not in ("on", "off"):
        raise SystemExit(f"{name} must be 'on' or 'off', not {raw!r}")
    return value == "on"


def _list(name: str, default: list[str]) -> list[str]:
    raw = os.environ.get(name)
    if raw is None:
        return default
    return [item.strip() for item in raw.split(",") if item.strip()]


def _flag(name: str) -> bool:
    raw = os.environ.get(name, "").strip().lower()
    if raw in ("", "0", "false", "no", "off"):
        return False
    if raw in ("1", "true", "yes", "on"):
        return True
    raise SystemExit(f"{name} must be 1 or 0 (true or false), not {raw!r}")


MIN_SECRET_LENGTH = 16
LOOPBACK = ("127.0.0.1", "::1", "localhost")


IDEMPOTENCY_KEY_HOURS_MIN = 24


def _key_hours() -> int:
    hours = _int("IDEMPOTENCY_KEY_HOURS", IDEMPOTENCY_KEY_HOURS_MIN)
    if hours < IDEMPOTENCY_KEY_HOURS_MIN:
        raise SystemExit(f"IDEMPOTENCY_KEY_HOURS must be at least {IDEMPOTENCY_KEY_HOURS_MIN} "
                         f"(the API promises a key lasts that long), not {hours}")
    return hours


@dataclass(frozen=True)
class Settings:
    database_url: str | None = None  # None: start the embedded PostgreSQL under data_dir
    # A streaming replica for the reads that tolerate one (service.store.replica); None: every read on the primary.
    database_read_url: str | None = None
    replica_wait_seconds: float = 0.01  # a read waits this long for the replica to replay the client's write
    replica_max_lag_seconds: float = 5.0  # a replica further behind than this serves no read
    host: str = "127.0.0.1"
    port: int = 8000
    workers: int = 1
    data_dir: Path = PROJECT_ROOT / ".data"
    cors_origins: list[str] = field(default_factory=lambda: ["*"])
    max_body_bytes: int = 64 * 1024
    pool_min_size: int = 2
    pool_max_size: int = 10
    statement_timeout_ms: int = 5000
    pool_timeout_seconds: float = 5.0  # waiting for a connection longer than this is a 503
    move_retries: int = 12
    move_batch_max: int = 64  # group commit: at most this many moves per statement (1: every move alone; at most 128)
    game_cache_size: int = 10_000  # games (and tokens) kept in memory per process
    solver_hint_seconds: float = 1.0
    # Solver hints (service.games.games, service.deals.solver_workers): token buckets per bearer token
    # and per client address (a rate or burst of 0 turns that budget off), and at most
    # solver_queue_max hints waiting for the worker process (more: 503).
    solver_hints_per_minute: float = 6.0
    solver_hint_burst: int = 3
    solver_hints_per_minute_per_address: float = 30.0
    solver_hint_address_burst: int = 10
    solver_queue_max: int = 4
    # Keys daily and race deals; only the server knows it. None: a random one kept in the database
    # (service.deals.deal_secret), made on first start.
    daily_secret: str | None = None
    daily_past_days: int = 366
    daily_wait_seconds: float = 10.0  # a request waits this long for a daily deal being prepared, then 503
    race_deal_wait_seconds: float = 20.0  # POST /races waits this long for a secret deal proven winnable, then 503
    # Token buckets per server process (service.http.limits); a rate or burst of 0 turns that budget off.
    rate_limit_writes_per_second: float = 20.0  # per bearer token (per address without one)
    rate_limit_write_burst: int = 40
    rate_limit_reads_per_second: float = 50.0  # per client address
    rate_limit_read_burst: int = 100
    # Live streams (service.streams.hub): a keep-alive comment after this long without a message,
    # and at most this many open streams per player (per client address without a token).
    stream_keepalive_seconds: float = 15.0
    streams_per_player: int = 5
    streams_per_address: int = 20
    # Idempotency-Keys (of moves and of creating POSTs) are honoured this long, then a job in each
    # server process removes them (service.http.idempotency); at least 24, as the API promises.
    idempotency_key_hours: int = 24
    # Games with no move for this many days are ended by a job in each server process
    # (service.games.abandon), one round every abandon_check_seconds; 0 turns it off.
    abandon_after_days: int = 30
    abandon_check_seconds: float = 600.0
    # Game analysis (service.analysis): jobs each server process runs at once (each in a solver
    # process of its own; 0: none here), the solver's time per position, and how long a job stays
    # with a process that stopped renewing its lease (it died) before another takes it up.
    analysis_workers: int = 1
    analysis_position_seconds: float = 5.0
    analysis_lease_seconds: float = 30.0
    # Operations: how long a stopping server waits for requests in flight before cancelling them
    # (service.http.server), and OpenTelemetry tracing of every request (service.http.tracing).
    shutdown_timeout_seconds: int = 20
    otel_tracing: bool = False
    # GET /metrics (service.http.metrics): served unless off; with a token, only to its bearer.
    metrics: bool = True
    metrics_token: str | None = None

    @classmethod
    def from_env(cls) -> Settings:
        return cls(
            database_url=os.environ.get("DATABASE_URL") or None,
            database_read_url=os.environ.get("DATABASE_READ_URL") or None,
            replica_wait_seconds=max(0, _int("REPLICA_WAIT_MS", 10)) / 1000,
            replica_max_lag_seconds=max(0.0, _float("REPLICA_MAX_LAG_SECONDS", 5.0)),
            host=os.environ.get("HOST", "127.0.0.1"),
            port=_int("PORT", 8000),
            workers=max(1, _int("WORKERS", 1)),
            data_dir=Path(os.environ.get("CANFIELD_DATA_DIR", str(PROJECT_ROOT / ".data"))),
            cors_origins=_list("CORS_ORIGINS", ["*"]),
            max_body_bytes=_int("MAX_BODY_BYTES", 64 * 1024),
            pool_min_size=_int("DB_POOL_MIN", 2),
            pool_max_size=_int("DB_POOL_MAX", 10),
            statement_timeout_ms=_int("DB_STATEMENT_TIMEOUT_MS", 5000),
            solver_hint_seconds=_int("SOLVER_HINT_MS", 1000) / 1000,
            solver_hints_per_minute=_float("SOLVER_HINTS_PER_MINUTE", 6.0),
            solver_hint_burst=_int("SOLVER_HINT_BURST", 3),
            solver_hints_per_minute_per_address=_float("SOLVER_HINTS_PER_MINUTE_PER_ADDRESS", 30.0),
            solver_hint_address_burst=_int("SOLVER_HINT_ADDRESS_BURST", 10),
            solver_queue_max=_int("SOLVER_QUEUE_MAX", 4),
            daily_secret=os.environ.get("DAILY_SECRET") or None,
            race_deal_wait_seconds=_float("RACE_DEAL_WAIT_SECONDS", 20.0),
            pool_timeout_seconds=_int("DB_POOL_TIMEOUT_MS", 5000) / 1000,
            move_batch_max=_int("MOVE_BATCH_MAX", 64),  # service.games.batching keeps it within 1 .. 128
            rate_limit_writes_per_second=_float("RATE_LIMIT_WRITES_PER_SECOND", 20.0),
            rate_limit_write_burst=_int("RATE_LIMIT_WRITE_BURST", 40),
            rate_limit_reads_per_second=_float("RATE_LIMIT_READS_PER_SECOND", 50.0),
            rate_limit_read_burst=_int("RATE_LIMIT_READ_BURST", 100),
            stream_keepalive_seconds=_float("STREAM_KEEPALIVE_SECONDS", 15.0),
            streams_per_player=_int("STREAMS_PER_PLAYER", 5),
            streams_per_address=_int("STREAMS_PER_ADDRESS", 20),
            idempotency_key_hours=_key_hours(),
            abandon_after_days=max(0, _int("ABANDON_AFTER_DAYS", 30)),
            abandon_check_seconds=max(1.0, _float("ABANDON_CHECK_SECONDS", 600.0)),
            analysis_workers=max(0, _int("ANALYSIS_WORKERS", 1)),
            analysis_position_seconds=_int("ANALYSIS_POSITION_MS", 5000) / 1000,
            analysis_lease_seconds=max(1.0, _float("ANALYSIS_LEASE_SECONDS", 30.0)),
            shutdown_timeout_seconds=max(1, _int("SHUTDOWN_TIMEOUT_SECONDS", 20)),
            otel_tracing=_flag("OTEL_TRACING"),
            metrics=_switch("METRICS", True),
            metrics_token=os.environ.get("METRICS_TOKEN") or None,
        )

    def warnings(self) -> list[str]:
        """What an operator should hear about these settings when the server starts."""
        found = []
        if self.daily_secret is not None and len(self.daily_secret) < MIN_SECRET_LENGTH:
            found.append(
                f"DAILY_SECRET is shorter than {MIN_SECRET_LENGTH} characters: whoever guesses it can work out "
                "every daily and race deal; use a long random value, or unset it and the server makes one"
            )
        if self.metrics and self.metrics_token is None and self.host not in LOOPBACK:
            found.append(
                f"GET /metrics is open to anyone who reaches {self.host}:{self.port}: set METRICS_TOKEN "
                "(Prometheus then sends it as a bearer token) or METRICS=off"
            )
        return found
