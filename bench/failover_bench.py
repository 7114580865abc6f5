"""Losing the primary database: recovery time, client errors and lost moves, asynchronous and
synchronous replication.

``python -m bench failover`` (on request, not in ``make bench``). Each repetition is the failover
drill of tests/failover_drill.py (the same as tests/integration/test_failover.py asserts on): an
embedded primary and a streaming standby ``s1`` (with ``synchronous_standby_names = 's1'`` in the
synchronous runs), the service in a subprocess with its default settings on the multi-host URL
``...?target_session_attrs=read-write``, ``FAILOVER_CLIENTS`` (8) clients each moving on a game of
its own with Idempotency-Keys (a move is sent again with the same key after a 503 or a connection
error until it is acknowledged) and a stream per game resumed with ``Last-Event-ID``, and
``FAILOVER_ENDERS`` (2) clients more that also resign their game every 12 moves and deal a new one
(Idempotency-Keys on both), each following its account stream (``GET /players/me/stream``, resumed
with ``Last-Event-ID``; tests/failover_accounts.py). After
``FAILOVER_BEFORE_SECONDS`` (4) the primary's postmaster is SIGKILLed and the standby promoted at
once (``pg_ctl promote``, as an orchestrator does once it has decided); the clients go on for 3 s
more. ``FAILOVER_REPEATS`` (3) repetitions of each mode. A third mode shows the asynchronous loss
window on purpose: the standby stops streaming ``FAILOVER_CUT_SECONDS`` (1) before the kill (its
``primary_conninfo`` emptied), so what the primary acknowledges meanwhile never reaches it.

Reported per mode: recovery (from the kill to the first acknowledged move sent after it; the
promotion's own time within it), readiness (from the end of the promotion to ``/readyz`` answering
200: the pool and the stream listener both on the promoted primary), the client errors (tries that
had to be sent again: 503s, connections dropped), the moves lost (acknowledged, missing from the
promoted database), doubled or out of place, the streams that missed a version, the acknowledged
game ends and the account events lost (a gameEnded a client was told of, by the reply to its
resignation or on its stream, that the promoted database does not hold), the account streams that
missed, repeated or misread an event, the moves per second before the kill, and whether the server
process restarted (never).
Writes ``bench/results/failover.json``. ``BENCH_QUICK=1``: 2 clients and 1 ender, 1 repetition,
1.5 s before the kill.
"""

from __future__ import annotations

import os
import shutil
import statistics
import tempfile
from pathlib import Path
from typing import Any

from .harness.env import RESULTS_DIR, quick
from .harness.env import float_env as _float_env
from .harness.results import write_results

RESULTS_FILE = RESULTS_DIR / "failover.json"


def _one(synchronous: bool, clients: int, enders: int, before: float, cut: float = 0.0) -> dict[str, Any]:
    from tests.failover_drill import run_drill  # the tests' drill, imported on use

    work_dir = Path(tempfile.mkdtemp(prefix="canfield-failover-"))
    try:
        result = run_drill(work_dir, synchronous=synchronous, clients=clients, enders=enders, before_seconds=before,
                           after_seconds=3.0, cut_standby_seconds=cut, log=print,
                           env={"STREAM_KEEPALIVE_SECONDS": "1"})  # streams dropped at the kill: within 1 s
    finally:
        shutil.rmtree(work_dir, ignore_errors=True)
    return {
        "synchronous": synchronous,
        "recovery_seconds": result.recovery_seconds,
        "promote_seconds": round(result.promote_seconds, 3),
        "ready_after_promotion_seconds": result.ready_after_promotion_seconds,
        "move_after_promotion_seconds": result.move_after_promotion_seconds,
        "errors": dict(result.errors),
        "error_count": sum(result.errors.values()),
        "refused": dict(result.refused),
        "lost": len(result.lost),
        "doubled_or_misplaced": len(result.duplicated) + len(result.gaps),
        "stream_problems": len(result.stream_problems),
        "stream_resumes": result.stream_resumes,
        "game_ends": result.game_ends,
        "account_events_lost": len(result.account_events_lost),
        "account_events_doubled": len(result.account_events_doubled),
        "account_stream_problems": len(result.account_stream_problems),
        "account_resumes": result.account_resumes,
        "moves_before": result.moves_before,
        "moves_per_second_before": round(result.moves_per_second_before, 1),
        "moves_after": result.moves_after,
        "server_restarted": result.server_restarted,
    }


