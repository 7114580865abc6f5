"""Settings from the environment, in one typed place."""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import MISSING, dataclass, field, fields
from pathlib import Path
from typing import Any, Literal, TypeVar

PROJECT_ROOT = Path(__file__).resolve().parent.parent
T = TypeVar("T")


def _env(name: str, default: T, parse: Callable[[str], T], expected: str) -> T:
    """The variable ``name`` read by ``parse`` (which raises ValueError for what it does not
    take); ``default`` when it is unset or blank; anything else stops the server at start."""
    raw = os.environ.get(name)
    if raw is None or raw.strip() == "":
        return default
    try:
        return parse(raw)
    except ValueError:
        raise SystemExit(f"{name} must be {expected}, not {raw!r}") from None


def _int(name: str, default: int, least: int | None = None) -> int:
    value = _env(name, default, int, "an integer")
    return value if least is None else max(least, value)


def _float(name: str, default: float, least: float | None = None) -> float:
    value = _env(name, default, float, "a number")
    return value if least is None else max(least, value)


def _seconds(name: str, default_ms: int, least: int | None = None) -> float:
    """A duration given in milliseconds (``..._MS``), in seconds."""
    return _int(name, default_ms, least) / 1000


def _on_off(raw: str) -> bool:
    value = raw.strip().lower()
    if value not in ("on", "off"):
        raise ValueError(value)
    return value == "on"


def _switch(name: str, default: bool) -> bool:
    return _env(name, default, _on_off, "'on' or 'off'")


def _list(name: str, default: list[str]) -> list[str]:
    raw = os.environ.get(name)
    if raw is None:
        return default
    return [item.strip() for item in raw.split(",") if item.strip()]


def _flag(name: str, default: bool) -> bool:
    raw = os.environ.get(name, "").strip().lower()
    if raw == "":
        return default
    if raw in ("0", "false", "no", "off"):
        return False
    if raw in ("1", "true", "yes", "on"):
        return True
    raise SystemExit(f"{name} must be 1 or 0 (true or false), not {raw!r}")


MIN_SECRET_LENGTH = 16
LOOPBACK = ("127.0.0.1", "::1", "localhost")


IDEMPOTENCY_KEY_HOURS_MIN = 24


def _key_hours(hours: int) -> int:
    """``IDEMPOTENCY_KEY_HOURS`` as read: a value below the least the API promises stops the server."""
    if hours < IDEMPOTENCY_KEY_HOURS_MIN:
        raise SystemExit(f"IDEMPOTENCY_KEY_HOURS must be at least {IDEMPOTENCY_KEY_HOURS_MIN} "
                         f"(the API promises a key lasts that long), not {hours}")
    return hours


