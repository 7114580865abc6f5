"""Why a path names nothing, in our words: a trailing slash, or an id or number written wrongly.

The router only says "no route" (or Litestar's converters take spellings the document does not);
a client deserves to hear that ``/games/1234`` has a malformed game id and that
``/games/{id}/moves/`` has a trailing slash. Both are ``404 not_found``: no resource has that path.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

from .wording import echo

UUID = re.compile(r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}")
INTEGER = re.compile(r"-?[0-9]+")
NOT_FOUND = "no such resource: see /schema/openapi.json for the API"
_WHAT = {
    "game_id": "a game id", "player_id": "a player id", "version": "a game version", "number": "a pool deal number"
}
_EXAMPLE_ID = "0b9d6c1e-2f3a-4b5c-8d7e-9f0a1b2c3d4e"


def as_sent(scope: Any) -> str:
    """The path as the client wrote it: Litestar's router strips a trailing slash and folds '//'."""
    raw = scope.get("raw_path")
    return raw.decode("latin-1") if isinstance(raw, bytes) else str(scope.get("path", ""))


def trailing_slash(path: str) -> str | None:
    """No path here ends with '/' or has an empty segment: the router would ignore both, so one
    resource would answer at many URLs (docs/api.md promises strict input)."""
    if path == "/" or path.startswith("/schema") or not (path.endswith("/") or "//" in path):
        return None
    if path.endswith("/"):
        return "the path ends with '/': no path of this API does (leave the last '/' out)"
    return "the path has an empty segment ('//'): no path of this API does"


def malformed(path: str, templates: Iterable[str]) -> str | None:
    """What is wrong with ``path`` if it has the shape of a route whose id or number is misspelt."""
    segments = path.split("/")
    for template in templates:
        parts = template.split("/")
        if len(parts) != len(segments):
            continue
        wrong: list[tuple[str, str, str]] = []
        for part, segment in zip(parts, segments, strict=True):
            if part.startswith("{") and part.endswith("}"):
                name, _, kind = part[1:-1].partition(":")
                bad_uuid = kind == "uuid" and not UUID.fullmatch(segment)
                if bad_uuid or (kind == "int" and not INTEGER.fullmatch(segment)):
                    wrong.append((name, segment, kind))
            elif part != segment:
                break
        else:
            if wrong:
                return _explain(*wrong[0])
    return None


def _explain(name: str, value: str, kind: str) -> str:
    shown = echo(value)
    what = _WHAT.get(name, name)
    if kind == "uuid":
        return f"{shown} is not {what}: ids are UUIDs written as 8-4-4-4-12 hex digits, e.g. {_EXAMPLE_ID}"
    return f"{shown} is not {what}: write it in ASCII digits, e.g. 7"