def _row(mode: str, runs: list[dict[str, Any]]) -> str:
    recoveries = [r["recovery_seconds"] for r in runs if r["recovery_seconds"] is not None]
    recovery = (f"{statistics.median(recoveries):.2f} s (max {max(recoveries):.2f})" if recoveries else "never")
    promote = statistics.median(r["promote_seconds"] for r in runs)
    readies = [r["ready_after_promotion_seconds"] for r in runs if r["ready_after_promotion_seconds"] is not None]
    ready = (f"{statistics.median(readies):.2f} s (max {max(readies):.2f})" if len(readies) == len(runs)
             else f"never in {len(runs) - len(readies)} of {len(runs)}")
    errors = "/".join(str(r["error_count"]) for r in runs)
    kinds = sorted({kind for r in runs for kind in r["errors"]})
    lost = "/".join(str(r["lost"]) for r in runs)
    refused = sum(sum(r["refused"].values()) for r in runs)
    streams = sum(r["stream_problems"] for r in runs)
    ends = "/".join(str(r["game_ends"]) for r in runs)
    events_lost = "/".join(str(r["account_events_lost"] + r["account_events_doubled"]) for r in runs)
    accounts = sum(r["account_stream_problems"] for r in runs)
    rate = statistics.median(r["moves_per_second_before"] for r in runs)
    restarted = "yes" if any(r["server_restarted"] for r in runs) else "no"
    return (f"| {mode} | {recovery} | {promote:.2f} s | {ready} | {errors} ({', '.join(kinds) or '-'}) | {lost} | "
            f"{refused} | {streams} | {ends} | {events_lost} | {accounts} | {rate:.0f} | {restarted} |")


def report(results: dict[str, Any]) -> str:
    lines = [
        (f"failover: {results['clients']} clients + {results['enders']} ending games, {results['repeats']} repetitions "
        f"a mode, {results['cpus']} CPUs (per repetition: errors, lost, game ends, account events lost)"),
        ("| replication | recovery (median) | promotion | ready after promotion (median) | client errors | lost "
        "| refused after | streams missing | game ends | account events lost | account streams wrong | moves/s before "
        "| restarted |"),
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    lines += [_row(mode, runs) for mode, runs in results["runs"].items()]
    return "\n".join(lines)


def main() -> None:
    clients = int(os.environ.get("FAILOVER_CLIENTS", quick(8, 2)))
    enders = int(os.environ.get("FAILOVER_ENDERS", quick(2, 1)))
    repeats = int(os.environ.get("FAILOVER_REPEATS", quick(3, 1)))
    before = _float_env("FAILOVER_BEFORE_SECONDS", quick(4.0, 1.5))
    cut = _float_env("FAILOVER_CUT_SECONDS", 1.0)
    behind = f"async, standby cut {cut:g} s before"
    runs: dict[str, list[dict[str, Any]]] = {"async": [], "sync": [], behind: []}
    for repetition in range(repeats):
        for mode in runs:  # alternate, so every mode meets the same machine
            print(f"  failover {mode} #{repetition + 1}: {clients} clients, {enders} enders ...", flush=True)
            runs[mode].append(_one(mode == "sync", clients, enders, before, cut if mode == behind else 0.0))
    results = {"clients": clients, "enders": enders, "repeats": repeats, "cpus": os.cpu_count(), "runs": runs}
    write_results(results, report(results), RESULTS_FILE)
    bad = [r for r in runs["sync"] if r["lost"] or r["doubled_or_misplaced"] or r["stream_problems"]
           or r["account_events_lost"] or r["account_events_doubled"] or r["account_stream_problems"]]
    if bad or any(r["server_restarted"] for mode in runs.values() for r in mode):
        raise SystemExit("failover bench: synchronous replication lost a move, a streamed or an account event, "
                         "or a restart")