def connect_timeout_seconds() -> int:
    """``DB_CONNECT_TIMEOUT_SECONDS`` (libpq's least is 2): also read by ``canfield migrate``, which
    takes no other setting."""
    (variable,) = (variable for variable in ENV_VARS if variable.field == "connect_timeout_seconds")
    seconds: int = _read(variable, env_default(variable))
    return seconds


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
    # A failover (service.store.connections): libpq gives up on a host after connect_timeout_seconds
    # (unless DATABASE_URL sets connect_timeout), and while no primary answers a request waits at
    # most primary_down_wait_seconds for a connection before its 503.
    connect_timeout_seconds: int = 2
    primary_down_wait_seconds: float = 1.0
    move_retries: int = 12
    move_batch_max: int = 64  # group commit: at most this many moves per statement (1: every move alone; at most 128)
    game_cache_size: int = 10_000  # games (and tokens) kept in memory per process
    solver_hint_seconds: float = 1.0
    # Solver hints (service.games.games, service.deals.solver_workers): token buckets per player
    # and per client address (a rate or burst of 0 turns that budget off), and at most
    # solver_queue_max hints waiting for the worker process (more: 503 solver_busy).
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
    daily_preparing_max: int = 4  # dates whose deal one process prepares at once; one more is 503 daily_deals_busy
    race_deal_wait_seconds: float = 20.0  # POST /races waits this long for a secret deal proven winnable, then 503
    # POST /races without a deal, per process (service.races.race_deals.RaceDealQueue): at most this
    # many creations waiting for their deal's proof (one more: 503 race_deals_busy), at most
    # race_deals_per_player of one player (one more: 429 race_deal_pending).
    race_deal_queue_max: int = 8
    race_deals_per_player: int = 2
    # A pending challenge (service.challenges) expires this long after it was made.
    challenge_expiry_seconds: int = 600
    # Pending challenges one player may have made at once (not expired); one more is 409 too_many_challenges.
    challenges_per_player: int = 20
    # Token buckets per server process (service.http.limits); a rate or burst of 0 turns that budget off.
    rate_limit_writes_per_second: float = 20.0  # per player, all their tokens together (per address without one)
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
    idempotency_key_hours: int = IDEMPOTENCY_KEY_HOURS_MIN
    # Live tokens a player may hold at once (service.players.accounts); one more is a 409.
    tokens_per_player: int = 50
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
    # The analysis queue's fairness (service.analysis.queue): at most this many queued-or-running
    # jobs per player and per client address (more: 429 analysis_queue_full; 0: no cap), and a
    # job's total solver time, after which its positions not reached are unknown.
    analysis_jobs_per_player: int = 3
    analysis_jobs_per_address: int = 10
    analysis_job_seconds: float = 20.0
    # Following an account (service.following): account events are kept this long (a stream resumed
    # after older ones gets eventsDropped first), and a job removes older ones every
    # account_events_sweep_seconds (it also finishes races whose time is up that nobody looked at).
    account_events_retention_seconds: float = 7 * 86400.0
    account_events_sweep_seconds: float = 60.0
    # Webhooks (service.following.webhooks, .delivery): hooks per account; deliveries in flight per
    # process (0: none from this process), each attempt's time limit, how often idle workers look for
    # work; retries from webhook_retry_first_seconds doubling up to webhook_retry_max_seconds, for
    # webhook_retry_seconds, then the hook is disabled; a hook further behind than webhook_backlog_max
    # events skips the oldest; webhooks_allow_private lets hooks point at private addresses (tests).
    webhooks_per_player: int = 10
    webhook_concurrency: int = 8
    webhook_timeout_seconds: float = 10.0
    webhook_poll_seconds: float = 1.0
    webhook_retry_first_seconds: float = 5.0
    webhook_retry_max_seconds: float = 3600.0
    webhook_retry_seconds: float = 86400.0
    webhook_backlog_max: int = 1000
    webhooks_allow_private: bool = False
    # Operations: how long a stopping server waits for requests in flight before cancelling them
    # (service.http.server), and OpenTelemetry tracing of every request (service.http.tracing).
    shutdown_timeout_seconds: int = 20
    otel_tracing: bool = False
    # GET /metrics (service.http.metrics): served unless off; with a token, only to its bearer.
    metrics: bool = True
    metrics_token: str | None = None

    @classmethod
    def from_env(cls) -> Settings:
        """Every variable of ``ENV_VARS`` that is set, over the defaults above."""
        return cls(**{variable.field: _read(variable, env_default(variable)) for variable in ENV_VARS})

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
        if self.webhooks_allow_private:
            found.append("WEBHOOKS_ALLOW_PRIVATE is on: webhooks may point at private, loopback and link-local "
                         "addresses (this machine's and its network's services); meant for tests only")
        return found


# How a variable is read: "text" (unset or empty: the default), "plain" (unset: the default; empty
# is empty), "path", "int", "float", "ms" (milliseconds, for a field in seconds), "switch" (on or
# off), "flag" (1 or 0, true or false, ...), "list" (comma-separated).
Kind = Literal["text", "plain", "path", "int", "float", "ms", "switch", "flag", "list"]


