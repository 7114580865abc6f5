"""service.settings: what the server warns an operator about at start."""

from __future__ import annotations

import logging

import pytest

from service.settings import Settings


def test_an_unset_daily_secret_is_left_to_the_database(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("DAILY_SECRET", raising=False)
    settings = Settings.from_env()
    assert settings.daily_secret is None  # service.deals.deal_secret makes one and keeps it in the database
    assert settings.warnings() == []


def test_a_set_daily_secret_is_used(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DAILY_SECRET", "s3cret-from-the-environment")
    settings = Settings.from_env()
    assert settings.daily_secret == "s3cret-from-the-environment"
    assert settings.warnings() == []


def test_a_short_daily_secret_is_warned_about(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DAILY_SECRET", "hunter2")
    assert any("DAILY_SECRET is shorter" in warning for warning in Settings.from_env().warnings())


async def test_the_app_logs_the_warnings_when_it_starts(caplog: pytest.LogCaptureFixture) -> None:
    from service.http.app import create_app

    app = create_app(Settings(database_url="postgresql://nobody@127.0.0.1:1/none", daily_secret="short"))
    with caplog.at_level(logging.WARNING, logger="canfield"):
        async with app.lifespan():
            pass
    assert any("DAILY_SECRET is shorter" in record.getMessage() for record in caplog.records)


def test_idempotency_keys_are_kept_at_least_a_day(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("IDEMPOTENCY_KEY_HOURS", raising=False)
    assert Settings.from_env().idempotency_key_hours == 24
    monkeypatch.setenv("IDEMPOTENCY_KEY_HOURS", "72")
    assert Settings.from_env().idempotency_key_hours == 72
    monkeypatch.setenv("IDEMPOTENCY_KEY_HOURS", "1")
    with pytest.raises(SystemExit, match="at least 24"):
        Settings.from_env()
