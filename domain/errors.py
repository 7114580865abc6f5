"""Named domain errors. The HTTP layer turns each into a problem response in one place."""

from __future__ import annotations


class DomainError(Exception):
    """Base of every error the domain raises on purpose; ``code`` is the stable API word."""

    code = "invalid_request"

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


class InvalidRequest(DomainError):
    """The request is malformed: an unknown card code, pile, ruleset or a bad deck."""

    code = "invalid_request"


class UnknownRuleset(InvalidRequest):
    """No ruleset with that id (or version) is hosted."""


class IllegalMove(DomainError):
    """A well-formed move the rules of this game do not allow now."""

    code = "illegal_move"


class GameOver(DomainError):
    """The game has ended (won, stalled or resigned); it takes no more moves."""

    code = "game_over"
