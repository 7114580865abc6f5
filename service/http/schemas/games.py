"""Games: dealing one (a game's view and a player's list of games are the game feature's Structs,
service.games.wire)."""

from __future__ import annotations

from typing import ClassVar

from .common import RequestBody, RulesetId
from .deals import DealRequest


class NewGameRequest(RequestBody):
    __schema_name__: ClassVar[str] = "NewGame"  # see RequestBody

    ruleset: RulesetId | None = None
    deal: DealRequest | None = None
