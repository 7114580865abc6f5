"""The Canfield rules engine: pure Python, standard library only, no I/O.

Commands go through ``decide`` to become events; ``evolve`` folds events into states.
"""

from .cards import CODES, Card, code, parse_card
from .commands import (
    Abandon,
    Command,
    Draw,
    MoveCard,
    Recycle,
    Resign,
    Undo,
    UseSolverHint,
    command_to_api,
    parse_command,
)
from .deal import MAX_SEED, check_seed, parse_deck, shuffled_deck
from .errors import DomainError, GameOver, IllegalMove, InvalidRequest, UnknownRuleset
from .events import Event, GameDealt, event_type
from .hints import Hint, hints
from .rules import (
    ReplayReport,
    apply,
    deal,
    decide,
    evolve,
    is_legal,
    legal_moves,
    replay,
    replay_commands,
    with_undo_history,
)
from .rulesets import ALL_RULESETS, DEFAULT_RULESET_ID, Ruleset, get_ruleset
from .state import GameState, Status, initial_state
from .undo_stack import UndoHistoryNeeded
from .verify import LineCheck, line_wins
from .view import event_data, game_view, public_data, public_event_data, redact, table_view

__all__ = [
    "ALL_RULESETS",
    "CODES",
    "DEFAULT_RULESET_ID",
    "MAX_SEED",
    "Abandon",
    "Card",
    "Command",
    "DomainError",
    "Draw",
    "Event",
    "GameDealt",
    "GameOver",
    "GameState",
    "Hint",
    "IllegalMove",
    "InvalidRequest",
    "LineCheck",
    "MoveCard",
    "Recycle",
    "ReplayReport",
    "Resign",
    "Ruleset",
    "Status",
    "Undo",
    "UndoHistoryNeeded",
    "UnknownRuleset",
    "UseSolverHint",
    "apply",
    "check_seed",
    "code",
    "command_to_api",
    "deal",
    "decide",
    "event_data",
    "event_type",
    "evolve",
    "game_view",
    "get_ruleset",
    "hints",
    "initial_state",
    "is_legal",
    "legal_moves",
    "line_wins",
    "parse_card",
    "parse_command",
    "parse_deck",
    "public_data",
    "public_event_data",
    "redact",
    "replay",
    "replay_commands",
    "shuffled_deck",
    "table_view",
    "with_undo_history",
]
