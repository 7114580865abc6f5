"""Request and response bodies as msgspec Structs (camelCase on the wire), separate from the domain."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any, Literal
from uuid import UUID

from msgspec import Meta, Struct

from domain import MAX_SEED

Seed = Annotated[int, Meta(ge=0, le=MAX_SEED, description="0 .. 2^53 - 1")]
CardCode = Annotated[str, Meta(description="rank then suit, e.g. 'TD'", examples=["TD"])]


class Body(Struct, rename="camel", forbid_unknown_fields=True, omit_defaults=False):
    pass


class RequestBody(Body):
    """A request body: unknown fields are refused, and the OpenAPI document says so and states the
    rules the domain checks (service.openapi)."""


# ---------------------------------------------------------------- requests


class NewPlayer(RequestBody):
    name: Annotated[str, Meta(min_length=1, max_length=40, description="1-40 characters")]


class DealRequest(RequestBody):
    """Exactly one of seed, deck, pool or daily."""

    seed: Seed | None = None
    deck: Annotated[list[CardCode], Meta(description="52 card codes in deal order (see API.md)")] | None = None
    pool: Annotated[int, Meta(ge=1, description="a deal of the verified pool")] | None = None
    daily: Annotated[str, Meta(description="'today' or a UTC date YYYY-MM-DD")] | None = None


class NewGame(RequestBody):
    ruleset: Annotated[str, Meta(description="a ruleset id; open-runs when left out")] | None = None
    deal: DealRequest | None = None


class MoveRequest(RequestBody):
    """A move as in API.md: draw, recycle, undo, resign, or move a card (and its run) to a pile."""

    type: Literal["draw", "recycle", "move", "undo", "resign"]
    card: CardCode | None = None
    to: Annotated[str, Meta(description="'foundation' or 'tableau-1' .. 'tableau-4'")] | None = None


# ---------------------------------------------------------------- responses


class Problem(Struct):
    """RFC 9457 problem details, with a stable machine-readable ``code``."""

    type: str
    title: str
    status: int
    detail: str
    code: str


class PlayerCreated(Body):
    id: UUID
    name: str
    token: Annotated[str, Meta(description="shown only once; send it as 'Authorization: Bearer <token>'")]
    created_at: datetime


class Player(Body):
    id: UUID
    name: str
    created_at: datetime


class RulesetView(Body):
    id: str
    version: int
    key: str
    draw_count: int
    recycle: str
    tableau_moves: str
    foundation_returns: bool
    default_deal: str
    description: str


class RulesetList(Body):
    rulesets: list[RulesetView]


class RulesetRef(Body):
    id: str
    version: int


class Stock(Body, omit_defaults=True):
    count: int
    cards: list[str] | None = None  # only once the game has ended, in draw order


class Reserve(Body, omit_defaults=True):
    count: int
    top: str | None
    cards: list[str] | None = None  # only once the game has ended, bottom to top


class Foundations(Struct):
    S: list[str]
    H: list[str]
    D: list[str]
    C: list[str]


class Table(Body):
    stock: Stock
    waste: list[str]
    reserve: Reserve
    foundations: Foundations
    tableau: list[list[str]]


class GameView(Body):
    id: UUID
    player: UUID
    ruleset: RulesetRef
    deal: dict[str, Any]
    base_rank: str
    status: Literal["playing", "won", "stalled", "resigned"]
    version: int
    move_count: int
    undo_count: int
    assisted: bool
    started_at: datetime
    finished_at: datetime | None
    table: Table


class EventView(Body):
    version: int
    type: str
    data: dict[str, Any]
    recorded_at: datetime


class MoveResult(Body):
    game: GameView
    events: list[EventView]


class EventPage(Body):
    events: list[EventView]
    next_after: Annotated[int, Meta(description="pass as ?after= for the next page")] | None


class MoveForm(Body, omit_defaults=True):
    type: str
    card: str | None = None
    to: str | None = None


class LegalMoves(Body):
    version: int
    moves: list[MoveForm]


class HintView(Body):
    move: MoveForm
    reason: str


class SolverHint(Body):
    result: Literal["won", "lost", "unknown"]
    move: MoveForm | None


class Hints(Body, omit_defaults=True):
    version: int
    hints: list[HintView]
    solver: SolverHint | None = None


class LineLength(Body):
    median: float
    q1: float
    q3: float


class PoolSummary(Body):
    ruleset: RulesetRef
    size: int
    seeds_tried: int
    won: int
    lost: int
    undecided: int
    budget_seconds: float
    line_length: LineLength
    verification: str


class Pools(Body):
    pools: list[PoolSummary]


class PoolDealView(Body):
    pool: int
    ruleset: RulesetRef
    verified: bool
    line_length: int
    plays: Annotated[int, Meta(description="games started on this deal, as a pool or a daily deal")]
    wins: Annotated[int, Meta(description="of those, the games won (assisted or not)")]


class DailyDeal(Body):
    date: str
    ruleset: RulesetRef
    pool: int
    line_length: int
    plays: Annotated[int, Meta(description="games started on this date's daily deal")]
    wins: Annotated[int, Meta(description="of those, the games won (assisted or not)")]


class Health(Body):
    status: str
    database: str


# ---------------------------------------------------------------- stats and leaderboard (service/projections.py)

WinRate = Annotated[float, Meta(ge=0, le=1, description="won / played, rounded to 4 places; null before the first finished game")]
FewestMoves = Annotated[int, Meta(description="the lowest moveCount of an unassisted win")]
FastestSeconds = Annotated[float, Meta(description="the shortest time from deal to winning move of an unassisted win, in seconds")]


class RulesetStats(Body):
    ruleset: Annotated[str, Meta(description="a ruleset id (all its versions together)")]
    played: Annotated[int, Meta(description="finished games: won, stalled or resigned")]
    won: int
    win_rate: WinRate | None
    current_streak: Annotated[int, Meta(description="wins in a row up to the last finished game")]
    best_streak: int
    fewest_moves: FewestMoves | None
    fastest_seconds: FastestSeconds | None
    undos: Annotated[int, Meta(description="undos in finished games")]


class PlayerStats(Body):
    player: UUID
    rulesets: list[RulesetStats]


class RulesetTotals(Body):
    ruleset: str
    players: Annotated[int, Meta(description="players who finished a game under this ruleset")]
    played: int
    won: int
    win_rate: WinRate | None
    fewest_moves: FewestMoves | None
    fastest_seconds: FastestSeconds | None
    undos: int
    current_streak: Annotated[int, Meta(description="the longest winning streak running now, any player")]
    best_streak: Annotated[int, Meta(description="the longest winning streak any player has had")]


class SourceTotals(Body):
    source: Literal["seed", "deck", "pool", "daily"]
    played: int
    won: int
    win_rate: WinRate | None
    fewest_moves: FewestMoves | None
    fastest_seconds: FastestSeconds | None
    undos: int


class GlobalStats(Body):
    rulesets: list[RulesetTotals]
    sources: Annotated[list[SourceTotals], Meta(description="per deal source, all rulesets together")]


class LeaderboardEntry(Body):
    rank: int
    player: UUID
    name: str
    game: UUID
    moves: Annotated[int, Meta(description="the game's moveCount")]
    seconds: Annotated[float, Meta(description="from the deal to the winning move")]
    finished_at: datetime


class Leaderboard(Body):
    date: str
    ruleset: RulesetRef
    pool: int
    entries: Annotated[
        list[LeaderboardEntry],
        Meta(description="unassisted wins whose stored event log replays through the rules to a win; by moves, then time"),
    ]


# ---------------------------------------------------------------- a player's games


class GameSummary(Body):
    id: UUID
    ruleset: RulesetRef
    deal: dict[str, Any]
    status: Literal["playing", "won", "stalled", "resigned"]
    version: int
    move_count: int
    undo_count: int
    assisted: bool
    started_at: datetime
    finished_at: datetime | None


class GameList(Body):
    games: Annotated[list[GameSummary], Meta(description="newest first")]
    next_before: Annotated[str, Meta(description="pass as ?before= for the next (older) page; null on the last page")] | None