@dataclass(frozen=True)
class EnvVar:
    """One environment variable ``Settings.from_env`` reads: the field it sets, how, the least value
    taken, in the variable's unit (a smaller one is taken as that), and a check the value read must
    pass (it stops the server otherwise); the default is the field's."""

    field: str
    name: str
    kind: Kind
    least: float | None = None
    check: Callable[[Any], object] | None = None


ENV_VARS = (
    EnvVar("database_url", "DATABASE_URL", "text"),
    EnvVar("database_read_url", "DATABASE_READ_URL", "text"),
    EnvVar("replica_wait_seconds", "REPLICA_WAIT_MS", "ms", least=0),
    EnvVar("replica_max_lag_seconds", "REPLICA_MAX_LAG_SECONDS", "float", least=0.0),
    EnvVar("host", "HOST", "plain"),
    EnvVar("port", "PORT", "int"),
    EnvVar("workers", "WORKERS", "int", least=1),
    EnvVar("data_dir", "CANFIELD_DATA_DIR", "path"),
    EnvVar("cors_origins", "CORS_ORIGINS", "list"),
    EnvVar("max_body_bytes", "MAX_BODY_BYTES", "int"),
    EnvVar("pool_min_size", "DB_POOL_MIN", "int"),
    EnvVar("pool_max_size", "DB_POOL_MAX", "int"),
    EnvVar("statement_timeout_ms", "DB_STATEMENT_TIMEOUT_MS", "int"),
    EnvVar("solver_hint_seconds", "SOLVER_HINT_MS", "ms"),
    EnvVar("solver_hints_per_minute", "SOLVER_HINTS_PER_MINUTE", "float"),
    EnvVar("solver_hint_burst", "SOLVER_HINT_BURST", "int"),
    EnvVar("solver_hints_per_minute_per_address", "SOLVER_HINTS_PER_MINUTE_PER_ADDRESS", "float"),
    EnvVar("solver_hint_address_burst", "SOLVER_HINT_ADDRESS_BURST", "int"),
    EnvVar("solver_queue_max", "SOLVER_QUEUE_MAX", "int"),
    EnvVar("daily_secret", "DAILY_SECRET", "text"),
    EnvVar("race_deal_wait_seconds", "RACE_DEAL_WAIT_SECONDS", "float"),
    EnvVar("daily_preparing_max", "DAILY_PREPARING_MAX", "int", least=1),
    EnvVar("race_deal_queue_max", "RACE_DEAL_QUEUE_MAX", "int", least=1),
    EnvVar("race_deals_per_player", "RACE_DEALS_PER_PLAYER", "int", least=1),
    EnvVar("challenge_expiry_seconds", "CHALLENGE_EXPIRY_SECONDS", "int", least=1),
    EnvVar("challenges_per_player", "CHALLENGES_PER_PLAYER", "int", least=1),
    EnvVar("pool_timeout_seconds", "DB_POOL_TIMEOUT_MS", "ms"),
    EnvVar("connect_timeout_seconds", "DB_CONNECT_TIMEOUT_SECONDS", "int", least=1),
    EnvVar("primary_down_wait_seconds", "DB_DOWN_WAIT_MS", "ms", least=0),
    EnvVar("move_batch_max", "MOVE_BATCH_MAX", "int"),  # service.games.batching keeps it within 1 .. 128
    EnvVar("rate_limit_writes_per_second", "RATE_LIMIT_WRITES_PER_SECOND", "float"),
    EnvVar("rate_limit_write_burst", "RATE_LIMIT_WRITE_BURST", "int"),
    EnvVar("rate_limit_reads_per_second", "RATE_LIMIT_READS_PER_SECOND", "float"),
    EnvVar("rate_limit_read_burst", "RATE_LIMIT_READ_BURST", "int"),
    EnvVar("stream_keepalive_seconds", "STREAM_KEEPALIVE_SECONDS", "float"),
    EnvVar("streams_per_player", "STREAMS_PER_PLAYER", "int"),
    EnvVar("streams_per_address", "STREAMS_PER_ADDRESS", "int"),
    EnvVar("idempotency_key_hours", "IDEMPOTENCY_KEY_HOURS", "int", check=_key_hours),
    EnvVar("tokens_per_player", "TOKENS_PER_PLAYER", "int", least=1),
    EnvVar("abandon_after_days", "ABANDON_AFTER_DAYS", "int", least=0),
    EnvVar("abandon_check_seconds", "ABANDON_CHECK_SECONDS", "float", least=1.0),
    EnvVar("analysis_workers", "ANALYSIS_WORKERS", "int", least=0),
    EnvVar("analysis_position_seconds", "ANALYSIS_POSITION_MS", "ms"),
    EnvVar("analysis_lease_seconds", "ANALYSIS_LEASE_SECONDS", "float", least=1.0),
    EnvVar("analysis_jobs_per_player", "ANALYSIS_JOBS_PER_PLAYER", "int", least=0),
    EnvVar("analysis_jobs_per_address", "ANALYSIS_JOBS_PER_ADDRESS", "int", least=0),
    EnvVar("analysis_job_seconds", "ANALYSIS_JOB_SECONDS", "float", least=1.0),
    EnvVar("account_events_retention_seconds", "ACCOUNT_EVENTS_RETENTION_SECONDS", "float", least=1.0),
    EnvVar("account_events_sweep_seconds", "ACCOUNT_EVENTS_SWEEP_SECONDS", "float", least=1.0),
    EnvVar("webhooks_per_player", "WEBHOOKS_PER_PLAYER", "int", least=1),
    EnvVar("webhook_concurrency", "WEBHOOK_CONCURRENCY", "int", least=0),
    EnvVar("webhook_timeout_seconds", "WEBHOOK_TIMEOUT_SECONDS", "float", least=0.1),
    EnvVar("webhook_poll_seconds", "WEBHOOK_POLL_SECONDS", "float", least=0.01),
    EnvVar("webhook_retry_first_seconds", "WEBHOOK_RETRY_FIRST_SECONDS", "float", least=0.01),
    EnvVar("webhook_retry_max_seconds", "WEBHOOK_RETRY_MAX_SECONDS", "float", least=0.01),
    EnvVar("webhook_retry_seconds", "WEBHOOK_RETRY_SECONDS", "float", least=0.0),
    EnvVar("webhook_backlog_max", "WEBHOOK_BACKLOG_MAX", "int", least=1),
    EnvVar("webhooks_allow_private", "WEBHOOKS_ALLOW_PRIVATE", "flag"),
    EnvVar("shutdown_timeout_seconds", "SHUTDOWN_TIMEOUT_SECONDS", "int", least=1),
    EnvVar("otel_tracing", "OTEL_TRACING", "flag"),
    EnvVar("metrics", "METRICS", "switch"),
    EnvVar("metrics_token", "METRICS_TOKEN", "text"),
)


def env_default(variable: EnvVar) -> Any:
    """The default of ``variable``'s field, in the variable's unit (milliseconds for "ms")."""
    (found,) = (item for item in fields(Settings) if item.name == variable.field)
    default: Any = found.default if found.default_factory is MISSING else found.default_factory()
    return round(default * 1000) if variable.kind == "ms" else default


def _whole(least: float | None) -> int | None:
    return None if least is None else int(least)


def _read(variable: EnvVar, default: Any) -> Any:
    """``variable`` from the environment, ``default`` (in its unit) when unset; a value it does not
    take stops the server at start."""
    value = _parse(variable, default)
    if variable.check is not None:
        variable.check(value)
    return value


def _parse(variable: EnvVar, default: Any) -> Any:
    name, least = variable.name, variable.least
    match variable.kind:
        case "int":
            return _int(name, default, _whole(least))
        case "float":
            return _float(name, default, least)
        case "ms":
            return _seconds(name, default, _whole(least))
        case "switch":
            return _switch(name, default)
        case "flag":
            return _flag(name, default)
        case "list":
            return _list(name, default)
        case "path":
            return Path(os.environ.get(name, str(default)))
        case "plain":
            return os.environ.get(name, default)
        case "text":
            return os.environ.get(name) or default
