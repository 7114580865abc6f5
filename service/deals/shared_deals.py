"""The solver stays off a deal others play for a place (docs/security.md).

The solver sees the hidden cards, so its line, asked for on one account, could be played on
another. So a hint from the solver or an analysis is refused (``409 shared_deal``) on a daily deal
until its date is over, a race's or a tournament's until it has finished, and on any copy of one,
however it was dealt: a relabelled copy too (``service.deals.live_decks`` finds them by the deck's
fingerprint). Dealing such a copy is allowed: it is logged and counted for the operator, never
refused or shown to the player.
"""

from __future__ import annotations

import logging
import uuid
from collections.abc import Callable, Sequence
from datetime import UTC, datetime

from domain import parse_deck

from ..errors import Conflict
from ..metrics import SHARED_DEAL_COPIES_DEALT, SHARED_DEAL_COPIES_REFUSED
from ..store.event_store import EventStore
from ..store.game_records import GameRow
from .contests import Contest
from .daily import private_until
from .live_decks import DAILY, LiveDeal, LiveDecks

log = logging.getLogger("canfield")


class SharedDeals:
    def __init__(self, store: EventStore, clock: Callable[[], datetime], contests: Sequence[Contest]) -> None:
        self.store = store
        self.clock = clock
        self.live_decks = LiveDecks(store.pool)  # the shared decks in play
        self.contests = {contest.kind: contest for contest in contests}

    async def refuse_the_solver(self, game: GameRow, what: str = "solver hints are") -> None:
        """Refuse the solver (a hint, an analysis: ``what``) on ``game`` if its deal, or the deal it
        is a copy of, is in play."""
        now = self.clock()
        day = private_until(game.deal, now)
        if day is not None:
            raise Conflict(f"{what} off on the daily deal until its date ({day}, UTC) is over: the solver "
                           "sees the hidden cards, and everyone plays this deal for a place", "shared_deal")
        for contest in self.contests.values():
            contest_id = contest.contest_of(game.deal)
            if contest_id is not None and not await contest.over(contest_id):
                raise Conflict(f"{what} off in a {contest.kind} until it has finished: the solver sees the hidden "
                               "cards, which every entrant shares", "shared_deal")
        live = await self._live_deal_of(await self._deck_of(game.id), now)
        if live is not None:
            SHARED_DEAL_COPIES_REFUSED.inc()
            log.warning("the solver refused game %s of player %s: its deck is a copy of %s", game.id, game.player_id,
                        _named(live))
            until = f"its date ({live.day}, UTC) is over" if live.kind == DAILY else f"the {live.kind} has finished"
            raise Conflict(f"{what} off on this deck until {until}: it is a copy of a deal in play now "
                           f"({_shared(live)}), perhaps with its ranks rotated, its suits swapped by colour or its "
                           "columns reordered, and the solver would tell what its hidden cards allow", "shared_deal")

    async def note_a_copy(self, player_id: uuid.UUID, game_id: str, deck: tuple[int, ...]) -> None:
        """Log and count a game dealt from a copy of a deal in play (never refused)."""
        live = await self._live_deal_of(deck, self.clock())
        if live is not None:
            SHARED_DEAL_COPIES_DEALT.inc()
            log.warning("player %s dealt game %s from a deck that is a copy of %s", player_id, game_id, _named(live))

    async def _live_deal_of(self, deck: tuple[int, ...], now: datetime) -> LiveDeal | None:
        """The shared deal in play that ``deck`` is a copy of, if any (a race or tournament due to
        finish is finished first, and then no longer counts)."""
        for live in await self.live_decks.holders(deck, now.astimezone(UTC).date()):
            contest_id = live.tournament_id if live.tournament_id is not None else live.race_id
            if live.kind == DAILY or contest_id is None or not await self.contests[live.kind].over(contest_id):
                return live
        return None

    async def _deck_of(self, game_id: uuid.UUID) -> tuple[int, ...]:
        """The deck a game was dealt (its first event's)."""
        first = await self.store.read_events_upto(game_id, 1)
        return parse_deck(first[0].data["deck"])


def _shared(live: LiveDeal) -> str:
    """A deal in play as its copy's player is told it (a race or tournament by kind only: not which)."""
    return f"the daily deal of {live.day}" if live.kind == DAILY else f"a {live.kind} still running"


def _named(live: LiveDeal) -> str:
    """A deal in play as the operator's log names it."""
    if live.kind == DAILY:
        return f"the daily deal of {live.day}"
    return f"{live.kind} {live.tournament_id if live.tournament_id is not None else live.race_id}"
