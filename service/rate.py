"""Token buckets: how the service counts a budget of requests per key (a player, an address).

The HTTP layer's rate limits (service.http.limits) and the solver hints' budgets
(service.games.solver_limits) count with these; they live here, below every layer that uses
them. A bucket holds up to ``burst`` tokens and gains ``rate`` a second; a request spends one,
and is refused while the bucket is empty. The buckets are in this process's memory: no round
trip, and with several server processes each counts on its own (docs/configuration.md, "Rate
limits").
"""

from __future__ import annotations

import math
import time
from collections import OrderedDict
from collections.abc import Callable
from typing import Any


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


def buckets(rate: float, burst: int) -> TokenBuckets | None:
    """A budget, or None when either number is 0 (that budget is off)."""
    if rate <= 0 or burst <= 0:
        return None
    return TokenBuckets(rate, burst)
