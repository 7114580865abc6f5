"""Request and response bodies as msgspec Structs (camelCase on the wire), separate from the domain.

They are what ``openapi/openapi.json`` is generated from (with service.http.openapi), so they are written
for code generators too: every union is tagged (a move by ``type``, an event by ``type``, a deal
source by ``source``) and named once, so a generated client gets one class per move, event and deal
source and can send a listed move back as it came.
"""

from __future__ import annotations

from datetime import date, datetime
from enum import StrEnum
from typing import Annotated, Literal, Union
from uuid import UUID

from msgspec import UNSET, Meta, Struct, UnsetType

from domain import MAX_SEED
from domain.lessons import BY_ID as LESSONS

CARD_CODE = "^[A2-9TJQK][SHDC]$"

Seed = Annotated[int, Meta(ge=0, le=MAX_SEED, description="0 .. 2^53 - 1")]
CardCode = Annotated[
    str, Meta(pattern=CARD_CODE, description="rank (A 2-9 T J Q K) then suit (S H D C), e.g. 'TD'", examples=["TD"])
]
Cards = Annotated[list[CardCode], Meta(description="card codes, bottom to top")]
Target = Literal["foundation", "tableau-1", "tableau-2", "tableau-3", "tableau-4"]
Column = Literal["tableau-1", "tableau-2", "tableau-3", "tableau-4"]
Pile = Literal["stock", "waste", "reserve", "foundation", "tableau-1", "tableau-2", "tableau-3", "tableau-4"]
Version = Annotated[int, Meta(ge=0, description="a game version: the number of events in its stream")]


class RulesetId(StrEnum):
    """The id of a hosted ruleset (GET /rulesets); each has versions of its own."""

    CLASSIC = "classic"
    DRAW_ONE = "draw-one"
    OPEN_RUNS = "open-runs"


class LessonId(StrEnum):
    """A prepared lesson (domain/lessons.py; GET /lessons): a new one is a new member here too."""

    BASE_RANK = "base-rank"
    WRAPPING = "wrapping"
    RESERVE_REFILL = "reserve-refill"
    DRAW_THREE_STOCK = "draw-three-stock"


assert {lesson.value for lesson in LessonId} == set(LESSONS), (
    "service.schemas.LessonId names every lesson of domain/lessons.py"
)


class Body(Struct, rename="camel", forbid_unknown_fields=True, omit_defaults=False):
    """Every body. The named unions below stay ``typing.Union[...]`` (ruff UP007 would write
    ``A | B``): Litestar's OpenAPI generation names a union by ``__qualname__``, which a
    ``types.UnionType`` does not have."""


class RequestBody(Body):
    """A request body: unknown fields are refused, and the OpenAPI document says so and states the
    rules the domain checks (service.http.openapi)."""


# ---------------------------------------------------------------- requests


class NewPlayer(RequestBody):
    name: Annotated[str, Meta(min_length=1, max_length=40, description="1-40 characters")]
    token_name: (
        Annotated[str, Meta(min_length=1, max_length=100, description="the first token's name ('first token')")]
        | None
    ) = None


Scope = Literal["play", "read-private", "account"]


class NewToken(RequestBody):
    """``POST /players/me/tokens``: a token for one client (a phone, a bot, the web table)."""

    name: Annotated[str, Meta(min_length=1, max_length=100, description="1-100 characters, e.g. 'phone'")]
    scopes: Annotated[
        list[Scope],
        Meta(min_length=1, max_length=3, description="what it may do: play, read-private, account (each once)"),
    ]
    expires_in_days: (
        Annotated[int, Meta(ge=1, le=3650, description="days until it expires (1-3650); null: never")] | None
    ) = None


class SeedDealRequest(RequestBody):
    """A deal by seed: the same cards on every server and in every client (docs/deals.md)."""

    seed: Seed


class PoolDealRequest(RequestBody):
    """A deal of the ruleset's solver-verified pool."""

    pool: Annotated[int, Meta(ge=1, description="1 .. the pool's size (GET /deals/pool)")]


