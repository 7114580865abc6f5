"""The one place a challenge's event would be written to the account stream's outbox.

The account stream (an outbox table its subscribers read, built elsewhere) is to tell the
recipient of a challenge that it was made, and both players when it was accepted, declined,
cancelled or withdrawn. Every change of a challenge calls ``record_challenge_event`` in the
transaction that makes the change, so an outbox row written here commits with the change or not
at all. Until the outbox exists it writes nothing. An expiry is not a write (a pending challenge
past its time simply is expired), so it has no event here: the stream's reader can tell from
``expiresAt``.
"""

from __future__ import annotations

from typing import Any

from psycopg import AsyncConnection

from .challenge_store import ChallengeRow


async def record_challenge_event(conn: AsyncConnection[Any], kind: str, challenge: ChallengeRow) -> None:
    """Write the event ``kind`` (``challenge-created``, ``-accepted``, ``-declined`` or ``-cancelled``)
    of ``challenge`` (as it is after the change) for the account stream of both its players, in the
    caller's transaction. No outbox table yet: nothing is written."""
    del conn, kind, challenge  # the account stream's outbox INSERT goes here
