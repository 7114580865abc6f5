"""Rate limits that keep one client from hurting others: token buckets in this process.

Two budgets, each a token bucket (``rate`` tokens a second, at most ``burst`` saved up;
service.rate):

* **writes** (every method but GET, HEAD and OPTIONS), **per player**: every bearer token of one
  player spends the same budget, so minting more tokens buys no more requests. The player is
  found in this process's token cache (``PlayerKeys``: a dictionary lookup, no database, so a
  move costs what it did). A write without a token (``POST /players``) spends its client
  address's budget, and so does one whose token this process does not know yet (unchecked, it
  could be made up); once that request has checked the token, its player's budget is charged
  for it too, so a fresh token buys nothing;
* **reads** (GET, HEAD, OPTIONS), per client address. Reads are public and never check the
  token, so keying them by token would let a client mint a fresh budget per made-up header.

A write whose token is refused (the answer is ``401``) also costs its address one from a
budget of the same size kept for refused tokens, and writes from that address are refused while
it is empty: made-up tokens cannot buy fresh budgets for requests that check them.

The limiter is an ASGI wrapper around Litestar's own handler, so it sees every request (unknown
paths too) before routing, before the body is read and before any database work; a refused
request gets ``429`` problem+json with ``Retry-After`` (whole seconds, at least 1) and the CORS
headers a browser needs to read it. Every response counted against a budget, refused or not,
says where the client stands (draft-ietf-httpapi-ratelimit-headers): ``RateLimit-Policy:
"writes";q=<burst>;w=<seconds to refill it>`` and ``RateLimit: "writes";r=<requests left>;t=<seconds
until the budget is full again>``, so a bot can pace itself before it meets a 429.

``/health``, ``/livez``, ``/readyz``, ``/metrics``, ``/schema`` and CORS preflights are exempt, and
so are reads of the web page's own static files (``GET /`` and ``/web/...``): loading the page
takes a score of them at once, and a 429 on one of its scripts would break the page, while serving
them touches no database. Each refusal is counted (``canfield_rate_limit_refusals_total``).

The buckets live in this process: no round trip on the hot path, so with N server processes a
client can get N times the rate (docs/security.md says what a deployment does about it). Memory
is bounded: a bucket that has been idle long enough to be full again is the same as no bucket and
is dropped, and past ``max_buckets`` the least recently used ones go.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, NamedTuple

import msgspec

from ..errors import RateLimited
from ..metrics import REFUSED_READS, REFUSED_WRITES
from ..rate import TokenBuckets, buckets
from .problems import PROBLEM_JSON, problem_document

if TYPE_CHECKING:
    from litestar import Litestar
    from litestar.config.cors import CORSConfig

    from ..players.tokens import TokenCache
    from ..settings import Settings

__all__ = ["PlayerKeys", "RateLimiter", "TokenBuckets", "buckets", "install_rate_limits", "retry_after_header"]

READ_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})
EXEMPT_PATHS = ("/health", "/livez", "/readyz", "/metrics", "/schema")  # and everything under /schema/
MAX_TOKEN_LENGTH = 200  # a longer one is no token (service.http.controllers.common.token_of)


def retry_after_header(seconds: float) -> str:
    """Whole seconds, rounded up, at least 1."""
    return str(max(1, math.ceil(seconds)))


class Spent(NamedTuple):
    """What a request was counted against: the budget, its key (a player, an address) and its kind."""

    budget: TokenBuckets
    key: Any
    kind: str  # reads or writes


class PlayerKeys:
    """The write budget's key of an ``Authorization`` header: the player its bearer token speaks
    for, when this process's token cache (service.players.tokens) knows the token, so every token
    of one player spends one budget. A dictionary lookup, no database: a token this process has not
    seen yet (its first request here, or one the cache has let go) gives None."""

    def __init__(self, app: Any) -> None:
        self.app = app

    def _tokens(self) -> TokenCache | None:
        try:
            services = self.app.state["services"]  # made when the app starts (its lifespan)
        except KeyError:
            return None
        tokens: TokenCache = services.players.tokens
        return tokens

    def __call__(self, authorization: bytes) -> int | None:
        scheme, _, token = authorization.strip().partition(b" ")
        token = token.strip()
        if scheme.lower() != b"bearer" or not token or len(token) > MAX_TOKEN_LENGTH:
            return None
        tokens = self._tokens()
        found = None if tokens is None else tokens.get(token.decode("latin-1"))
        return None if found is None else found.player_id.int  # an int hashes faster than a UUID


class RateLimiter:
    """The ASGI wrapper: ``app.asgi_handler = RateLimiter(app.asgi_handler, ...)``; ``players``
    names a bearer token's player (``PlayerKeys``); None: every write spends its address's budget."""

    def __init__(
        self,
        app: Any,
        writes: TokenBuckets | None,
        reads: TokenBuckets | None,
        cors: CORSConfig | None = None,
        players: Callable[[bytes], int | None] | None = None,
    ) -> None:
        self.app = app
        self.writes = writes
        self.reads = reads
        self.cors = cors
        self.players = players

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        method: str = scope["method"]
        path: str = scope["path"]
        if path in EXEMPT_PATHS or path.startswith("/schema/"):
            await self.app(scope, receive, send)
            return
        headers = _headers(scope)
        if method == "OPTIONS" and b"origin" in headers and b"access-control-request-method" in headers:
            # A CORS preflight is answered from memory, as cheaply as a 429; and a browser cannot
            # read a refused preflight, only report a CORS failure.
            await self.app(scope, receive, send)
            return

        address = _address(scope)
        if method in READ_METHODS:
            if self.reads is not None and not _page_file(path):
                wait = self.reads.take(address)
                if wait:
                    await self._refuse(scope, send, headers, wait, Spent(self.reads, address, "reads"))
                    return
                await self.app(scope, receive, _with_limit_headers(send, self.reads, address, "reads"))
                return
            await self.app(scope, receive, send)
            return

        if self.writes is None:
            await self.app(scope, receive, send)
            return
        await self._write(scope, receive, send, headers, address, self.writes)

    async def _write(
        self, scope: Any, receive: Any, send: Any, headers: dict[bytes, bytes], address: str, writes: TokenBuckets
    ) -> None:
        """A write: counted per player (per address without a known token), or refused."""
        authorization = headers.get(b"authorization")
        if authorization is None:
            wait = writes.take(address)
            if wait:
                await self._refuse(scope, send, headers, wait, Spent(writes, address, "writes"))
                return
            await self.app(scope, receive, _with_limit_headers(send, writes, address, "writes"))
            return
        # the token's player (every token of theirs shares one budget); a token this process does
        # not know yet is unchecked, so it spends its address's budget, like a request without one.
        # What made-up tokens (401s) from this address have spent comes first.
        players = self.players
        player = None if players is None else players(authorization)
        key: Any = address if player is None else player
        wait = writes.wait(("401", address)) or writes.take(key)
        if wait:
            await self._refuse(scope, send, headers, wait, Spent(writes, key, "writes"))
            return

        async def watch(message: Any) -> None:
            if message["type"] == "http.response.start":
                counted = key
                if message["status"] == 401:
                    writes.charge(("401", address))
                elif player is None and players is not None:
                    # the token's first request in this process: it has been checked now, and its
                    # player's budget pays for this request too
                    found = players(authorization)
                    if found is not None:
                        writes.charge(found)
                        counted = found
                message = {**message, "headers": [*message.get("headers", ()), *_limit_headers(writes, counted,
                                                                                                "writes")]}
            await send(message)

        await self.app(scope, receive, watch)

    async def _refuse(self, scope: Any, send: Any, headers: dict[bytes, bytes], wait: float, spent: Spent) -> None:
        budget, key, kind = spent
        (REFUSED_READS if kind == "reads" else REFUSED_WRITES).inc()
        retry_after = retry_after_header(wait)
        error = RateLimited(
            f"too many {kind} from this client; try again in {retry_after} s",
            retry_after=int(retry_after),
        )
        body = msgspec.json.encode(problem_document(error.status, error.code, error.detail))
        response_headers = {
            "content-type": PROBLEM_JSON,
            "content-length": str(len(body)),
            **{name.lower(): value for name, value in error.headers.items()},
        }
        origin = headers.get(b"origin")
        if origin is not None and self.cors is not None:
            response_headers.update({name.lower(): value for name, value in self.cors.simple_headers.items()})
            text = origin.decode("latin-1")
            allow_all = self.cors.is_allow_all_origins
            if (allow_all and b"cookie" in headers) or (not allow_all and self.cors.is_origin_allowed(text)):
                response_headers["access-control-allow-origin"] = text
                response_headers["vary"] = "Origin"
        await send(
            {
                "type": "http.response.start",
                "status": error.status,
                "headers": [
                    (name.encode("latin-1"), value.encode("latin-1")) for name, value in response_headers.items()
                ] + _limit_headers(budget, key, kind),
            }
        )
        await send({"type": "http.response.body", "body": body if scope["method"] != "HEAD" else b""})


def _limit_headers(budget: TokenBuckets, key: Any, name: str) -> list[tuple[bytes, bytes]]:
    """``RateLimit-Policy`` and ``RateLimit`` (draft-ietf-httpapi-ratelimit-headers): the budget
    this request counted against, what is left of it and the seconds until it is full again."""
    remaining, reset = budget.remaining(key)
    return [(b"ratelimit-policy", budget.policy(name)), (b"ratelimit", f'"{name}";r={remaining};t={reset}'.encode())]


def _with_limit_headers(send: Any, budget: TokenBuckets, key: Any, name: str) -> Any:
    """``send`` with the rate-limit headers added to the response's start."""

    async def limited(message: Any) -> None:
        if message["type"] == "http.response.start":
            if message["status"] == 304:  # nothing was sent again: the read is given back
                budget.refund(key)
            message = {**message, "headers": [*message.get("headers", ()), *_limit_headers(budget, key, name)]}
        await send(message)

    return limited


def _headers(scope: Any) -> dict[bytes, bytes]:
    """The request headers by lower-case name (ASGI servers send them lower-cased); the first wins."""
    found: dict[bytes, bytes] = {}
    for name, value in scope["headers"]:
        found.setdefault(name.lower(), value)
    return found


def _page_file(path: str) -> bool:
    """The web page or one of its scripts, styles and images (service/http/controllers/web.py)."""
    return path == "/" or path.startswith("/web/")


def _address(scope: Any) -> str:
    client = scope.get("client")
    return f"a{client[0]}" if client else "a?"


def install_rate_limits(app: Litestar, settings: Settings) -> None:
    """Put the limiter in front of everything the app answers, CORS and routing included."""
    writes = buckets(settings.rate_limit_writes_per_second, settings.rate_limit_write_burst)
    reads = buckets(settings.rate_limit_reads_per_second, settings.rate_limit_read_burst)
    if writes is None and reads is None:
        return
    app.asgi_handler = RateLimiter(app.asgi_handler, writes=writes, reads=reads, cors=app.cors_config,
                                   players=PlayerKeys(app))