class DailyDealRequest(RequestBody):
    """The shared deal of a UTC date."""

    daily: Annotated[
        str, Meta(pattern="^(?:today|[0-9]{4}-[0-9]{2}-[0-9]{2})$", description="'today' or a UTC date YYYY-MM-DD")
    ]


class DeckDealRequest(RequestBody):
    """An explicit deck: the 52 cards in deal order (API.md: reserve, foundation, tableau, stock)."""

    # The domain checks the codes, the count and that no card is there twice, with its own words
    # ("deck[51]: AS is already at deck[0]"); service.http.openapi states those rules in the document.
    deck: Annotated[list[str], Meta(description="the 52 card codes in deal order, each card once")]


class LessonDealRequest(RequestBody):
    """A prepared lesson's deck (GET /lessons), played under its ruleset (classic)."""

    lesson: LessonId


DEAL_REQUESTS: dict[str, type[RequestBody]] = {
    "seed": SeedDealRequest,
    "pool": PoolDealRequest,
    "daily": DailyDealRequest,
    "deck": DeckDealRequest,
    "lesson": LessonDealRequest,
}
# A race's deal: one a game could be dealt by too (not a daily's or a lesson's), or none.
RACE_DEAL_REQUESTS: dict[str, type[RequestBody]] = {name: DEAL_REQUESTS[name] for name in ("seed", "pool", "deck")}


class DealRequest(RequestBody):
    """A parsed deal request, as the service layer takes it: at most one field is set.

    On the wire (and in the OpenAPI document) it is one of the one-field objects above
    (service.http.controllers.bodies parses them; service.http.openapi documents the union under this name).
    """

    seed: Seed | None = None
    deck: list[CardCode] | None = None
    pool: int | None = None
    daily: str | None = None
    lesson: str | None = None


class RaceDealRequest(RequestBody):
    """A parsed race deal request: at most one of seed, pool or deck is set (one of the one-field
    objects of ``RACE_DEAL_REQUESTS`` on the wire; service.http.openapi documents the union)."""

    seed: Seed | None = None
    deck: list[CardCode] | None = None
    pool: int | None = None


class NewGame(RequestBody):
    ruleset: RulesetId | None = None
    deal: DealRequest | None = None


class Draw(RequestBody, tag_field="type", tag="draw"):
    """Turn the next packet of the stock onto the waste."""


class Recycle(RequestBody, tag_field="type", tag="recycle"):
    """Turn the waste over to be the stock again (only when the stock is empty)."""


class Undo(RequestBody, tag_field="type", tag="undo"):
    """Take back the last move (recorded as an event, never a deletion)."""


class Resign(RequestBody, tag_field="type", tag="resign"):
    """Give the game up."""


class MoveCard(RequestBody, tag_field="type", tag="move"):
    """Move a card, with every card after it in its column, to a tableau column or its foundation."""

    card: CardCode
    to: Annotated[Target, Meta(description="'foundation' (the card's own suit) or 'tableau-1' .. 'tableau-4'")]


# A move as in API.md, tagged by ``type``; legal moves, hints and solver hints list moves in this form.
MoveRequest = Union[Draw, Recycle, Undo, Resign, MoveCard]  # noqa: UP007 (see Body)


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


class TokenView(Body):
    """A token as listed: never its secret."""

    id: UUID
    name: str
    scopes: list[Scope]
    created_at: datetime
    expires_at: datetime | None


class TokenCreated(TokenView):
    token: Annotated[str, Meta(description="shown only once; send it as 'Authorization: Bearer <token>'")]


class TokenList(Body):
    tokens: list[TokenView]


class Me(Body):
    """The player behind a bearer token, and that token."""

    id: UUID
    name: str
    created_at: datetime
    token: TokenView


class RulesetView(Body):
    id: RulesetId
    version: int
    key: Annotated[str, Meta(description="id@version, e.g. 'classic@1'")]
    draw_count: int
    recycle: str
    tableau_moves: str
    foundation_returns: bool
    default_deal: str
    description: str


class RulesetList(Body):
    rulesets: list[RulesetView]


class RulesetRef(Body):
    id: RulesetId
    version: int


