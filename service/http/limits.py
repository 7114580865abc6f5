"""Rate limits that keep one client from hurting others: token buckets in this process.

Two budgets, each a token bucket (``rate`` tokens a second, at most ``burst`` saved up):

* **writes** (every method but GET, HEAD and OPTIONS), per bearer token: the key is a hash of
  the ``Authorization`` header, or the client address when there is none (``POST /players``);
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
client can get N times the rate. Memory is bounded: a bucket that has been idle long enough to
be full again is the same as no bucket and is dropped, and past ``max_buckets`` the least
recently used ones go.
"""

from __future__ import annotations

import hashlib
import math
import time
from collections import OrderedDict
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import msgspec

from ..errors import RateLimited
from ..metrics import REFUSED_READS, REFUSED_WRITES
from .problems import PROBLEM_JSON, problem_document

if TYPE_CHECKING:
    from litestar import Litestar
    from litestar.config.cors import CORSConfig

    from ..settings import Settings

READ_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})
EXEMPT_PATHS = ("/health", "/livez", "/readyz", "/metrics", "/schema")  # and everything under /schema/


class TokenBuckets:
    """Token buckets by key, all with one ``rate`` (tokens a second) and ``burst`` (capacity).

    Not thread-safe, and needs none: the event loop runs ``take`` without interruption.
    """

    def __init__(
        self, rate: float, burst: int, max_buckets: int = 50_000, clock: Callable[[], float] = time.monotonic
    ) -> None:
        if rate <= 0 or burst < 1:
            raise ValueError("a token bucket needs rate > 0 and burst >= 1")
        self.rate = float(rate)
        self.burst = float(burst)
        self.max_buckets = max_buckets
        self.clock = clock
        self.refill_seconds = self.burst / self.rate  # an idle bucket is full again after this
        # key -> [tokens, time of the last update]; ordered by last use, oldest first
        self._buckets: OrderedDict[Any, list[float]] = OrderedDict()

    def __len__(self) -> int:
        return len(self._buckets)

    def _refilled(self, key: Any, now: float) -> list[float]:
        bucket = self._buckets.get(key)
        if bucket is None:
            self._evict(now)
            bucket = self._buckets[key] = [self.burst, now]
        else:
            self._buckets.move_to_end(key)
            elapsed = now - bucket[1]
            if elapsed > 0:
                bucket[0] = min(self.burst, bucket[0] + elapsed * self.rate)
                bucket[1] = now
        return bucket

    def take(self, key: Any, cost: float = 1.0) -> float:
        """Spend ``cost`` tokens: 0.0 when they were there, else the seconds until they will be
        (nothing is spent then)."""
        now = self.clock()
        bucket = self._refilled(key, now)
        if bucket[0] >= cost:
            bucket[0] -= cost
            return 0.0
        return (cost - bucket[0]) / self.rate

    def wait(self, key: Any, cost: float = 1.0) -> float:
        """Seconds until ``cost`` tokens would be there (0.0: now), spending nothing."""
        bucket = self._buckets.get(key)
        if bucket is None:
            return 0.0
        tokens = min(self.burst, bucket[0] + max(0.0, self.clock() - bucket[1]) * self.rate)
        return 0.0 if tokens >= cost else (cost - tokens) / self.rate

    def remaining(self, key: Any) -> tuple[int, int]:
        """The whole tokens left in ``key``'s bucket now, and the seconds (rounded up) until it is
        full again: the ``r`` and ``t`` of a ``RateLimit`` header."""
        bucket = self._buckets.get(key)
        if bucket is None:
            return int(self.burst), 0
        tokens = min(self.burst, bucket[0] + max(0.0, self.clock() - bucket[1]) * self.rate)
        return int(tokens), math.ceil((self.burst - tokens) / self.rate)

    def policy(self, name: str) -> bytes:
        """The ``RateLimit-Policy`` of this budget: ``burst`` requests (``q``) refilled over ``w``
        seconds."""
        return f'"{name}";q={int(self.burst)};w={math.ceil(self.refill_seconds)}'.encode()

    def refund(self, key: Any, cost: float = 1.0) -> None:
        """Give back ``cost`` tokens a request took (a 304 spends no read)."""
        bucket = self._buckets.get(key)
        if bucket is not None:
            bucket[0] = min(self.burst, bucket[0] + cost)

    def charge(self, key: Any, cost: float = 1.0) -> None:
        """Spend up to ``cost`` tokens, never below zero (a penalty, not a request)."""
        bucket = self._refilled(key, self.clock())
        bucket[0] = max(0.0, bucket[0] - cost)

    def _evict(self, now: float) -> None:
        buckets = self._buckets
        # The oldest first: one idle for refill_seconds is full, the same as none at all.
        while buckets:
            oldest = next(iter(buckets.values()))
            if now - oldest[1] < self.refill_seconds:
                break
            buckets.popitem(last=False)
        while len(buckets) >= self.max_buckets:  # flooded: forget the least recently used
            buckets.popitem(last=False)


def retry_after_header(seconds: float) -> str:
    """Whole seconds, rounded up, at least 1."""
    return str(max(1, math.ceil(seconds)))


class RateLimiter:
    """The ASGI wrapper: ``app.asgi_handler = RateLimiter(app.asgi_handler, ...)``."""

    def __init__(
        self,
        app: Any,
        writes: TokenBuckets | None,
        reads: TokenBuckets | None,
        cors: CORSConfig | None = None,
    ) -> None:
        self.app = app
        self.writes = writes
        self.reads = reads
        self.cors = cors

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
                    await self._refuse(scope, send, headers, wait, self.reads, address, "reads")
                    return
                await self.app(scope, receive, _with_limit_headers(send, self.reads, address, "reads"))
                return
            await self.app(scope, receive, send)
            return

        if self.writes is None:
            await self.app(scope, receive, send)
            return
        authorization = headers.get(b"authorization")
        key: Any = address
        if authorization is None:
            wait = self.writes.take(address)
        else:
            # what made-up tokens (401s) from this address have spent first, then the token's budget
            key = b"t" + hashlib.sha256(authorization).digest()[:16]
            wait = self.writes.wait(("401", address)) or self.writes.take(key)
        if wait:
            await self._refuse(scope, send, headers, wait, self.writes, key, "writes")
            return
        limited = _with_limit_headers(send, self.writes, key, "writes")
        if authorization is None:
            await self.app(scope, receive, limited)
            return

        writes = self.writes

        async def watch(message: Any) -> None:
            if message["type"] == "http.response.start" and message["status"] == 401:
                writes.charge(("401", address))
            await limited(message)

        await self.app(scope, receive, watch)

    async def _refuse(
        self, scope: Any, send: Any, headers: dict[bytes, bytes], wait: float, budget: TokenBuckets, key: Any,
        kind: str,
    ) -> None:
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


def buckets(rate: float, burst: int) -> TokenBuckets | None:
    """A budget, or None when either number is 0 (that budget is off)."""
    if rate <= 0 or burst <= 0:
        return None
    return TokenBuckets(rate, burst)


def install_rate_limits(app: Litestar, settings: Settings) -> None:
    """Put the limiter in front of everything the app answers, CORS and routing included."""
    writes = buckets(settings.rate_limit_writes_per_second, settings.rate_limit_write_burst)
    reads = buckets(settings.rate_limit_reads_per_second, settings.rate_limit_read_burst)
    if writes is None and reads is None:
        return
    app.asgi_handler = RateLimiter(app.asgi_handler, writes=writes, reads=reads, cors=app.cors_config)
