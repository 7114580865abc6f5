"""The API bench's checks: move latency on an old game against a new one, and every acknowledged
move found in the database (service events, ceiling rows)."""

from __future__ import annotations

import time
from typing import Any

import psycopg

from .client import Connection
from .load import Game, new_service_game, play_one
from .stats import percentile as _percentile


async def old_vs_new(port: int, seed: int, events: int, latency_moves: int) -> dict[str, Any]:
    """One client: move latency on a game with ``events`` events vs a fresh game (moves interleaved)."""
    old, fresh = await new_service_game(port, seed), await new_service_game(port, seed + 1)
    conn = Connection(port)
    await conn.open()
    try:
        for _ in range(events - 1):
            if await play_one(conn, old) != 200:
                raise RuntimeError("a move failed while preparing the old game")
        old_events, fresh_events = 1 + old.acked, 1 + fresh.acked
        samples: dict[str, list[int]] = {"old": [], "new": []}
        errors = 0
        for _ in range(latency_moves):
            for name, game in (("old", old), ("new", fresh)):
                sent = time.perf_counter_ns()
                status = await play_one(conn, game)
                samples[name].append(time.perf_counter_ns() - sent)
                errors += status != 200
    finally:
        conn.close()
    old_sorted, new_sorted = sorted(samples["old"]), sorted(samples["new"])
    result: dict[str, Any] = {
        "moves_each": latency_moves,
        "old_events_at_start": old_events,
        "new_events_at_start": fresh_events,
        "old_p50_ms": _percentile(old_sorted, 0.5),
        "old_p99_ms": _percentile(old_sorted, 0.99),
        "new_p50_ms": _percentile(new_sorted, 0.5),
        "new_p99_ms": _percentile(new_sorted, 0.99),
        "errors": errors,
        "games": [old, fresh],
    }
    result["p50_ratio"] = result["old_p50_ms"] / result["new_p50_ms"]
    result["speed_ratio"] = result["new_p50_ms"] / result["old_p50_ms"]  # how fast a move on the old game is
    result["p99_ratio"] = result["old_p99_ms"] / result["new_p99_ms"]
    return result



def check_events(url: str, games: list[Game], ceiling_games: list[Game]) -> dict[str, Any]:
    """Every service game holds 1 + acknowledged moves events; every ceiling game its acked rows."""
    with psycopg.connect(url, autocommit=True) as conn:
        events: dict[str, int] = dict(
            conn.execute(
                "SELECT game_id::text, count(*) FROM events WHERE game_id = ANY(%s::uuid[]) GROUP BY game_id",
                ([g.id for g in games],),
            ).fetchall()
        )
        rows: dict[str, int] = dict(
            conn.execute(
                "SELECT game_id::text, count(*) FROM bench_ceiling WHERE game_id = ANY(%s::uuid[]) GROUP BY game_id",
                ([g.id for g in ceiling_games],),
            ).fetchall()
        )
    wrong = [
        {"game": g.id, "acked_moves": g.acked, "events": events.get(g.id, 0)}
        for g in games
        if events.get(g.id, 0) != 1 + g.acked
    ]
    wrong_ceiling = [
        {"game": g.id, "acked": g.acked, "rows": rows.get(g.id, 0)}
        for g in ceiling_games
        if rows.get(g.id, 0) != g.acked
    ]
    return {
        "games": len(games),
        "acked_moves": sum(g.acked for g in games),
        "events": sum(events.values()),
        "mismatches": wrong,
        "ceiling_games": len(ceiling_games),
        "ceiling_acked": sum(g.acked for g in ceiling_games),
        "ceiling_rows": sum(rows.values()),
        "ceiling_mismatches": wrong_ceiling,
        "ok": not wrong and not wrong_ceiling,
    }
