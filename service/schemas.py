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
    lesson: Annotated[str, Meta(description="a lesson id (GET /lessons)")] | None = None  # races branch


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
    lesson: LessonProgress | None = None  # races branch: lesson games only


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
    plays: Annotated[int, Meta(description="games started on this pool deal")]
    wins: Annotated[int, Meta(description="of those, the games won (assisted or not)")]


DayText = Annotated[str, Meta(pattern="^[0-9]{4}-[0-9]{2}-[0-9]{2}$", description="a UTC date, YYYY-MM-DD")]


class DailyDeal(Body):
    """A date's shared deal. Derived from the date and the server's secret: it is in no pool,
    and nothing here (or anywhere) names its seed; its deck shows only as it is played."""

    date: DayText
    ruleset: Annotated[str, Meta(description="the ruleset id the deal is played under (API.md: 'open-runs')")]
    ruleset_version: Annotated[int, Meta(description="the version of that ruleset the deal's games are dealt under")]
    verified: Annotated[
        bool,
        Meta(description="always true: a daily deal is served only once the solver has won it and its winning line "
             "has replayed to a win through the rules"),
    ]
    line_length: Annotated[int, Meta(description="moves in the solver's winning line (the line is never shown)")]
    verified_at: datetime
    closes_at: Annotated[
        datetime,
        Meta(description="the end of the date (UTC): games dealt from then on are practice, finished games of "
             "this deal show their hidden cards, and the leaderboard's ranks are final"),
    ]
    plays: Annotated[int, Meta(description="games started on this date's daily deal (practice games too)")]
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
    races: RaceRecord  # races branch


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
    source: Literal["seed", "deck", "pool", "daily", "race"]
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
    """A player's entry: their first game of the date's deal (dealt on that date), once ended."""

    rank: Annotated[int, Meta(ge=1)] | None
    player: UUID
    name: str
    game: UUID
    status: Literal["won", "stalled", "resigned"]
    assisted: Annotated[bool, Meta(description="a solver hint was used: never ranked")]
    unranked: Annotated[
        Literal["not-won", "assisted", "practiced", "unverified", "late"],
        Meta(description="why the entry has no rank: not a win; a solver hint; a practice game of the deal was "
             "dealt before the entry ended; its stored event log does not replay through the rules to a win on "
             "that date's deal; won after the date was over"),
    ] | None
    moves: Annotated[int, Meta(description="the game's moveCount")]
    seconds: Annotated[float, Meta(description="from the deal to the game's last move")]
    finished_at: datetime


class Leaderboard(Body):
    date: DayText
    ruleset: Annotated[str, Meta(description="the daily deal's ruleset id; null if no deal was made for that date")] | None
    ruleset_version: Annotated[int, Meta(description="its version; null with the ruleset")] | None
    closes_at: Annotated[datetime, Meta(description="the end of the date (UTC): from then on no entry can gain a rank")]
    closed: Annotated[bool, Meta(description="the date is over: the ranks are final")]
    entries: Annotated[
        list[LeaderboardEntry],
        Meta(description="one per player (their first game of the deal; later games are practice): the ranked "
             "ones first, by moves, then seconds, then who finished first (unassisted wins whose stored event log "
             "replays through the rules to a win, won within the date); then the unranked ones, as they finished"),
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


# ---------------------------------------------------------------- lessons (service/lessons.py, domain/lessons.py)

LessonId = Annotated[str, Meta(description="base-rank, wrapping, reserve-refill or draw-three-stock")]


class LessonInfo(Body):
    id: LessonId
    title: str
    teaches: Annotated[str, Meta(description="what the lesson is about")]
    goal: Annotated[str, Meta(description="the goal in words; reaching it records a LessonCompleted event")]
    ruleset: Annotated[str, Meta(description="the ruleset a lesson game is dealt under (classic)")]
    ruleset_version: int


class LessonList(Body):
    lessons: list[LessonInfo]


class LessonProgress(Body):
    """In the view of a lesson game: its lesson, the goal, and whether it has been reached."""

    id: LessonId
    goal: str
    done: bool


# ---------------------------------------------------------------- races (service/races.py)


class RaceDealRequest(RequestBody):
    """At most one of seed, deck or pool; none: a deal nobody knows in advance (the ruleset's default)."""

    seed: Seed | None = None
    deck: Annotated[list[CardCode], Meta(description="52 card codes in deal order (see API.md)")] | None = None
    pool: Annotated[int, Meta(ge=1, description="a deal of the verified pool")] | None = None


class NewRace(RequestBody):
    max_entrants: Annotated[int, Meta(ge=2, le=8, description="2 .. 8 players, the creator included")]
    ruleset: Annotated[str, Meta(description="a ruleset id; open-runs when left out")] | None = None
    deal: RaceDealRequest | None = None
    time_limit_seconds: Annotated[
        int, Meta(ge=1, le=86_400, description="the race ends this long after its start (1 .. 86400); none: no limit")
    ] | None = None


class RaceEntrant(Body):
    player: UUID
    name: str
    joined_at: datetime
    game: Annotated[UUID, Meta(description="the entrant's game, dealt at the start")] | None
    game_status: Literal["playing", "won", "stalled", "resigned"] | None
    cards_on_foundations: int
    move_count: int
    finished_at: Annotated[datetime, Meta(description="when the entrant's game ended")] | None
    place: Annotated[
        int,
        Meta(description="live while the race runs; final once it has finished, and then only for a verified log"),
    ] | None
    assisted: Annotated[bool, Meta(description="the entrant asked the solver for a hint")]
    verified: Annotated[
        bool, Meta(description="once the race has finished: whether the stored log replayed through the rules")
    ] | None


class RaceView(Body):
    id: UUID
    creator: UUID
    status: Literal["open", "running", "finished"]
    ruleset: RulesetRef
    deal: Annotated[
        dict[str, Any],
        Meta(description="the deal source; its seed or pool number only once the race has finished and every game of it has ended"),
    ]
    max_entrants: int
    time_limit_seconds: int | None
    created_at: datetime
    started_at: datetime | None
    ends_at: Annotated[datetime, Meta(description="the start plus the time limit")] | None
    finished_at: datetime | None
    entrants: Annotated[list[RaceEntrant], Meta(description="by place once started (then in the order they joined)")]


class RaceRecord(Body):
    played: Annotated[int, Meta(description="finished races the player was dealt a game in")]
    won: Annotated[int, Meta(description="of those, the races the player placed first in")]


class OpenRace(Body):
    id: UUID
    creator: UUID
    creator_name: str
    ruleset: RulesetRef
    deal: Annotated[dict[str, Any], Meta(description="the deal source only ({'source': 'seed'}, ...)")]
    max_entrants: int
    entrants: Annotated[int, Meta(description="players in it so far, the creator included")]
    time_limit_seconds: int | None
    created_at: datetime


class OpenRaces(Body):
    races: Annotated[list[OpenRace], Meta(description="open races, newest first")]
