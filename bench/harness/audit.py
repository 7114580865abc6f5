"""The soak's audit of every game it played, straight from PostgreSQL: the tests' checks of a stored
log, and every acknowledged move found in it (a lost move: missing or stored as another event)."""

from __future__ import annotations

from typing import Any

from .mixed_load import Run
from .service_api import log_audit


def audit(url: str, run: Run) -> dict[str, Any]:
    stored, log_problems = log_audit()  # the same checks as the tests' audit

    problems: list[str] = []
    lost = 0
    untold = 0
    logs = stored(url, list(run.games))
    events_total = sum(len(log.events) for log in logs.values())
    for game_id in run.games:
        log = logs.get(game_id)
        if log is None:
            problems.append(f"{game_id}: no games row")
            continue
        problems += log_problems(game_id, log)
        kinds = {version: kind for version, kind, _ in log.events}
        acked = run.acked.get(game_id, {})
        lost += sum(1 for version, kind in acked.items() if kinds.get(version) != kind)
        untold += sum(1 for version in kinds if version > 1 and version not in acked)
    return {
        "games": len(run.games),
        "events": events_total,
        "acknowledged_events": sum(len(a) for a in run.acked.values()),
        "lost_moves": lost,
        "unacknowledged_events": untold,
        "problems": problems[:20],
        "ok": not problems and lost == 0,
    }
