"""The one place a challenge's event is written to the account outbox (service.store.outbox).

The account stream and webhooks (service.following) tell the recipient of a challenge that it
was made, and both players when it was accepted, declined, cancelled (or withdrawn) or expired: a
``challenge`` event whose ``action`` says which. Every change of a challenge calls
``record_challenge_event`` in the transaction that makes the change, so the event commits with the
change or not at all. An expiry is stored by the account events' periodic job
(``Challenges.expire_due``), so its event comes within ``ACCOUNT_EVENTS_SWEEP_SECONDS`` of
``expiresAt``; a pending challenge past its time reads as expired before that too.
"""

from __future__ import annotations

from typing import Any

from psycopg import AsyncConnection

from ..store import outbox
from ..store.players import player_reference
from .challenge_store import ChallengeRow

CREATED = "created"


async def record_challenge_event(conn: AsyncConnection[Any], kind: str, challenge: ChallengeRow) -> None:
    """Write the event ``kind`` (``challenge-created``, ``-accepted``, ``-declined``, ``-cancelled`` or ``-expired``)
    of ``challenge`` (as it is after the change), in the caller's transaction: to the recipient
    when it is made, to both players when it ends."""
    action = kind.removeprefix("challenge-")
    data = {
        "challenge": str(challenge.id),
        "action": action,
        "from": player_reference(challenge.from_id, challenge.from_name, challenge.from_bot),
        "to": player_reference(challenge.to_id, challenge.to_name, challenge.to_bot),
        "ruleset": challenge.ruleset_id,
        "rated": challenge.rated,
        "timeLimitSeconds": challenge.time_limit_seconds,
        "expiresAt": challenge.expires_at.isoformat(),
        "race": None if challenge.race_id is None else str(challenge.race_id),
    }
    told = [challenge.to_id] if action == CREATED else [challenge.from_id, challenge.to_id]
    await outbox.append_all(conn, [outbox.AccountEvent(player, outbox.CHALLENGE, data) for player in told])
