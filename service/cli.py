"""The `canfield` command line: serve the API, run migrations, export the OpenAPI document.

Each subcommand is a `Command` in `COMMANDS`; add new ones there (solve, pool, projections...).
Configuration comes from the environment (see `service.settings.Settings.from_env`):
DATABASE_URL (unset: use the embedded PostgreSQL under CANFIELD_DATA_DIR), HOST, PORT, WORKERS...
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import re
import signal
import sys
import tempfile
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from types import FrameType
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit, urlunsplit

from service.settings import Settings

if TYPE_CHECKING:
    from domain import GameState, Ruleset
    from service.store.embedded_db import EmbeddedDatabase

ASGI_APP = "service.http.asgi:app"
OPENAPI_PLACEHOLDER_URL = "postgresql://unused/none"  # `openapi` builds the app without a database
STARTUP_FAILURE = 3  # uvicorn's exit status when the app cannot start


class ShutdownRequested(Exception):
    """Raised by our SIGTERM handler, so that `serve` can clean up and exit 0."""


class CommandError(Exception):
    """A failure to report in one line (exit status 1), without a traceback."""

    status = 1


class SettingError(CommandError):
    """A setting that cannot be used as it is written, such as a DATABASE_URL libpq cannot read:
    one line, exit status 2 (as for bad arguments)."""

    status = 2


@dataclass(frozen=True)
class Command:
    help: str  # one line, for `canfield --help`
    run: Callable[[argparse.Namespace], int]  # returns the exit status
    description: str = ""  # for `canfield <command> --help`
    arguments: Callable[[argparse.ArgumentParser], None] = lambda parser: None


# --- helpers ---------------------------------------------------------------------------


def mask_password(url: str) -> str:
    """`url` with any password replaced by ***, for printing."""
    try:
        parts = urlsplit(url)
    except ValueError:
        parts = None
    if parts is not None and parts.scheme and "@" in parts.netloc:
        userinfo, _, hostinfo = parts.netloc.rpartition("@")
        user, _, password = userinfo.partition(":")
        if password:
            parts = parts._replace(netloc=f"{user}:***@{hostinfo}")
        url = urlunsplit(parts)
    return re.sub(r"(password=)[^&\s]*", r"\1***", url)


@contextmanager
def database(settings: Settings, *, stop_on_exit: bool = True) -> Iterator[tuple[str, str]]:
    """(libpq URL, description) of DATABASE_URL, or of the embedded PostgreSQL if it is unset.

    An embedded server started here is stopped on exit (one that was already running is left
    alone).
    """
    from service.store.connections import DatabaseURLError, checked_url

    try:
        if settings.database_read_url:
            checked_url(settings.database_read_url, "DATABASE_READ_URL")
        conninfo = None if not settings.database_url else checked_url(settings.database_url)
    except DatabaseURLError as exc:
        raise SettingError(str(exc)) from None
    if conninfo is not None:
        yield conninfo, "from DATABASE_URL"
        return

    from service.store import embedded_db

    try:
        embedded: EmbeddedDatabase = embedded_db.start(settings.data_dir)
    except embedded_db.EmbeddedDatabaseError as exc:
        raise CommandError(f"embedded PostgreSQL: {exc}") from None
    how = "started" if embedded.started_here else "already running, left running on exit"
    description = f"embedded PostgreSQL in {embedded.pgdata} ({how})"
    try:
        yield embedded.url, description
    finally:
        if stop_on_exit:
            embedded.stop()


def apply_migrations(url: str) -> None:
    import psycopg
    from sqlalchemy.exc import OperationalError

    from service.store.migrations import migrate

    try:
        migrate(url)
    except OperationalError as exc:
        raise CommandError(f"cannot migrate {mask_password(url)}: {_one_line(exc.orig or exc)}") from None
    except psycopg.OperationalError as exc:
        raise CommandError(f"cannot migrate {mask_password(url)}: {_one_line(exc)}") from None


def _one_line(error: BaseException) -> str:
    """An error's message on one line (libpq's name every host it tried, a line each)."""
    return "; ".join(line.strip() for line in str(error).splitlines() if line.strip())


def _raise_shutdown(signum: int, frame: FrameType | None) -> None:
    raise ShutdownRequested(signal.Signals(signum).name)


# --- serve -----------------------------------------------------------------------------


def _serve_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--host", help="interface to listen on (default: $HOST or 127.0.0.1)")
    parser.add_argument("--port", type=int, help="TCP port (default: $PORT or 8000)")
    parser.add_argument("--workers", type=int, help="worker processes (default: $WORKERS or 1)")


def serve(args: argparse.Namespace) -> int:
    settings = Settings.from_env()
    overrides = {k: getattr(args, k) for k in ("host", "port", "workers") if getattr(args, k) is not None}
    settings = dataclasses.replace(settings, **overrides)
    if settings.workers < 1:
        raise CommandError("--workers must be at least 1")
    if settings.otel_tracing:
        from .http.tracing import TracingUnavailable, check_available

        try:
            check_available()
        except TracingUnavailable as exc:
            raise CommandError(str(exc)) from None

    # uvicorn re-raises the signal that stopped it once it has shut down: SIGINT becomes a
    # KeyboardInterrupt (which uvicorn swallows); SIGTERM would kill us before the embedded
    # database is stopped, so it raises ShutdownRequested instead.
    previous = signal.signal(signal.SIGTERM, _raise_shutdown)
    try:
        with database(settings) as (url, description):
            apply_migrations(url)
            os.environ["DATABASE_URL"] = url  # the workers import service.http.asgi, which reads it
            from .http.server import metrics_directory, run

            plural = "s" if settings.workers != 1 else ""
            print(
                f"canfield: serving on http://{settings.host}:{settings.port} ({settings.workers} worker{plural}); "
                f"database {mask_password(url)} ({description})",
                flush=True,
            )
            with metrics_directory():  # every worker's metrics, summed by /metrics; removed at exit
                started = run(ASGI_APP, host=settings.host, port=settings.port, workers=settings.workers,
                              shutdown_seconds=settings.shutdown_timeout_seconds)
    except (KeyboardInterrupt, ShutdownRequested):
        started = True
    finally:
        signal.signal(signal.SIGTERM, previous)
    if not started:
        print("canfield: the server did not start", file=sys.stderr, flush=True)
        return STARTUP_FAILURE
    print("canfield: stopped", flush=True)
    return 0


# --- migrate ---------------------------------------------------------------------------


def migrate_command(args: argparse.Namespace) -> int:
    settings = Settings.from_env()
    with database(settings) as (url, description):
        apply_migrations(url)
        print(f"canfield: migrations applied to {mask_password(url)} ({description})", file=sys.stderr)
    return 0


# --- openapi ---------------------------------------------------------------------------


def _openapi_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--output", "-o", type=Path, metavar="PATH", help="write here instead of to stdout")


def openapi_document() -> dict[str, Any]:
    """The live OpenAPI document of the app (built without a database)."""
    from service.http.app import create_app

    app = create_app(Settings(database_url=OPENAPI_PLACEHOLDER_URL))
    return app.openapi_schema.to_schema()


def openapi_json() -> str:
    """The OpenAPI document as pretty, stable JSON: sorted keys, 2-space indent, final newline."""
    return json.dumps(openapi_document(), indent=2, sort_keys=True, ensure_ascii=False) + "\n"


def openapi_command(args: argparse.Namespace) -> int:
    text = openapi_json()
    if args.output is None:
        sys.stdout.write(text)
        sys.stdout.flush()
        return 0
    output: Path = args.output
    output.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.NamedTemporaryFile("w", encoding="utf-8", dir=output.parent, delete=False, suffix=".tmp") as tmp:
        tmp.write(text)
    os.replace(tmp.name, output)
    os.chmod(output, 0o644)
    print(f"canfield: wrote {output}", file=sys.stderr)
    return 0


# --- solve ---------------------------------------------------------------------------

EXIT_USAGE = 2  # bad arguments, as argparse itself exits
DEFAULT_SOLVE_SECONDS = 10.0


def _usage_error(command: str, message: str) -> int:
    print(f"canfield {command}: error: {message}", file=sys.stderr)
    return EXIT_USAGE


def _solve_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--ruleset", required=True, metavar="R", help="classic, draw-one or open-runs")
    source = parser.add_mutually_exclusive_group(required=True)
    source.add_argument("--seed", type=int, metavar="N", help="the shuffle of seed N (docs/deals.md)")
    source.add_argument("--pool", type=int, metavar="N", help="deal N (1-based) of the ruleset's verified pool")
    source.add_argument("--deck", metavar="CODES", help="52 card codes in deal order, comma- or space-separated")
    parser.add_argument(
        "--budget-seconds",
        type=float,
        default=DEFAULT_SOLVE_SECONDS,
        metavar="S",
        help=f"time limit: give up (result unknown) after S seconds of wall time (default {DEFAULT_SOLVE_SECONDS:g})",
    )
    parser.add_argument(
        "--max-positions",
        type=int,
        default=None,
        metavar="P",
        help="position limit: give up (result unknown) after searching P positions (default: no limit; "
        "the time limit alone applies). Whichever limit is reached first ends the search",
    )
    parser.add_argument("--json", action="store_true", help="print one JSON line: result, API moves, seconds, states")


def solve_command(args: argparse.Namespace) -> int:
    import time

    from domain import command_to_api
    from domain.solver import Budget, solve
    from service.deals.deal_pools import encode_line

    if not args.budget_seconds > 0:
        return _usage_error("solve", "--budget-seconds must be more than 0")
    if args.max_positions is not None and args.max_positions < 1:
        return _usage_error("solve", "--max-positions must be at least 1")
    start = _solve_start(args)
    if isinstance(start, int):
        return start
    ruleset, what, state = start
    started = time.perf_counter()
    deadline = started + args.budget_seconds
    outcome = solve(
        state, Budget(max_states=args.max_positions, out_of_time=lambda: time.perf_counter() > deadline)
    )
    seconds = round(time.perf_counter() - started, 3)
    if args.json:
        document = {
            "result": outcome.result,
            "moves": [command_to_api(move) for move in outcome.moves],
            "seconds": seconds,
            "states": outcome.states,
        }
        print(json.dumps(document), flush=True)
        return 0
    print(f"deal:    {ruleset.key}, {what}")
    print(f"result:  {outcome.result}")
    print(f"length:  {len(outcome.moves)} moves")
    print(f"states:  {outcome.states}")
    print(f"seconds: {seconds}")
    if outcome.result == "won":
        print(f"line:    {encode_line(outcome.moves)}")
    return 0


def _solve_start(args: argparse.Namespace) -> tuple[Ruleset, str, GameState] | int:
    """The deal `canfield solve` names (a seed, a pool deal or a deck): its ruleset, how to call it
    and its first state; or the exit status of a usage error."""
    from domain import DomainError, deal, initial_state, parse_deck
    from domain.rulesets import get_ruleset
    from service.deals.deal_pools import deal_pool_path, load_deal_pool, start_state

    try:
        ruleset = get_ruleset(args.ruleset)
        if args.seed is not None:
            return ruleset, f"seed {args.seed}", start_state(ruleset, args.seed)
        if args.pool is None:
            codes = [text for text in re.split(r"[\s,]+", args.deck.strip()) if text]
            return ruleset, "the given deck", initial_state(deal(ruleset, parse_deck(codes), {}))
        pool = load_deal_pool(ruleset.id)
        if pool is None:
            return _usage_error(
                "solve",
                f"the ruleset {ruleset.id} has no pool ({deal_pool_path(ruleset.id)} does not exist); "
                f"build one with `canfield pool build --ruleset {ruleset.id} --count N`",
            )
        if not 1 <= args.pool <= pool.size:
            return _usage_error(
                "solve", f"pool deal {args.pool} is out of range: the {ruleset.id} pool has deals 1..{pool.size}"
            )
        seed = pool.deal(args.pool).seed
        return pool.ruleset, f"pool deal {args.pool} (seed {seed})", start_state(pool.ruleset, seed)
    except DomainError as exc:
        return _usage_error("solve", exc.reason)


# --- pool --------------------------------------------------------------------------------


def _pool_arguments(parser: argparse.ArgumentParser) -> None:
    actions = parser.add_subparsers(dest="pool_command", metavar="<action>", required=True)
    build = actions.add_parser(
        "build",
        help="solve seeds 1, 2, ... until the first N won seeds are known; write the pool file",
        description=(
            "Solve seeds 1, 2, 3, ... in a process pool (each seed with its own time budget) until the\n"
            "first N won seeds are known, replay every winning line through the rules engine, and write\n"
            "the pool file atomically. Every finished seed is kept in <output>.progress.jsonl, so an\n"
            "interrupted build (Ctrl-C) resumes where it stopped when run again with the same options."
        ),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    build.add_argument("--ruleset", required=True, metavar="R", help="classic, draw-one or open-runs")
    build.add_argument("--count", required=True, type=int, metavar="N", help="how many won deals the pool holds")
    build.add_argument(
        "--budget-seconds", type=float, default=10.0, metavar="S", help="time budget per seed (default 10)"
    )
    build.add_argument("--workers", type=int, metavar="W", help="worker processes (default: all cores)")
    build.add_argument(
        "--output", type=Path, metavar="PATH", help="the pool file (default: service/deals/data/pools/<R>.json)"
    )
    recheck = actions.add_parser(
        "recheck",
        help="re-decide the seeds outside a pool with the current solver; the deals never move",
        description=(
            "Solve again every seed of 1..seedsTried that is not a deal of the pool, with the current\n"
            "solver, and rewrite the pool's verdicts (won / lost / undecided, and which seeds): a pool\n"
            "number is a published address, so the deals and their numbers stay exactly as they are.\n"
            "Seeds now won stay outside the pool, listed with their verified lines. Results of the same\n"
            "solver and budget are reused from --reuse files and from <file>.recheck.jsonl (resume)."
        ),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    recheck.add_argument("--ruleset", required=True, metavar="R", help="classic, draw-one or open-runs")
    recheck.add_argument(
        "--budget-seconds", type=float, default=10.0, metavar="S", help="CPU time budget per seed (default 10)"
    )
    recheck.add_argument("--workers", type=int, metavar="W", help="worker processes (default: all cores)")
    recheck.add_argument("--file", type=Path, metavar="PATH", help="the pool file (default: the shipped one)")
    recheck.add_argument(
        "--reuse",
        type=Path,
        action="append",
        default=[],
        metavar="JSONL",
        help="per-seed results to reuse, e.g. bench/results/solver-<R>.jsonl (repeatable)",
    )
    verify = actions.add_parser(
        "verify",
        help="replay every stored line of the pool files through the rules engine",
        description="Replay every line of a pool file to a win; exit 1 on any failure.",
    )
    verify.add_argument("--ruleset", metavar="R", help="only this ruleset's pool (default: every pool file)")
    verify.add_argument("--file", type=Path, metavar="PATH", help="verify this pool file instead of a shipped one")


def pool_command(args: argparse.Namespace) -> int:
    from service.deals import pool_build

    try:
        if args.pool_command == "build":
            return pool_build.build(args.ruleset, args.count, args.budget_seconds, args.workers, args.output)
        if args.pool_command == "recheck":
            return pool_build.recheck(args.ruleset, args.budget_seconds, args.workers, args.file, args.reuse)
        return pool_build.verify(args.ruleset, args.file)
    except pool_build.BuildError as exc:
        return _usage_error(f"pool {args.pool_command}", str(exc))


# --- projections -------------------------------------------------------------------------


def _projections_arguments(parser: argparse.ArgumentParser) -> None:
    sub = parser.add_subparsers(dest="action", metavar="<action>", required=True)
    sub.add_parser("rebuild", help="recompute every projection (stats, leaderboard) from the event log alone")


def projections_command(args: argparse.Namespace) -> int:
    from service.stats.rebuild import rebuild_projections

    settings = Settings.from_env()
    with database(settings) as (url, description):
        apply_migrations(url)
        summary = rebuild_projections(url)
        print(f"canfield: projections rebuilt in {mask_password(url)} ({description})", file=sys.stderr)
    print(json.dumps(summary, sort_keys=True, default=str))
    return 0


# --- analyse ---------------------------------------------------------------------------------


def _analyse_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("game_id", metavar="GAME_ID", help="the id of a game that has ended and is public")


def analyse_command(args: argparse.Namespace) -> int:
    import asyncio
    import uuid

    from service.analysis.command import analyse
    from service.errors import ServiceError

    try:
        game_id = uuid.UUID(args.game_id)
    except ValueError:
        return _usage_error("analyse", f"GAME_ID must be a game's id (a UUID), not {args.game_id!r}")
    settings = Settings.from_env()
    with database(settings) as (url, _):
        apply_migrations(url)
        try:
            job = asyncio.run(analyse(url, settings, game_id, lambda line: print(f"canfield: {line}", file=sys.stderr)))
        except ServiceError as error:
            raise CommandError(error.detail) from None
    for line in _analysis_summary(job.status, job.result or {}):
        print(line)
    return 0 if job.status == "done" else 1


def _analysis_summary(status: str, result: dict[str, Any]) -> list[str]:
    positions = result.get("positions", [])
    counts = {verdict: sum(p["verdict"] == verdict for p in positions) for verdict in ("won", "lost", "unknown")}
    verdicts = f"won {counts['won']}, lost {counts['lost']}, unknown {counts['unknown']}"
    solved = result.get("solved", 0)
    lines = [f"status: {status}",
             f"positions: {len(positions)} ({verdicts}; {solved} asked of the solver, the rest settled by reuse)"]
    point = result.get("turningPoint")
    if point is not None:
        lines.append(f"turning point: {json.dumps(point['move'])} from version {point['before']} (winnable) to "
                     f"{point['after']} (lost); a winning line from {point['before']}: "
                     f"{len(point['winningLineBefore'])} moves")
    elif positions:
        lines.append("turning point: none (" + ("the game was won" if positions[-1]["verdict"] == "won" else
                     "no move took a winnable game to a proven-lost position") + ")")
    return lines


# --- backup and restore ------------------------------------------------------------------


def _backup_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("file", type=Path, metavar="FILE", help="the backup to write (replaced if it exists)")


def _restore_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("file", type=Path, metavar="FILE", help="a backup made by `canfield backup`")
    parser.add_argument(
        "--clean", action="store_true",
        help="restore into a database that holds tables: drop the objects the backup holds first",
    )


def backup_command(args: argparse.Namespace) -> int:
    from service.store.backup import BackupError, backup

    with database(Settings.from_env()) as (url, description):
        try:
            summary = backup(url, args.file)
        except BackupError as exc:
            raise CommandError(str(exc)) from None
    print(f"canfield: backed up {mask_password(url)} ({description}) to {summary.path}: "
          f"{summary.size_bytes:,} bytes in {summary.seconds:.1f} s", file=sys.stderr)
    return 0


def restore_command(args: argparse.Namespace) -> int:
    from service.store.backup import BackupError, restore
    from service.store.migrations import head_revision

    with database(Settings.from_env()) as (url, description):
        try:
            summary = restore(url, args.file, clean=args.clean)
        except BackupError as exc:
            raise CommandError(str(exc)) from None
    print(f"canfield: restored {summary.path} into {mask_password(url)} ({description}): {summary.games} games, "
          f"{summary.events} events in {summary.seconds:.1f} s", file=sys.stderr)
    if summary.revision != head_revision():
        print(f"canfield: its schema is at revision {summary.revision}; `canfield migrate` (or `canfield serve`) "
              f"brings it to {head_revision()}", file=sys.stderr)
    return 0


# --- the command table ---------------------------------------------------------------------

COMMANDS: dict[str, Command] = {
    "serve": Command(
        help="run the HTTP API (uvicorn), with the embedded PostgreSQL if DATABASE_URL is unset",
        run=serve,
        arguments=_serve_arguments,
        description=(
            "Apply the database migrations, then serve the API with uvicorn until Ctrl-C or SIGTERM.\n\n"
            "Database: DATABASE_URL (a postgresql:// URL) if set; otherwise an embedded PostgreSQL whose\n"
            "data lives in $CANFIELD_DATA_DIR/pg (default: .data/pg in the project). It is started if\n"
            "needed, and stopped on exit if this command started it.\n"
            "Other settings: HOST, PORT, WORKERS, CORS_ORIGINS, DB_POOL_MIN, DB_POOL_MAX, ..."
        ),
    ),
    "migrate": Command(
        help="apply the database migrations (DATABASE_URL, or the embedded PostgreSQL)",
        run=migrate_command,
        description=(
            "Bring the database to the newest schema (idempotent). Uses DATABASE_URL if set, otherwise\n"
            "the embedded PostgreSQL in $CANFIELD_DATA_DIR/pg, which is stopped again afterwards if it\n"
            "was started only for this."
        ),
    ),
    "openapi": Command(
        help="print the OpenAPI document (JSON); needs no database",
        run=openapi_command,
        arguments=_openapi_arguments,
        description="Write the live OpenAPI document as stable JSON (sorted keys, 2-space indent).",
    ),
    "solve": Command(
        help="solve one deal (a seed, a pool deal or an explicit deck) with the solver",
        run=solve_command,
        arguments=_solve_arguments,
        description=(
            "Search for a win: prints the result, the line length, the positions searched, the time and\n"
            "the winning line. won: the line replays to a win through the rules engine; lost: proven (an\n"
            "exhaustive search with only pruning that never loses a win); unknown: a limit was reached.\n"
            "Two separate limits: --budget-seconds (time, default 10) and --max-positions (positions,\n"
            "default none); the search stops at whichever comes first, and at no hidden third one.\n"
            "Exit 0 for any result, 2 for bad arguments. With --json the last line is one JSON object\n"
            "with the API moves."
        ),
    ),
    "pool": Command(
        help="build or verify the solver-verified deal pools",
        run=pool_command,
        arguments=_pool_arguments,
        description=(
            "`canfield pool build` makes a pool file; `canfield pool recheck` re-decides the seeds outside\n"
            "it (the deals never move); `canfield pool verify` replays the stored lines."
        ),
    ),
    "analyse": Command(
        help="analyse a finished game: a verdict per position and the move that lost it",
        run=analyse_command,
        arguments=_analyse_arguments,
        description=(
            "Queue the game's analysis as POST /games/{id}/analysis would (a game that has ended and is\n"
            "public), run it here unless a server's worker has it (then wait for it), and print a summary:\n"
            "the verdicts (won, proven lost, unknown within ANALYSIS_POSITION_MS per position) and the\n"
            "turning point. Exit 0 when done, 1 when it failed or was refused."
        ),
    ),
    "projections": Command(
        help="rebuild the stats and leaderboard projections from the event log",
        run=projections_command,
        arguments=_projections_arguments,
        description=(
            "`canfield projections rebuild` empties the projection tables and recomputes them by replaying\n"
            "every game's events (DATABASE_URL, or the embedded PostgreSQL), in one transaction."
        ),
    ),
    "backup": Command(
        help="back up the database to FILE (pg_dump, custom format): a consistent snapshot, taken live",
        run=backup_command,
        arguments=_backup_arguments,
        description=(
            "Dump the whole database (DATABASE_URL, or the embedded PostgreSQL) to FILE with pg_dump in its\n"
            "custom format, while the service runs: pg_dump reads one consistent snapshot. FILE appears whole\n"
            "or not at all. It holds token hashes and the deal secret: keep it as safe as the database."
        ),
    ),
    "restore": Command(
        help="restore a backup made by `canfield backup` into an empty database (pg_restore)",
        run=restore_command,
        arguments=_restore_arguments,
        description=(
            "Restore FILE into the database (DATABASE_URL, or the embedded PostgreSQL) with pg_restore, in\n"
            "one transaction. The database must hold no tables; --clean drops the objects the backup holds\n"
            "first (stop the servers using it before). Exit 1, changing nothing, on any failure."
        ),
    ),
}


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="canfield",
        description="Canfield Solitaire game service.",
        epilog="Run `canfield <command> --help` for the options of a command.",
    )
    sub = parser.add_subparsers(dest="command", metavar="<command>", required=True)
    for name, command in COMMANDS.items():
        command_parser = sub.add_parser(
            name,
            help=command.help,
            description=command.description or command.help,
            formatter_class=argparse.RawDescriptionHelpFormatter,
        )
        command.arguments(command_parser)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return COMMANDS[args.command].run(args)
    except CommandError as exc:
        print(f"canfield {args.command}: {exc}", file=sys.stderr)
        return exc.status
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    sys.exit(main())
