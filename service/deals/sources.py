"""A deal request turned into a deck: by seed, deck, pool or lesson, or the ruleset's default.

The one way every feature deals a game from a request's ``deal`` (a daily deal is dealt by
service.deals.daily_deals, a race's or tournament's secret deal by service.deals.deal_secret):
games (``POST /games``) and races (``POST /races`` with a named deal) both call ``deal_from``.
"""

from __future__ import annotations

import secrets
from collections.abc import Mapping
from typing import Any

from domain import MAX_SEED, Ruleset, parse_deck, shuffled_deck

from .choice import deal_pool_of, pool_number, random_pool_number
from .deal_pools import load_deal_pool
from .lessons import lesson_deal

JSON = dict[str, Any]


def deal_from(ruleset: Ruleset, given: Mapping[str, Any]) -> tuple[tuple[int, ...], JSON]:
    """The deck and deal source of a seed, deck, pool or lesson deal (none given: the ruleset's
    default, a random pool deal where it has a pool, else a random seed)."""
    if "lesson" in given:
        return lesson_deal(ruleset, given["lesson"])
    if "deck" in given:
        return parse_deck(given["deck"]), {"source": "deck"}
    if "pool" in given or ("seed" not in given and ruleset.default_deal == "pool" and load_deal_pool(ruleset.id)):
        number = pool_number(ruleset, given["pool"]) if "pool" in given else random_pool_number(ruleset)
        return shuffled_deck(deal_pool_of(ruleset).deal(number).seed), {"source": "pool", "pool": number}
    seed = given.get("seed")
    if seed is None:
        seed = secrets.randbelow(MAX_SEED + 1)
    return shuffled_deck(seed), {"source": "seed", "seed": seed}
