"""The service's one clock: what "now" is for games' times, daily dates and every deadline.

``utc_now`` is the clock a server runs on; tests inject their own (a function of no arguments
that returns an aware ``datetime``) through ``service.bootstrap.build_services``.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime

Clock = Callable[[], datetime]


def utc_now() -> datetime:
    return datetime.now(UTC)
