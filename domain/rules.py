"""decide / evolve and the one legal-move generator.

``decide(state, command)`` checks every rule of the game's ruleset and returns the events
of the move (the automatic reserve refill and the win come with the move that causes them),
or raises ``IllegalMove`` / ``GameOver``. ``evolve(state, event)`` applies one event without
checking anything, so replaying a stream never re-runs the rules. ``legal_moves`` lists
every move ``decide`` accepts, by construction: both use ``_sources`` and ``_accepts``.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from . import undo_stack
from .cards import DECK_SIZE, RANKS, SUIT_NAMES, Card, code, is_red, make_card, rank_after, rank_of, suit_of
from .commands import Abandon, Command, Draw, MoveCard, Recycle, Resign, Undo, UseSolverHint
from .errors import DomainError, GameOver, IllegalMove, InvalidRequest
from .events import (
    CardsMoved,
    Event,
    GameAbandoned,
    GameDealt,
    GameResigned,
    GameStalled,
    GameWon,
    LessonCompleted,
    MoveUndone,
    ReserveRefilled,
    SolverHintUsed,
    StockDrawn,
    WasteRecycled,
)
from .lessons import goal_reached
from .piles import COLUMN_OF, FOUNDATION, RESERVE, TABLEAU, TARGETS, WASTE
from .rulesets import RecyclePolicy, Ruleset, TableauMoves
from .state import GameState, Status, initial_state


def deal(ruleset: Ruleset, deck: tuple[Card, ...], source: dict[str, str | int]) -> GameDealt:
    """The first event of every game."""
    return GameDealt(ruleset.id, ruleset.version, deck, dict(source))


# ---------------------------------------------------------------- what can move, and where


@dataclass(frozen=True, slots=True)
class Source:
    card: Card  # the card a move names
    pile: str  # where it is now
    run: tuple[Card, ...]  # the card and every card after it in its pile


def _sources(state: GameState) -> list[Source]:
    """Every card a move may name now, with what would move along with it."""
    found: list[Source] = []
    if state.reserve:
        top = state.reserve[-1]
        found.append(Source(top, RESERVE, (top,)))
    if state.waste:
        top = state.waste[-1]
        found.append(Source(top, WASTE, (top,)))
    whole_column_only = state.ruleset.tableau_moves is TableauMoves.END_OR_WHOLE_COLUMN
    for name, column in zip(TABLEAU, state.tableau, strict=True):
        if not column:
            continue
        if whole_column_only:
            found.append(Source(column[-1], name, column[-1:]))
            if len(column) > 1:
                found.append(Source(column[0], name, column))
        else:
            for index, card in enumerate(column):
                found.append(Source(card, name, column[index:]))
    if state.ruleset.foundation_returns:
        for suit in range(4):
            returned = state.foundation_top(suit)
            if returned is not None:
                found.append(Source(returned, FOUNDATION, (returned,)))
    return found


def _accepts(state: GameState, source: Source, target: str) -> bool:
    card = source.card
    if target == FOUNDATION:
        if source.pile == FOUNDATION or len(source.run) != 1:
            return False
        count = state.foundations[suit_of(card)]
        return count < 13 and rank_of(card) == rank_after(state.base_rank, count)
    if target == source.pile:
        return False
    destination = state.tableau[COLUMN_OF[target]]
    if not destination:
        return not state.reserve
    end = destination[-1]
    return rank_of(card) == rank_after(rank_of(end), -1) and is_red(card) != is_red(end)


def _refusal(state: GameState, source: Source, target: str) -> str:
    """Why ``_accepts`` said no, in words a player understands."""
    card = code(source.card)
    if target == FOUNDATION:
        suit = suit_of(source.card)
        count = state.foundations[suit]
        if source.pile == FOUNDATION:
            return f"{card} is already on its foundation"
        if len(source.run) != 1:
            above = len(source.run) - 1
            return f"only a single card can go to a foundation: {card} has {above} card{'s' if above > 1 else ''} on it"
        if count == 0:
            base = RANKS[state.base_rank]
            return f"{card} cannot start the {SUIT_NAMES[suit]} foundation: foundations start at the base rank, {base}"
        needed = make_card(rank_after(state.base_rank, count), suit)
        return f"{card} cannot go on the {SUIT_NAMES[suit]} foundation: it takes {code(needed)} next"
    if target == source.pile:
        return f"{card} is already in {target}"
    destination = state.tableau[COLUMN_OF[target]]
    if not destination:
        return f"{target} is empty and is filled from the reserve"
    end = destination[-1]
    if rank_of(source.card) != rank_after(rank_of(end), -1):
        return f"{card} cannot go on {code(end)}: ranks must be consecutive"
    return f"{card} cannot go on {code(end)}: colours must alternate"


def _pick_up(state: GameState, card: Card) -> Source:
    for source in _sources(state):
        if source.card == card:
            return source
    name = code(card)
    for column_name, column in zip(TABLEAU, state.tableau, strict=True):
        if card in column:
            return _raise(
                f"{name} is inside {column_name}: {state.ruleset.id} moves only the end card or the whole column"
            )
    suit = suit_of(card)
    if card in state.foundation_cards(suit):
        if not state.ruleset.foundation_returns:
            return _raise(f"{name} is on its foundation, and in {state.ruleset.id} foundation cards stay there")
        return _raise(f"{name} is covered on its foundation: only the top card of a foundation can come back")
    # Stock, covered reserve or covered waste: say nothing about where a hidden card is.
    return _raise(f"{name} is not an exposed card: only the reserve top, the waste top and tableau cards can move")


def _raise(reason: str) -> Source:
    raise IllegalMove(reason)


def legal_moves(state: GameState) -> list[Command]:
    """Every command ``decide`` accepts now, in a fixed order (undo and resign last)."""
    if state.status is not Status.PLAYING:
        return []
    moves: list[Command] = []
    if state.stock:
        moves.append(Draw())
    elif state.waste:
        moves.append(Recycle())
    moves.extend(
        MoveCard(source.card, target)
        for source in _sources(state)
        for target in TARGETS
        if _accepts(state, source, target)
    )
    if state.undo_depth:
        moves.append(Undo())
    moves.append(Resign())
    return moves


def is_legal(state: GameState, command: Command) -> bool:
    try:
        decide(state, command)
    except DomainError:
        return False
    return True


# ---------------------------------------------------------------- decide


def decide(state: GameState, command: Command) -> list[Event]:
    """The events of ``command`` on ``state``, or ``IllegalMove`` / ``GameOver`` saying why not."""
    events = _decide(state, command)
    if state.lesson and not state.lesson_done and events:
        return _with_lesson(state, events)
    return events


def _with_lesson(state: GameState, events: list[Event]) -> list[Event]:
    """A lesson game's move, with ``LessonCompleted`` added when it reaches the goal (domain.lessons)."""
    after = state
    for event in events:
        after = evolve(after, event)
    return [*events, LessonCompleted(state.lesson)] if goal_reached(state, events, after) else events


