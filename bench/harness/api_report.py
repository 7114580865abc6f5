"""The API bench's printed table: each level's median rounds, every round, and the checks."""

from __future__ import annotations

from typing import Any

from .env import WORKERS
from .rounds import TARGETS


def _fmt(value: float | None, spec: str) -> str:
    return "-" if value is None else format(value, spec)


def _pinned(results: dict[str, Any]) -> str:
    pinned = results.get("pinned")
    if not pinned:
        return " (nothing pinned)"
    return f" (servers on CPU {pinned['server']}, PostgreSQL and the load generator on {pinned['rest']})"


def report(results: dict[str, Any]) -> str:
    runs = len(results["levels"][0]["runs"]) if results["levels"] else 0
    lines = [
        (
            f"API bench: {results['seconds']:g} s per run after {results['warmup']:g} s warm-up; {results['server']}, "
            f"{WORKERS} process(es) each; {results['database']}; {results['cpus']} CPUs{_pinned(results)}; "
            f"per level {runs} rounds of "
            f"{' / '.join(TARGETS)}, each row the median round of its target"
        ),
        "",
        "   C  target     req/s   p50 ms   p99 ms  errors  | CPU: client  server (ms/req)  postgres (ms/req)  others",
    ]
    for level in results["levels"]:
        for target in TARGETS:
            r = level[target]
            lines.append(
                f"{level['concurrency']:4d}  {target:8} {r['per_second']:8.0f} {r['p50_ms']:8.2f} {r['p99_ms']:8.2f} "
                f"{r['errors']:7d}  |      {r['client_cpu_share'] * 100:4.0f}%  "
                f"{_fmt(r['server_cpu_share'] and r['server_cpu_share'] * 100, '4.0f')}% "
                f"({_fmt(r['server_cpu_ms_per_request'], '.3f')})   "
                f"{_fmt(r['db_cpu_share'] and r['db_cpu_share'] * 100, '4.0f')}% "
                f"({_fmt(r['db_cpu_ms_per_request'], '.3f')})    {r['other_cpu_share'] * 100:4.0f}%"
            )
        lines.append(
            f"      service / bare {level['bare_ratio']:.2f} (goal >= 0.5 at 16 and 64), "
            f"service / ceiling {level['ratio']:.2f}  (medians of the rounds' ratios)"
        )
        if "b_ratio" in level:
            lines.append(
                f"      service-b ({results['ab']}) / bare {level['b_ratio']:.2f}; service / service-b, median of "
                f"the rounds: {level['a_over_b']:.2f} (rounds {', '.join(f'{r:.2f}' for r in level['a_over_bs'])})"
            )
    lines.append("   CPU: % of one core during the run, ms per request; others = the rest of the machine")
    lines.extend(_report_rounds(results))
    lines.extend(_report_checks(results))
    return "\n".join(lines)


def _report_rounds(results: dict[str, Any]) -> list[str]:
    lines = []
    lines.append(f"   every round (req/s of {' / '.join(TARGETS)}; others' CPU during the service run):")
    for level in results["levels"]:
        for number, pair in enumerate(level["runs"], 1):
            lines.append(
                f"   C={level['concurrency']:<3} round {number}: "
                + " / ".join(f"{pair[t]['per_second']:.0f}" for t in TARGETS)
                + f"  (service/bare {pair['bare_ratio']:.2f}, service/ceiling {pair['ratio']:.2f}; "
                f"others {pair['service']['other_cpu_share'] * 100:.0f}%)"
            )
    return lines


def _report_checks(results: dict[str, Any]) -> list[str]:
    lines = []
    check = results["check"]
    verdict = "OK, no move lost" if check["ok"] else "MISMATCH"
    lines.append(
        f"events check: {verdict}: {check['games']} service games, {check['acked_moves']} acknowledged moves, "
        f"{check['events']} events (= games + moves: {check['events'] == check['games'] + check['acked_moves']}); "
        f"ceiling: {check['ceiling_acked']} acknowledged, {check['ceiling_rows']} rows"
    )
    lines.extend(f"   mismatch: {wrong}" for wrong in (check["mismatches"] + check["ceiling_mismatches"])[:5])
    lines.extend(
        f"old vs new game (1 client, {o['moves_each']} moves each, interleaved): "
        f"{o['old_events_at_start']}-event game p50 {o['old_p50_ms']:.2f} ms p99 {o['old_p99_ms']:.2f} ms; "
        f"{o['new_events_at_start']}-event game p50 {o['new_p50_ms']:.2f} ms p99 {o['new_p99_ms']:.2f} ms; "
        f"speed old/new (new p50 / old p50) {o['speed_ratio']:.2f} (goal >= 0.9 at 10,000); errors {o['errors']}"
        for o in results["old_vs_new"]
    )
    g = results["load_generator"]
    best = max(level["bare"]["per_second"] for level in results["levels"])
    lines.append(
        f"load generator alone (16 connections, stub server, {g['body_bytes']}-byte move body): "
        f"{g['per_second']:.0f} req/s, client CPU {g['client_cpu_us_per_request']:.0f} us/req "
        f"(= {1e6 / g['client_cpu_us_per_request']:.0f} req/s per core; "
        f"{1e6 / g['client_cpu_us_per_request'] / best:.1f}x the bare endpoint's best)"
    )
    return lines
