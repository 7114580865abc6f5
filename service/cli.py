"""The `canfield` command line: serve the API, run migrations, export the OpenAPI document.

Each subcommand is a `Command` in `COMMANDS`, defined in the module of service/commands/ its
concept belongs to; add new ones there and name them here.
Configuration comes from the environment (see `service.settings.Settings.from_env`):
DATABASE_URL (unset: use the embedded PostgreSQL under CANFIELD_DATA_DIR), HOST, PORT, WORKERS...
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from service.commands.analysis import ANALYSE
from service.commands.common import Command, CommandError
from service.commands.data import BACKUP, PROJECTIONS, RESTORE
from service.commands.deals import POOL, SOLVE
from service.commands.serving import MIGRATE, OPENAPI, SERVE

# --- the command table ---------------------------------------------------------------------

COMMANDS: dict[str, Command] = {
    "serve": SERVE,
    "migrate": MIGRATE,
    "openapi": OPENAPI,
    "solve": SOLVE,
    "pool": POOL,
    "analyse": ANALYSE,
    "projections": PROJECTIONS,
    "backup": BACKUP,
    "restore": RESTORE,
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