def _decide(state: GameState, command: Command) -> list[Event]:
    if state.status is not Status.PLAYING:
        raise GameOver(f"the game is over ({state.status.value}); it takes no more moves")
    if isinstance(command, MoveCard):
        if not (isinstance(command.card, int) and 0 <= command.card < DECK_SIZE) or command.to not in TARGETS:
            raise InvalidRequest(f"not a move: {command!r}")
        return _decide_move(state, command)
    if isinstance(command, Draw):
        if not state.stock:
            if state.waste:
                raise IllegalMove("the stock is empty: recycle the waste to draw again")
            raise IllegalMove("the stock and the waste are both empty: there is nothing to draw")
        count = min(state.ruleset.draw_count, len(state.stock))
        return [StockDrawn(tuple(reversed(state.stock[-count:])))]
    if isinstance(command, Recycle):
        if state.stock:
            left = len(state.stock)
            plural = "s" if left > 1 else ""
            raise IllegalMove(f"the stock still has {left} card{plural}: recycle only when it is empty")
        if not state.waste:
            raise IllegalMove("the waste is empty: there is nothing to recycle")
        if state.ruleset.recycle is RecyclePolicy.AFTER_PROGRESS and not state.progress:
            return [GameStalled()]
        return [WasteRecycled(len(state.waste))]
    if isinstance(command, Undo):
        if not state.undo_depth:
            raise IllegalMove("there is no move to undo")
        if not state.undo:
            raise undo_stack.UndoHistoryNeeded(state.version)
        return [MoveUndone(undo_stack.top(state.undo)[1])]
    if isinstance(command, Resign):
        return [GameResigned()]
    if isinstance(command, UseSolverHint):
        return [] if state.assisted else [SolverHintUsed()]
    if isinstance(command, Abandon):
        if command.idle_days < 1:
            raise InvalidRequest(f"a game is abandoned after at least one idle day, not {command.idle_days}")
        return [GameAbandoned(command.idle_days)]
    raise IllegalMove(f"unknown command {command!r}")


def _decide_move(state: GameState, command: MoveCard) -> list[Event]:
    source = _pick_up(state, command.card)
    if not _accepts(state, source, command.to):
        raise IllegalMove(_refusal(state, source, command.to))
    events: list[Event] = [CardsMoved(source.run, source.pile, command.to)]
    column = COLUMN_OF.get(source.pile)
    if column is not None and len(state.tableau[column]) == len(source.run) and state.reserve:
        events.append(ReserveRefilled(state.reserve[-1], column))
    if command.to == FOUNDATION and state.cards_on_foundations + 1 == DECK_SIZE:
        events.append(GameWon())
    return events


