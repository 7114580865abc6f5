"""The `canfield` subcommands about deals and the solver: `solve` (one deal: a seed, a pool deal or
an explicit deck, within a time and a position limit) and `pool` (build, recheck and verify the
solver-verified deal pools of service/deals/data/pools/).
"""

from __future__ import annotations

import argparse
import json
import re
from pathlib import Path
from typing import TYPE_CHECKING

from service.commands.common import Command, usage_error

if TYPE_CHECKING:
    from domain import GameState, Ruleset

# --- solve ---------------------------------------------------------------------------

DEFAULT_SOLVE_SECONDS = 10.0


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
        return usage_error("solve", "--budget-seconds must be more than 0")
    if args.max_positions is not None and args.max_positions < 1:
        return usage_error("solve", "--max-positions must be at least 1")
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
            return usage_error(
                "solve",
                f"the ruleset {ruleset.id} has no pool ({deal_pool_path(ruleset.id)} does not exist); "
                f"build one with `canfield pool build --ruleset {ruleset.id} --count N`",
            )
        if not 1 <= args.pool <= pool.size:
            return usage_error(
                "solve", f"pool deal {args.pool} is out of range: the {ruleset.id} pool has deals 1..{pool.size}"
            )
        seed = pool.deal(args.pool).seed
        return pool.ruleset, f"pool deal {args.pool} (seed {seed})", start_state(pool.ruleset, seed)
    except DomainError as exc:
        return usage_error("solve", exc.reason)


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
    from service.deals import pool_build, pool_recheck, pool_verify

    try:
        if args.pool_command == "build":
            return pool_build.build(args.ruleset, args.count, args.budget_seconds, args.workers, args.output)
        if args.pool_command == "recheck":
            return pool_recheck.recheck(args.ruleset, args.budget_seconds, args.workers, args.file, args.reuse)
        return pool_verify.verify(args.ruleset, args.file)
    except pool_verify.BuildError as exc:
        return usage_error(f"pool {args.pool_command}", str(exc))


# --- the commands, as service.cli.COMMANDS names them -------------------------

SOLVE = Command(
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
)

POOL = Command(
    help="build or verify the solver-verified deal pools",
    run=pool_command,
    arguments=_pool_arguments,
    description=(
        "`canfield pool build` makes a pool file; `canfield pool recheck` re-decides the seeds outside\n"
        "it (the deals never move); `canfield pool verify` replays the stored lines."
    ),
)
