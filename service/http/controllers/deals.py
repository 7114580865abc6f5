from __future__ import annotations

from typing import Annotated, Any

from litestar import Controller, Request, get
from litestar.di import NamedDependency
from litestar.params import PathParameter, QueryParameter
from litestar.response import Response

from domain import ALL_RULESETS, get_ruleset
from domain.rulesets import DEFAULT_RULESET_ID

from ...deals.choice import deal_pool_of, parse_day, pool_summary
from ...deals.daily import closes_at, is_over
from ...deals.daily_deals import DailyDeals
from ...deals.deal_pools import load_deal_pool
from ...errors import NotFound
from ...settings import Settings
from ...stats.queries import Stats, board_key
from ...stats.views import board_entry
from ..openapi.document import response_headers
from ..openapi.patterns import DAILY_DATE, RULESET_IDS
from ..pages import LIMIT_DEFAULT, Cursor, Limit, next_link
from ..problems import documented, problem_response
from ..schemas import DailyDeal, Leaderboard, PoolDealView, Pools, RulesetId, RulesetRef

LEADERBOARD_PAST_DAYS = 100 * 366
_DAY = PathParameter(
    description="today, or a UTC date YYYY-MM-DD (a daily deal: from today back 366 days; "
    "a leaderboard: any past date)",
    schema_extra={"pattern": DAILY_DATE},
)


DAILY_BUSY = problem_response(
    "Service unavailable (problem+json, code unavailable: the date's deal is still being proven winnable, or the "
    "database is away; daily_deals_busy: this server is preparing as many dates as it may at once), with Retry-After"
)


class DealController(Controller):
    path = "/deals"
    tags = ("deals",)

    @get(
        "/pool", operation_id="describePools", summary="The verified deal pools: size and how they were made",
        responses=documented(429),
    )
    async def pools(self) -> Pools:
        found = [load_deal_pool(r.id) for r in ALL_RULESETS]
        return Pools(pools=[pool_summary(p) for p in found if p is not None])

    @get(
        "/pool/{number:int}",
        operation_id="getPoolDeal",
        summary="One pool deal: verified, and the length of its stored winning line (never the line)",
        responses=documented(400, 404, 429, 503),
    )
    async def pool_deal(
        self,
        stats: NamedDependency[Stats],
        number: Annotated[int, PathParameter(ge=1, le=1_000_000, description="1 .. the pool's size")],
        ruleset: Annotated[
            str,
            QueryParameter(
                description="whose pool (default open-runs); a ruleset without a pool is a 400",
                schema_extra={"enum": RULESET_IDS},
            ),
        ] = DEFAULT_RULESET_ID,
    ) -> PoolDealView:
        found = get_ruleset(ruleset)
        pool = deal_pool_of(found)
        if number > pool.size:
            raise NotFound(f"the {found.id} pool has deals 1 to {pool.size}, not {number}")
        item = pool.deal(number)
        plays, wins = await stats.deal_figures(found.id, number)
        return PoolDealView(
            pool=number, ruleset=_ref(found.id, found.version), verified=True, line_length=item.length,
            plays=plays, wins=wins,
        )

    @get("/daily", operation_id="getTodaysDeal", summary="Today's shared deal (UTC)",
         responses={**documented(429), 503: DAILY_BUSY})
    async def today(self, daily: NamedDependency[DailyDeals], stats: NamedDependency[Stats],
        settings: NamedDependency[Settings]) -> DailyDeal:
        return await _daily(daily, stats, settings.daily_past_days, "today")

    @get(
        "/daily/{day:str}",
        operation_id="getDailyDeal",
        summary="The shared deal of a UTC date (YYYY-MM-DD or 'today'), the same for everyone",
        responses={**documented(400, 429), 503: DAILY_BUSY},
    )
    async def daily(self, daily: NamedDependency[DailyDeals], stats: NamedDependency[Stats],
        settings: NamedDependency[Settings], day: Annotated[str, _DAY]) -> DailyDeal:
        return await _daily(daily, stats, settings.daily_past_days, day)

    @get(
        "/daily/{day:str}/leaderboard",
        operation_id="getDailyLeaderboard",
        summary="One entry per player (their first game of the date's deal): unassisted wins ranked by moves "
        "then time, each only once its stored event log has replayed through the rules to a win",
        responses=documented(400, 429, 503),
        response_headers=response_headers("Link"),
    )
    async def leaderboard(
        self,
        request: Request[Any, Any, Any],
        daily: NamedDependency[DailyDeals],
        stats: NamedDependency[Stats],
        day: Annotated[str, _DAY],
        limit: Limit = LIMIT_DEFAULT,
        cursor: Cursor = None,
    ) -> Response[Leaderboard]:
        now = daily.clock()
        # Any past date: a board outlives the window in which its deal can still be dealt. The
        # board never prepares a deal: a date nobody dealt has no entries.
        chosen = parse_day(day, now.date(), LEADERBOARD_PAST_DAYS)
        secret = await daily.secret.value()  # signs the cursors that carry a rank
        key = None if cursor is None else board_key(cursor, chosen, secret)
        stored = await daily.stored(chosen)
        page = await stats.leaderboard(chosen, limit, key)
        following = None if page.next is None else page.next.cursor(secret)
        board = Leaderboard(
            date=chosen.isoformat(),
            ruleset=None if stored is None else _ref(stored.ruleset.id, stored.ruleset.version),
            closes_at=closes_at(chosen),
            closed=is_over(chosen, now),
            items=[board_entry(entry) for entry in page.entries],
            next=following,
        )
        return Response(board, headers=next_link(request, following, limit))



def _ref(ruleset_id: str, version: int) -> RulesetRef:
    return RulesetRef(id=RulesetId(ruleset_id), version=version)


async def _daily(daily: DailyDeals, stats: Stats, past_days: int, text: str) -> DailyDeal:
    """The daily deal of ``text`` (a date, or ``today`` by the service's clock, which game
    creation uses too), dealable up to ``past_days`` back."""
    chosen = parse_day(text, daily.clock().date(), past_days)
    deal = await daily.deal(chosen)
    plays, wins = await stats.daily_figures(chosen)
    return DailyDeal(
        date=chosen.isoformat(), ruleset=_ref(deal.ruleset.id, deal.ruleset.version),
        verified=True, line_length=deal.line_length, verified_at=deal.verified_at, closes_at=deal.closes_at,
        plays=plays, wins=wins,
    )