# ---------------------------------------------------------------- evolve


Piles = tuple[tuple[Card, ...], tuple[Card, ...], tuple[int, int, int, int], tuple[tuple[Card, ...], ...]]


def _transfer(state: GameState, cards: tuple[Card, ...], source: str, target: str) -> Piles:
    """Move ``cards`` from the end of ``source`` to the end of ``target`` (no checks)."""
    reserve, waste, foundations, tableau = state.reserve, state.waste, state.foundations, state.tableau
    count = len(cards)
    if source == RESERVE:
        reserve = reserve[:-count]
    elif source == WASTE:
        waste = waste[:-count]
    elif source == FOUNDATION:
        foundations = _add_to_foundation(foundations, suit_of(cards[0]), -1)
    else:
        index = COLUMN_OF[source]
        tableau = _replace_column(tableau, index, tableau[index][:-count])
    if target == RESERVE:
        reserve = reserve + cards
    elif target == WASTE:
        waste = waste + cards
    elif target == FOUNDATION:
        foundations = _add_to_foundation(foundations, suit_of(cards[0]), 1)
    else:
        index = COLUMN_OF[target]
        tableau = _replace_column(tableau, index, tableau[index] + cards)
    return reserve, waste, foundations, tableau


def _add_to_foundation(foundations: tuple[int, int, int, int], suit: int, delta: int) -> tuple[int, int, int, int]:
    counts = list(foundations)
    counts[suit] += delta
    return (counts[0], counts[1], counts[2], counts[3])


def _replace_column(
    tableau: tuple[tuple[Card, ...], ...], index: int, column: tuple[Card, ...]
) -> tuple[tuple[Card, ...], ...]:
    return (*tableau[:index], column, *tableau[index + 1 :])


def evolve(state: GameState | None, event: Event) -> GameState:
    """Apply one event. No rule is checked: the event is a fact."""
    if isinstance(event, GameDealt):
        return initial_state(event)
    assert state is not None, "a stream starts with GameDealt"
    version = state.version + 1
    if isinstance(event, CardsMoved):
        reserve, waste, foundations, tableau = _transfer(state, event.cards, event.source, event.target)
        return state._replace(
            reserve=reserve,
            waste=waste,
            foundations=foundations,
            tableau=tableau,
            progress=state.progress or not _changes_nothing(state, event),
            move_count=state.move_count + 1,
            version=version,
            undo=undo_stack.push(state.undo, state.progress, event),
            undo_depth=state.undo_depth + 1,
        )
    if isinstance(event, StockDrawn):
        count = len(event.cards)
        return state._replace(
            stock=state.stock[:-count],
            waste=state.waste + event.cards,
            move_count=state.move_count + 1,
            version=version,
            undo=undo_stack.push(state.undo, state.progress, event),
            undo_depth=state.undo_depth + 1,
        )
    if isinstance(event, ReserveRefilled):
        reserve, waste, foundations, tableau = _transfer(state, (event.card,), RESERVE, TABLEAU[event.column])
        return state._replace(
            reserve=reserve, tableau=tableau, version=version, undo=undo_stack.join(state.undo, event)
        )
    if isinstance(event, WasteRecycled):
        return state._replace(
            stock=tuple(reversed(state.waste)),
            waste=(),
            progress=False,
            move_count=state.move_count + 1,
            version=version,
            undo=undo_stack.push(state.undo, state.progress, event),
            undo_depth=state.undo_depth + 1,
        )
    if isinstance(event, MoveUndone):
        return _undo(state, version)
    if isinstance(event, SolverHintUsed):
        return state._replace(assisted=True, version=version)
    if isinstance(event, GameWon):
        return state._replace(status=Status.WON, version=version)
    if isinstance(event, GameStalled):  # the recycle that stalls still counts as a move
        return state._replace(status=Status.STALLED, move_count=state.move_count + 1, version=version)
    if isinstance(event, GameResigned):
        return state._replace(status=Status.RESIGNED, version=version)
    if isinstance(event, GameAbandoned):  # ends like a resignation; the view says the service ended it
        return state._replace(status=Status.RESIGNED, abandoned_after=event.idle_days, version=version)
    if isinstance(event, LessonCompleted):  # an achievement: not part of the move an undo takes back
        return state._replace(lesson_done=True, version=version)
    raise TypeError(f"not an event: {event!r}")


def _changes_nothing(state: GameState, event: CardsMoved) -> bool:
    """A whole column moved into an empty column: legal, but not progress for draw-one's stall rule."""
    source, target = COLUMN_OF.get(event.source), COLUMN_OF.get(event.target)
    return (
        source is not None
        and target is not None
        and not state.tableau[target]
        and len(state.tableau[source]) == len(event.cards)
    )


