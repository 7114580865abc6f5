"""The soak's figures: a phase's tally summed up, and the printed report of the whole run."""

from __future__ import annotations

from typing import Any

from .mixed_load import Tally
from .stats import percentile


def summarize(tally: Tally, seconds: float) -> dict[str, Any]:
    latencies = sorted(tally.latencies)
    moves = sum(n for key, n in tally.statuses.items() if key.startswith("move "))
    reads = sum(n for key, n in tally.statuses.items() if key.startswith("read "))
    return {
        "seconds": round(seconds, 2),
        "requests": moves + reads + tally.replays_checked,
        "moves": moves,
        "reads": reads,
        "moves_per_second": round(moves / seconds, 1) if seconds else None,
        "acknowledged_moves": tally.statuses.get("move 200", 0),
        "statuses": dict(sorted(tally.statuses.items())),
        "p50_ms": round(percentile(latencies, 0.5), 2),
        "p99_ms": round(percentile(latencies, 0.99), 2),
        "replays_checked": tally.replays_checked,
        "errors": tally.error_count,
        "error_samples": tally.errors,
        "unavailable_503": tally.unavailable,
    }


def report(results: dict[str, Any]) -> str:
    soak, restart, check = results["soak"], results["restart"], results["audit"]
    recovery = restart["recovery_seconds"]
    lines = [
        (
            f"soak: {soak['seconds']:g} s, {results['clients']} clients on {results['games_at_once']} games at a "
            f"time, uvicorn x{results['workers']}, {results['database']}, {results['cpus']} CPUs"
        ),
        (
            f"  {soak['requests']} requests: {soak['moves']} moves ({soak['moves_per_second']:g}/s, "
            f"p50 {soak['p50_ms']} ms, "
            f"p99 {soak['p99_ms']} ms), {soak['reads']} reads, {soak['replays_checked']} idempotent retries compared"
        ),
        f"  answers: {soak['statuses']}",
        (
            f"  ERRORS: {soak['errors']}   LOST MOVES: {check['lost_moves']} (of {check['acknowledged_events']} "
            f"acknowledged events; {check['unacknowledged_events']} stored events nobody was told about; "
            f"{check['games']} games audited: versions contiguous, no half-written move, "
            f"snapshot and restored state == replay: "
            f"{'yes' if not check['problems'] else 'NO'})"
        ),
        (
            f"database restart under load: stop {restart['stop_seconds']} s, down {restart['down_seconds']:g} s, "
            f"start {restart['start_seconds']} s; RECOVERY: first acknowledged move "
            f"{'never' if recovery is None else f'{recovery:.2f} s'} after the database was back "
            f"(/health 200 after {restart['health_after_seconds']} s); 503s while down: "
            f"{restart['unavailable_503']}; errors: {restart['errors']}"
        ),
    ]
    lines.extend(f"  error: {sample}" for sample in (soak["error_samples"] + restart["error_samples"])[:10])
    lines.extend(f"  audit: {problem}" for problem in check["problems"][:10])
    return "\n".join(lines)
