"""The decks in play: which shared deal, if any, a deck is a copy of (docs/security.md, "Fair play
on shared deals").

A deal is in play while others play it for a place: a daily deal until its UTC date is over (its
deck is stored ahead, so tomorrow's counts too), a race's while it runs (an open race has dealt
no card to anyone yet; a finished or cancelled one is over), and a tournament's deals from the
moment they are proven until it has finished (``tournament_deals.fingerprint``, migration 0023). Each
such deck's canonical fingerprint (``domain.fingerprint``: the same for all 2,496 relabelled
copies of a deal) is stored with it, ``daily_deals.fingerprint`` and ``races.fingerprint``
(migration 0013), and a lookup is two index reads: the daily deals from today on (a range of the
primary key) and the running races with that fingerprint (``races_live_fingerprint``).

A deal in play stored without a fingerprint (before migration 0013, or by a process of the
release before it) is fingerprinted by the first lookup that meets it and stored, so no deck in
play is ever missed.
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import date
from typing import Any

from psycopg_pool import AsyncConnectionPool

from domain import parse_deck
from domain.fingerprint import fingerprint

DAILY, RACE, TOURNAMENT = "daily", "race", "tournament"

_HOLDERS = """
SELECT 'daily', day::text, deck, fingerprint FROM daily_deals
WHERE day >= %(today)s AND (fingerprint = %(fingerprint)s OR fingerprint IS NULL)
UNION ALL
SELECT 'race', id::text, deck, fingerprint FROM races
WHERE status = 'running' AND (fingerprint = %(fingerprint)s OR fingerprint IS NULL)
UNION ALL
SELECT 'tournament', d.tournament_id::text, d.deck, d.fingerprint FROM tournament_deals d
JOIN tournaments t ON t.id = d.tournament_id
WHERE d.fingerprint = %(fingerprint)s AND t.finished_at IS NULL
"""
_FILL = {
    DAILY: "UPDATE daily_deals SET fingerprint = %s WHERE day = %s AND fingerprint IS NULL",
    RACE: "UPDATE races SET fingerprint = %s WHERE id = %s AND fingerprint IS NULL",
}


@dataclass(frozen=True, slots=True)
class LiveDeal:
    """A shared deal in play whose deck a looked-up deck is a copy of: a daily deal (by date) or a race."""

    kind: str  # DAILY, RACE or TOURNAMENT
    day: date | None
    race_id: uuid.UUID | None
    tournament_id: uuid.UUID | None = None


def deck_fingerprint(codes: Sequence[str]) -> str:
    """The fingerprint of a deck of card codes, as the tables store decks."""
    return fingerprint(parse_deck(list(codes)))


class LiveDecks:
    def __init__(self, pool: AsyncConnectionPool) -> None:
        self.pool = pool

    async def holders(self, deck: Sequence[int], today: date) -> list[LiveDeal]:
        """The shared deals in play (daily deals dated ``today`` or later, races running) whose
        deck is ``deck`` or a relabelled copy of it. A race listed may be due to finish: the caller
        settles it before it refuses anything."""
        wanted = fingerprint(deck)
        found: list[LiveDeal] = []
        async with self.pool.connection() as conn:
            cursor = await conn.execute(_HOLDERS, {"today": today, "fingerprint": wanted})
            rows: list[tuple[str, str, Any, str | None]] = await cursor.fetchall()
            for kind, key, stored_deck, stored in rows:
                held = stored or deck_fingerprint(stored_deck)
                if stored is None:  # stored before migration 0013, or by the release before it
                    await conn.execute(_FILL[kind], (held, date.fromisoformat(key) if kind == DAILY else key))
                if held == wanted:
                    found.append(_live(kind, key))
        return found


def _live(kind: str, key: str) -> LiveDeal:
    if kind == DAILY:
        return LiveDeal(DAILY, date.fromisoformat(key), None)
    if kind == TOURNAMENT:
        return LiveDeal(TOURNAMENT, None, None, uuid.UUID(key))
    return LiveDeal(RACE, None, uuid.UUID(key))