class SeedSource(Body, tag_field="source", tag="seed"):
    """Dealt by seed."""

    seed: Seed


class DeckSource(Body, tag_field="source", tag="deck"):
    """Dealt from an explicit deck (not echoed)."""


class PoolSource(Body, tag_field="source", tag="pool"):
    """A deal of the ruleset's verified pool."""

    pool: Annotated[int, Meta(ge=1)]


class DailySource(Body, tag_field="source", tag="daily"):
    """The shared deal of a UTC date: never named by seed or pool number."""

    daily: date
    practice: Annotated[
        bool, Meta(description="true for a player's second and later game of that date's deal (not ranked)")
    ]


class LessonSource(Body, tag_field="source", tag="lesson"):
    """A prepared lesson's deck (GET /lessons)."""

    lesson: LessonId


class RaceSource(Body, tag_field="source", tag="race"):
    """An entrant's game of a race: the race's deck (never its seed or pool number, see GET /races/{id})."""

    race: UUID


# Where a game's cards came from, tagged by ``source``.
DealSource = Union[SeedSource, DeckSource, PoolSource, DailySource, LessonSource, RaceSource]  # noqa: UP007 (see Body)


class Stock(Body, omit_defaults=True):
    count: int
    cards: Annotated[
        list[CardCode], Meta(description="only once the game has ended: the stock in draw order")
    ] | UnsetType = UNSET


class Reserve(Body, omit_defaults=True):
    count: int
    top: CardCode | None
    cards: Annotated[
        list[CardCode], Meta(description="only once the game has ended: bottom to top")
    ] | UnsetType = UNSET


class Foundations(Struct):
    """The four foundations by suit (S, H, D, C), each bottom to top. Documented as a map
    (service.http.openapi): a property named ``D`` breaks code generated by openapi-python-client."""

    S: Cards
    H: Cards
    D: Cards
    C: Cards


class Table(Body):
    stock: Stock
    waste: Annotated[list[CardCode], Meta(description="face up and listed whole, bottom to top: the last card plays")]
    reserve: Reserve
    foundations: Foundations
    tableau: Annotated[
        list[Cards], Meta(min_length=4, max_length=4, description="tableau-1 .. tableau-4, each bottom to top")
    ]


class GameView(Body):
    id: UUID
    player: UUID
    ruleset: RulesetRef
    deal: DealSource
    base_rank: Annotated[str, Meta(pattern="^[A2-9TJQK]$")]
    status: Literal["playing", "won", "stalled", "resigned"]
    version: Version
    move_count: int
    undo_count: int
    assisted: bool
    started_at: datetime
    finished_at: datetime | None
    table: Table
    lesson: Annotated[
        LessonProgress, Meta(description="a lesson game's lesson and progress; absent in other games")
    ] | UnsetType = UNSET


# ---------------------------------------------------------------- events (domain/events.py, domain/view.py event_data)


class GameDealtData(Body, omit_defaults=True):
    ruleset: RulesetRef
    deal: DealSource
    base_card: CardCode
    reserve_top: CardCode
    reserve_count: int
    tableau: Annotated[list[CardCode], Meta(description="the first card of tableau-1 .. tableau-4")]
    stock_count: int
    deck: Annotated[
        list[CardCode],
        Meta(description="only once the game has ended: all 52 cards in deal order, to replay it offline"),
    ] | UnsetType = UNSET


class StockDrawnData(Body):
    count: int
    waste_top: CardCode
    cards: Annotated[
        list[CardCode], Meta(description="the cards turned up, in the order they landed; the last is the new top")
    ]


class WasteRecycledData(Body):
    count: Annotated[int, Meta(description="the cards turned back into the stock")]


class CardsMovedData(Body):
    card: Annotated[CardCode, Meta(description="the card named in the move")]
    cards: Annotated[list[CardCode], Meta(description="that card, then the run that went with it")]
    from_: Pile
    to: Target


class ReserveRefilledData(Body):
    card: CardCode
    to: Column


class NoData(Body):
    """An event that carries no data."""


