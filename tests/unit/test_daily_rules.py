"""The daily deal's rules that need no database: what a deal source says, when hidden cards may
be shown, and when a daily game is private (service.deals.daily)."""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta, timezone

from service.deals.daily import (
    closes_at,
    daily_day_of,
    daily_source,
    is_entry,
    private_until,
    public_source,
    reveals_hidden_cards,
)

DAY = date(2030, 6, 15)
DURING = datetime(2030, 6, 15, 23, 59, 59, tzinfo=UTC)
AFTER = datetime(2030, 6, 16, 0, 0, tzinfo=UTC)


def test_a_daily_source_names_the_date_and_whether_it_is_practice_only() -> None:
    assert daily_source(DAY, practice=False) == {"source": "daily", "daily": "2030-06-15", "practice": False}
    assert daily_day_of(daily_source(DAY, practice=True)) == DAY
    assert is_entry(daily_source(DAY, practice=False))
    assert not is_entry(daily_source(DAY, practice=True))
    assert daily_day_of({"source": "seed", "seed": 7}) is None
    assert not is_entry({"source": "pool", "pool": 3})
    assert daily_day_of({"source": "daily", "daily": "2030-02-30", "practice": False}) is None


def test_hidden_cards_show_once_the_game_is_over_and_for_a_daily_game_once_its_date_is_over() -> None:
    daily = daily_source(DAY, practice=False)
    assert not reveals_hidden_cards(daily, over=False, now=AFTER)  # in progress: never
    assert not reveals_hidden_cards(daily, over=True, now=DURING)  # over, but its date is not
    assert reveals_hidden_cards(daily, over=True, now=AFTER)
    assert not reveals_hidden_cards(daily_source(DAY, practice=True), over=True, now=DURING)  # practice too
    for other in ({"source": "seed", "seed": 7}, {"source": "pool", "pool": 3}, {"source": "deck"}):
        assert reveals_hidden_cards(other, over=True, now=DURING)
        assert not reveals_hidden_cards(other, over=False, now=AFTER)


def test_the_date_is_read_in_utc() -> None:
    daily = daily_source(DAY, practice=False)
    east = timezone(timedelta(hours=3))
    assert not reveals_hidden_cards(daily, over=True, now=datetime(2030, 6, 16, 2, 0, tzinfo=east))  # 23:00 UTC
    assert reveals_hidden_cards(daily, over=True, now=datetime(2030, 6, 16, 3, 0, tzinfo=east))  # midnight UTC
    assert closes_at(DAY) == AFTER


def test_a_daily_game_is_private_until_its_date_is_over() -> None:
    assert private_until(daily_source(DAY, practice=True), DURING) == DAY
    assert private_until(daily_source(DAY, practice=False), AFTER) is None
    assert private_until({"source": "seed", "seed": 1}, DURING) is None


def test_daily_games_of_before_read_as_the_pool_deals_they_were() -> None:
    assert public_source({"source": "daily", "date": "2026-11-30", "pool": 17}) == {"source": "pool", "pool": 17}
    current = daily_source(DAY, practice=False)
    assert public_source(current) == current
    assert public_source({"source": "seed", "seed": 5}) == {"source": "seed", "seed": 5}
    legacy = {"source": "daily", "date": "2026-11-30", "pool": 17}
    assert reveals_hidden_cards(legacy, over=True, now=DURING)
    assert private_until(legacy, DURING) is None
