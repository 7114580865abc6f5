"""Opaque page cursors of the keyset-paginated lists (the daily leaderboard, the open-races lobby):
the sort key of a page's last row, with the name of its list, so a cursor of another list (or of
another date's leaderboard) is refused in the service's own words, never read as a key.

A cursor that carries more than a key, something the next page shows as it is (a leaderboard
rank), is signed: its last field is an HMAC-SHA256 of the rest under the server's deal secret
(``service.deals.deal_secret``; the message has a prefix of its own, as the daily and race deals'
have), cut to 12 bytes, so a client can hand it back but not make or change one."""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import uuid
from datetime import datetime

from .errors import CursorInvalid

LENGTH = 200
"""The longest cursor the API takes (the pattern of every cursor parameter)."""
_SIGNATURE_BYTES = 12


def encode(kind: str, *fields: object, secret: str | None = None) -> str:
    """The cursor of list ``kind`` after the row whose sort key is ``fields``; signed with ``secret``
    if given (read back by ``signed``)."""
    text = "|".join([kind, *(value.isoformat() if isinstance(value, datetime) else str(value) for value in fields)])
    if secret is not None:
        text = f"{text}|{_signature(secret, text)}"
    return base64.urlsafe_b64encode(text.encode()).decode().rstrip("=")


def decode(kind: str, cursor: str, refusal: str) -> list[str]:
    """The fields of a cursor of list ``kind``; anything else is a 400 saying ``refusal``."""
    try:
        text = base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4)).decode()
    except (binascii.Error, UnicodeDecodeError, ValueError):
        raise CursorInvalid(refusal) from None
    found, _, rest = text.partition("|")
    if found != kind or not rest:
        raise CursorInvalid(refusal)
    return rest.split("|")


def signed(secret: str, kind: str, fields: list[str], refusal: str) -> list[str]:
    """The ``fields`` of a signed cursor of list ``kind`` without their signature (the last field),
    if ``secret`` signed them; anything else is a 400 saying ``refusal``."""
    text = "|".join([kind, *fields[:-1]])
    if not hmac.compare_digest(fields[-1].encode(), _signature(secret, text).encode()):
        raise CursorInvalid(refusal)
    return fields[:-1]


def _signature(secret: str, text: str) -> str:
    digest = hmac.new(secret.encode(), f"canfield-cursor:{text}".encode(), hashlib.sha256).digest()
    return base64.urlsafe_b64encode(digest[:_SIGNATURE_BYTES]).decode()


def instant(text: str, refusal: str) -> datetime:
    """A cursor's date-time (always written with its offset)."""
    try:
        moment = datetime.fromisoformat(text)
    except ValueError:
        raise CursorInvalid(refusal) from None
    if moment.tzinfo is None:
        raise CursorInvalid(refusal)
    return moment


def identifier(text: str, refusal: str) -> uuid.UUID:
    try:
        return uuid.UUID(text)
    except ValueError:
        raise CursorInvalid(refusal) from None


def whole(text: str, refusal: str) -> int:
    """A cursor's non-negative integer (ASCII digits only)."""
    if not (text.isascii() and text.isdigit()) or len(text) > 10:
        raise CursorInvalid(refusal)
    return int(text)


def real(text: str, refusal: str) -> float:
    """A cursor's finite float, as ``repr`` wrote it (so it reads back exactly)."""
    try:
        value = float(text)
    except ValueError:
        raise CursorInvalid(refusal) from None
    if value != value or value in (float("inf"), float("-inf")):
        raise CursorInvalid(refusal)
    return value
