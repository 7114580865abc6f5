"""The `canfield analyse` subcommand: a finished game's analysis (a verdict per position and the
move that lost it), run here as POST /games/{id}/analysis would queue it, and its summary printed.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from service.commands.common import Command, CommandError, apply_migrations, database, usage_error
from service.settings import Settings

# --- analyse ---------------------------------------------------------------------------------


def _analyse_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("game_id", metavar="GAME_ID", help="the id of a game that has ended and is public")


def analyse_command(args: argparse.Namespace) -> int:
    import asyncio
    import uuid

    from service.commands.analysing import analyse
    from service.errors import ServiceError

    try:
        game_id = uuid.UUID(args.game_id)
    except ValueError:
        return usage_error("analyse", f"GAME_ID must be a game's id (a UUID), not {args.game_id!r}")
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


# --- the commands, as service.cli.COMMANDS names them -------------------------

ANALYSE = Command(
    help="analyse a finished game: a verdict per position and the move that lost it",
    run=analyse_command,
    arguments=_analyse_arguments,
    description=(
        "Queue the game's analysis as POST /games/{id}/analysis would (a game that has ended and is\n"
        "public), run it here unless a server's worker has it (then wait for it), and print a summary:\n"
        "the verdicts (won, proven lost, unknown within ANALYSIS_POSITION_MS per position) and the\n"
        "turning point. Exit 0 when done, 1 when it failed or was refused."
    ),
)
