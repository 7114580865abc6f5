"""The verdict cache: the solver's verdicts on tables, kept across analysis jobs (``analysis_verdicts``,
migration 0015), so no table is searched twice.

A verdict is kept under the table's ``domain.analysis.position_key`` (the ruleset, the base rank and
the cards where they lie) and ``RULES`` (the solver's version of the rules: a change makes every kept
verdict stop matching). Only the solver's own answers are kept:

- ``won`` with its line; the line is replayed through the rules (``domain.verify.line_wins``, in
  ``Analysis.record``) every time it is used again, so a kept ``won`` proves itself each time;
- ``lost``, which the solver's sound stage proved when it was kept: trusted as it is (a loss cannot
  be checked without the search again);
- ``unknown`` with the solver time the search had (``budget_ms``): used again only by a search that
  would be given no more time (it could not do better); a search given more time runs, and its answer
  replaces the kept one. A proven verdict is never replaced by ``unknown``.
"""

from __future__ import annotations

from psycopg.rows import tuple_row
from psycopg_pool import AsyncConnectionPool

RULES = "v1"
"""The solver's version of the rules the kept verdicts hold for (with the ruleset's own id and
version, which the position key holds)."""

_FIND = """
SELECT verdict, line FROM analysis_verdicts
WHERE position_key = %(key)s AND rules = %(rules)s AND (verdict <> 'unknown' OR budget_ms >= %(budget_ms)s)
"""
_KEEP = """
INSERT INTO analysis_verdicts AS v (position_key, rules, verdict, line, budget_ms)
VALUES (%(key)s, %(rules)s, %(verdict)s, %(line)s, %(budget_ms)s)
ON CONFLICT (position_key, rules) DO UPDATE
SET verdict = excluded.verdict, line = excluded.line, budget_ms = excluded.budget_ms, updated_at = now()
WHERE v.verdict = 'unknown' AND (excluded.verdict <> 'unknown' OR excluded.budget_ms > v.budget_ms)
"""


class VerdictCache:
    def __init__(self, pool: AsyncConnectionPool) -> None:
        self.pool = pool

    async def find(self, key: str, seconds: float) -> tuple[str, str | None] | None:
        """The kept verdict on the table ``key`` (and a won one's line) that a search of ``seconds``
        would not improve on; None when there is none."""
        async with self.pool.connection() as conn:
            cursor = conn.cursor(row_factory=tuple_row)
            await cursor.execute(_FIND, {"key": key, "rules": RULES, "budget_ms": _ms(seconds)})
            row = await cursor.fetchone()
        return None if row is None else (row[0], row[1])

    async def keep(self, key: str, result: str, line: str | None, seconds: float) -> None:
        """Keep the solver's answer on the table ``key`` from a search of ``seconds``."""
        async with self.pool.connection() as conn:
            await conn.execute(_KEEP, {
                "key": key, "rules": RULES, "verdict": result, "line": line if result == "won" else None,
                "budget_ms": _ms(seconds) if result == "unknown" else None,
            })

    async def drop(self, key: str) -> None:
        """Forget the verdict on ``key`` (a kept won line that no longer replays)."""
        async with self.pool.connection() as conn:
            await conn.execute("DELETE FROM analysis_verdicts WHERE position_key = %s AND rules = %s", (key, RULES))


def _ms(seconds: float) -> int:
    return max(0, int(seconds * 1000))
