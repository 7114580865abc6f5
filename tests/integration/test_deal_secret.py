"""The deal secret (service.deals.deal_secret): without DAILY_SECRET the server makes a random one
once and keeps it in the database, so every process agrees, also after a restart."""

from __future__ import annotations

import asyncio
import logging

import psycopg
import pytest

from .conftest import server_process


def stored(url: str) -> list[tuple[str, str]]:
    with psycopg.connect(url) as conn:
        return [(row[0], row[1]) for row in conn.execute("SELECT name, value FROM service_secrets").fetchall()]


async def test_two_processes_make_one_secret_and_a_restart_keeps_it(
    clean_database: str, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.WARNING, logger="canfield"):
        async with server_process(clean_database, 2) as one, server_process(clean_database, 2) as two:
            first, second = await asyncio.gather(one.deal_secret.value(), two.deal_secret.value())
    assert first == second
    assert len(first) >= 40  # 32 random bytes, base64url
    assert stored(clean_database) == [("deal-secret", first)]
    made = [r for r in caplog.records if "made a random deal secret" in r.getMessage()]
    assert len(made) == 1  # logged once, by the process that made it
    assert first not in caplog.text
    async with server_process(clean_database, 2) as restarted:
        assert await restarted.deal_secret.value() == first


async def test_a_configured_daily_secret_wins(clean_database: str) -> None:
    async with server_process(clean_database, 2, daily_secret="a-configured-secret-of-some-length") as services:
        assert await services.deal_secret.value() == "a-configured-secret-of-some-length"
    assert stored(clean_database) == []  # nothing made


async def test_a_secret_made_earlier_is_used_not_replaced(clean_database: str) -> None:
    with psycopg.connect(clean_database) as conn:
        conn.execute("INSERT INTO service_secrets (name, value) VALUES ('deal-secret', 'made-by-another-process')")
    async with server_process(clean_database, 2) as services:
        assert await services.deal_secret.value() == "made-by-another-process"
