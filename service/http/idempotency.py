"""``Idempotency-Key`` on the creating POSTs: a retry gets the first reply, and nothing is made twice.

Every creating handler (``POST /players``, ``/games``, ``/races``, ``/races/{id}/entries``,
``/races/{id}/start``, ``/players/me/tokens``) hands its work to ``replayable``:

* **Scope.** A key belongs to the bearer token's player (two players may use the same key), or,
  for ``POST /players``, which has no token, to the client address.
* **A replay is authorized as the first request was.** The row records the player and the scopes
  the first request's token held (``Owner``); a replay, and a wait on a pending key, needs a live
  token of that player holding every one of those scopes (the same token always does), else 403
  ``idempotency_key_forbidden`` and nothing changes. A row without scopes (stored before migration
  0014) asks for every scope. So a ``read-private`` token never gets the secret of a token an
  ``account`` token made, and a token that could not have made the request cannot replay it.
* **POST /players: the key is the secret.** Its reply holds the new player's token and anyone at
  the address who sends the same key and body gets it, so its key must be at least
  ``REGISTRATION_KEY_MIN`` (32) characters, the length of 128 random bits in hex (a random UUID,
  36 characters with 122 random bits, passes): a shorter one is a 400
  ``idempotency_key_too_short`` before anything is claimed or created. Its row records the player
  it registered (from the reply's ``Location``), so deleting that account erases the reply too.
* **The request** is its method, path and body (JSON compared after decoding: the order of the
  members and the white space do not matter), hashed. The same key with another request is a 400
  ``idempotency_key_reused`` and changes nothing.
* **Once.** The key is claimed (a pending row, committed) before anything is created. A second
  request with the key while the first is served waits for it up to ``WAIT_SECONDS``, then gets
  409 ``request_in_progress`` with ``Retry-After``. A success is stored (status, ``Location``,
  ``ETag``, ``Content-Type`` and the body's bytes) and replayed byte for byte with
  ``Idempotent-Replayed: true``. A failure (any 4xx or 5xx) gives the key back: a retry runs as
  new. A request cut off between its creation and storing its reply (the process died) leaves the
  key pending: after ``ABANDONED_AFTER`` it answers 409 ``request_outcome_unknown`` (look, then
  use a new key) until it expires, rather than risk a second creation.
* **No secret at rest.** A reply may hold a token (``POST /players``, ``POST /players/me/tokens``),
  and the database never holds a token (docs/security.md). So the row is found by a hash of the
  key, not the key, and the reply's body is stored sealed: XORed with a SHAKE-256 keystream of
  the key and a random nonce (``seal``). A copy of the database gives the reply only to whoever
  also has the key, which only the client ever had.
* **Expiry.** Keys, of creates and of moves, are kept ``IDEMPOTENCY_KEY_HOURS`` (24 by default);
  ``expire_keys`` removes older ones every ``PURGE_EVERY_SECONDS`` in each server process. A key
  sent again after it expired counts as new.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import logging
import re
import secrets
import time
import uuid
from collections.abc import Awaitable, Callable
from datetime import datetime, timedelta
from typing import Annotated, Any

import msgspec
from litestar import Request, Response
from litestar.datastructures import State
from litestar.openapi.datastructures import ResponseSpec
from litestar.params import HeaderParameter
from litestar.serialization import encode_json

from ..errors import (
    IdempotencyKeyReused,
    IdempotencyKeyTooShort,
    ReplayForbidden,
    RequestInProgress,
    RequestOutcomeUnknown,
)
from ..players.accounts import quoted
from ..players.tokens import ALL_SCOPES
from ..store.request_keys import Claim, Owner, RequestKeys, StoredKey
from .controllers.common import bearer_token, idempotency_key
from .dependencies import services_of
from .openapi.patterns import IDEMPOTENCY_KEY, header
from .problems import documented, problem_response

log = logging.getLogger("canfield")

WAIT_SECONDS = 2.0
"""How long a request waits for the first request with its key to finish, before a 409."""
ABANDONED_AFTER = timedelta(minutes=2)
"""A key pending longer than this was cut off (no request runs that long: statement and pool
timeouts are seconds)."""
PURGE_EVERY_SECONDS = 300.0
REGISTRATION_KEY_MIN = 32
"""The shortest ``POST /players`` Idempotency-Key: 128 random bits written in hex (a key is a
secret there; the service checks its length, the client's random source gives the bits)."""
REGISTRATION_KEY = f"^[!-~]{{{REGISTRATION_KEY_MIN},255}}$"
"""The OpenAPI pattern of a ``POST /players`` key (``IDEMPOTENCY_KEY``, at least that long)."""
_REPLAYED = ("location", "etag")
_REGISTERED = re.compile(r"/players/([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})")

_KEY_RULES = (
    "A retry with the same key and the same request (method, path, body) returns the first success again, byte for "
    "byte, with Idempotent-Replayed: true, and creates nothing; the same key with another request is a 400 "
    "idempotency_key_reused; while the first request runs, a 409 request_in_progress. A failure is not kept (a retry "
    "runs as new). Keys are kept IDEMPOTENCY_KEY_HOURS (at least 24 hours); after that a key is new again."
)

IdempotencyKeyHeader = Annotated[
    str | None,
    HeaderParameter(
        name="Idempotency-Key",
        description="a retry with the same key returns the first reply and creates nothing",
        schema_extra=header(
            IDEMPOTENCY_KEY,
            "1-255 visible ASCII characters, unique per request (a random UUID). " + _KEY_RULES + " Keys belong "
            "to the bearer token's player, and a reply is replayed only to a token of that player holding every "
            "scope the first request's token held (the same token always does); any other token gets a 403 "
            "idempotency_key_forbidden.",
        ),
    ),
]
"""The ``Idempotency-Key`` parameter of a creating handler with a bearer token (documented in OpenAPI)."""

RegistrationKeyHeader = Annotated[
    str | None,
    HeaderParameter(
        name="Idempotency-Key",
        description="a retry with the same key returns the first reply, the new token included, and creates nothing",
        schema_extra=header(
            REGISTRATION_KEY,
            f"{REGISTRATION_KEY_MIN}-255 visible ASCII characters from a cryptographically random source: "
            "the reply holds the new player's token and this request has no other secret, so anyone at the same "
            "address who sends the same key and body gets it. At least 32 characters, the length of 128 random "
            "bits as hex digits: 16 random bytes as 32 hex digits, 24 as 32 base64url characters, or a random "
            "UUID (version 4: 36 characters, 122 random bits, accepted). A shorter key is a 400 "
            "idempotency_key_too_short and nothing is created. " + _KEY_RULES + " Keys belong to the client "
            "address; deleting the account (DELETE /players/me) erases the stored reply, and the key is new again.",
        ),
    ),
]
"""The ``Idempotency-Key`` parameter of ``POST /players``: longer, since it is the secret."""


def keyed_responses(
    *statuses: int, conflicts: str | None = None, forbidden: str | None = None, anonymous: bool = False
) -> dict[int, ResponseSpec]:
    """``documented(*statuses)`` for a creating POST: its 400 also names ``idempotency_key_reused``
    (and, ``anonymous``: ``POST /players``, ``idempotency_key_too_short``), its 403 (every creating
    POST with a token) ``idempotency_key_forbidden`` after ``forbidden``, the operation's own codes,
    its 409 the key's codes after ``conflicts``, the operation's own. (A move's reused key is an
    ``idempotency_key_reused`` too.)"""
    responses = documented(*statuses)
    short = ", idempotency_key_too_short" if anonymous else ""
    responses[400] = problem_response(
        f"Invalid request (problem+json, code invalid_request, idempotency_key_reused{short})"
    )
    if not anonymous:
        codes = ", ".join(code for code in ("forbidden", forbidden, "idempotency_key_forbidden") if code)
        responses[403] = problem_response(f"Forbidden (problem+json, code {codes})")
    codes = ", ".join(code for code in (conflicts, "request_in_progress or request_outcome_unknown") if code)
    responses[409] = problem_response(f"Conflict (problem+json, code {codes})")
    return dict(sorted(responses.items()))


def request_keys(state: State) -> RequestKeys:
    keys: RequestKeys = services_of(state).request_keys
    return keys


async def replayable(
    request: Request[Any, Any, Any],
    state: State,
    key_header: str | None,
    create: Callable[[], Awaitable[Response[Any]]],
    anonymous: bool = False,
) -> Response[Any]:
    """``create()``'s reply, made at most once per Idempotency-Key (see the module's docstring).
    ``anonymous``: the request has no token (``POST /players``); its keys belong to its address."""
    key = idempotency_key(key_header)
    if key is None:
        return await create()
    if anonymous and len(key) < REGISTRATION_KEY_MIN:
        raise IdempotencyKeyTooShort(
            f"on POST /players the Idempotency-Key is the secret that gives the new token back on a retry, so it "
            f"must be at least {REGISTRATION_KEY_MIN} characters from a random source (a random UUID, or 16 random "
            f"bytes as 32 hex digits); this one is {len(key)}"
        )
    found_owner = await _owner(request, state, anonymous)
    if found_owner is None:
        return await create()  # no token: create() refuses it
    scope, owner = found_owner
    request_hash = _request_hash(request.method, request.scope["path"], await request.body())
    secret, key = key, hashlib.sha256(b"canfield key\0" + key.encode()).hexdigest()  # the row's name
    keys, clock = request_keys(state), services_of(state).clock
    hours = state.idempotency_key_hours
    waited_until = time.monotonic() + WAIT_SECONDS
    while True:
        now = clock()
        found = await keys.claim(scope, key, request_hash, now, now - timedelta(hours=hours), owner)
        if found is None:
            break
        if not anonymous:
            _authorize(found.owner, owner)
        if found.request_hash != request_hash:
            raise IdempotencyKeyReused(
                "this Idempotency-Key was already used for a different request (another path or body); "
                "use a new key for a new request"
            )
        if found.status is not None:
            return _replay(found, secret)
        if now - found.created_at > ABANDONED_AFTER:
            raise RequestOutcomeUnknown(
                "the first request with this Idempotency-Key was cut off and may have created something: "
                "look for it, and use a new key to try again"
            )
        if time.monotonic() > waited_until:
            raise RequestInProgress("the first request with this Idempotency-Key is still running; try again shortly")
        await asyncio.sleep(0.05)
    return await _create_once(keys, Claim(scope, key, now), secret, create)


def _authorize(first: Owner, now: Owner) -> None:
    """Refuse (403) a token that may not have the reply of a key ``first`` claimed: another
    player's, or one lacking a scope the first request's token held (a row that did not record them,
    stored before migration 0014, asks for every scope)."""
    if first.player_id is not None and first.player_id != now.player_id:
        raise ReplayForbidden("this Idempotency-Key's reply belongs to another player; use a new key")
    held = now.scopes or ()
    needed = first.scopes if first.scopes is not None else ALL_SCOPES
    lacking = [scope for scope in needed if scope not in held]
    if lacking:
        raise ReplayForbidden(
            f"this Idempotency-Key was first sent with a token holding {quoted(needed)}; its reply is given only to "
            f"a token of the same player holding all of them, and this one lacks {quoted(lacking)}: send it with "
            "the first token, or use a new key"
        )


async def _create_once(
    keys: RequestKeys, claim: Claim, secret: str, create: Callable[[], Awaitable[Response[Any]]]
) -> Response[Any]:
    try:
        reply = _encoded(await create())
    except Exception:
        await _release(keys, claim)
        raise
    status = reply.status_code or 200
    if status >= 400:
        await _release(keys, claim)
        return reply
    headers = {name: str(value) for name, value in reply.headers.items() if name.lower() in _REPLAYED}
    headers["content-type"] = str(reply.media_type)
    assert isinstance(reply.content, bytes)
    try:
        await keys.complete(claim, status, headers, seal(secret, reply.content), _registered(headers))
    except Exception as error:  # created: the client gets its reply; a retry will hear the outcome is unknown
        log.warning("an Idempotency-Key's reply could not be stored: %r", error)
    return reply


def _registered(headers: dict[str, str]) -> uuid.UUID | None:
    """The player a ``POST /players`` reply registered (its ``Location``), else None."""
    location = next((value for name, value in headers.items() if name.lower() == "location"), "")
    found = _REGISTERED.fullmatch(location)
    return None if found is None else uuid.UUID(found[1])


async def _release(keys: RequestKeys, claim: Claim) -> None:
    try:
        await keys.release(claim)
    except Exception as error:  # the key stays pending; a retry is told the outcome is unknown
        log.warning("an Idempotency-Key could not be given back after its request failed: %r", error)


def _encoded(reply: Response[Any]) -> Response[Any]:
    """The reply with its body as the bytes that are sent (and stored, and replayed)."""
    if isinstance(reply.content, bytes) and reply.media_type:
        return reply
    body = reply.content if isinstance(reply.content, bytes) else encode_json(reply.content)
    return Response(body, status_code=reply.status_code, headers=dict(reply.headers),
                    media_type=reply.media_type or "application/json")


def seal(secret: str, body: bytes) -> bytes:
    """``body`` as stored: a random nonce, then the body XORed with SHAKE-256(secret, nonce)."""
    nonce = secrets.token_bytes(16)
    return nonce + _xor(body, _keystream(secret, nonce, len(body)))


def unseal(secret: str, sealed: bytes) -> bytes:
    nonce, body = sealed[:16], sealed[16:]
    return _xor(body, _keystream(secret, nonce, len(body)))


def _keystream(secret: str, nonce: bytes, length: int) -> bytes:
    return hashlib.shake_256(b"canfield reply\0" + nonce + secret.encode()).digest(length)


def _xor(data: bytes, stream: bytes) -> bytes:
    return (int.from_bytes(data, "big") ^ int.from_bytes(stream, "big")).to_bytes(len(data), "big")


def _replay(found: StoredKey, secret: str) -> Response[Any]:
    headers = {name: value for name, value in found.headers.items() if name != "content-type"}
    headers["Idempotent-Replayed"] = "true"
    return Response(unseal(secret, found.body), status_code=found.status, headers=headers,
                    media_type=found.headers.get("content-type", "application/json"))


async def _owner(request: Request[Any, Any, Any], state: State, anonymous: bool) -> tuple[str, Owner] | None:
    """The key's scope (``player:<id>``, or for ``POST /players`` ``address:<ip>``) and who sends
    it: the token's player and scopes (a token that is not live is refused here, 401). None: no
    token (the handler refuses the request)."""
    if anonymous:
        return f"address:{request.client.host if request.client else '?'}", Owner(None, None)
    token = bearer_token(request)
    if token is None:
        return None
    credentials = await services_of(state).accounts.authenticate(token)
    scopes = tuple(scope for scope in ALL_SCOPES if scope in credentials.scopes)
    return f"player:{credentials.player_id}", Owner(credentials.player_id, scopes)


def _request_hash(method: str, path: str, body: bytes) -> bytes:
    """The request as a key compares it: JSON bodies by their content, not their spelling."""
    canonical = body.strip()
    if canonical:
        with contextlib.suppress(msgspec.MsgspecError, RecursionError):
            canonical = msgspec.json.encode(msgspec.json.decode(canonical), order="sorted")
    return hashlib.sha256(b"\0".join((method.encode(), path.encode(), canonical))).digest()


async def expire_keys(keys: RequestKeys, clock: Callable[[], datetime], hours: int) -> int:
    """Remove the keys (of creates and of moves) older than ``hours``; how many went."""
    return await keys.purge(clock() - timedelta(hours=hours))


async def expire_keys_forever(keys: RequestKeys, clock: Callable[[], datetime], hours: int) -> None:
    """``expire_keys`` every ``PURGE_EVERY_SECONDS`` until cancelled (the app's lifespan)."""
    while True:
        try:
            await expire_keys(keys, clock, hours)
        except Exception as error:  # the database may be down for a while: the next round tries again
            log.warning("expiring idempotency keys failed: %r", error)
        await asyncio.sleep(PURGE_EVERY_SECONDS)