class StockDrawnReverted(Body, tag_field="type", tag="StockDrawn"):
    data: StockDrawnData


class WasteRecycledReverted(Body, tag_field="type", tag="WasteRecycled"):
    data: WasteRecycledData


class CardsMovedReverted(Body, tag_field="type", tag="CardsMoved"):
    data: CardsMovedData


class ReserveRefilledReverted(Body, tag_field="type", tag="ReserveRefilled"):
    data: ReserveRefilledData


# An event of the move an undo took back, tagged by ``type``.
RevertedEvent = Union[StockDrawnReverted, WasteRecycledReverted, CardsMovedReverted, ReserveRefilledReverted]  # noqa: UP007 (see Body)


class MoveUndoneData(Body):
    reverted: Annotated[
        list[RevertedEvent], Meta(description="the events of the move taken back, in the order they happened")
    ]


class EventBase(Body, tag_field="type"):
    """What every event of a game's log has besides its ``data``."""

    version: Version
    recorded_at: datetime


class GameDealtEvent(EventBase, tag="GameDealt"):
    """The first event: the deal (its deck withheld until the game has ended)."""

    data: GameDealtData


class StockDrawnEvent(EventBase, tag="StockDrawn"):
    data: StockDrawnData


class WasteRecycledEvent(EventBase, tag="WasteRecycled"):
    data: WasteRecycledData


class CardsMovedEvent(EventBase, tag="CardsMoved"):
    data: CardsMovedData


class ReserveRefilledEvent(EventBase, tag="ReserveRefilled"):
    """The reserve's top card filled a column a move emptied (part of that move)."""

    data: ReserveRefilledData


class MoveUndoneEvent(EventBase, tag="MoveUndone"):
    data: MoveUndoneData


class SolverHintUsedEvent(EventBase, tag="SolverHintUsed"):
    """The player asked the solver (the game is assisted from here on)."""

    data: NoData


class GameWonEvent(EventBase, tag="GameWon"):
    data: NoData


class GameStalledEvent(EventBase, tag="GameStalled"):
    """draw-one: a recycle after a pass without progress ends the game."""

    data: NoData


class GameResignedEvent(EventBase, tag="GameResigned"):
    data: NoData


class LessonCompletedData(Body):
    lesson: LessonId


class LessonCompletedEvent(EventBase, tag="LessonCompleted"):
    """A lesson game reached its lesson's goal, with the move that did it (recorded once; an undo
    does not take it back)."""

    data: LessonCompletedData


# One event of a game's log, tagged by ``type``; hidden cards withheld while the game is in progress.
EventView = Union[  # noqa: UP007 (see Body)
    GameDealtEvent,
    StockDrawnEvent,
    WasteRecycledEvent,
    CardsMovedEvent,
    ReserveRefilledEvent,
    MoveUndoneEvent,
    SolverHintUsedEvent,
    GameWonEvent,
    GameStalledEvent,
    GameResignedEvent,
    LessonCompletedEvent,
]


class MoveResult(Body):
    game: GameView
    events: Annotated[list[EventView], Meta(description="the events the move appended")]


class EventPage(Body):
    events: list[EventView]
    next_after: Annotated[int, Meta(description="pass as ?after= for the next page; null at the end")] | None


class LegalMoves(Body):
    version: Version
    moves: Annotated[list[MoveRequest], Meta(description="every legal move now; each can be sent back as it is")]


class HintView(Body):
    move: MoveRequest
    reason: str


class SolverHint(Body):
    result: Literal["won", "lost", "unknown"]
    move: Annotated[
        MoveRequest | None, Meta(description="the next move of a winning line from here; null unless result is won")
    ]


class Hints(Body, omit_defaults=True):
    version: Version
    hints: list[HintView]
    solver: SolverHint | UnsetType = UNSET


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


DayText = Annotated[
    str,
    Meta(
        pattern="^[0-9]{4}-[0-9]{2}-[0-9]{2}$",
        description="a UTC date, YYYY-MM-DD",
        extra_json_schema={"format": "date"},
    ),
]


