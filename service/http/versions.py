"""API versions, as Stripe and GitHub date them: ``Api-Version: YYYY-MM-DD`` on every answer.

A request may name the version whose shapes it wants (``Api-Version``); without one it gets the
oldest version still supported, so a client written before a change keeps working. A version
that is not supported (or not a date) is a 400 ``unsupported_version``, answered before anything
else runs. Every answer says its version (``Api-Version``) and ``Vary: Api-Version``, so a cache
keeps one copy per version; an answer in a deprecated version carries ``Deprecation`` (RFC 9745,
the moment it was deprecated) and ``Sunset`` (RFC 8594, the day it stops being served).

The newest shapes are the code's. An older version is the newest one seen through the version
changes made since (``VersionChange``: one small, tested transformation of requests and replies
each, never a copy of a handler), newest first; while one version is served there is none.
``GET /versions`` lists every supported version with its changes (docs/versions.md is the
changelog and the policy). ``service.http.request_ids.RequestIds``, the outermost layer, asks
``Versions.requested`` for each request's version, answers ``Versions.refuse`` for one not served,
hands a request of an older version to its ``Translation`` and adds the version's ``headers`` to
the answer.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, time
from email.utils import format_datetime
from typing import Any

import msgspec
from litestar import get

from .changes.cancelled_races import CancelledRaces
from .changes.daily_date import DailyDate
from .changes.entrant_status import EntrantStatus
from .changes.leaderboard_move_count import LeaderboardMoveCount
from .changes.move_key_reused import MoveKeyReused
from .changes.one_list_style import OneListStyle
from .changes.player_references import PlayerReferences
from .changes.ruleset_references import RulesetReferences
from .changes.tagged_deal_requests import TaggedDealRequests
from .changes.tournament_sources import TournamentSources
from .problems import PROBLEM_JSON, documented, problem_document
from .schemas.versions import ApiVersionList, ApiVersionView
from .version_changes import Translation, VersionChange

HEADER = b"api-version"
_DATE = re.compile(rb"\d{4}-\d{2}-\d{2}")


@dataclass(frozen=True)
class Version:
    """A supported version: its date (its name), what it changed, and, once a newer one has
    replaced it, when it was deprecated and its sunset (at least six months after)."""

    name: str
    changes: tuple[str, ...]
    """What this version changed, in words (``GET /versions``)."""
    introduced: tuple[VersionChange, ...] = ()
    """The changes this version made to the one before it, as code (service.http.version_changes)."""
    deprecated: date | None = None
    sunset: date | None = None
    headers: list[tuple[bytes, bytes]] = field(default_factory=list, compare=False, repr=False)
    """What every answer in this version carries (made once)."""

    def __post_init__(self) -> None:
        headers = [(b"api-version", self.name.encode("ascii")), (b"vary", b"Api-Version")]
        if self.deprecated is not None:
            headers.append((b"deprecation", b"@%d" % _epoch(self.deprecated)))
        if self.sunset is not None:
            sunset = datetime.combine(self.sunset, time(), UTC)
            headers.append((b"sunset", format_datetime(sunset, usegmt=True).encode("ascii")))
        self.headers.extend(headers)

    def view(self) -> ApiVersionView:
        return ApiVersionView(
            version=self.name,
            changes=list(self.changes),
            deprecated=None if self.deprecated is None else self.deprecated.isoformat(),
            sunset=None if self.sunset is None else self.sunset.isoformat(),
        )


def _epoch(day: date) -> int:
    return int(datetime.combine(day, time(), UTC).timestamp())


FIRST_CHANGES = (
    "The first dated version: the shapes every endpoint had when versions began, recorded as golden "
    "replies that every later release gives this version again."
)
ONE_STYLE: tuple[VersionChange, ...] = (
    OneListStyle(), PlayerReferences(), EntrantStatus(), LeaderboardMoveCount(), RulesetReferences(), DailyDate(),
    TaggedDealRequests(), MoveKeyReused(), CancelledRaces(), TournamentSources(),
)
VERSIONS: tuple[Version, ...] = (
    Version(
        "2026-12-04",
        changes=(FIRST_CHANGES,),
        deprecated=date(2026, 12, 5),
        sunset=date(2027, 6, 5),
    ),
    Version(
        "2026-12-05",
        changes=tuple(change.description for change in ONE_STYLE),
        introduced=ONE_STYLE,
    ),
)
"""Every supported version, oldest first."""

class Versions:
    """The versions served, oldest first: which one a request asks for, how an unknown one is
    refused, and how each older one is translated (``translation``)."""

    def __init__(self, versions: Sequence[Version]) -> None:
        self.all = tuple(versions)
        self.oldest, self.newest = self.all[0], self.all[-1]
        self._by_name = {version.name.encode("ascii"): version for version in self.all}
        self._translations: dict[str, Translation | None] = {}
        for index, version in enumerate(self.all):
            later = [change for newer in self.all[index + 1:] for change in newer.introduced]
            suffix = None if index == 0 else version.name  # the first version's ETags are the code's
            self._translations[version.name] = Translation(later, suffix) if later or suffix else None

    def requested(self, headers: list[tuple[bytes, bytes]]) -> Version | bytes:
        """The version a request's headers ask for (the oldest served without one), or the value
        it gave that names none."""
        for name, value in headers:
            if name == HEADER:
                return self._by_name.get(value.strip(), value)
        return self.oldest

    def translation(self, version: Version) -> Translation | None:
        """What a request of ``version`` goes through; None for none (the only version, today)."""
        return self._translations[version.name]

    def refusal(self, value: bytes, named: str = "'Api-Version'") -> str:
        """Why ``value`` (of ``named``) names no version served, in words."""
        shown = value.decode("latin-1")[:40]
        supported = ", ".join(version.name for version in self.all)
        if _DATE.fullmatch(value.strip()):
            return f"the API has no version {shown!r}; the versions served are {supported} (GET /versions)"
        return f"{named} must be a version's date, YYYY-MM-DD, such as {self.newest.name}, not {shown!r}"

    async def refuse(self, value: bytes, send: Any) -> None:
        """Answer a request whose ``Api-Version`` names no version served: 400 ``unsupported_version``,
        in the oldest version."""
        body = msgspec.json.encode(problem_document(400, "unsupported_version", self.refusal(value)))
        await send({"type": "http.response.start", "status": 400, "headers": [
            (b"content-type", PROBLEM_JSON.encode()), (b"content-length", b"%d" % len(body)), *self.oldest.headers,
        ]})
        await send({"type": "http.response.body", "body": body})


SERVED = Versions(VERSIONS)
OLDEST, NEWEST = SERVED.oldest, SERVED.newest


@get("/versions", operation_id="listVersions", summary="The API versions served, with their changes and sunsets",
     tags=["service"], responses=documented(400, 429), sync_to_thread=False)
def versions() -> ApiVersionList:
    """Every supported version, oldest first, with its changes and (once deprecated) its sunset.
    A request without ``Api-Version`` gets ``default``, the oldest; ``newest`` is for new clients."""
    return ApiVersionList(default=OLDEST.name, newest=NEWEST.name, versions=[v.view() for v in SERVED.all])
