"""Opaque page cursors of the keyset-paginated lists (the daily leaderboard, the open-races lobby):
the sort key of a page's last row, with the name of its list, so a cursor of another list (or of
another date's leaderboard) is refused in the service's own words, never read as a key."""

from __future__ import annotations

import base64
import binascii
import uuid
from datetime import datetime

from .errors import BadRequest


def encode(kind: str, *fields: object) -> str:
    """The cursor of list ``kind`` after the row whose sort key is ``fields``."""
    text = "|".join([kind, *(value.isoformat() if isinstance(value, datetime) else str(value) for value in fields)])
    return base64.urlsafe_b64encode(text.encode()).decode().rstrip("=")


def decode(kind: str, cursor: str, refusal: str) -> list[str]:
    """The fields of a cursor of list ``kind``; anything else is a 400 saying ``refusal``."""
    try:
        text = base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4)).decode()
    except (binascii.Error, UnicodeDecodeError, ValueError):
        raise BadRequest(refusal) from None
    found, _, rest = text.partition("|")
    if found != kind or not rest:
        raise BadRequest(refusal)
    return rest.split("|")


def instant(text: str, refusal: str) -> datetime:
    """A cursor's date-time (always written with its offset)."""
    try:
        moment = datetime.fromisoformat(text)
    except ValueError:
        raise BadRequest(refusal) from None
    if moment.tzinfo is None:
        raise BadRequest(refusal)
    return moment


def identifier(text: str, refusal: str) -> uuid.UUID:
    try:
        return uuid.UUID(text)
    except ValueError:
        raise BadRequest(refusal) from None


def whole(text: str, refusal: str) -> int:
    """A cursor's non-negative integer (ASCII digits only)."""
    if not (text.isascii() and text.isdigit()) or len(text) > 10:
        raise BadRequest(refusal)
    return int(text)


def real(text: str, refusal: str) -> float:
    """A cursor's finite float, as ``repr`` wrote it (so it reads back exactly)."""
    try:
        value = float(text)
    except ValueError:
        raise BadRequest(refusal) from None
    if value != value or value in (float("inf"), float("-inf")):
        raise BadRequest(refusal)
    return value