class DailyDeal(Body):
    """A date's shared deal. Derived from the date and the server's secret: it is in no pool,
    and nothing here (or anywhere) names its seed; its deck shows only as it is played."""

    date: DayText
    ruleset: Annotated[RulesetId, Meta(description="the ruleset id the deal is played under (API.md: 'open-runs')")]
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


# ---------------------------------------------------------------- stats and leaderboard (service/stats/projections.py)

WinRate = Annotated[
    float, Meta(ge=0, le=1, description="won / played, rounded to 4 places; null before the first finished game")
]
FewestMoves = Annotated[int, Meta(description="the lowest moveCount of an unassisted win")]
FastestSeconds = Annotated[
    float, Meta(description="the shortest time from deal to winning move of an unassisted win, in seconds")
]


class RulesetStats(Body):
    ruleset: Annotated[RulesetId, Meta(description="a ruleset id (all its versions together)")]
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
    ruleset: RulesetId
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
    ruleset: Annotated[
        RulesetId, Meta(description="the daily deal's ruleset id; null if no deal was made for that date")
    ] | None
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
    deal: DealSource
    status: Literal["playing", "won", "stalled", "resigned"]
    version: int
    move_count: int
    undo_count: int
    assisted: bool
    started_at: datetime
    finished_at: datetime | None


class GameList(Body):
    games: Annotated[list[GameSummary], Meta(description="newest first")]
    next_before: Annotated[
        str, Meta(description="pass as ?before= for the next (older) page; null on the last page")
    ] | None


# ---------------------------------------------------------------- lessons (service/games/lessons.py, domain/lessons.py)


class LessonInfo(Body):
    id: LessonId
    title: str
    teaches: Annotated[str, Meta(description="what the lesson is about")]
    goal: Annotated[str, Meta(description="the goal in words; reaching it records a LessonCompleted event")]
    ruleset: Annotated[RulesetId, Meta(description="the ruleset a lesson game is dealt under (classic)")]
    ruleset_version: int


class LessonList(Body):
    lessons: list[LessonInfo]


class LessonProgress(Body):
    """In the view of a lesson game: its lesson, the goal, and whether it has been reached."""

    id: LessonId
    goal: str
    done: bool


# ---------------------------------------------------------------- races (service/races/races.py)


class NewRace(RequestBody):
    max_entrants: Annotated[int, Meta(ge=2, le=8, description="2 .. 8 players, the creator included")]
    ruleset: RulesetId | None = None
    deal: RaceDealRequest | None = None
    time_limit_seconds: Annotated[
        int, Meta(ge=1, le=86_400, description="the race ends this long after its start (1 .. 86400); none: no limit")
    ] | None = None


class RaceSeedDeal(Body, tag_field="source", tag="seed", omit_defaults=True):
    """A race dealt by seed."""

    seed: Annotated[
        Seed, Meta(description="only once the race has finished and every game of it has ended")
    ] | UnsetType = UNSET


class RaceDeckDeal(Body, tag_field="source", tag="deck"):
    """A race dealt from an explicit deck (never echoed)."""


class RacePoolDeal(Body, tag_field="source", tag="pool", omit_defaults=True):
    """A race dealt from the ruleset's verified pool."""

    pool: Annotated[
        int, Meta(ge=1, description="only once the race has finished and every game of it has ended")
    ] | UnsetType = UNSET


# A race's deal, tagged by ``source``: while the race runs only the source (a seed or pool number
# would give the deck away through the documented shuffle).
RaceDeal = Union[RaceSeedDeal, RaceDeckDeal, RacePoolDeal]  # noqa: UP007 (see Body)


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
        RaceDeal,
        Meta(description="the deal source; its seed or pool number only once the race has finished and every game "
             "of it has ended"),
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
    deal: Annotated[
        RaceDeal, Meta(description="the deal source only ({'source': 'seed'}, ...): never a seed or pool number")
    ]
    max_entrants: int
    entrants: Annotated[int, Meta(description="players in it so far, the creator included")]
    time_limit_seconds: int | None
    created_at: datetime


class OpenRaces(Body):
    races: Annotated[list[OpenRace], Meta(description="open races, newest first")]
