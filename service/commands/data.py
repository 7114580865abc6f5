"""The `canfield` subcommands that work on the data the database holds: `projections rebuild`
(recompute the stats and leaderboard from the event log), `backup` and `restore` (pg_dump and
pg_restore of the whole database).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from service.commands.common import Command, CommandError, apply_migrations, database, mask_password
from service.settings import Settings

# --- projections -------------------------------------------------------------------------


def _projections_arguments(parser: argparse.ArgumentParser) -> None:
    sub = parser.add_subparsers(dest="action", metavar="<action>", required=True)
    sub.add_parser("rebuild", help="recompute every projection (stats, leaderboard, ratings) from the event log alone")


def projections_command(args: argparse.Namespace) -> int:
    from service.ratings.rebuild import rebuild_ratings
    from service.stats.rebuild import rebuild_projections
    from service.tournaments.rebuild import tournament_places

    settings = Settings.from_env()
    with database(settings) as (url, description):
        apply_migrations(url)
        summary = rebuild_projections(url)
        # after the stats: a race's places do not depend on them
        summary["ratings"] = rebuild_ratings(url, tournament_places)
        print(f"canfield: projections rebuilt in {mask_password(url)} ({description})", file=sys.stderr)
    print(json.dumps(summary, sort_keys=True, default=str))
    return 0


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


# --- the commands, as service.cli.COMMANDS names them -------------------------

PROJECTIONS = Command(
    help="rebuild the stats, leaderboard and rating projections from the event log",
    run=projections_command,
    arguments=_projections_arguments,
    description=(
        "`canfield projections rebuild` empties the projection tables and recomputes them by replaying\n"
        "every game's events (DATABASE_URL, or the embedded PostgreSQL), in one transaction; then the\n"
        "ratings, by replaying the rated races in the order they finished (a second transaction)."
    ),
)

BACKUP = Command(
    help="back up the database to FILE (pg_dump, custom format): a consistent snapshot, taken live",
    run=backup_command,
    arguments=_backup_arguments,
    description=(
        "Dump the whole database (DATABASE_URL, or the embedded PostgreSQL) to FILE with pg_dump in its\n"
        "custom format, while the service runs: pg_dump reads one consistent snapshot. FILE appears whole\n"
        "or not at all. It holds token hashes and the deal secret: keep it as safe as the database."
    ),
)

RESTORE = Command(
    help="restore a backup made by `canfield backup` into an empty database (pg_restore)",
    run=restore_command,
    arguments=_restore_arguments,
    description=(
        "Restore FILE into the database (DATABASE_URL, or the embedded PostgreSQL) with pg_restore, in\n"
        "one transaction. The database must hold no tables; --clean drops the objects the backup holds\n"
        "first (stop the servers using it before). Exit 1, changing nothing, on any failure."
    ),
)
