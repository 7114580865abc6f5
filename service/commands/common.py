"""What every `canfield` subcommand shares: the `Command` record of the command table, the errors
that end a command in one line, and the database a command works on.

`database` names the database of DATABASE_URL, or starts the embedded PostgreSQL when it is unset;
`apply_migrations` brings it to the newest schema; `mask_password` keeps passwords out of what a
command prints. A command reports a failure by raising `CommandError` (or `SettingError`), which
`service.cli.main` prints on one line, or returns `usage_error(...)`'s exit status for bad arguments.
"""

from __future__ import annotations

import argparse
import re
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING
from urllib.parse import urlsplit, urlunsplit

from service.settings import Settings

if TYPE_CHECKING:
    from service.store.embedded_db import EmbeddedDatabase

EXIT_USAGE = 2  # bad arguments, as argparse itself exits


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


def usage_error(command: str, message: str) -> int:
    print(f"canfield {command}: error: {message}", file=sys.stderr)
    return EXIT_USAGE
