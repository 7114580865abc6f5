"""The challenge use cases: challenge a player, accept (a two-entrant race, started at once),
decline, cancel, the caller's pending challenges, and whom a player accepts challenges from.

A challenge is pending until its recipient accepts or declines it, its sender cancels it, or
``expiry`` passes (then it is expired: nothing can be done with it). Accepting deals the race's
secret deal first (proven winnable, derived from the race's id, which is the challenge's id, so
every process that accepts at once deals the same one), then, in one transaction with the
challenge's row locked, makes and starts the race and marks the challenge accepted: of two
accepts at once, one starts the race and the other answers with that same race.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Literal, cast

from psycopg_pool import AsyncConnectionPool

from domain.rulesets import DEFAULT_RULESET_ID

from .. import cursors
from ..errors import BadRequest, ChallengeRefused, ChallengeToSelf, Conflict, Forbidden, NotFound
from ..players.accounts import Accounts
from ..players.tokens import Scope
from ..races.races import Races
from ..races.rows import RaceRow
from ..wire import PlayerRef, RulesetId
from .challenge_store import (
    ACCEPTED,
    CANCELLED,
    DECLINED,
    EXPIRED,
    PENDING,
    POLICIES,
    ChallengeRow,
    ChallengeStore,
    NewChallengeRow,
    end,
    expire_due,
    load,
)
from .outbox import record_challenge_event
from .wire import ChallengeList, ChallengeView

Status = Literal["pending", "accepted", "declined", "cancelled", "expired"]
_LIST = "challenges"
_REFUSAL = "'cursor' is not a cursor of your challenges: pass the 'next' of the previous page"


@dataclass(frozen=True, slots=True)
class NewChallenge:
    to: uuid.UUID
    ruleset: str | None = None
    rated: bool = False
    time_limit_seconds: int | None = None


@dataclass(frozen=True, slots=True)
class Accepted:
    """What an accept gives: the race, and whether this call started it."""

    race: RaceRow
    started: bool


def challenge_view(row: ChallengeRow, now: datetime) -> ChallengeView:
    return ChallengeView(
        id=row.id,
        status=cast(Status, row.status_at(now)),
        from_=PlayerRef(row.from_id, row.from_name, row.from_bot),
        to=PlayerRef(row.to_id, row.to_name, row.to_bot),
        ruleset=RulesetId(row.ruleset_id),
        rated=row.rated,
        time_limit_seconds=row.time_limit_seconds,
        created_at=row.created_at,
        expires_at=row.expires_at,
        ended_at=row.ended_at,
        race=row.race_id,
    )


class Challenges:
    def __init__(
        self, pool: AsyncConnectionPool, accounts: Accounts, races: Races, clock: Callable[[], datetime],
        expiry_seconds: int, most_pending: int = 20,
    ) -> None:
        self.pool = pool
        self.store = ChallengeStore(pool)
        self.accounts = accounts
        self.races = races
        self.clock = clock
        self.expiry = timedelta(seconds=expiry_seconds)
        self.most_pending = most_pending  # pending challenges one player may have made (CHALLENGES_PER_PLAYER)

    async def _player(self, token: str | None, scope: Scope) -> uuid.UUID:
        return (await self.accounts.authenticate(token, scope)).player_id

    async def create(self, token: str | None, asked: NewChallenge) -> ChallengeView:
        sender = await self._player(token, Scope.PLAY)
        if asked.to == sender:
            raise ChallengeToSelf("you cannot challenge yourself: name another player in 'to'")
        recipient = await self.store.recipient(asked.to)
        if recipient is None or recipient.deleted:
            raise NotFound(f"no player {asked.to}")
        if recipient.accepts == "nobody":
            raise ChallengeRefused("this player accepts no challenges")
        if recipient.accepts == "humans" and await self.store.is_bot(sender):
            raise ChallengeRefused("this player accepts challenges from people only, and this account is a bot")
        ruleset = DEFAULT_RULESET_ID if asked.ruleset is None else asked.ruleset
        now = self.clock()
        async with self.pool.connection() as conn, conn.transaction():
            if await self.store.pending_made(conn, sender, now) >= self.most_pending:
                raise Conflict(f"you have {self.most_pending} pending challenges already, the most allowed: wait for "
                               "answers, or cancel one (GET /challenges lists them)", "too_many_challenges")
            made = await self.store.insert(conn, NewChallengeRow(uuid.uuid4(), sender, asked.to, ruleset, asked.rated,
                                                                 asked.time_limit_seconds, now, now + self.expiry))
            await record_challenge_event(conn, "challenge-created", made)
        return challenge_view(made, now)

    async def accept(self, token: str | None, challenge_id: uuid.UUID) -> Accepted:
        """The recipient accepts: the race of the two, started (or the one an earlier accept started)."""
        caller = await self._player(token, Scope.PLAY)
        found = await self._mine(challenge_id, caller)
        if found.to_id != caller:
            raise Forbidden("only the challenged player may accept a challenge")
        if found.status == ACCEPTED and found.race_id is not None:
            return Accepted(await self.races.race(found.race_id), started=False)
        self._still_pending(found)
        dealt = await self.races.secret_deck(found.ruleset_id, found.id, caller)
        async with self.pool.connection() as conn, conn.transaction():
            locked = await load(conn, challenge_id, lock=True)
            assert locked is not None
            if locked.status == ACCEPTED and locked.race_id is not None:
                started = False
            else:
                self._still_pending(locked)
                await self.races.start_pair(conn, locked.id, (locked.from_id, locked.to_id), dealt,
                                            locked.time_limit_seconds, locked.rated)
                changed = await end(conn, challenge_id, ACCEPTED, self.clock(), locked.id)
                await record_challenge_event(conn, "challenge-accepted", changed)
                started = True
        return Accepted(await self.races.race(found.id), started)

    async def decline(self, token: str | None, challenge_id: uuid.UUID) -> ChallengeView:
        return await self._end(token, challenge_id, DECLINED)

    async def cancel(self, token: str | None, challenge_id: uuid.UUID) -> ChallengeView:
        return await self._end(token, challenge_id, CANCELLED)

    async def _end(self, token: str | None, challenge_id: uuid.UUID, status: str) -> ChallengeView:
        """Decline (the recipient) or cancel (the sender) a pending challenge."""
        caller = await self._player(token, Scope.PLAY)
        found = await self._mine(challenge_id, caller)
        if status == DECLINED and found.to_id != caller:
            raise Forbidden("only the challenged player may decline a challenge (its sender cancels it)")
        if status == CANCELLED and found.from_id != caller:
            raise Forbidden("only the player who made a challenge may cancel it (its recipient declines it)")
        async with self.pool.connection() as conn, conn.transaction():
            locked = await load(conn, challenge_id, lock=True)
            assert locked is not None
            self._still_pending(locked)
            changed = await end(conn, challenge_id, status, self.clock())
            await record_challenge_event(conn, f"challenge-{status}", changed)
        return challenge_view(changed, self.clock())

    async def withdraw_all(self, player_id: uuid.UUID) -> None:
        """A player leaving (their account deleted): their pending challenges, either way, are cancelled."""
        for challenge_id in await self.store.pending_ids(player_id):
            async with self.pool.connection() as conn, conn.transaction():
                locked = await load(conn, challenge_id, lock=True)
                if locked is not None and locked.status == PENDING:
                    changed = await end(conn, challenge_id, CANCELLED, self.clock())
                    await record_challenge_event(conn, "challenge-cancelled", changed)

    async def expire_due(self, batch: int = 500) -> int:
        """Store the pending challenges past their time as expired and tell both players of each
        (the account events' periodic job); how many expired."""
        async with self.pool.connection() as conn, conn.transaction():
            expired = await expire_due(conn, self.clock(), batch)
            for row in expired:
                await record_challenge_event(conn, "challenge-expired", row)
        return len(expired)

    async def pending(self, token: str | None, cursor: str | None, limit: int) -> ChallengeList:
        """``GET /challenges``: the caller's pending challenges, made and received, newest first."""
        caller = await self._player(token, Scope.READ_PRIVATE)
        before = None
        if cursor is not None:
            fields = cursors.decode(_LIST, cursor, _REFUSAL)
            if len(fields) != 3 or fields[0] != str(caller):
                raise BadRequest(_REFUSAL)
            before = (cursors.instant(fields[1], _REFUSAL), cursors.identifier(fields[2], _REFUSAL))
        now = self.clock()
        rows = await self.store.pending(caller, now, before, limit + 1)
        page = rows[:limit]
        following = None
        if len(rows) > limit:
            following = cursors.encode(_LIST, caller, page[-1].created_at, page[-1].id)
        return ChallengeList([challenge_view(row, now) for row in page], following)

    async def set_policy(self, token: str | None, accepts: str) -> None:
        """Whom the player accepts challenges from: everyone, humans (no bots) or nobody."""
        caller = await self._player(token, Scope.ACCOUNT)
        if accepts not in POLICIES:
            raise BadRequest(f"'acceptChallengesFrom' must be one of {', '.join(POLICIES)}")
        await self.store.set_policy(caller, accepts)

    async def _mine(self, challenge_id: uuid.UUID, caller: uuid.UUID) -> ChallengeRow:
        """The challenge, if the caller made or received it (anyone else: 404, as for no challenge)."""
        async with self.pool.connection() as conn:
            found = await load(conn, challenge_id)
        if found is None or caller not in (found.from_id, found.to_id):
            raise NotFound(f"no challenge {challenge_id} of yours")
        return found

    def _still_pending(self, row: ChallengeRow) -> None:
        status = row.status_at(self.clock())
        if status == EXPIRED:
            raise Conflict(f"the challenge expired at {row.expires_at.isoformat()}", "challenge_expired")
        if status != PENDING:
            raise Conflict(f"the challenge is {status} already", "challenge_not_pending")
