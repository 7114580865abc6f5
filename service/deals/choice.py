"""Where deals come from besides seeds and decks: the verified pools, and the dates daily deals
are offered for (the daily deals themselves: service.deals.daily)."""

from __future__ import annotations

import re
import secrets
from datetime import date, timedelta

from domain import Ruleset

from ..errors import BadRequest
from ..wire import ruleset_ref
from .deal_pools import DealPool, load_deal_pool
from .wire import LineLength, PoolSummary

_DATE = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}")  # date.fromisoformat alone also takes 2026-W01-1


def deal_pool_of(ruleset: Ruleset) -> DealPool:
    pool = load_deal_pool(ruleset.id)
    if pool is None or pool.ruleset != ruleset:
        raise BadRequest(f"{ruleset.key} has no verified deal pool on this server: deal by seed or deck")
    return pool


def pool_number(ruleset: Ruleset, number: int) -> int:
    pool = deal_pool_of(ruleset)
    if not 1 <= number <= pool.size:
        raise BadRequest(f"{ruleset.id} pool deals run from 1 to {pool.size}, not {number}")
    return number


def random_pool_number(ruleset: Ruleset) -> int:
    return secrets.randbelow(deal_pool_of(ruleset).size) + 1


def parse_day(text: str, today: date, past_days: int) -> date:
    """'today' or a UTC date YYYY-MM-DD within the window a daily deal is offered for."""
    if text == "today":
        return today
    try:
        day = date.fromisoformat(text) if _DATE.fullmatch(text) else None
    except ValueError:
        day = None
    if day is None:
        shown = text if len(text) <= 20 else text[:20] + "..."
        raise BadRequest(f"{shown!r} is not a date: use 'today' or YYYY-MM-DD (UTC)")
    if day > today:
        raise BadRequest(f"the daily deal of {day} is not out yet: today is {today} (UTC)")
    if day < today - timedelta(days=past_days):
        raise BadRequest(f"daily deals go back {past_days} days, to {today - timedelta(days=past_days)}")
    return day


def pool_summary(pool: DealPool) -> PoolSummary:
    """How a pool was made, as the API shows it."""
    lengths = pool.line_lengths()
    return PoolSummary(
        ruleset=ruleset_ref(pool.ruleset.id, pool.ruleset.version),
        size=pool.size,
        seeds_tried=pool.seeds_tried,
        won=pool.won,
        lost=pool.lost,
        undecided=pool.undecided,
        budget_seconds=float(pool.budget_seconds),
        line_length=LineLength(float(lengths["median"]), float(lengths["q1"]), float(lengths["q3"])),
        verification="each deal's stored winning line was found by the solver and replays to a win "
        "through the rules engine (checked when the pool is built and by the test suite)",
    )