def _undo(state: GameState, version: int) -> GameState:
    if not state.undo:
        assert state.undo_depth, "MoveUndone needs a move to take back"
        raise undo_stack.UndoHistoryNeeded(state.version)  # replay and with_undo_history refill first
    progress, events = undo_stack.top(state.undo)
    restored = state
    for event in reversed(events):
        restored = _revert(restored, event)
    return restored._replace(
        progress=progress,
        move_count=state.move_count + 1,
        undo_count=state.undo_count + 1,
        version=version,
        undo=undo_stack.pop(state.undo),
        undo_depth=state.undo_depth - 1,
    )


def _revert(state: GameState, event: Event) -> GameState:
    if isinstance(event, CardsMoved):
        reserve, waste, foundations, tableau = _transfer(state, event.cards, event.target, event.source)
        return state._replace(reserve=reserve, waste=waste, foundations=foundations, tableau=tableau)
    if isinstance(event, ReserveRefilled):
        reserve, waste, foundations, tableau = _transfer(state, (event.card,), TABLEAU[event.column], RESERVE)
        return state._replace(reserve=reserve, tableau=tableau)
    if isinstance(event, StockDrawn):
        count = len(event.cards)
        return state._replace(stock=state.stock + tuple(reversed(event.cards)), waste=state.waste[:-count])
    if isinstance(event, WasteRecycled):
        return state._replace(stock=(), waste=tuple(reversed(state.stock)))
    raise TypeError(f"{type(event).__name__} cannot be taken back")


# ---------------------------------------------------------------- replay


def replay(events: Iterable[Event]) -> GameState:
    """A game's state: the fold of ``evolve`` over its events (refilling the undo window from the
    events already folded where an undo reaches below it, as the service does from the log)."""
    return _replay(events)[0]


def _replay(events: Iterable[Event]) -> tuple[GameState, list[str]]:
    """The state and its whole undo stack (``undo_stack.track``'s entries, oldest first)."""
    return replay_from(None, [], events)


def replay_from(
    state: GameState | None, stack: Sequence[str], events: Iterable[Event]
) -> tuple[GameState, list[str]]:
    """Go on with a replay: ``state`` (the fold of a game's events up to its version; None: none
    yet) and its whole undo stack ``stack`` (oldest entry first, as this returns it), with
    ``events``, the ones after it, folded in. The state and the stack it returns are those of a
    replay of every event from the deal, undo window included, so a replay may start from any
    stored point (``codec.checkpoint_of``)."""
    entries = list(stack)
    for event in events:
        if isinstance(event, GameDealt):
            entries = []
        elif isinstance(event, MoveUndone) and state is not None and not state.undo and state.undo_depth:
            state = state._replace(undo=undo_stack.window(entries))
        state = evolve(state, event)
        undo_stack.track(entries, event, state.undo)
    if state is None:
        raise ValueError("an event stream starts with GameDealt")
    return state, entries


def with_undo_history(state: GameState, events: Iterable[Event]) -> GameState:
    """``state`` with its undo window refilled from ``events``, the game's events up to
    ``state.version`` (what to do on ``UndoHistoryNeeded``). Raises ValueError when the events
    are not the ones that made ``state``."""
    replayed, entries = _replay(events)
    if replayed.version != state.version or len(entries) != state.undo_depth or replayed.undo_depth != state.undo_depth:
        raise ValueError(f"these events do not lead to the state at version {state.version}")
    refilled = undo_stack.window(entries)
    if not refilled.endswith(state.undo):
        raise ValueError(f"these events do not lead to the undo window of the state at version {state.version}")
    return state._replace(undo=refilled)


def apply(state: GameState, command: Command, history: Sequence[Event] | None = None) -> tuple[GameState, list[Event]]:
    """``decide`` then ``evolve``: the new state and the events that made it. ``history`` (the
    game's events so far) serves an undo that reaches below the state's undo window; without it
    such an undo raises ``UndoHistoryNeeded``."""
    try:
        events = decide(state, command)
    except undo_stack.UndoHistoryNeeded:
        if history is None:
            raise
        state = with_undo_history(state, history)
        events = decide(state, command)
    for event in events:
        state = evolve(state, event)
    return state, events


@dataclass(frozen=True, slots=True)
class ReplayReport:
    """How far a list of commands got: the state reached and the first refused command, if any."""

    state: GameState
    applied: int
    failed_at: int | None = None
    reason: str | None = None

    @property
    def ok(self) -> bool:
        return self.failed_at is None


def replay_commands(start: GameState, commands: Sequence[Command]) -> ReplayReport:
    """Apply commands in order; stop at the first refused one and say which and why."""
    state = start
    for index, command in enumerate(commands):
        try:
            state, _ = apply(state, command)
        except DomainError as error:
            return ReplayReport(state, index, index, error.reason)
    return ReplayReport(state, len(commands))
