"""2026-12-05: every paged list in one style.

The newer version pages every list with ``limit`` (1 .. 200, default 50) and ``cursor``, and
answers ``{"items": [...], "next": ...}`` with a ``Link`` header while a next page follows.
2026-12-04 paged each list its own way: the event log by ``after`` (a version: ``nextAfter``, a
number), a player's games and the lobby by ``before`` (``nextBefore``), the leaderboard by
``after`` (``nextAfter``), each with its own ``limit`` range and default, and a ``Link`` header
(``?after=N``) only on an NDJSON page of the event log.

A request of 2026-12-04 keeps its own defaults (a JSON page of events, of a player's games or of
the leaderboard: 100; the lobby: 20), and a ``limit`` above 200 that it allowed (up to 1000; the
lobby's 100) asks for 200: a page holds at most ``limit`` items and says where the rest begins,
so a shorter page is still a page of that version. Its cursors are the newer version's (the same
keys), so a cursor works in either version. The newer version's ``limit_out_of_range`` and
``cursor_invalid`` are that version's ``invalid_request``.
"""

from __future__ import annotations

import copy
import re
from collections.abc import Sequence
from typing import Any

from ...errors import BadRequest
from ..version_changes import VersionChange
from . import BOARD, EVENTS, EVENTS_NDJSON, JSON, LOBBY, PLAYER_GAMES, operation_of, schema_of
from .lists_2026_12_04 import PAGES, PARAMETERS

_OLD = {  # operation: (its items' name, its cursor's name in a request, in a reply, its default, its most)
    EVENTS: ("events", "after", "nextAfter", 100, 1000),
    EVENTS_NDJSON: ("events", "after", "nextAfter", None, 1000),
    PLAYER_GAMES: ("games", "before", "nextBefore", 100, 1000),
    LOBBY: ("races", "before", "nextBefore", 20, 100),
    BOARD: ("entries", "after", "nextAfter", 100, 1000),
}
_PAGES = {EVENTS: "EventPage", PLAYER_GAMES: "GameList", LOBBY: "OpenRaces", BOARD: "Leaderboard"}
_JSON_ONLY = (PLAYER_GAMES, LOBBY, BOARD)
"""The lists whose pages are JSON only: 2026-12-04 sent them without a Link header."""
_NEWER_MOST = 200
_LIST_CODES = ("limit_out_of_range", "cursor_invalid")
_NEXT = re.compile(rb"[?&]cursor=([0-9]+)")


class OneListStyle(VersionChange):
    description = ("Every paged list takes limit (1 .. 200, default 50) and cursor, and answers items and next, "
                   "with a Link header (rel=\"next\") on JSON and NDJSON pages alike.")
    operations = tuple(_OLD)

    def upgrade_request(
        self, operation: str, query: dict[str, list[str]], body: Any, headers: Sequence[tuple[bytes, bytes]]
    ) -> Any:
        _, cursor, _, default, most = _OLD[operation]
        if cursor in query:
            if operation in (EVENTS, EVENTS_NDJSON):
                _check_after(query[cursor][-1])
            query["cursor"] = query.pop(cursor)
            if operation in (EVENTS, EVENTS_NDJSON) and query["cursor"] == ["0"]:
                del query["cursor"]  # after=0: from the first event
        if "limit" not in query:
            if default is not None and not (operation == EVENTS and _accepts_lines(headers)):
                query["limit"] = [str(default)]
        elif len(query["limit"]) == 1 and query["limit"][0].isdigit():
            asked = int(query["limit"][0])
            if asked > most:  # refused as that version refused it
                raise BadRequest(f"query parameter 'limit' must be an integer of at most {most}, not {str(asked)!r}")
            if asked > _NEWER_MOST:
                query["limit"] = [str(_NEWER_MOST)]
        return body

    def downgrade_reply(self, operation: str, status: int, body: Any) -> Any:
        if not isinstance(body, dict):
            return body
        if status == 400 and body.get("code") in _LIST_CODES:
            return {**body, "code": "invalid_request", "detail": _worded(operation, str(body.get("detail", "")))}
        if status != 200 or "items" not in body:
            return body
        items, _, following, _, _ = _OLD[operation]
        shown = {(items if key == "items" else key): value for key, value in body.items() if key != "next"}
        after = body.get("next")
        shown[following] = int(after) if operation == EVENTS and after is not None else after
        return shown

    def downgrade_headers(self, operation: str, status: int, headers: list[tuple[bytes, bytes]]) -> None:
        lines = any(name == b"content-type" and not value.startswith(b"application/json") for name, value in headers)
        for index, (name, value) in enumerate(headers):
            if name == b"link":
                found = _NEXT.search(value)
                if lines and found is not None:  # an NDJSON page of events: ?after=N, as it was
                    path = value[1:value.index(b"?")]
                    headers[index] = (name, b'<%s?after=%s>; rel="next"' % (path, found.group(1)))
                else:  # a JSON page had no Link
                    del headers[index]
                return

    def downgrade_schema(self, document: JSON) -> None:
        for operation, (items, _, following, _, _) in _OLD.items():
            if operation in _JSON_ONLY:  # a JSON page had no Link
                operation_of(document, operation)["responses"]["200"]["headers"].pop("Link")
            parameters = operation_of(document, operation)["parameters"]
            for index, parameter in enumerate(parameters):
                if parameter.get("in") == "query" and parameter.get("name") in ("cursor", "limit"):
                    parameters[index] = {**parameter, **copy.deepcopy(PARAMETERS[operation][parameter["name"]])}
            if operation in _PAGES:
                page = schema_of(document, _PAGES[operation])
                properties = page["properties"]
                properties.pop("items"), properties.pop("next")
                old = copy.deepcopy(PAGES[_PAGES[operation]])
                properties[items], properties[following] = old["items"], old["next"]
                page["required"] = sorted(items if name == "items" else following if name == "next" else name
                                          for name in page["required"])
                page["properties"] = dict(sorted(properties.items()))


def _check_after(value: str) -> None:
    """The event log's ``after`` as 2026-12-04 checked it: a version, 0 .. 2^31 - 1."""
    where = "query parameter 'after' must be an integer"
    if not re.fullmatch(r"-?[0-9]+", value):
        raise BadRequest(f"{where} written in ASCII digits")
    if int(value) < 0:
        raise BadRequest(f"{where} of at least 0, not {value!r}")
    if int(value) > 2**31 - 1:
        raise BadRequest(f"{where} of at most {2**31 - 1}, not {value!r}")


def _worded(operation: str, detail: str) -> str:
    """A refusal of a list's cursor or limit in the words of 2026-12-04: its names and its range."""
    _, cursor, following, _, most = _OLD[operation]
    return (detail.replace("'cursor'", f"'{cursor}'").replace("'next'", f"'{following}'")
            .replace(f"at most {_NEWER_MOST},", f"at most {most},"))


def _accepts_lines(headers: Sequence[tuple[bytes, bytes]]) -> bool:
    return any(name == b"accept" and b"application/x-ndjson" in value for name, value in headers)
