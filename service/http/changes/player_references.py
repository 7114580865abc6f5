"""2026-12-05: a player is ``{"id", "name", "bot"}`` wherever one appears.

2026-12-04 named a player by id alone in a game's view (``player``) and a race's view
(``creator``), and by id and name side by side in a race's entrants and a leaderboard's entries
(``player``, ``name``) and in the lobby (``creator``, ``creatorName``).
"""

from __future__ import annotations

import json
from typing import Any

from ..schemas import MoveResult, PlayerRef
from ..version_changes import VersionChange
from . import (
    BOARD,
    GAME_VIEWS,
    JSON,
    LOBBY,
    PLAYER_STATS,
    RACE_VIEWS,
    game_view_of,
    replaced,
    schema_of,
    with_moved_view,
    with_view,
)


def _id(reference: Any) -> Any:
    return reference.get("id") if isinstance(reference, dict) else reference


def _split(item: Any, key: str, name: str) -> Any:
    """An item whose ``key`` is a reference, with the id there and the name beside it as ``name``."""
    if not isinstance(item, dict) or not isinstance(item.get(key), dict):
        return item
    reference = item[key]
    shown: JSON = {}
    for member, value in item.items():
        shown[member] = reference.get("id") if member == key else value
        if member == key:
            shown[name] = reference.get("name")
    return shown


class PlayerReferences(VersionChange):
    description = (
        "A player is {\"id\", \"name\", \"bot\"} in every view: a game's player, a race's creator and "
        "entrants, the lobby's creators, a leaderboard's entries and a player's stats."
    )
    operations = (*GAME_VIEWS, *RACE_VIEWS, LOBBY, BOARD, PLAYER_STATS)

    def downgrade_reply(self, operation: str, status: int, body: Any) -> Any:
        if isinstance(body, MoveResult):  # the move route's own reply
            player = body.game.player
            return with_moved_view(body, player=player.id) if isinstance(player, PlayerRef) else body
        if status >= 300 or not isinstance(body, dict):
            return body
        if operation in RACE_VIEWS:
            return self._race(body)
        if operation == LOBBY and isinstance(body.get("items"), list):
            return replaced(body, "items", [_split(race, "creator", "creatorName") for race in body["items"]])
        if operation == PLAYER_STATS:
            return replaced(body, "player", _id(body.get("player")))
        if operation == BOARD and isinstance(body.get("items"), list):
            return replaced(body, "items", [_split(entry, "player", "name") for entry in body["items"]])
        return self._game(operation, body)

    def downgrade_message(self, operation: str, event: str, data: Any) -> Any:
        return self.downgrade_reply(operation, 200, data)

    @staticmethod
    def _game(operation: str, body: JSON) -> JSON:
        view = game_view_of(operation, body)
        if view is None or not isinstance(view.get("player"), dict):
            return body
        return with_view(operation, body, replaced(view, "player", _id(view["player"])))

    @staticmethod
    def _race(body: JSON) -> JSON:
        if "creator" not in body:
            return body
        shown = replaced(body, "creator", _id(body["creator"]))
        if isinstance(body.get("entrants"), list):
            shown["entrants"] = [_split(entrant, "player", "name") for entrant in body["entrants"]]
        return shown

    def downgrade_schema(self, document: JSON) -> None:
        uuid = {"format": "uuid", "type": "string"}
        schema_of(document, "GameView")["properties"]["player"] = dict(uuid)
        schema_of(document, "RaceView")["properties"]["creator"] = dict(uuid)
        schema_of(document, "PlayerStats")["properties"]["player"] = dict(uuid)
        for name, key, beside in (("RaceEntrant", "player", "name"), ("LeaderboardEntry", "player", "name"),
                                  ("OpenRace", "creator", "creatorName")):
            schema = schema_of(document, name)
            schema["properties"][key] = dict(uuid)
            schema["properties"][beside] = {"type": "string"}
            schema["properties"] = dict(sorted(schema["properties"].items()))
            schema["required"] = sorted({*schema["required"], beside})
        if '"#/components/schemas/PlayerRef"' not in json.dumps(document):  # later endpoints may name it
            document["components"]["schemas"].pop("PlayerRef")
