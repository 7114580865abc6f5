"""What 2026-12-04 documented of its paged lists (``one_list_style``): each list's query
parameters (its cursor and its limit, with that version's ranges and defaults) and its pages'
items and cursor, as its OpenAPI document had them."""

from __future__ import annotations

from typing import Any

from . import BOARD, EVENTS, EVENTS_NDJSON, LOBBY, PLAYER_GAMES

PARAMETERS: dict[str, dict[str, dict[str, Any]]] = {
    EVENTS: {
        "cursor": {
            "description": "return events after this version",
            "name": "after",
            "schema": {
                "default": 0,
                "description": "return events after this version",
                "maximum": 2147483647.0,
                "minimum": 0.0,
                "type": "integer",
            },
        },
        "limit": {
            "description": "at most this many events in a JSON page (default 100). As "
            "application/x-ndjson: without it, every event; with it, at most that "
            'many, and a Link header (rel="next") when more follow',
            "name": "limit",
            "schema": {
                "default": 100,
                "description": "at most this many events in a JSON page (default 100). As "
                "application/x-ndjson: without it, every event; with it, at "
                'most that many, and a Link header (rel="next") when more '
                "follow",
                "maximum": 1000.0,
                "minimum": 1.0,
                "type": "integer",
            },
        },
    },
    EVENTS_NDJSON: {
        "cursor": {
            "description": "return events after this version",
            "name": "after",
            "schema": {
                "default": 0,
                "description": "return events after this version",
                "maximum": 2147483647.0,
                "minimum": 0.0,
                "type": "integer",
            },
        },
        "limit": {
            "description": "at most this many events; without it, every event. When it cuts "
            'the log short, the response\'s Link header (rel="next") names '
            "the request that continues after the last line",
            "name": "limit",
            "schema": {
                "description": "at most this many events; without it, every event. "
                "When it cuts the log short, the response's Link "
                'header (rel="next") names the request that continues '
                "after the last line",
                "maximum": 1000,
                "minimum": 1,
                "type": "integer",
            },
        },
    },
    PLAYER_GAMES: {
        "limit": {
            "description": "at most this many games",
            "name": "limit",
            "schema": {
                "default": 100,
                "description": "at most this many games",
                "maximum": 1000.0,
                "minimum": 1.0,
                "type": "integer",
            },
        },
        "cursor": {
            "description": "the 'nextBefore' cursor of the previous page (opaque): the games older than that page",
            "name": "before",
            "schema": {
                "description": "the 'nextBefore' cursor of the previous page (opaque): the games older than that page",
                "pattern": "^[A-Za-z0-9_-]{1,200}$",
                "type": "string",
            },
        },
    },
    LOBBY: {
        "limit": {
            "description": "at most this many races",
            "name": "limit",
            "schema": {
                "default": 20,
                "description": "at most this many races",
                "maximum": 100.0,
                "minimum": 1.0,
                "type": "integer",
            },
        },
        "cursor": {
            "description": "the 'nextBefore' cursor of the previous page (opaque): the races older than that page",
            "name": "before",
            "schema": {
                "description": "the 'nextBefore' cursor of the previous page (opaque): the races older than that page",
                "pattern": "^[A-Za-z0-9_-]{1,200}$",
                "type": "string",
            },
        },
    },
    BOARD: {
        "limit": {
            "description": "at most this many entries",
            "name": "limit",
            "schema": {
                "default": 100,
                "description": "at most this many entries",
                "maximum": 1000.0,
                "minimum": 1.0,
                "type": "integer",
            },
        },
        "cursor": {
            "description": "the 'nextAfter' cursor of the previous page (opaque): the entries after that page",
            "name": "after",
            "schema": {
                "description": "the 'nextAfter' cursor of the previous page (opaque): the entries after that page",
                "pattern": "^[A-Za-z0-9_-]{1,200}$",
                "type": "string",
            },
        },
    },
}
"""Per operation: its ``cursor`` and ``limit`` parameters as that version named and bounded them."""

PAGES: dict[str, dict[str, dict[str, Any]]] = {
    "EventPage": {
        "items": {"items": {"$ref": "#/components/schemas/EventView"}, "type": "array"},
        "next": {
            "description": "pass as ?after= for the next page; null at the end",
            "oneOf": [{"type": "integer"}, {"type": "null"}],
        },
    },
    "GameList": {
        "items": {
            "description": "newest first",
            "items": {"$ref": "#/components/schemas/GameSummary"},
            "type": "array",
        },
        "next": {
            "description": "pass as ?before= for the next (older) page; null on the last page",
            "oneOf": [{"type": "string"}, {"type": "null"}],
        },
    },
    "OpenRaces": {
        "items": {
            "description": "open races, newest first",
            "items": {"$ref": "#/components/schemas/OpenRace"},
            "type": "array",
        },
        "next": {
            "description": "pass as ?before= for the next (older) page; null on the last page",
            "oneOf": [{"type": "string"}, {"type": "null"}],
        },
    },
    "Leaderboard": {
        "items": {
            "description": "one per player (their one game of the deal dealt during the "
            "date): the ranked ones first, by moves, then seconds, then who "
            "finished first (unassisted wins whose stored event log replays "
            "through the rules to a win, won within the date); then the "
            "unranked ones, as they finished",
            "items": {"$ref": "#/components/schemas/LeaderboardEntry"},
            "type": "array",
        },
        "next": {
            "description": "pass as ?after= for the next page; null on the last page (each "
            "rank counts the entries better than it, so ranks run on across "
            "pages)",
            "oneOf": [{"type": "string"}, {"type": "null"}],
        },
    },
}
"""Per page schema: its ``items`` and ``next`` properties as that version had them."""
