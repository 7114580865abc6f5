"""The `canfield` subcommands that run the service: `serve` (migrate, then serve the API with
uvicorn until Ctrl-C or SIGTERM), `migrate` (the schema alone) and `openapi` (the live OpenAPI
document, built without a database).
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import signal
import sys
import tempfile
from pathlib import Path
from types import FrameType
from typing import Any

from service.commands.common import Command, CommandError, apply_migrations, database, mask_password
from service.settings import Settings

ASGI_APP = "service.http.asgi:app"
OPENAPI_PLACEHOLDER_URL = "postgresql://unused/none"  # `openapi` builds the app without a database
STARTUP_FAILURE = 3  # uvicorn's exit status when the app cannot start


class ShutdownRequested(Exception):
    """Raised by our SIGTERM handler, so that `serve` can clean up and exit 0."""


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
        from service.http.tracing import TracingUnavailable, check_available

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
            from service.http.server import metrics_directory, run

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
    parser.add_argument("--version", metavar="YYYY-MM-DD", help="the API version's document (default: the oldest)")
    parser.add_argument("--all-into", type=Path, metavar="DIR",
                        help="write every version's document to DIR/<version>.json and the oldest's to "
                             "DIR/openapi.json")


def openapi_document(version: str | None = None) -> dict[str, Any]:
    """The live OpenAPI document of the app (built without a database) of an API version (the
    oldest served, the one of a request that names none, by default)."""
    from service.http.app import create_app
    from service.http.openapi.versions import document_of
    from service.http.versions import SERVED

    app = create_app(Settings(database_url=OPENAPI_PLACEHOLDER_URL))
    chosen = next((v for v in SERVED.all if v.name == version), None) if version else SERVED.oldest
    if chosen is None:
        raise SystemExit(f"canfield openapi: no API version {version!r}; served: {[v.name for v in SERVED.all]}")
    return document_of(app.openapi_schema.to_schema(), chosen)


def openapi_json(version: str | None = None) -> str:
    """The OpenAPI document as pretty, stable JSON: sorted keys, 2-space indent, final newline."""
    return json.dumps(openapi_document(version), indent=2, sort_keys=True, ensure_ascii=False) + "\n"


def openapi_command(args: argparse.Namespace) -> int:
    if args.all_into is not None:
        from service.http.versions import SERVED

        for version in SERVED.all:
            _write(args.all_into / f"{version.name}.json", openapi_json(version.name))
        _write(args.all_into / "openapi.json", openapi_json(SERVED.oldest.name))
        return 0
    text = openapi_json(args.version)
    if args.output is None:
        sys.stdout.write(text)
        sys.stdout.flush()
        return 0
    _write(args.output, text)
    return 0


def _write(output: Path, text: str) -> None:
    output.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.NamedTemporaryFile("w", encoding="utf-8", dir=output.parent, delete=False, suffix=".tmp") as tmp:
        tmp.write(text)
    os.replace(tmp.name, output)
    os.chmod(output, 0o644)
    print(f"canfield: wrote {output}", file=sys.stderr)


# --- the commands, as service.cli.COMMANDS names them -------------------------

SERVE = Command(
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
)

MIGRATE = Command(
    help="apply the database migrations (DATABASE_URL, or the embedded PostgreSQL)",
    run=migrate_command,
    description=(
        "Bring the database to the newest schema (idempotent). Uses DATABASE_URL if set, otherwise\n"
        "the embedded PostgreSQL in $CANFIELD_DATA_DIR/pg, which is stopped again afterwards if it\n"
        "was started only for this."
    ),
)

OPENAPI = Command(
    help="print the OpenAPI document (JSON); needs no database",
    run=openapi_command,
    arguments=_openapi_arguments,
    description="Write the live OpenAPI document as stable JSON (sorted keys, 2-space indent).",
)
